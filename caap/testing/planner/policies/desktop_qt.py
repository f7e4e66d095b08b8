"""Policies for the desktop benchmark's sentence shapes first met in qt tasks (the shared ones are
in ``desktop_tasks``)."""

from __future__ import annotations
