"""The agent loop and its run traces."""
