"""Text lines inside a multi-line element (a text area), found from its pixels.

The reader's CTC head reads one left-to-right line. A text area shows several, so the reader cuts
it into horizontal bands of ink first and reads each band as a line of its own. The background is
the crop's most common grey level; a row holds ink where some pixel differs clearly from it.
Columns inked in most rows (the area's border, its scrollbar, a resize grip) are ignored, or every
row would count as ink and the whole area would be one band.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.geometry import Box

INK_DIFFERENCE = 48  # grey levels between ink and background
INSET = 3  # px of the element's edge skipped (its border and focus ring)


def text_lines(image: Image.Image, box: Sequence[int], *, min_height: int = 5, max_gap: int = 1) -> list[Box]:
    """Boxes of the text lines inside ``box`` (top to bottom), in image pixels; [] when it shows no text.

    Bands of ink rows closer than ``max_gap`` rows are one line (an "i" dot, a descender); a band
    lower than ``min_height`` px is noise, not a line."""
    x1, y1, x2, y2 = (int(v) for v in box)
    ix1, iy1, ix2, iy2 = x1 + INSET, y1 + INSET, x2 - INSET, y2 - INSET
    if ix2 - ix1 < 4 or iy2 - iy1 < min_height:
        return []
    grey = np.asarray(image.crop((ix1, iy1, ix2, iy2)).convert("L"), dtype=np.int16)
    values, counts = np.unique(grey, return_counts=True)
    background = int(values[counts.argmax()])
    ink = np.abs(grey - background) > INK_DIFFERENCE
    ink[:, ink.mean(axis=0) > 0.6] = False  # borders, scrollbars: not text
    rows = ink.any(axis=1)
    bands: list[list[int]] = []
    for y, on in enumerate(rows):
        if not on:
            continue
        if bands and y - bands[-1][1] <= max_gap + 1:
            bands[-1][1] = y
        else:
            bands.append([y, y])
    lines: list[Box] = []
    for top, bottom in bands:
        if bottom - top + 1 < min_height:
            continue
        cols = np.flatnonzero(ink[top:bottom + 1].any(axis=0))
        # One px of air around the ink, as the labelled text boxes have; the box's own width is kept
        # where the ink reaches its edge.
        lx1 = max(x1, ix1 + int(cols[0]) - 1)
        lx2 = min(x2, ix1 + int(cols[-1]) + 2)
        lines.append((lx1, max(y1, iy1 + top - 1), lx2, min(y2, iy1 + bottom + 2)))
    return lines
