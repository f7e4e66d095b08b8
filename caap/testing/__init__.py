"""Test helpers that run real components (e.g. a scripted OpenAI-compatible server)."""
