"""Semi-masking (CAAP §3.1): the reader's input is the screenshot with the target element outlined
and everything around it darkened, so the element keeps its own pixels *and* its spatial context
(unlike Pix2Struct's own masking, which hides the target behind an 'X').

One function, used by training and by inference alike, so the model never sees a different input
at run time than it learned from.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.observe.primitives import rgb_pixels

Window = tuple[int, int, int, int]


def _span(lo: int, hi: int, margin: int, size: int) -> tuple[int, int]:
    """The interval [lo - margin, hi + margin) moved (not shrunk) to lie inside [0, size); only an
    interval longer than the image is cut to the whole image."""
    length = (hi - lo) + 2 * margin
    if length >= size:
        return 0, size
    start = min(max(lo - margin, 0), size - length)
    return start, start + length


def context_window(box: Sequence[int], width: int, height: int, context: int, outline_px: int = 0) -> Window:
    """The crop ``semi_mask`` takes for ``context``: the box grown by ``max(context, outline_px)`` px
    on every side (so the outline always fits), shifted back inside the image when it runs past an
    edge (an element in a corner gets the same amount of context, all of it on the inner side), and
    cut to the image only along an axis where the window is larger than the image itself."""
    margin = max(int(context), int(outline_px), 0)
    x1, x2 = _span(int(box[0]), int(box[2]), margin, width)
    y1, y2 = _span(int(box[1]), int(box[3]), margin, height)
    return x1, y1, x2, y2


def semi_mask(
    image: Image.Image | np.ndarray,
    box: Sequence[int],
    *,
    darken: float = 0.5,
    outline_px: int = 2,
    outline_rgb: Sequence[int] = (255, 0, 0),
    context: int | None = None,
) -> Image.Image:
    """The screenshot with ``box`` (``[x1, y1, x2, y2]``, x2/y2 exclusive) semi-masked.

    Every pixel outside the box is multiplied by ``darken`` (rounded; 1.0 leaves it, 0.0 blacks it
    out); a frame ``outline_px`` wide in ``outline_rgb`` is drawn just *outside* the box (the part
    of it past the image edge is dropped), so the element's own pixels are never touched. With
    ``context`` the result is cropped to ``context_window`` (see there) — more resolution per
    element for the same number of patches; ``None`` keeps the whole screen (the paper's input).
    The box is clipped to the image first; a box with nothing inside the image is a ValueError.
    Deterministic and never flipped or resized. ``image`` may be the screen's RGB array: a caller
    masking every element of a 1080p screen converts it once, not once per element.
    """
    rgb = image if isinstance(image, np.ndarray) else rgb_pixels(image)
    height, width = rgb.shape[:2]
    x1, y1 = max(int(box[0]), 0), max(int(box[1]), 0)
    x2, y2 = min(int(box[2]), width), min(int(box[3]), height)
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"box {list(box)} has no pixels inside the {width}x{height} image")
    if not 0.0 <= darken <= 1.0:
        raise ValueError(f"darken must lie in [0, 1], got {darken}")
    # Crop first: darkening only the window is less work than darkening the whole screen.
    wx1, wy1, wx2, wy2 = (0, 0, width, height) if context is None else context_window(
        (x1, y1, x2, y2), width, height, context, outline_px)
    window = rgb[wy1:wy2, wx1:wx2]
    lut = np.round(np.arange(256, dtype=np.float32) * darken).astype(np.uint8)  # exact, and faster than float maths
    out = lut[window]
    # Box and outline in window coordinates.
    bx1, by1, bx2, by2 = x1 - wx1, y1 - wy1, x2 - wx1, y2 - wy1
    h, w = out.shape[:2]
    o = max(int(outline_px), 0)
    if o:
        colour = np.asarray(outline_rgb, dtype=np.uint8)[:3]
        ox1, oy1, ox2, oy2 = max(bx1 - o, 0), max(by1 - o, 0), min(bx2 + o, w), min(by2 + o, h)
        out[oy1:by1, ox1:ox2] = colour  # top band (empty when the box touches the top edge)
        out[by2:oy2, ox1:ox2] = colour  # bottom band
        out[oy1:oy2, ox1:bx1] = colour  # left band
        out[oy1:oy2, bx2:ox2] = colour  # right band
    out[by1:by2, bx1:bx2] = window[by1:by2, bx1:bx2]  # the element itself, untouched
    return Image.fromarray(out, "RGB")
