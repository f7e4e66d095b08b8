"""Near-duplicate screens: the data generators keep one of screens a person would call the same."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from PIL import Image


def dhash(image: Image.Image, size: int = 16) -> int:
    """Difference hash: robust to tiny changes, different for anything a person would call different."""
    small = np.asarray(image.convert("L").resize((size + 1, size), Image.Resampling.BILINEAR), dtype=np.int16)
    bits = (small[:, 1:] > small[:, :-1]).flatten()
    return int("".join("1" if b else "0" for b in bits), 2)


def near_duplicate(h: int, hashes: Iterable[int], bits: int) -> bool:
    """Whether ``h`` differs from one of ``hashes`` in at most ``bits`` bits."""
    return any(bin(h ^ other).count("1") <= bits for other in hashes)
