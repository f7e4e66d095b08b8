"""What is reserved for evaluation and never trained on (DESIGN §6): the MiniWoB++ tasks outside
the paper's 67 and the desktop apps of ``caap.bench.desktop.apps.RESERVED_APPS``. The training
exporters refuse a screen of either, so an evaluation set passed as training data by mistake
fails before anything is written."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from caap.data.format import DatasetError, Source


def reserved_reason(source: Source, reserved_tasks: frozenset[str]) -> str | None:
    """Why a screen must not be trained on, or None. ``reserved_tasks``: the installed MiniWoB++
    tasks outside the 67 (a user's own task names are never among them)."""
    from caap.bench.desktop.apps import RESERVED_APPS

    if source.kind == "desktop" and source.task in RESERVED_APPS:
        return f"desktop app {source.task} is reserved for evaluation"
    if source.kind == "miniwob" and source.task in reserved_tasks:
        return f"MiniWoB++ task {source.task} is outside the paper's 67, reserved for evaluation"
    return None


def check_trainable(labelled: Iterable[tuple[Path, Source]]) -> None:
    """One error naming the first label file of a reserved screen, if any."""
    from caap.bench.harness import caap67

    try:
        from caap.bench.miniwob import list_tasks

        reserved = frozenset(list_tasks()) - frozenset(caap67())
    except (ImportError, OSError):  # no miniwob package or no task list here: the desktop apps only
        reserved = frozenset()
    for path, source in labelled:
        reason = reserved_reason(source, reserved)
        if reason is not None:
            raise DatasetError(f"{path}: {reason} (DESIGN §6); evaluate on it, never train on it")
