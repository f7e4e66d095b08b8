"""Toggle switches found by their pill shape.

GTK draws a switch as a pill about twice as wide as it is tall, with a round knob at one end. The
detector finds the ones switched on (a bold accent colour) but misses most that are off: on the
dark theme an off switch differs from the window by a dozen grey levels, on the light one it is an
outline. ``toggle_switches`` looks at what differs from the page's background even that faintly,
closes the gaps of a 1 px outline, and takes a piece 16-32 px tall and 1.6-2.4 times as wide whose
corners are empty and whose top and bottom run straight between its round ends: a pill. A switch
is a checkbox in the taxonomy (a two-state control the agent clicks to change).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection
from caap.observe.primitives import page_difference
from caap.taxonomy import ElementType

FAINT = 8              # largest channel difference from the page that counts (an off switch: ~13)
HEIGHT = (16, 32)      # px
WIDTH = (1.6, 2.4)     # times the height
CORNER = 6             # a corner square of a sixth of the height lies outside a pill's round ends
STRAIGHT = 0.9         # least share of the straight top and bottom (between the round ends) drawn
HELD = 0.3             # a box holding this share of the pill has it already


def _is_pill(piece: np.ndarray) -> bool:
    h, w = piece.shape
    c = max(2, h // CORNER)
    if piece[:c, :c].any() or piece[:c, -c:].any() or piece[-c:, :c].any() or piece[-c:, -c:].any():
        return False
    straight = slice(h // 2 + 2, w - h // 2 - 2)
    if piece[:2, straight].any(axis=0).mean() < STRAIGHT or piece[-2:, straight].any(axis=0).mean() < STRAIGHT:
        return False
    middle = slice(h // 2 - 2, h // 2 + 3)
    return bool(piece[middle, :2].any() and piece[middle, -2:].any())


def toggle_switches(image: Image.Image, elements: list[Element], difference: np.ndarray | None = None) -> list[Element]:
    """The elements with a checkbox added for every switch-shaped pill no box holds (see the
    module's docstring). ``difference``: the screen's ``page_difference`` where the caller has it."""
    import cv2  # the vision extra's

    faint = ((page_difference(image) if difference is None else difference) > FAINT).astype(np.uint8)
    drawn = cv2.morphologyEx(faint, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    _, labels, stats, _ = cv2.connectedComponentsWithStats(drawn, connectivity=8)
    widths, heights = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]
    sized = np.flatnonzero((heights >= HEIGHT[0]) & (heights <= HEIGHT[1])
                           & (widths >= WIDTH[0] * heights) & (widths <= WIDTH[1] * heights))
    out = list(elements)
    score = min((e.score or 0.0 for e in elements), default=0.25)
    for k in sized[sized > 0].tolist():
        x, y, w, h = (int(v) for v in stats[k, :4])
        if not _is_pill(labels[y:y + h, x:x + w] == k):
            continue
        box: Box = (x, y, x + w, y + h)
        if all(intersection(e.bbox, box) <= HELD * area(box) for e in out):
            out.append(Element(type=ElementType.CHECKBOX, bbox=box, score=score))
    return out
