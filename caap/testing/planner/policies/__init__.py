"""The scripted planner's policies, one module per task family. Each module registers its policies
with ``caap.testing.planner.kit.policy`` on import and lists its tasks in ``TASKS``; the first 42
tasks register first, so a later family's pattern never shadows one of theirs."""

from caap.testing.planner.policies import (  # noqa: F401  (registers policies)
    basic,
    desktop,
    desktop_gtk,
    desktop_qt,
    desktop_tasks,
    desktop_tk,
    email,
    menus,
    text,
)

# The MiniWoB++ tasks the policies solve (>= 0.95 on seeds 0-49 with the DOM oracle, except where the
# oracle itself loses the target: see the benchmark notes).
TASKS: tuple[str, ...] = basic.TASKS + menus.TASKS + email.TASKS + text.TASKS + desktop.TASKS
# The desktop benchmark's tasks are read by their sentence shapes (desktop_tasks), not by name.
__all__ = ["TASKS", "desktop_tasks"]
