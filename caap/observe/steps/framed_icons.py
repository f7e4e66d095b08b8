"""Small framed buttons found by their frame.

Qt's Fusion style draws a dock widget's title-bar buttons (float, close) and similar tool buttons
as a glyph inside a 1 px frame with rounded corners, about 11 px square, on the window's
background. The detector finds none of the dock buttons on the reserved Qt screens (it never saw
one) and often boxes them into the dock's title as one text. ``framed_icons`` finds them from the
ink alone: one connected piece of ink 9-24 px square whose four sides are nearly all drawn (the
frame, less its rounded corners), with a glyph inside that neither leaves it empty (an empty frame
is an unticked checkbox, the detector's to find) nor fills it, and background all round. A text box
that holds such a button at its right end gives way to it (the title beside its buttons); any
other box holding it keeps it (a tree row keeps the expander at its start).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection, uncovered_part
from caap.observe.primitives import components, page_ink, true_runs
from caap.taxonomy import TEXT_ELEMENT_TYPES, ElementType

SIDES = (9, 24)       # px: the frame's side (Fusion's dock buttons: 11)
SQUARE = 2            # px the two sides may differ by
SIDE_DRAWN = 0.7      # least share of each side of the frame in one run of ink (rounded corners leave 2 px out)
INSIDE_INK = (0.05, 0.8)  # share of the inside (2 px in from the frame) that the glyph inks
RING = 2              # px round the frame that must be background
RING_INK = 0.1        # ... at most this share of it inked
HELD = 0.3            # a box holding this share of the frame has it already
END_PX = 3            # a text box ending within this many px past the frame's right side ends there
TEXT_AREAS = 4        # a text box giving way is at least this many frames big (not the glyph's own box)
PASSES = 3            # a row of buttons at a title's end gives way one button per pass


def _longest_run(line: np.ndarray) -> float:
    """The longest unbroken run of ink along ``line``, as a share of its length. A frame's side is
    one line, short of its rounded corners; a bold ``n``'s foot is two stems with a gap between,
    though together they ink as much of it."""
    return max((b - a + 1 for a, b in true_runs(line)), default=0) / max(len(line), 1)


def _frames(ink: np.ndarray) -> list[Box]:
    """Boxes of the pieces of ink that look like framed glyphs, 1 px of air round each."""
    n, labels, stats = components(ink)
    h, w = ink.shape
    lo, hi = SIDES
    found: list[Box] = []
    for k in range(1, n):
        x, y, bw, bh = (int(v) for v in stats[k, :4])
        if not (lo <= bw <= hi and lo <= bh <= hi and abs(bw - bh) <= SQUARE):
            continue
        piece = labels[y:y + bh, x:x + bw] == k
        if min(_longest_run(piece[0]), _longest_run(piece[-1]), _longest_run(piece[:, 0]),
               _longest_run(piece[:, -1])) < SIDE_DRAWN:
            continue
        inside = ink[y + 2:y + bh - 2, x + 2:x + bw - 2].mean()
        if not INSIDE_INK[0] <= inside <= INSIDE_INK[1]:
            continue
        rx1, ry1, rx2, ry2 = max(0, x - RING), max(0, y - RING), min(w, x + bw + RING), min(h, y + bh + RING)
        ring = ink[ry1:ry2, rx1:rx2].astype(bool)
        ring[y - ry1:y - ry1 + bh, x - rx1:x - rx1 + bw] = False
        if ring.sum() > RING_INK * (ring.size - bw * bh):
            continue
        found.append((max(0, x - 1), max(0, y - 1), min(w, x + bw + 1), min(h, y + bh + 1)))
    return found


def _gives_way(element: Element, frame: Box) -> bool:
    # Only at its right end: a tree's expander at a row's start belongs to the row's box.
    return (element.type in TEXT_ELEMENT_TYPES and area(element.bbox) >= TEXT_AREAS * area(frame)
            and frame[2] >= element.bbox[2] - END_PX)


def framed_icons(image: Image.Image, elements: list[Element], ink: np.ndarray | None = None) -> list[Element]:
    """The elements with an icon added for every small framed glyph no box holds (see the module's
    docstring). ``ink``: the screen's ``page_ink`` where the caller has it."""
    frames = _frames(page_ink(image) if ink is None else ink)
    if not frames:
        return elements
    out = list(elements)
    score = min((e.score or 0.0 for e in elements), default=0.25)
    for _ in range(PASSES):
        waiting = []
        for frame in frames:
            holders = [i for i, e in enumerate(out) if intersection(e.bbox, frame) > HELD * area(frame)]
            if not all(_gives_way(out[i], frame) for i in holders):
                waiting.append(frame)
                continue
            for i in holders:
                out[i] = out[i].model_copy(update={"bbox": uncovered_part(out[i].bbox, frame)})
            out.append(Element(type=ElementType.ICON, bbox=frame, score=score))
        if len(waiting) == len(frames):
            break
        frames = waiting
    return out
