"""Resize grips found by their stripes: the text area a field is, and the handle that resizes it.

A browser draws a text area's resize grip as a small right triangle of thin diagonal stripes in
its bottom-right corner (Chromium: three stripes, 7, 5 and 3 px long, two pixels apart). The
detector misses the grip when the text area is dragged very small, and then calls the area an input
field (resize-textarea read a 26 px high text area as one and lost its handle). An input field never
has a grip, so a field with one is a text area, and the grip is its resize handle.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import intersection
from caap.observe.primitives import background_colour, difference, rgb_pixels
from caap.taxonomy import ElementType

CORNER_PX = 16      # the grip lies within this many pixels of the field's bottom-right corner
OUTSIDE_PX = 3      # a detected box may end a few pixels short of the field's border
INK = 90            # a stripe pixel differs from the field's background by this much (largest channel)
MIN_STRIPES = 2     # parallel stripes two pixels apart, the first at least LONG_STRIPE long
LONG_STRIPE = 5
MIN_STRIPE = 3
HANDLE_PAD = 2      # the handle's box: the grip's stripes and this much around them


def _runs(ink: np.ndarray) -> dict[int, tuple[int, int, int]]:
    """The longest run of thin ink along each anti-diagonal (row + column = k) of ``ink``, as
    k → (length, row of its upper end, column of its upper end). Thin: neither the pixel left nor
    right of it is ink, as in a 1 px line drawn at 45°."""
    h, w = ink.shape
    padded = np.pad(ink, 1)
    thin = ink & ~padded[1:-1, :-2] & ~padded[1:-1, 2:]
    runs: dict[int, tuple[int, int, int]] = {}
    for k in range(h + w - 1):
        best = (0, 0, 0)
        length = 0
        for r in range(max(0, k - w + 1), min(h, k + 1)):  # down and to the left along the diagonal
            c = k - r
            length = length + 1 if thin[r, c] else 0
            if length > best[0]:
                best = (length, r - length + 1, c + length - 1)
        if best[0]:
            runs[k] = best
    return runs


def find_grip(crop: np.ndarray) -> tuple[int, int, int, int] | None:
    """The box (x1, y1, x2, y2, inclusive, in ``crop``'s pixels) of a resize grip in an RGB crop of
    a field's bottom-right corner, or None. A grip is two or more thin stripes at 45° (rising to the
    right) on consecutive every-other diagonals, the first at least ``LONG_STRIPE`` long, nothing of
    the same ink on the diagonals between them, and their lower ends on one row or their upper ends
    on one column (the triangle's legs)."""
    if crop.shape[0] < LONG_STRIPE or crop.shape[1] < LONG_STRIPE:
        return None
    diff = difference(crop, background_colour(crop), "max")
    ink = diff > INK
    runs = _runs(ink)
    for k, (length, top, right) in sorted(runs.items()):
        if length < LONG_STRIPE:
            continue
        stripes = [(length, top, right)]
        j = k + 2
        while j in runs and runs[j][0] >= MIN_STRIPE and runs.get(j - 1, (0,))[0] <= 1:
            stripes.append(runs[j])
            j += 2
        if len(stripes) < MIN_STRIPES:
            continue
        bottoms = {t + n - 1 for n, t, _ in stripes}
        rights = {c for _, _, c in stripes}
        if len(bottoms) > 1 and len(rights) > 1:
            continue  # parallel strokes of a glyph, not a triangle
        ys = [t for _, t, _ in stripes] + list(bottoms)
        xs = [c - n + 1 for n, _, c in stripes] + list(rights)
        return min(xs), min(ys), max(xs), max(ys)
    return None


def grip_of(rgb: np.ndarray, box: Sequence[float]) -> tuple[int, int, int, int] | None:
    """The resize grip's box (screen pixels, exclusive ends) in the bottom-right corner of a field
    boxed ``box`` on the screenshot ``rgb`` (H × W × 3), or None."""
    h, w = rgb.shape[:2]
    x2, y2 = min(w, int(box[2]) + OUTSIDE_PX), min(h, int(box[3]) + OUTSIDE_PX)
    x1, y1 = max(0, int(box[0]), x2 - CORNER_PX), max(0, int(box[1]), y2 - CORNER_PX)
    if x2 - x1 < LONG_STRIPE or y2 - y1 < LONG_STRIPE:
        return None
    found = find_grip(rgb[y1:y2, x1:x2])
    if found is None:
        return None
    gx1, gy1, gx2, gy2 = found
    return x1 + gx1, y1 + gy1, x1 + gx2 + 1, y1 + gy2 + 1


def resize_grips(image: Image.Image, elements: list[Element]) -> list[Element]:
    """The elements with every field that shows a resize grip typed a text area, and a resize
    handle added over each grip that no detected handle covers; the input list is not changed."""
    fields = [i for i, e in enumerate(elements) if e.type in (ElementType.INPUT_FIELD, ElementType.TEXT_AREA)]
    if not fields:
        return elements
    rgb = rgb_pixels(image)
    h, w = rgb.shape[:2]
    out = list(elements)
    for i in fields:
        grip = grip_of(rgb, out[i].bbox)
        if grip is None:
            continue
        if out[i].type == ElementType.INPUT_FIELD:
            # An input field has no text to carry over that a text area lacks; its focus stays.
            out[i] = Element(type=ElementType.TEXT_AREA, bbox=out[i].bbox, text=out[i].text, focused=out[i].focused,
                             score=out[i].score, text_confidence=out[i].text_confidence, id=out[i].id)
        if not any(e.type == ElementType.RESIZE_HANDLE and intersection(e.bbox, grip) > 0 for e in out):
            box = (max(0, grip[0] - HANDLE_PAD), max(0, grip[1] - HANDLE_PAD),
                   min(w, grip[2] + HANDLE_PAD), min(h, grip[3] + HANDLE_PAD))
            out.append(Element(type=ElementType.RESIZE_HANDLE, bbox=box, score=out[i].score))
    return out
