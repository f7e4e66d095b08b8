"""Reading and writing files: a crash mid-write never leaves half of one, and a bad file gets one
clear message."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def write_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_json(path: str | Path, error: type[Exception], *, missing: str, unreadable: str) -> Any:
    """The parsed JSON of ``path`` (UTF-8), or ``error`` with one clear message: ``"PATH: missing"``
    when there is no file, ``"PATH: unreadable (why)"`` when it cannot be read or parsed."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: {missing}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise error(f"{path}: {unreadable} ({exc})") from None
