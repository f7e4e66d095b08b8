"""Toggle switches found by their pill shape.

GTK draws a switch as a pill about twice as wide as it is tall, with a round knob at one end. The
detector finds the ones switched on (a bold accent colour) but misses most that are off: on the
dark theme an off switch differs from the window by a dozen grey levels, on the light one it is an
outline. ``toggle_switches`` looks at what differs from the page's background even that faintly,
closes the gaps of a 1 px outline, and takes a piece 16-32 px tall and 1.6-2.4 times as wide whose
corners are empty and whose top and bottom run straight between its round ends: a pill. A switch
is a checkbox in the taxonomy (a two-state control the agent clicks to change).

The detector sometimes boxes a switch that is on as a text, and the readers read its knob as a
letter (``0``, ``O``). ``retype_pills`` makes such a box a checkbox, for the state head to read:
a text, button or icon box fitted to a pill (the pill's own box, ``PILL_IOU``) that reads at most
one glyph. A rounded badge or button with a word on it keeps its type.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection, iou
from caap.observe.primitives import page_difference
from caap.taxonomy import ElementType

FAINT = 8              # largest channel difference from the page that counts (an off switch: ~13)
HEIGHT = (16, 32)      # px
WIDTH = (1.6, 2.4)     # times the height
CORNER = 6             # a corner square of a sixth of the height lies outside a pill's round ends
STRAIGHT = 0.9         # least share of the straight top and bottom (between the round ends) drawn
HELD = 0.3             # a box holding this share of the pill has it already


def _is_pill(piece: np.ndarray, corner: int = CORNER) -> bool:
    h, w = piece.shape
    c = max(2, h // corner)
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


# GTK 3's switch rounds its ends less than a half circle, and its knob's shadow adds a row: the
# corner squares looked at are smaller than for a pill alone, the glyph rule standing in.
PILL_CORNER = 8
PILL_IOU = 0.6         # a box this close to a pill's own box is the pill's
PILL_REACH = 3         # px round the box where the pill's ends may lie
PILL_TYPES = frozenset({ElementType.TEXT, ElementType.BUTTON, ElementType.ICON})


def _pill_box(difference: np.ndarray, box: Box) -> Box | None:
    """The box of the one switch-shaped pill drawn round ``box`` (``PILL_REACH`` px beyond it), or None."""
    import cv2  # the vision extra's

    h, w = difference.shape
    x1, y1 = max(0, int(box[0]) - PILL_REACH), max(0, int(box[1]) - PILL_REACH)
    x2, y2 = min(w, int(box[2]) + PILL_REACH), min(h, int(box[3]) + PILL_REACH)
    if y2 - y1 < HEIGHT[0] or x2 - x1 < WIDTH[0] * HEIGHT[0]:
        return None
    faint = (difference[y1:y2, x1:x2] > FAINT).astype(np.uint8)
    drawn = cv2.morphologyEx(faint, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(drawn, connectivity=8)
    if count < 2:
        return None
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, pw, ph = (int(v) for v in stats[k, :4])
    if not (HEIGHT[0] <= ph <= HEIGHT[1] and WIDTH[0] * ph <= pw <= WIDTH[1] * ph):
        return None
    if not _is_pill(labels[y:y + ph, x:x + pw] == k, PILL_CORNER):
        return None
    return (x1 + x, y1 + y, x1 + x + pw, y1 + y + ph)


def retype_pills(image: Image.Image, elements: list[Element], difference: np.ndarray | None = None) -> list[Element]:
    """Text, button and icon boxes fitted to a switch's pill, read as at most one glyph, made
    checkboxes (module docstring). ``difference``: the screen's ``page_difference``."""
    candidates = [i for i, e in enumerate(elements)
                  if e.type in PILL_TYPES and len((e.text or "").strip()) <= 1]
    if not candidates:
        return list(elements)
    diff = page_difference(image) if difference is None else difference
    out = list(elements)
    for i in candidates:
        e = elements[i]
        pill = _pill_box(diff, e.bbox)
        if pill is None or iou(pill, e.bbox) < PILL_IOU:
            continue
        out[i] = Element(id=e.id, type=ElementType.CHECKBOX, bbox=e.bbox, score=e.score, visible=e.visible)
    return out
