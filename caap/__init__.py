"""caap: a vision-only desktop automation agent (observe → decide → act)."""

__version__ = "0.1.0"
