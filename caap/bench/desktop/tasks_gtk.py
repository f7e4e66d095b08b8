"""Desktop benchmark tasks in gtk applications (see ``caap.bench.desktop.tasks``)."""

from __future__ import annotations

from caap.bench.desktop.task import DesktopTask

TASKS: tuple[DesktopTask, ...] = ()
