"""The screenshot's pixels as one array per screen.

A 1080p screenshot is 6 MB of RGB, and ``np.asarray(image.convert("RGB"))`` copies it twice (PIL's
convert, then its export to numpy): about 4 ms a time on this project's CPU. The observer's steps
(detector, pixel rules, text snapping, reader, PP-OCR, the rules after reading) made about twenty
such copies of the same screenshot per screen. Inside ``one_screen`` every image is converted once
and each step gets the same read-only array; outside it ``rgb_pixels`` converts as before. The same
goes for the 8-connected pieces of a mask several rules look at (``components``: the page's ink,
labelled for the scrollbars' arrows and for the framed title buttons alike).

The images and masks met inside ``one_screen`` must not be changed in place (the observer makes a
new image for every change it makes, e.g. ``caap.observe.steps.field_ink.without_foreign_ink``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np
from PIL import Image

# id(image or mask) -> (it, what was made of it); it is held so that its id is not reused inside the block.
_ARRAYS: ContextVar[dict[int, tuple[object, Any]] | None] = ContextVar("caap_screen_arrays", default=None)


@contextmanager
def one_screen() -> Iterator[None]:
    """A block in which each image's RGB array is made once (``rgb_pixels``); dropped at its end.
    Inside another such block it shares that block's arrays."""
    if _ARRAYS.get() is not None:
        yield
        return
    token = _ARRAYS.set({})
    try:
        yield
    finally:
        _ARRAYS.reset(token)


def rgb_pixels(image: Image.Image) -> np.ndarray:
    """``image`` as a read-only H × W × 3 uint8 array: inside ``one_screen``, the same array every
    time it is asked for."""
    arrays = _ARRAYS.get()
    if arrays is not None:
        held = arrays.get(id(image))
        if held is not None and held[0] is image:
            return held[1]
    rgb = np.asarray(image if image.mode == "RGB" else image.convert("RGB"))
    rgb.flags.writeable = False  # every caller sees the screen as it was taken
    if arrays is not None:
        arrays[id(image)] = (image, rgb)
    return rgb


def components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """OpenCV's 8-connected components of a uint8 mask: their count, the label image and the
    stats; inside ``one_screen``, computed once per mask."""
    import cv2  # the vision extra's

    arrays = _ARRAYS.get()
    if arrays is not None:
        held = arrays.get(id(mask))
        if held is not None and held[0] is mask:
            return held[1]  # type: ignore[no-any-return]
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if arrays is not None:
        arrays[id(mask)] = (mask, (n, labels, stats))
    return n, labels, stats
