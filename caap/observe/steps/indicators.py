"""A check box or radio button boxed as a text: the control drawn at the start of a text's box.

The detector boxes some check boxes and radio buttons as a text, a table row or a field: GTK 3's
toggle cells in a tree (the row and its box), Qt's check boxes inside a dotted focus rectangle, a
radio whose circle it takes for the start of the line. The state head reads ``checked`` only on
controls, so such a box reads as a plain text and its state is lost. ``labelled_controls`` looks at
the start of every one-line text box (and a few pixels before it) for what a toolkit draws as the
control and a letter never is:

- a square 11-24 px a side, its own run of columns with a clear gap (``GAP`` px) before the text,
  taller than the text's letters (``TALLER`` times their height from top to baseline): a capital
  ``O`` is as tall as the letters beside it, and a word's letters stand closer;
- a closed outline: a square's four sides drawn, or a ring all round whose inside is empty or a
  centred round dot (a clock's hands, a magnifier's handle are not);
- few colours: an outline, a face and a mark, where a file's or a folder's icon has many.

A box so found becomes the control (its box grown over the control where it began after it); a
control the detector boxed on its own already is left alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, intersection
from caap.observe.primitives import background_colour, baseline_row, ink_mask, rgb_pixels, true_runs
from caap.observe.steps.figures import CONTROL_INK, OPEN_OUTLINE, ROUND_CORNERS, corner_ink, enclosed_share
from caap.taxonomy import ElementType

TEXT_TYPES = (ElementType.TEXT, ElementType.TABLED_TEXT, ElementType.INPUT_FIELD)
CONTROLS = (ElementType.CHECKBOX, ElementType.RADIO)
LINE_HEIGHT = (8, 40)  # px: a one-line box
REACH = 8              # px before the box's left side where the control may stand (a focus rectangle's box)
SIDE = (11, 24)        # px: a control's side
GAP = 3                # px at least between the control and the text
TALLER = 1.15          # the control's height against the text's, top to baseline
FAINT = 16             # a channel this far from the background: the control's anti-aliased outline
FRAME_ROW = 0.6        # a row inked over this share of the box runs across it: a frame line, not ink of a glyph
DOTTED_ROW = 0.25      # near the box's top or bottom, a row this inked from end to end: a dotted focus frame
DOTS = 6               # runs of ink a dotted row has at least (an outline's or a glyph's row has a few)
EDGE_ROWS = 4          # px from the top or bottom of the looked-at band where a focus frame runs
SIDE_DRAWN = 0.9       # share of each side's middle a square's outline covers
RING_DRAWN = 33 / 36   # share of directions round its middle a ring's outline covers
DOT = 0.55             # of the radius: the inside where a radio's dot sits
COLOURS = 24           # a control's colours at most (channels quantised to 24 levels)
TOP_COLOURS = 0.65     # share of its pixels its three commonest colours cover, at least


def _closed(mask: np.ndarray) -> np.ndarray:
    """The mask closed by a 3 × 3 square: an outline's anti-aliased corners joined."""
    import cv2  # the vision extra's

    padded = np.pad(mask, 1).astype(np.uint8)
    return cv2.morphologyEx(padded, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))[1:-1, 1:-1].astype(bool)


def _square_drawn(mask: np.ndarray) -> bool:
    h, w = mask.shape
    a, b = int(w * 0.15), int(w * 0.85) + 1
    c, d = int(h * 0.15), int(h * 0.85) + 1
    sides = (mask[:2, a:b].any(axis=0), mask[-2:, a:b].any(axis=0),
             mask[c:d, :2].any(axis=1), mask[c:d, -2:].any(axis=1))
    return all(float(s.mean()) >= SIDE_DRAWN for s in sides)


def _ring_drawn(mask: np.ndarray) -> bool:
    h, w = mask.shape
    cy, cx = (h - 1) / 2, (w - 1) / 2
    radius = min(h, w) / 2
    yy, xx = np.mgrid[:h, :w]
    distance = np.hypot(yy - cy, xx - cx)
    angle = np.arctan2(yy - cy, xx - cx)
    edge = (distance >= radius - 3) & (distance <= radius + 0.5)
    drawn = 0
    for t in np.linspace(-np.pi, np.pi, 36, endpoint=False):
        near = np.abs(np.angle(np.exp(1j * (angle - t)))) < np.pi / 18
        drawn += bool(mask[near & edge].any())
    if drawn < RING_DRAWN * 36:
        return False
    inside = mask & (distance < radius * DOT)
    if not inside.any():
        return True
    ys, xs = np.nonzero(inside)
    bh, bw = int(np.ptp(ys)) + 1, int(np.ptp(xs)) + 1
    if not (0.75 <= bw / bh <= 1.33 and len(ys) / (bh * bw) >= 0.6):
        return False  # not a dot: hands, a tick, a letter's stroke
    turned = inside[::-1, ::-1]
    return float((inside & turned).sum() / (inside | turned).sum()) >= 0.6


