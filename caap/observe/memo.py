"""Readings remembered by the pixels they were read from.

An agent observes a screen after every action, and most of a screen is what it was a step before:
a click ticks one box, typing changes one field. The reader and PP-OCR read each element from a
crop around its box and nothing else, so a crop whose pixels were read before reads the same
again: ``ReadingMemo`` keeps the latest readings keyed by a digest of the crop's pixels and of
every setting the reading depends on, and the models run on the crops it has not seen.

Only a frozen model may use a memo (a checkpoint loaded for observing, not a model being trained),
and its readings must depend on nothing outside the key.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def pixel_key(*parts: Any) -> bytes:
    """A digest of arrays (their shape, dtype and bytes) and plain values (their ``repr``)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        if isinstance(part, np.ndarray):
            digest.update(repr((part.shape, part.dtype.str)).encode())
            digest.update(np.ascontiguousarray(part).tobytes())
        else:
            digest.update(repr(part).encode())
        digest.update(b"\x00")
    return digest.digest()


def memo_of(size: int) -> ReadingMemo | None:
    """A memo of ``size`` readings, or None for 0 (every crop read every time)."""
    if size < 0:
        raise ValueError(f"memo must be 0 (off) or a number of readings to keep, got {size}")
    return ReadingMemo(size) if size else None


class ReadingMemo:
    """The latest ``capacity`` readings by key, least recently used dropped first; counts its hits
    and misses (``hits``, ``misses``) so a caller can report what it saved."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"a reading memo needs a capacity of at least 1, got {capacity}")
        self.capacity = capacity
        self._items: OrderedDict[bytes, Any] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        """Forget every reading (the counts stay)."""
        self._items.clear()

    def get(self, key: bytes) -> Any | None:
        """The reading stored under ``key`` (now the most recent), or None."""
        value = self._items.get(key)
        if value is None:
            self.misses += 1
            return None
        self._items.move_to_end(key)
        self.hits += 1
        return value

    def put(self, key: bytes, value: Any) -> None:
        if value is None:
            raise ValueError("a reading memo does not store None (it means 'not read yet')")
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def read_through(self, keys: Sequence[bytes], read: Callable[[list[int]], Sequence[T]]) -> list[T]:
        """One reading per key: the stored ones, and ``read(indices)`` for the rest (one reading per
        index, in order; a key that comes twice is read once), which are then stored."""
        found = [self.get(key) for key in keys]
        first: dict[bytes, int] = {}
        for i, key in enumerate(keys):
            if found[i] is None:
                first.setdefault(key, i)
        todo = sorted(first.values())
        fresh = dict(zip((keys[i] for i in todo), read(todo) if todo else [], strict=True))
        for key, value in fresh.items():
            self.put(key, value)
        return [value if value is not None else fresh[keys[i]] for i, value in enumerate(found)]
