"""Recording human demonstrations: raw input events merged into registry actions, and the live session."""
