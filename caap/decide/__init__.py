"""Decide: demonstrations and context → CAAP prompt → LLM → parsed, validated actions."""
