"""Mnemonic underlines: the short line a desktop toolkit draws under the letter that Alt+letter
presses (Qt draws them all the time: ``&Find`` shows an underlined F).

PP-OCR reads the underlined letter with its line as another letter (F as E, T as I); the
accessibility tree, and so the labels, have the name without it. ``without_mnemonic_underlines``
gives the readers the screen with each such line painted in the background colour round it.

A mnemonic underline is one horizontal run of ink, one or two pixels high, one or two blank rows
below the baseline (the lowest row most letters reach), about as wide as the letter above it: that
letter stands on the baseline over most of its columns, the next letter of its word within a few
columns, other letters on the same baseline, and nothing else on the line's rows is wider than a
descender's stroke. An underscore has no letter over it, a link's underline runs under the whole
text, a letter's bottom stroke or a check box's bottom edge meets the strokes above it, and a box's
edge stands apart from its label. Desktop windows only (``screens = "desktop"``): Qt and Tk draw
these lines; GTK only while Alt is held.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import baseline_row, difference, face_colour, frame_lines, rgb_pixels, true_runs
from caap.taxonomy import ElementType

# The labels and controls whose names carry a mnemonic (a field's value or a link does not).
MNEMONIC_TYPES = frozenset({ElementType.TEXT, ElementType.BUTTON, ElementType.CHECKBOX, ElementType.RADIO,
                            ElementType.TAB, ElementType.TABLED_TEXT, ElementType.TREE_ITEM, ElementType.DROPDOWN})
INK = 80               # largest channel difference from the background that counts as ink ...
FAINT = 0.5            # ... or this share of the crop's strongest one (a greyed label)
MIN_WIDTH = 3          # px: the narrowest underline (under an i or l)
MAX_WIDTH = 1.3        # text heights: the widest (under an M or W)
MAX_HEIGHT = 2         # px: an underline's thickness
COVER = 0.9            # share of its run's columns the line inks on each of its rows
LETTER_OVER = 0.25     # share of the run's columns with the letter's ink above the gap (an l over a 4-px line: one)
STROKE = 3             # px: the widest other ink on the underline's rows (a descender's stroke)
MAX_SHARE = 0.5        # of the text's inked width at most: a link's underline spans all of it
MIN_TEXT_PX = 7        # px: a text's least height for a mnemonic to be looked for
FRAME_SHARE = 0.8      # a row or column inked this share of the way across ...
FRAME_DEPTH = 3        # ... within this many px of the crop's side is a frame's line
NEIGHBOUR_PX = 3       # px beside the line (past the column next to it) where the next letter stands


def _runs(row: np.ndarray) -> list[tuple[int, int]]:
    """The ``[start, end)`` stretches of ink in one row."""
    return [(first, last + 1) for first, last in true_runs(row)]


def mnemonic_underline(ink: np.ndarray) -> tuple[int, int, int, int] | None:
    """The mnemonic underline in the ink mask of one line of text, as ``(top, bottom, start, end)``
    (rows and columns of the crop, ends excluded), or None."""
    ink = ink.copy()
    # A button's frame or focus ring: lines along the crop's sides inked most of the way. Its top
    # or bottom edge alone goes too (a box may cut the frame's other edge off), since no row of
    # text is inked that far across; its sides only where the frame closes round the text (a
    # tight text box's first letter may be a stem as tall as the box).
    frame_rows, frame_cols = frame_lines(ink, FRAME_DEPTH, FRAME_SHARE)
    ink[frame_rows] = False
    if (frame_rows < FRAME_DEPTH).any() and (frame_rows >= ink.shape[0] - FRAME_DEPTH).any():
        ink[:, frame_cols] = False
    rows = np.flatnonzero(ink.any(axis=1))
    cols = np.flatnonzero(ink.any(axis=0))
    if rows.size == 0 or rows[-1] - rows[0] + 1 < MIN_TEXT_PX:
        return None
    height, width = int(rows[-1] - rows[0] + 1), int(cols[-1] - cols[0] + 1)
    h, w = ink.shape
    # The line lies in the lower half of what is drawn, under the letters.
    for top in range(int(rows[-1]), int(rows[0]) + height // 2, -1):
        runs = [(a, b) for a, b in _runs(ink[top]) if b - a > STROKE]
        if len(runs) != 1:
            continue
        a, b = runs[0]
        if not (MIN_WIDTH <= b - a <= MAX_WIDTH * height and b - a <= MAX_SHARE * width):
            continue
        line_top, line_bottom = top, top + 1
        while line_top > 0 and line_bottom - line_top < MAX_HEIGHT and ink[line_top - 1, a:b].mean() >= COVER:
            line_top -= 1
        while line_bottom < h and line_bottom - line_top < MAX_HEIGHT and ink[line_bottom, a:b].mean() >= COVER:
            line_bottom += 1
        around = slice(max(a - 1, 0), min(b + 1, w))
        # A blank row above and below it, the whole width: a frame's or a box's bottom edge meets
        # its sides, a letter's bottom stroke its stems.
        gap = line_top - 1
        if gap < 1 or ink[gap, around].any() or (line_bottom < h and ink[line_bottom, around].any()):
            continue
        rest = ink.copy()
        rest[line_top:line_bottom, a:b] = False
        if any(e - s > STROKE for r in rest[line_top:line_bottom] for s, e in _runs(r)):
            continue  # other ink as wide on its rows: a second line of text, a picture
        baseline = baseline_row(rest)
        if baseline is None or not baseline + 2 <= line_top <= baseline + 3 or not rest[baseline, a:b].any():
            continue  # not just under a letter standing on the baseline
        beside = rest[baseline].copy()
        beside[around] = False
        if not beside.any():
            continue  # no other letter on that baseline: the bottom edge of a box and a line under it
        if rest[:gap, a:b].any(axis=0).mean() < LETTER_OVER:
            continue  # no letter over it: an underscore
        # The letter is one of a word's: another stands within a few columns of it (a check box's
        # indicator, whose bottom edge a rounded corner may free, stands apart from its label).
        body = rest[:gap]
        left, right = body[:, max(a - NEIGHBOUR_PX, 0):max(a - 1, 0)], body[:, b + 1:b + NEIGHBOUR_PX]
        near = np.concatenate([left, right], axis=1)
        if near.any():
            return line_top, line_bottom, a, b
    return None


def without_mnemonic_underlines(image: Image.Image, elements: Sequence[Element]) -> Image.Image:
    """``image`` with the mnemonic underline of every label and control that shows one painted in
    the colour round it (``image`` itself when none does)."""
    named = [e for e in elements if e.type in MNEMONIC_TYPES]
    if not named:
        return image
    pixels = rgb_pixels(image)
    rgb: np.ndarray | None = None  # a copy, once a line is to be painted
    for e in named:
        x1, y1, x2, y2 = (int(v) for v in e.bbox)
        x1, y1 = max(x1, 0), max(y1, 0)
        x2, y2 = min(x2, image.width), min(y2 + 1, image.height)  # a tight box may end on the line
        if x2 - x1 < MIN_WIDTH or y2 - y1 < MIN_TEXT_PX:
            continue
        crop = (pixels if rgb is None else rgb)[y1:y2, x1:x2]
        strength = difference(crop, face_colour(crop), "max")  # a default button's gradient face, not its frame
        # A greyed label (Qt's insensitive buttons: 190 on a 240 face) is fainter than INK throughout.
        line = mnemonic_underline(strength > min(INK, FAINT * int(strength.max())))
        if line is None:
            continue
        if rgb is None:
            rgb = np.array(pixels)  # painted below
        top, bottom, a, b = line
        # Painted with the blank row between the letters and the line: the face as it is right there
        # (a gradient face's median differs by a few levels, which a greyed label's stretched
        # reading turns into a line again).
        rgb[y1 + top:y1 + bottom, x1 + a:x1 + b] = rgb[y1 + top - 1, x1 + a:x1 + b]
    return image if rgb is None else Image.fromarray(rgb)
