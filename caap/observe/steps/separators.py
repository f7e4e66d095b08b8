"""Text boxes cut at a middle dot.

Feeds and lists join items on one line with a middle dot ("Emelia @deneen · 17h ago"): two texts,
each its own element in the page, that the detector boxes as one line. The dot is easy to tell
from punctuation: a speck of ink at most 3 px a side, alone in its columns, blank on both sides,
and raised to the middle of the lowercase letters, where a period or a comma sits on the baseline
and an "i"'s dot has its stem under it. ``split_at_separators`` cuts each text box at such dots
and fits the parts to their ink; the dot itself belongs to neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box
from caap.observe.primitives import RIGHT_PAD, background_colour, ink_mask
from caap.observe.steps.boxes import cut_across
from caap.taxonomy import ElementType

INK_SUM = 48          # summed |RGB| from the box's background that counts as ink
DOT_MAX_PX = 3        # a separator dot's largest side
DOT_SHARE = 0.25      # ... and at most this share of the letters' height
SPACE_PX = 2          # blank columns each side of the dot
MIN_PART_PX = 3       # glyph columns each part keeps
BASELINE_ROWS = 0.25  # rows with this share of the busiest row's ink lie above the baseline
RAISED = (0.2, 0.7)   # the dot's centre above the baseline, in letter heights (a period's: ~0)
MIN_SIZE = (12, 7)    # px (width, height) of a box worth looking into


def _dots(ink: np.ndarray) -> list[tuple[int, int]]:
    """Column spans (start, end exclusive) of the separator dots in a text box's ink mask."""
    import cv2  # the vision extra's

    counts = ink.sum(axis=1)
    rows = np.flatnonzero(counts)
    if len(rows) < 5:
        return []
    top = int(rows[0])
    baseline = int(np.flatnonzero(counts >= BASELINE_ROWS * counts.max())[-1]) + 1
    height = baseline - top
    cols = cast(np.ndarray, ink.any(axis=0))  # numpy types any(axis=...) as bool | array
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    dots = []
    for k in range(1, n):
        x, y, w, h = (int(v) for v in stats[k, :4])
        if max(w, h) > DOT_MAX_PX or max(w, h) > DOT_SHARE * height:
            continue
        raised = baseline - (y + h / 2)
        if not RAISED[0] * height <= raised <= RAISED[1] * height or raised < 1:
            continue
        column = ink[:, x:x + w] & (labels[:, x:x + w] != k)
        if column.any() or x < SPACE_PX + 1 or x + w + SPACE_PX >= ink.shape[1]:
            continue
        if cols[x - SPACE_PX:x].any() or cols[x + w:x + w + SPACE_PX].any():
            continue
        dots.append((x, x + w))
    return sorted(dots)


def separated_parts(pixels: np.ndarray, box: Box) -> list[tuple[int, int]] | None:
    """The column spans (screen x, exclusive ends) of the texts a box holds between middle dots,
    or None where it holds none."""
    x1, y1, x2, y2 = box
    band = pixels[y1:y2, x1:x2]
    if band.shape[1] < MIN_SIZE[0] or band.shape[0] < MIN_SIZE[1]:
        return None
    ink = ink_mask(band, background_colour(band), INK_SUM)
    dots = _dots(ink)
    if not dots:
        return None
    glyphs = cast(np.ndarray, ink.any(axis=0)).copy()
    for a, b in dots:
        glyphs[a:b] = False
    bounds = [0, *(x for dot in dots for x in dot), ink.shape[1]]
    parts = []
    for a, b in zip(bounds[::2], bounds[1::2], strict=True):  # the stretches between dots
        cols = np.flatnonzero(glyphs[a:b])
        if len(cols) >= MIN_PART_PX:
            parts.append((x1 + a + int(cols[0]), x1 + min(b, a + int(cols[-1]) + 1 + RIGHT_PAD)))
    return parts if len(parts) > 1 else None


def split_at_separators(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements with every text box that holds texts joined by middle dots cut into them; the
    parts keep the box's top, bottom, type and score."""
    return cut_across(image, elements, lambda e: e.type is ElementType.TEXT, separated_parts)
