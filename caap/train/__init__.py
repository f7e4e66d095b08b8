"""Training for the two vision models (settings live in training/*.yaml)."""
