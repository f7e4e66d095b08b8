"""A tool bar's toggle held down, told by its face: framed and shaded among flat neighbours.

GTK 3 and Qt's Fusion draw a tool bar's icon buttons flat, on the bar's own colour, and a toggle
that is held down (a view switch, Bold, a list/detail pair) on a face of its own: a grey a little
darker than the bar, inside a frame. The state head sees a small icon's view, where a glyph fills
most of the crop, and cannot tell a toggle from a plain icon, so the observer only reads an icon's
``checked`` where the reader's record holds one. The face tells it without knowing which icons are
toggles:

- an icon whose most common colour is the colour round it is flat: not held down (``checked``
  False, which a plain icon button is not either), unless an earlier step read it held down;
- an icon whose most common colour is a plain grey ``PRESSED_DIFFERENCE`` darker than the colour
  round it, covering at least ``FACE_SHARE`` of it, is held down where another icon of its row is
  flat. A row of framed buttons (a dialog's icon buttons, GTK's default look) has no flat one and
  is left alone, as is any icon whose face is its glyph's colour.

Other icons keep what the earlier steps read.

``shaded_buttons`` reads buttons with text the same way, without a row to compare with: GTK 3's,
GTK 4's and Fusion's push buttons are drawn within a few levels of the window round them (lighter,
or a gradient a little darker), and a toggle held down on a plain grey face ``BUTTON_DARKER`` or
more darker than its surround (``ON_WHITE_DARKER`` on a white one). GTK 4's linked toggles (an info
bar's switches, a font view's choice of sample) are held-down buttons the head reads as plain
ones. A box the detector typed a tab is left a tab, though GTK 4's linked toggles and Qt's tool
buttons held down are often typed so: Tk's notebooks draw the tabs behind the current one as dark
as a held-down face, beside a tab drawn up, as a tool bar's held-down button stands beside flat
ones: the faces cannot tell the two apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import SAME_COLOUR, dominant_colour, rgb_pixels
from caap.taxonomy import ElementType

RING = (1, 4)  # px outside the box, from and to, whose colour is the bar's round the icon
MIN_SIDE = 8  # px: smaller boxes show too little face to tell
MIN_RING_SIDES = 2  # sides of the ring round a box at the screen's edge (or corner) that must fit
FLAT = 12  # largest channel difference between face and bar, below which the face is the bar's
PRESSED_DIFFERENCE = (12, 64)  # a held-down face is this much darker than the bar (largest channel)
GREY = 16  # a held-down face's channels spread at most this much
FACE_SHARE = 0.3  # share of the box in the face's colour (within ``primitives.SAME_COLOUR``)
ROW_PX = 4  # icons whose middles are this close in height ...
ROW_GAP = 4.0  # ... and that stand at most this many heights of the held-down one apart are one row
BUTTON_DARKER = 12  # a button's face this much darker than its surround (mean level) is held down
# A web page's plain button (Chromium's, 239 on a white page) is as much darker as Fusion's held-down
# one on its grey window: on a white surround (a page, a list) the face must be darker still.
WHITE = 250  # least channel of a white surround
ON_WHITE_DARKER = 20
BUTTON_FACE_SHARE = 0.5  # share of a button's box in its face colour: the letters take the rest


def face_and_bar(rgb: np.ndarray, box: Sequence[int]) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The most common colour inside ``box``, the most common colour of a ring just outside it,
    and the share of the box in the first; None for a box too small. At the screen's edge (a
    window's tool bar at its top) the ring is the sides that fit, at least ``MIN_RING_SIDES``."""
    x1, y1, x2, y2 = (int(v) for v in box)
    h, w = rgb.shape[:2]
    near, far = RING
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if x2 - x1 < MIN_SIDE or y2 - y1 < MIN_SIDE:
        return None
    inside = rgb[y1:y2, x1:x2].reshape(-1, 3)
    sides = [side for fits, side in ((y1 >= far, rgb[y1 - far:y1 - near, x1:x2]),
                                     (y2 + far <= h, rgb[y2 + near:y2 + far, x1:x2]),
                                     (x1 >= far, rgb[y1:y2, x1 - far:x1 - near]),
                                     (x2 + far <= w, rgb[y1:y2, x2 + near:x2 + far])) if fits]
    if len(sides) < MIN_RING_SIDES:
        return None
    ring = np.concatenate([side.reshape(-1, 3) for side in sides])
    face = dominant_colour(inside[None]).astype(np.int32)
    bar = dominant_colour(ring[None]).astype(np.int32)
    share = float((np.abs(inside.astype(np.int32) - face).max(axis=1) <= SAME_COLOUR).mean())
    return face, bar, share


def _flat(face: np.ndarray, bar: np.ndarray) -> bool:
    return int(np.abs(face - bar).max()) < FLAT


def _pressed(face: np.ndarray, bar: np.ndarray, share: float) -> bool:
    darker = int(np.abs(face - bar).max())
    low, high = PRESSED_DIFFERENCE
    return (low <= darker <= high and int(face.max() - face.min()) <= GREY and face.mean() < bar.mean()
            and share >= FACE_SHARE)


def pressed_faces(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """Icons with ``checked`` read from their face (module docstring)."""
    icons = [i for i, e in enumerate(elements) if e.type == ElementType.ICON]
    if not icons:
        return list(elements)
    rgb = rgb_pixels(image)
    looks = {i: face_and_bar(rgb, elements[i].bbox) for i in icons}
    flat = {i for i, got in looks.items() if got is not None and _flat(got[0], got[1])}
    out = list(elements)
    for i in icons:
        got = looks[i]
        if got is None:
            continue
        e = elements[i]
        if i in flat:
            if e.checked is None:  # a reading of True stands (a dithered face, the reader's record)
                out[i] = e.model_copy(update={"checked": False})
            continue
        if not _pressed(*got) or e.checked:
            continue
        # A flat icon is boxed on its glyph, a held-down one on its frame: their heights differ,
        # their middles do not.
        x1, y1, x2, y2 = e.bbox
        reach = ROW_GAP * (y2 - y1)
        if any(abs((elements[j].bbox[1] + elements[j].bbox[3] - y1 - y2) / 2) <= ROW_PX
               and max(elements[j].bbox[0] - x2, x1 - elements[j].bbox[2]) <= reach for j in flat):
            out[i] = e.model_copy(update={"checked": True})
    return out


def _held_down(face: np.ndarray, bar: np.ndarray, share: float, darker_than: int) -> bool:
    darker = float(bar.mean() - face.mean())
    return (darker_than <= darker <= PRESSED_DIFFERENCE[1] and int(face.max() - face.min()) <= GREY
            and share >= BUTTON_FACE_SHARE)


def shaded_buttons(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """Buttons on a plain grey face well darker than their surround are held down (module
    docstring); every other element is returned as it came."""
    if not any(e.type == ElementType.BUTTON for e in elements):
        return list(elements)
    rgb = rgb_pixels(image)
    out = list(elements)
    for i, e in enumerate(elements):
        if e.type != ElementType.BUTTON or e.checked:
            continue
        got = face_and_bar(rgb, e.bbox)
        if got is None:
            continue
        darker_than = ON_WHITE_DARKER if int(got[1].min()) >= WHITE else BUTTON_DARKER
        if _held_down(*got, darker_than):
            out[i] = e.model_copy(update={"checked": True})
    return out
