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
FLAT = 12  # largest channel difference between face and bar, below which the face is the bar's
PRESSED_DIFFERENCE = (12, 64)  # a held-down face is this much darker than the bar (largest channel)
GREY = 16  # a held-down face's channels spread at most this much
FACE_SHARE = 0.3  # share of the box in the face's colour (within ``primitives.SAME_COLOUR``)
ROW_PX = 4  # icons whose middles are this close in height ...
ROW_GAP = 4.0  # ... and that stand at most this many heights of the held-down one apart are one row


def face_and_bar(rgb: np.ndarray, box: Sequence[int]) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The most common colour inside ``box``, the most common colour of a ring just outside it,
    and the share of the box in the first; None for a box too small or at the screen's edge."""
    x1, y1, x2, y2 = (int(v) for v in box)
    h, w = rgb.shape[:2]
    near, far = RING
    if x2 - x1 < MIN_SIDE or y2 - y1 < MIN_SIDE or x1 < far or y1 < far or x2 + far > w or y2 + far > h:
        return None
    inside = rgb[y1:y2, x1:x2].reshape(-1, 3)
    sides = (rgb[y1 - far:y1 - near, x1:x2], rgb[y2 + near:y2 + far, x1:x2],
             rgb[y1:y2, x1 - far:x1 - near], rgb[y1:y2, x2 + near:x2 + far])
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
