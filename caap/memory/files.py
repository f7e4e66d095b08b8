"""Read-modify-write of a memory file shared by several processes (benchmark workers).

An exclusive ``flock`` on a side file ``.NAME.lock`` serialises updates; the write itself is
``caap.files.write_atomic``, so a reader never sees half a file and a crash loses nothing that was
already saved.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path

from caap.files import write_atomic

__all__ = ["locked", "write_atomic"]


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(f".{path.name}.lock"), "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
