"""A list row selected by a rounded face of its own.

GTK 4's sidebars and list views (and the lists of most current desktop themes) mark the selected row
with a faint rounded face: a grey a few levels off the list's background, standing a few pixels
above and below the row's text, with its corners cut round. The state head sees a row as its box
with a thin margin, which lies inside that face, so it finds nothing to compare the grey with: GTK
4's selected rows are its most missed selection on desktop validation screens. ``rounded_faces``
follows the face out from the row's box and asks for the three things a selection draws and a
plain row does not:

- a flat face behind the text reaching beyond its box above and below, no taller than a row
  (``FACE_ROWS`` text heights);
- one other colour just above and just below it (the list it stands on);
- rounded corners: at least two corners of the face's bounding rectangle are not the face's colour.

Table headers (Qt's, Tk's) are square bands, and are not taken.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import SAME_COLOUR, dominant_colour
from caap.observe.steps.rewrite import rewrite_each
from caap.taxonomy import ElementType

ROW_TYPES = (ElementType.TABLED_TEXT, ElementType.TREE_ITEM)
FACE_SHARE = 0.9  # share of a pixel row's width in the face colour for the row to be part of the face
FACE_MARGIN = 2  # px the face reaches past the text box above and below, at least
FACE_ROWS = 3  # the face is at most this many text heights tall: a row, not a panel
MAX_REACH = 40  # px followed up or down from the box
MAX_SPREAD = 600  # px followed left or right along the face
ROUND_CORNERS = 2  # corners of the face's bounding rectangle off its colour, at least
SIDE_TOLERANCE = 12  # per channel: the colour above and below the face is one colour


def _same(a: np.ndarray, b: np.ndarray, tolerance: int = SAME_COLOUR) -> bool:
    return bool(np.abs(a.astype(np.int32) - b.astype(np.int32)).max() <= tolerance)


def selection_face(rgb: np.ndarray, box: tuple[int, int, int, int]) -> tuple[int, int, int, int] | None:
    """The extent (x1, y1, x2, y2, inclusive) of the rounded face behind a row's box, or None where
    the row stands on no face of its own."""
    height, width = rgb.shape[:2]
    x1, y1, x2, y2 = (max(0, box[0]), max(0, box[1]), min(width, box[2]), min(height, box[3]))
    if y2 - y1 < 6 or x2 - x1 < 2 * (y2 - y1):  # a word's box, where the face shows between glyphs
        return None
    face = dominant_colour(rgb[y1:y2, x1:x2]).astype(np.int32)

    def face_row(y: int) -> bool:
        line = rgb[y, x1:x2].astype(np.int32)
        return bool((np.abs(line - face).max(axis=1) <= SAME_COLOUR).mean() >= FACE_SHARE)

    top = y1
    while top - 1 >= 0 and y1 - top < MAX_REACH and face_row(top - 1):
        top -= 1
    bottom = y2 - 1
    while bottom + 1 < height and bottom - y2 < MAX_REACH and face_row(bottom + 1):
        bottom += 1
    if y1 - top < FACE_MARGIN or bottom - (y2 - 1) < FACE_MARGIN or bottom - top + 1 > FACE_ROWS * (y2 - y1):
        return None
    if top < 3 or bottom + 3 >= height:
        return None
    probe = top + 1  # above the text: the face alone
    left = x1
    while left - 1 >= 0 and x1 - left < MAX_SPREAD and _same(rgb[probe, left - 1], face):
        left -= 1
    right = x2 - 1
    while right + 1 < width and right - x2 < MAX_SPREAD and _same(rgb[probe, right + 1], face):
        right += 1
    above = dominant_colour(rgb[top - 3: top - 1, left: right + 1])
    below = dominant_colour(rgb[bottom + 2: bottom + 4, left: right + 1])
    if _same(above, face) or not _same(above, below, SIDE_TOLERANCE):
        return None
    corners = (rgb[top, left], rgb[top, right], rgb[bottom, left], rgb[bottom, right])
    if sum(not _same(c, face) for c in corners) < ROUND_CORNERS:
        return None
    return left, top, right, bottom


def _selected(rgb: np.ndarray, element: Element) -> Element | None:
    x1, y1, x2, y2 = (int(v) for v in element.bbox)
    if selection_face(rgb, (x1, y1, x2, y2)) is None:
        return None
    return element.model_copy(update={"highlighted": True})


def rounded_faces(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Rows the state head left unselected that stand on a rounded face of their own are selected."""
    return rewrite_each(image, elements, lambda e: e.type in ROW_TYPES and not e.highlighted, _selected)
