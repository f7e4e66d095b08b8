"""``python -m caap.testing.planner``: serve the scripted planner (see the package docstring)."""

from caap.testing.planner.server import main

main()
