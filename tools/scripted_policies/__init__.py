"""Policies of the scripted MiniWoB++ planner for the later task groups, one module per group. Each
module registers its policies with ``scripted_kit.policy`` on import and lists its tasks in
``TASKS``; tools/scripted_planner.py imports this package after its own policies."""

from scripted_policies import email, menus, text

TASKS: tuple[str, ...] = menus.TASKS + email.TASKS + text.TASKS
