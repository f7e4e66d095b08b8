"""A text field's own ink: what is drawn in the value's colour, and what only shows through.

A field's value is drawn in one text colour. A second, clearly lighter text inside the same field
is something else: a heading behind a transparent field (MiniWoB++'s email search draws "Results"
under the typed name), or an inline completion hint. Read together, the two become one word
(``Kiley`` over ``Results`` read ``Kileyts``), and an agent that checks what it typed types it
again. The reader and PP-OCR get the screenshot with the lighter text painted over in the field's
background colour; everything else, the field's border and focus ring included, is left as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.lines import background_colour
from caap.taxonomy import ElementType

FIELD_TYPES = frozenset({ElementType.INPUT_FIELD})
BORDER_PX = 3          # a field's border and focus ring stay untouched
INK_DIFFERENCE = 48    # a pixel this far (largest channel) from the background is ink
DARK_TEXT = 150        # the value's ink must reach this far from the background
CORE_FRACTION = 0.6    # ink at this share of the strongest contrast is the value's core
LIGHT_FRACTION = 0.4   # the second text's ink stays below this share of it (median)
MIN_PIECE_HEIGHT = 5   # a shorter piece of lighter ink is the light edge of one of the value's glyphs
MIN_FOREIGN_PX = 12    # fewer lighter pixels than this are noise, not a second text
TOUCH_PX = 4           # a second text runs into the value within this many columns; farther off,
                       # lighter ink is a control of its own (a spinner's arrows), which stays


def _background(crop: np.ndarray) -> np.ndarray:
    return background_colour(crop).astype(np.int16)


def foreign_ink(crop: np.ndarray) -> np.ndarray | None:
    """The mask of what to paint over inside a field's crop (H × W × 3, uint8, border already cut
    away), or None when the crop holds one text colour only.

    The value's ink is its core (the strongest contrast) and a fringe one pixel wide around it.
    Lighter ink farther off, in pieces of a glyph's height, of one clearly lighter tone, running
    into the value's columns, is a second text. Once one shows, only the value's core is kept:
    where the two texts cross, the lighter one lies inside the value's fringe as well (binarising
    every field instead loses thin strokes: 22 of 207 labelled field texts on the test and
    validation screens)."""
    import cv2  # the vision extra's, as for PP-OCR

    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return None
    bg = _background(crop)
    diff = np.abs(crop.astype(np.int16) - bg).max(axis=2)
    strongest = int(diff.max())
    if strongest < DARK_TEXT:
        return None  # a placeholder or a light value: nothing darker to keep
    core = diff >= CORE_FRACTION * strongest
    # A glyph's anti-aliased fringe lies within one pixel of its core.
    fringe = cv2.dilate(core.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    apart = (diff > INK_DIFFERENCE) & ~fringe
    n, labels, stats, _ = cv2.connectedComponentsWithStats(apart.astype(np.uint8), connectivity=8)
    columns = np.flatnonzero(core.any(axis=0))
    left, right = int(columns[0]) - TOUCH_PX, int(columns[-1]) + TOUCH_PX
    second = np.zeros(n, bool)
    for k in sorted(range(1, n), key=lambda k: stats[k, cv2.CC_STAT_LEFT]):  # a word runs on glyph by glyph
        x, width, height = (stats[k, cv2.CC_STAT_LEFT], stats[k, cv2.CC_STAT_WIDTH], stats[k, cv2.CC_STAT_HEIGHT])
        if height >= MIN_PIECE_HEIGHT and x <= right and x + width - 1 >= left:
            second[k] = True
            right = max(right, x + width - 1 + TOUCH_PX)
    foreign = second[labels]
    if int(foreign.sum()) < MIN_FOREIGN_PX or float(np.median(diff[foreign])) > LIGHT_FRACTION * strongest:
        return None
    return ~core


def without_foreign_ink(image: Image.Image, elements: Sequence[Element]) -> Image.Image:
    """``image`` with the second text of every text field painted in that field's background
    colour (``image`` itself when no field shows one)."""
    fields = [e for e in elements if e.type in FIELD_TYPES]
    if not fields:
        return image
    rgb = np.array(image.convert("RGB"))
    painted = False
    for element in fields:
        x1, y1, x2, y2 = (int(v) for v in element.bbox)
        x1, y1 = max(x1 + BORDER_PX, 0), max(y1 + BORDER_PX, 0)
        x2, y2 = min(x2 - BORDER_PX, image.width), min(y2 - BORDER_PX, image.height)
        if x2 - x1 < 3 or y2 - y1 < 3:
            continue
        crop = rgb[y1:y2, x1:x2]
        mask = foreign_ink(crop)
        if mask is not None:
            crop[mask] = _background(crop).astype(np.uint8)
            painted = True
    return Image.fromarray(rgb) if painted else image
