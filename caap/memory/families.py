"""Task families: tasks that differ only in their values ("Click the button labelled OK" and
"... labelled Cancel") share experience, auto-context demonstrations and cache statistics."""

from __future__ import annotations

import hashlib
import re

_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|“[^”]*”")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def family_of(task: str, family: str | None = None) -> str:
    """``family`` when given (a MiniWoB task name, or the user's choice); otherwise the task text
    with quoted values and numbers replaced and case and spacing folded — a template, not a name."""
    if family:
        return family.strip()
    text = _QUOTED.sub('"_"', task)
    text = _NUMBER.sub("#", text)
    return " ".join(text.casefold().split())


def slug(family: str) -> str:
    """A file name for a family: readable, short, and unique (a hash of the whole name)."""
    words = "-".join(_WORD.findall(family.casefold()))[:48].strip("-") or "family"
    return f"{words}-{hashlib.sha1(family.encode('utf-8')).hexdigest()[:8]}"


def words(text: str) -> list[str]:
    """Lower-case word tokens (letters and digits), the unit of retrieval."""
    return _WORD.findall(text.casefold())