def _few_colours(pixels: np.ndarray) -> bool:
    codes = pixels.reshape(-1, 3).astype(np.int32) // 24
    packed = (codes[:, 0] << 10) | (codes[:, 1] << 5) | codes[:, 2]
    counts = np.sort(np.unique(packed, return_counts=True)[1])[::-1]
    return len(counts) <= COLOURS and float(counts[:3].sum() / counts.sum()) >= TOP_COLOURS


def _frame_rows(ink: np.ndarray) -> np.ndarray:
    """The rows of a box's ink mask that are frame lines: inked across most of it, or, near its
    top or bottom, dotted from end to end (a focus rectangle)."""
    share = ink.mean(axis=1)
    frame = share >= FRAME_ROW
    for y in [*range(min(EDGE_ROWS, len(share))), *range(max(0, len(share) - EDGE_ROWS), len(share))]:
        xs = np.flatnonzero(ink[y])
        frame[y] |= bool(share[y] >= DOTTED_ROW and xs.size and xs[-1] - xs[0] + 1 >= FRAME_ROW * ink.shape[1]
                         and len(true_runs(ink[y])) >= DOTS)
    return frame


def leading_control(rgb: np.ndarray, box: Sequence[int]) -> tuple[ElementType, Box] | None:
    """The check box or radio button drawn at the start of a one-line text's ``box`` (or up to
    ``REACH`` px before it) and its box on the screen; None where the box starts with a glyph, an
    icon or nothing (see the module's docstring)."""
    x1, y1, x2, y2 = (int(v) for v in box)
    height, width = rgb.shape[:2]
    if not LINE_HEIGHT[0] <= y2 - y1 <= LINE_HEIGHT[1]:
        return None
    left, top, bottom = max(0, x1 - REACH), max(0, y1 - 2), min(height, y2 + 2)
    crop = rgb[top:bottom, left:min(width, x2)].astype(np.int16)
    if crop.shape[1] < 2 * SIDE[0]:
        return None
    background = background_colour(crop)
    ink = ink_mask(crop, background, CONTROL_INK, reduce="max")
    ink[_frame_rows(ink)] = False
    runs = true_runs(ink.any(axis=0), gap=1)
    while runs and runs[0][1] - runs[0][0] < 2:  # a frame's side
        runs = runs[1:]
    if len(runs) < 2 or runs[1][0] - runs[0][1] - 1 < GAP:
        return None
    a, b = runs[0][0], runs[0][1] + 1
    rows = np.flatnonzero(ink[:, a:b].any(axis=1))
    r0, r1 = int(rows[0]), int(rows[-1]) + 1
    side_h, side_w = r1 - r0, b - a
    if not (SIDE[0] <= side_w <= SIDE[1] and SIDE[0] <= side_h and abs(side_w - side_h) <= 1):
        return None
    text = np.zeros_like(ink)
    for first, last in runs[1:]:
        if last - first >= 2:  # not a frame's side
            text[:, first:last + 1] = ink[:, first:last + 1]
    text_rows = np.flatnonzero(text.any(axis=1))
    baseline = baseline_row(text)
    if baseline is None or side_h < TALLER * (baseline - int(text_rows[0]) + 1):
        return None
    outline = _closed(ink_mask(crop, background, FAINT, reduce="max")[r0:r1, a:b])
    if enclosed_share(outline) < OPEN_OUTLINE:
        return None
    square = corner_ink(outline) > ROUND_CORNERS
    if not (_square_drawn(outline) if square else _ring_drawn(outline)):
        return None
    control: Box = (left + a, top + r0, left + b, top + r1)
    if not _few_colours(rgb[control[1]:control[3], control[0]:control[2]]):
        return None
    return (ElementType.CHECKBOX if square else ElementType.RADIO), control


def labelled_controls(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Texts, rows and fields whose box starts with a check box's or radio button's control become
    that control, boxed over it and its label (``leading_control``)."""
    suspects = [i for i, e in enumerate(elements) if e.type in TEXT_TYPES]
    if not suspects:
        return elements
    rgb = rgb_pixels(image)
    controls = [e.bbox for e in elements if e.type in CONTROLS]
    out = list(elements)
    for i in suspects:
        element = out[i]
        found = leading_control(rgb, element.bbox)
        if found is None:
            continue
        kind, control = found
        if any(intersection(control, c) > 0 for c in controls):
            continue  # the control is boxed already; this box is its label
        x1, y1, x2, y2 = element.bbox
        bbox = (min(x1, control[0]), min(y1, control[1]), x2, max(y2, control[3]))
        out[i] = element.retyped(kind, bbox=bbox)
    return out

