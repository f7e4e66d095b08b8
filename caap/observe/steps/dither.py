"""A held-down button drawn with a dithered face (Qt's Windows style, the classic Windows look).

The classic Windows look, which Qt's Windows style draws, fills a checked button (a tool bar's
toggle, a checkable push button, a toggle tool button) with a one-pixel checkerboard of two close
greys (255 and 239) inside its sunken frame; an unchecked one has a flat face. The state head sees
the button squeezed to its 32 × 128 view, where the checkerboard averages out to a flat light grey,
so it reads most of them as not held down. ``dithered_face`` finds the pattern itself: a pixel of a
checkerboard differs a little from its right and lower neighbours and not at all from its diagonal
one. The same pattern fills that style's scrollbar troughs, which are not controls with a
``checked`` state, and are not looked at.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.steps.rewrite import rewrite_each
from caap.taxonomy import ElementType

DITHERED_TYPES = (ElementType.BUTTON, ElementType.CHECKBOX, ElementType.ICON)
INSET = 3  # px of frame left out all round
MIN_SIDE = 10  # px of face, at least, each way: smaller icons show too few pixels to tell
STEP = (9, 90)  # summed |RGB| between a pixel and its right or lower neighbour in a checkerboard
SAME = 3  # summed |RGB| between a pixel and its diagonal neighbour in a checkerboard, at most
DITHER_SHARE = 0.2  # share of the face's pixels in the checkerboard (checked buttons on desktop
# validation screens: 0.23-0.9, with text and icons on the face; flat faces: 0)


def dither_share(rgb: np.ndarray, box: Sequence[int]) -> float:
    """The share of a box's inside (``INSET`` px in) drawn as a one-pixel checkerboard."""
    x1, y1, x2, y2 = (int(v) for v in box)
    face = rgb[max(0, y1 + INSET): y2 - INSET, max(0, x1 + INSET): x2 - INSET].astype(np.int32)
    if face.shape[0] < MIN_SIDE or face.shape[1] < MIN_SIDE:
        return 0.0
    corner = face[:-1, :-1]
    right = np.abs(corner - face[:-1, 1:]).sum(axis=-1)
    down = np.abs(corner - face[1:, :-1]).sum(axis=-1)
    diagonal = np.abs(corner - face[1:, 1:]).sum(axis=-1)
    low, high = STEP
    checker = (right >= low) & (right <= high) & (down >= low) & (down <= high) & (diagonal <= SAME)
    return float(checker.mean())


def dithered_faces(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Buttons, check boxes and icons not read as checked whose face is dithered are checked."""
    return rewrite_each(image, elements, lambda e: e.type in DITHERED_TYPES and not e.checked,
                        lambda rgb, e: e.model_copy(update={"checked": True})
                        if dither_share(rgb, e.bbox) >= DITHER_SHARE else None)
