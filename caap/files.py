"""Reading and writing files: a crash mid-write never leaves half of one, and a bad file gets one
clear message."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable
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


def cache_dir() -> Path:
    """Where derived model files live: ``$CAAP_CACHE_DIR``, else ``$XDG_CACHE_HOME/caap``, else
    ``~/.cache/caap``."""
    if os.environ.get("CAAP_CACHE_DIR"):
        return Path(os.environ["CAAP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "caap"


def file_digest(path: Path) -> str:
    """The first 16 hex digits of a file's SHA-256."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def export_once(target: Path, write: Callable[[Path], Path], *, what: str, error: type[Exception]) -> Path:
    """``target``, made on first use by ``write(work)`` (given a private folder beside it, it
    returns the file it wrote there), then renamed into place: nothing half-written is ever left
    under the final name, and a parallel export of the same source writes the same file. A cache
    folder that cannot be made, or a failed export, is ``error`` with one message naming ``what``."""
    if target.is_file():
        return target
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".export-", dir=folder))
    except OSError as exc:
        raise error(f"{folder}: no cache folder for {what} ({exc.strerror}; "
                    "set CAAP_CACHE_DIR to a writable folder)") from None
    try:
        os.replace(write(work), target)
    except Exception as exc:  # exporters raise every kind of error
        raise error(f"exporting {what} failed ({type(exc).__name__}: {exc})") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
