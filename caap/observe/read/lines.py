"""Text lines inside a multi-line element (a text area), found from its pixels.

The reader's CTC head reads one left-to-right line. A text area shows several, so the reader cuts
it into lines first and reads each as a line of its own. The background is the crop's most common
grey level; a pixel is ink where it differs clearly from it. Columns inked in most rows (the area's
border, its scrollbar) are ignored, or every row would count as ink; ink wholly in the bottom-right
corner is a resize grip.

Text in an area is set with one line height, and lines packed that tightly touch (a "g" above an
"l"), so blank rows alone do not separate them. The line pitch is found instead, from the period of
the ink profile (its autocorrelation), and lines are cut at the phase where the fewest ink pixels
lie on the cuts. A line scrolled half out of view — cut by the top or bottom edge — is dropped: a
person cannot read it, and the label leaves it out too.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.geometry import Box
from caap.observe.primitives import grey_ink

LINE_SEPARATOR = "\n"  # between the lines of a multi-line element's text, as the labels write it
INK_DIFFERENCE = 48  # grey levels between ink and background
INSET = 3  # px of the element's edge skipped (its border and focus ring)
PITCHES = range(9, 41)  # line heights considered, px
GRIP = 14  # px: ink wholly inside the bottom-right corner this big is a resize grip


def _ink(image: Image.Image, inner: tuple[int, int, int, int]) -> np.ndarray:
    ink = grey_ink(np.asarray(image.crop(inner).convert("L"), dtype=np.int16), INK_DIFFERENCE)
    ink[:, ink.mean(axis=0) > 0.6] = False  # borders, scrollbars: not text
    return ink


def _pitch(profile: np.ndarray) -> int | None:
    """The line pitch of a row-ink profile, or None when it shows no clear period."""
    x = profile - profile.mean()
    energy = float((x * x).sum())
    if energy <= 0:
        return None
    scores = {}
    for p in PITCHES:
        if p * 2 > len(x):
            break
        scores[p] = float((x[:-p] * x[p:]).sum()) / energy * len(x) / (len(x) - p)
    if not scores or max(scores.values()) < 0.3:
        return None
    best = max(scores.values())
    return min(p for p, s in scores.items() if s >= 0.85 * best)  # the period, not one of its multiples


def _bands(rows: np.ndarray, min_height: int) -> list[tuple[int, int]]:
    """Runs of inked rows (a one-row gap is bridged: an "i" dot), at least ``min_height`` tall."""
    bands: list[list[int]] = []
    for y in np.flatnonzero(rows):
        if bands and y - bands[-1][1] <= 2:
            bands[-1][1] = int(y)
        else:
            bands.append([int(y), int(y)])
    return [(a, b) for a, b in bands if b - a + 1 >= min_height]


def text_lines(image: Image.Image, box: Sequence[int], *, min_height: int = 5) -> list[Box]:
    """Boxes of the text lines inside ``box`` (top to bottom), in image pixels; [] when it shows no text."""
    x1, y1, x2, y2 = (int(v) for v in box)
    ix1, iy1, ix2, iy2 = x1 + INSET, y1 + INSET, x2 - INSET, y2 - INSET
    if ix2 - ix1 < 4 or iy2 - iy1 < min_height:
        return []
    ink = _ink(image, (ix1, iy1, ix2, iy2))
    profile = ink.sum(axis=1).astype(np.float64)
    height = len(profile)
    bands = _bands(profile > 0, min_height)
    if not bands:
        return []
    pitch = _pitch(profile) if bands[-1][1] - bands[0][0] + 1 >= 2 * PITCHES.start else None
    if pitch is not None and any(b - a + 1 > 1.3 * pitch for a, b in bands):
        # Touching lines: cut every `pitch` rows, where the cuts cross the least ink.
        phase = min(range(pitch), key=lambda o: profile[o::pitch].sum())
        cuts = [*range(phase, height, pitch), height] if phase else [*range(0, height, pitch), height]
        cuts = sorted({0, *cuts})
        bands = []
        for top, bottom in itertools.pairwise(cuts):
            rows = np.flatnonzero(profile[top:bottom] > 0)
            if len(rows) and rows[-1] - rows[0] + 1 >= min_height:
                bands.append((top + int(rows[0]), top + int(rows[-1])))
    if len(bands) > 1:
        # A line scrolled half out of view touches the edge and is shorter than the others.
        usual = sorted(b - a + 1 for a, b in bands)[len(bands) // 2]
        bands = [(a, b) for a, b in bands if not ((a == 0 or b == height - 1) and b - a + 1 < 0.8 * usual)]
    lines: list[Box] = []
    for top, bottom in bands:
        cols = np.flatnonzero(ink[top:bottom + 1].any(axis=0))
        if cols[0] >= ink.shape[1] - GRIP and top >= height - GRIP:
            continue  # a resize grip in the bottom-right corner, not text
        # One px of air around the ink, as the labelled text boxes have.
        lx1 = max(x1, ix1 + int(cols[0]) - 1)
        lx2 = min(x2, ix1 + int(cols[-1]) + 2)
        lines.append((lx1, max(y1, iy1 + top - 1), lx2, min(y2, iy1 + bottom + 2)))
    return lines
