"""Buttons another button covers all but a part of.

MiniWoB's two-button tasks place ONE and TWO at random, and now and then TWO lands on ONE. The
detector boxes TWO and often nothing of ONE: all that shows of ONE may be a 2 px band of its frame
and face along TWO's top (development seed 4008), or its left part with half an ``O`` (seed 4010),
boxed into TWO or left out. A person clicks what shows. ``covered_buttons`` looks along each side
of every named button for the button's own frame line with its face colour on both sides of it:
another face runs on beyond that side, under which this button lies. That face is followed outwards
to its own frame line, and the part between is added as a button with no name (its name is under
the top button). A focus ring or a plain frame has the page beyond it, not a face.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import true_runs
from caap.taxonomy import ElementType

NEAR = 6            # px inside a button's box side its frame line may lie (and the ends' reach)
REACH = 80          # px outwards a covered button's face may run before its own frame line
ALONG = 0.8         # share of the side's length a frame line or a face must run
FRAME_DARKER = 40   # grey levels a frame line lies below the face
SAME_GREY = 12      # grey levels within which pixels are one colour (a frame line, anti-aliased)
FACE_GREY = 4       # ... and within which a face is the covering button's (one style draws both alike;
                    # a dialog's pane beside its buttons differs by 9)
SLACK = 2           # px outside the box its own frame line may lie
INSET = 3           # px of a side's ends left out (rounded corners)
OUTSIDE = 0.5       # a covered part lies mostly outside the covering button's box (at most this share in it)
THIN = 4            # px: a part this deep or less is known by its far frame line's length
SCORE = 0.3


def _share(pixels: np.ndarray, value: float, within: int = SAME_GREY) -> float:
    return float(np.mean(np.abs(pixels.astype(np.int16) - value) <= within)) if pixels.size else 0.0


def _covered_part(grey: np.ndarray, box: tuple[int, int, int, int], side: str,
                  face: float) -> tuple[int, int, int, int] | None:
    """The part of a covered button that shows beyond ``box``'s ``side``, or None."""
    x1, y1, x2, y2 = box
    across = side in ("left", "right")
    # Lines parallel to the side, as rows of the side's span (columns are transposed into rows).
    lines = grey[y1 + INSET:y2 - INSET].T if across else grey[:, x1 + INSET:x2 - INSET]
    edge = (x1 if side == "left" else x2 - 1) if across else (y1 if side == "top" else y2 - 1)
    out = -1 if side in ("left", "top") else 1
    n = lines.shape[0]
    frame_at = None
    for d in range(-SLACK, NEAR + 1):  # from just outside the box inwards: the button's own side
        at = edge - out * d
        if not (1 <= at < n - 1):
            continue
        frame = float(np.median(lines[at]))
        if frame <= face - FRAME_DARKER and _share(lines[at], frame) >= ALONG \
                and _share(lines[at - 1], face, FACE_GREY) >= ALONG and _share(lines[at + 1], face, FACE_GREY) >= ALONG:
            frame_at = at
            break
    if frame_at is None:
        return None
    frame = float(np.median(lines[frame_at]))
    for step in range(1, REACH + 1):  # outwards over the covered face (its name's ink may cross it)
        at = frame_at + out * step
        if not (0 <= at < n):
            return None
        if step > 1 and _share(lines[at], frame) >= ALONG:
            lo, hi = sorted((at, frame_at))
            part = (lo, y1, hi, y2) if across else (x1, lo, x2, hi)
            return part if _closed(grey, part, box, across, at, frame) else None
        if _share(lines[at], face, FACE_GREY) < 1 - ALONG and _share(lines[at], frame) < ALONG:
            return None  # neither face nor frame: the page or another thing
    return None


def _closed(grey: np.ndarray, part: tuple[int, int, int, int], box: tuple[int, int, int, int], across: bool,
            far: int, frame: float) -> bool:
    """Whether ``part`` is the shown part of a button of its own: mostly outside ``box``, and framed
    at its ends as a button is. A part a few px deep shows its far frame line about as long as the
    box's side (a dialog's border beyond a button runs on far past it); a deeper one shows its own
    frame lines across its ends (the page between two buttons side by side shows none)."""
    px1, py1, px2, py2 = part
    x1, y1, x2, y2 = box
    inside = max(0, min(px2, x2) - max(px1, x1)) * max(0, min(py2, y2) - max(py1, y1))
    if inside > OUTSIDE * (px2 - px1) * (py2 - py1):
        return False
    depth = (px2 - px1) if across else (py2 - py1)
    if depth <= THIN:
        line = grey[:, far] if across else grey[far]
        middle = (y1 + y2) // 2 if across else (x1 + x2) // 2
        run = next((b - a + 1 for a, b in true_runs(np.abs(line.astype(np.int16) - frame) <= SAME_GREY)
                    if a <= middle <= b), 0)
        side = (y2 - y1) if across else (x2 - x1)
        return abs(run - side) <= NEAR
    # The part's ends: its own frame lines across it, near where the box's side ends.
    ends = (y1, y2 - 1) if across else (x1, x2 - 1)
    for end in ends:
        cut = [grey[at, px1:px2] if across else grey[py1:py2, at] for at in range(end - NEAR, end + NEAR + 1)
               if 0 <= at < (grey.shape[0] if across else grey.shape[1])]
        if not any(_share(c, frame) >= ALONG for c in cut):
            return False
    return True


def covered_buttons(image: Image.Image, elements: list[Element]) -> list[Element]:
    buttons = [e for e in elements if e.type == ElementType.BUTTON and (e.text or "").strip()]
    if not buttons:
        return elements
    grey = np.asarray(image.convert("L"))
    out = list(elements)
    for b in buttons:
        x1, y1, x2, y2 = (int(v) for v in b.bbox)
        if x2 - x1 <= 2 * INSET + 4 or y2 - y1 <= 2 * INSET + 4:
            continue
        face = float(np.median(grey[y1 + INSET:y2 - INSET, x1 + INSET:x2 - INSET]))
        for side in ("top", "bottom", "left", "right"):
            part = _covered_part(grey, (x1, y1, x2, y2), side, face)
            if part is not None and not any(e.type == ElementType.BUTTON and e.bbox == part for e in out):
                out.append(Element(type=ElementType.BUTTON, bbox=part, score=SCORE))
                break
    return out
