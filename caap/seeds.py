"""Seeds as people write them: ``1000-2999,3005`` (inclusive ranges, in the given order), for the
benchmark, the dataset generators and the split rules alike."""

from __future__ import annotations

import re
from collections.abc import Iterable


class SeedRangeError(ValueError):
    """Seeds that cannot be read; the message quotes them and says what is wrong."""


_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_ranges(text: str, *, what: str = "seeds") -> tuple[tuple[int, int], ...]:
    """``"1000-2999,3005"`` -> ``((1000, 2999), (3005, 3005))`` (inclusive, in the given order)."""
    if not text.strip():
        raise SeedRangeError(f"{what} '{text}': empty (expected e.g. 1000-2999,3005)")
    ranges: list[tuple[int, int]] = []
    for part in text.split(","):
        m = _RANGE.match(part)
        if not m:
            raise SeedRangeError(f"{what} '{text}': '{part.strip()}' is not a seed or a range like 1000-2999")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise SeedRangeError(f"{what} '{text}': range {lo}-{hi} runs backwards")
        ranges.append((lo, hi))
    return tuple(ranges)


def parse_seed_ranges(text: str) -> list[int]:
    """``"1000-1002,3005"`` -> ``[1000, 1001, 1002, 3005]`` (inclusive ranges; duplicates dropped, order kept)."""
    seen: dict[int, None] = {}
    for lo, hi in parse_ranges(text):
        for s in range(lo, hi + 1):
            seen.setdefault(s, None)
    return list(seen)


def format_seed_ranges(seeds: Iterable[int]) -> str:
    """The inverse of ``parse_seed_ranges`` for messages: ``[1, 2, 3, 7]`` -> ``"1-3,7"``."""
    ordered = sorted(set(seeds))
    if not ordered:
        return "none"
    parts: list[str] = []
    start = prev = ordered[0]
    for s in [*ordered[1:], None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if s is not None:
            start = prev = s
    return ",".join(parts)
