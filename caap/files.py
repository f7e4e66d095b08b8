"""Writing files so that a reader, or a crash mid-write, never sees half of one."""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path
