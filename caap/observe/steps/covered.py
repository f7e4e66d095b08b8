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

from collections.abc import Callable
from typing import Any

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, intersection
from caap.observe.primitives import components, true_runs
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


FIT_REACH = 12      # px in from a side a top button's own frame line may lie (its box took in a neighbour's part)
REREAD_SURE = 0.9  # PP-OCR's confidence in a refit top button's name for it to stand
MIN_BAND = 3        # px: the thinnest part of a covered button kept as its own box
BUTTON_SIZED = 1.5  # a covered button's shown face spans at most this many times the top one's width or height
MIN_FACE = 20       # px of face colour a covered button's shown part holds at least


def _band_outside(part: Box, top: Box) -> Box | None:
    """The largest box of ``part`` that lies wholly beside ``top`` (left, right, above or below it):
    what shows of a button ``top`` lies on, as one box a click can land anywhere in."""
    px1, py1, px2, py2 = part
    tx1, ty1, tx2, ty2 = top
    bands = [(px1, py1, min(px2, tx1), py2), (max(px1, tx2), py1, px2, py2),
             (px1, py1, px2, min(py2, ty1)), (px1, max(py1, ty2), px2, py2)]
    bands = [b for b in bands if b[2] - b[0] >= MIN_BAND and b[3] - b[1] >= MIN_BAND]
    return max(bands, key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), default=None)


def _frame_edges(grey: np.ndarray, box: Box, face: float, reach: int = NEAR) -> list[int | None]:
    """For ``box``'s top, bottom, left and right side, the row or column nearest the side (from
    ``SLACK`` px out to ``reach`` px in) where a frame line darker than ``face`` runs along most of
    the side, or None. A button on top shows all four; one under another loses a side, or its end,
    under the one on top."""
    x1, y1, x2, y2 = box
    h, w = grey.shape
    edges: list[int | None] = []
    for side in ("top", "bottom", "left", "right"):
        across = side in ("left", "right")
        edge = (x1 if side == "left" else x2 - 1) if across else (y1 if side == "top" else y2 - 1)
        inward = 1 if side in ("left", "top") else -1
        found = None
        for d in range(-SLACK, reach + 1):
            at = edge + inward * d
            if not (0 <= at < (w if across else h)):
                continue
            line = grey[y1 + INSET:y2 - INSET, at] if across else grey[at, x1 + INSET:x2 - INSET]
            if line.size and _share(line, float(np.median(line))) >= ALONG and np.median(line) <= face - FRAME_DARKER:
                found = at
                break
        edges.append(found)
    return edges


def _framed_sides(grey: np.ndarray, box: Box, face: float) -> int:
    return sum(e is not None for e in _frame_edges(grey, box, face))


def _line_at(grey: np.ndarray, span: np.ndarray, face: float) -> bool:
    return bool(span.size) and _share(span, float(np.median(span))) >= ALONG and np.median(span) <= face - FRAME_DARKER


def _own_frame(grey: np.ndarray, box: Box, face: float) -> Box | None:
    """``box`` fitted to its button's own frame where a side of it took in a part of a button under
    it (``TWON``: the detector boxed TWO with the N of ONE beside it): the left and right frame lines
    nearest inside the box's sides (within ``FIT_REACH`` px), then the top and bottom ones along the
    span between them; None unless all four are found."""
    x1, y1, x2, y2 = box
    h, w = grey.shape

    def first(candidates: list[int], line: Callable[[int], np.ndarray]) -> int | None:
        return next((at for at in candidates if _line_at(grey, line(at), face)), None)

    def inward_first(edge: int, step: int, size: int) -> list[int]:
        # In from the side first (the part taken in lies there), then a few px out (a tight box).
        at = [edge + step * d for d in range(FIT_REACH + 1)] + [edge - step * d for d in range(1, SLACK + 1)]
        return [a for a in at if 0 <= a < size]

    rows = slice(y1 + INSET, y2 - INSET)
    left = first(inward_first(x1, 1, w), lambda x: grey[rows, x])
    right = first(inward_first(x2 - 1, -1, w), lambda x: grey[rows, x])
    if left is None or right is None or right - left < 2 * INSET + 4:
        return None
    cols = slice(left + INSET, right - INSET + 1)
    top = first(inward_first(y1, 1, h), lambda y: grey[y, cols])
    bottom = first(inward_first(y2 - 1, -1, h), lambda y: grey[y, cols])
    if top is None or bottom is None or bottom - top < 2 * INSET + 4:
        return None
    return (left, top, right + 1, bottom + 1)


def _face(grey: np.ndarray, box: Box) -> float | None:
    x1, y1, x2, y2 = box
    if x2 - x1 <= 2 * INSET + 4 or y2 - y1 <= 2 * INSET + 4:
        return None
    return float(np.median(grey[y1 + INSET:y2 - INSET, x1 + INSET:x2 - INSET]))


def _stacked(grey: np.ndarray, out: list[Element]) -> set[int]:
    """Two button boxes that overlap, one on top (all its sides framed, or framed once fitted to its
    own frame) and one under it: the one under it is boxed as the part of it that shows (a click at
    the middle of the whole box, ``ONE`` read where only ``NE`` shows, landed on the top button);
    a lone letter read there goes (it may be a stroke of the top one's), two or more stay."""
    buttons = [i for i, e in enumerate(out) if e.type == ElementType.BUTTON]
    fitted_tops: set[int] = set()
    for i in buttons:
        for j in buttons:
            a, b = out[i], out[j]
            if i == j or intersection(a.bbox, b.bbox) <= 0:
                continue
            face = _face(grey, a.bbox)
            if face is None or _framed_sides(grey, b.bbox, face) == 4:
                continue
            if _framed_sides(grey, a.bbox, face) < 4:
                fitted = _own_frame(grey, a.bbox, face)
                if fitted is None:
                    continue
                out[i] = a = a.model_copy(update={"bbox": fitted})
                fitted_tops.add(i)
            band = _band_outside(b.bbox, a.bbox)
            if band is not None:
                # Two letters or more read are its (``ON``, read in the part that shows; ``ONE``): not a
                # lone one (a stroke of the top one's may be it), nor a reading that holds two letters
                # of the top one's name running (``OTW``: the top one's TW read with it).
                text, above = (b.text or "").strip(), (a.text or "").strip()
                kept = len(text) >= 2 and not any(above[k:k + 2] in text for k in range(len(above) - 1))
                out[j] = b.model_copy(update={"bbox": band, "text": text if kept else ""})
    return fitted_tops


def _shown_faces(grey: np.ndarray, box: Box, face: float) -> list[Box]:
    """Parts of buttons under ``box``'s button that show beyond it, whatever their shape (an L round
    its corner where the one under it lies off to a side and down): regions of the top button's own
    face colour outside its box, touching it, closed by frame lines, each cut to the largest band
    wholly beside the top button (``_band_outside``)."""
    h, w = grey.shape
    x1, y1, x2, y2 = box
    same = np.abs(grey.astype(np.int16) - face) <= FACE_GREY
    same[max(0, y1 - 1):y2 + 1, max(0, x1 - 1):x2 + 1] = False
    n, labels, stats = components(same.astype(np.uint8))
    found: list[Box] = []
    for k in range(1, n):
        cx, cy, cw, ch, size = (int(v) for v in stats[k])
        if size < MIN_FACE:
            continue
        near = (cx <= x2 + 2 and cx + cw >= x1 - 2 and cy <= y2 + 2 and cy + ch >= y1 - 2)
        if not near or cx == 0 or cy == 0 or cx + cw >= w or cy + ch >= h:
            continue
        if cw > BUTTON_SIZED * (x2 - x1) or ch > BUTTON_SIZED * (y2 - y1):
            continue  # a pane of the button's face colour, not another button
        # Closed by a frame: the rows and columns just past the region's far sides are frame lines.
        part = (cx - 1, cy - 1, cx + cw + 1, cy + ch + 1)
        region = labels[cy:cy + ch, cx:cx + cw] == k
        ring = []
        if cx + cw < w and part[2] - 1 >= x2:
            ring.append(grey[cy:cy + ch, cx + cw][region[:, -1]])
        if cx - 1 >= 0 and part[0] < x1:
            ring.append(grey[cy:cy + ch, cx - 1][region[:, 0]])
        if cy + ch < h and part[3] - 1 >= y2:
            ring.append(grey[cy + ch, cx:cx + cw][region[-1]])
        if cy - 1 >= 0 and part[1] < y1:
            ring.append(grey[cy - 1, cx:cx + cw][region[0]])
        if not ring or any(r.size == 0 or float(np.mean(r <= face - FRAME_DARKER)) < ALONG for r in ring):
            continue
        band = _band_outside(part, box)
        if band is not None:
            found.append(band)
    return found


def covered_buttons(image: Image.Image, elements: list[Element], ocr: Any | None = None) -> list[Element]:
    """``elements`` with each button another lies on boxed as the part of it that shows, nameless
    (module docstring). A top button fitted to its own frame is read again by ``ocr`` (PP-OCR),
    where given: its box took in letters of the one under it (``TWOE``). The part that shows of the
    one under it is not (read beside the top one, PP-OCR took in its letters: ``OTW``)."""
    grey = np.asarray(image.convert("L"))
    out = list(elements)
    refit = _stacked(grey, out)
    buttons = [e for e in out if e.type == ElementType.BUTTON and (e.text or "").strip()]
    for b in buttons:
        x1, y1, x2, y2 = (int(v) for v in b.bbox)
        face = _face(grey, (x1, y1, x2, y2))
        if face is None:
            continue
        if _framed_sides(grey, (x1, y1, x2, y2), face) < 4:
            fitted = _own_frame(grey, (x1, y1, x2, y2), face)
            if fitted is not None:  # boxed with a part of the button under it: what lies beyond is that part
                x1, y1, x2, y2 = fitted
                k = next(n for n, e in enumerate(out) if e is b)
                out[k] = b = b.model_copy(update={"bbox": fitted})
                refit.add(k)
        parts = [p for side in ("top", "bottom", "left", "right")
                 if (p := _covered_part(grey, (x1, y1, x2, y2), side, face)) is not None][:1]
        if not parts:
            parts = _shown_faces(grey, (x1, y1, x2, y2), face)
        for part in parts:
            if not any(e.type == ElementType.BUTTON and intersection(e.bbox, part) > 0 for e in out if e is not b):
                out.append(Element(type=ElementType.BUTTON, bbox=part, score=SCORE))
    tops = sorted(k for k in refit if (out[k].text or "").strip())
    if ocr is not None and tops:
        for k, read in zip(tops, ocr.read(image, [out[k].bbox for k in tops], ["button"] * len(tops)), strict=True):
            if read.text.strip() and read.confidence >= REREAD_SURE:
                out[k] = out[k].model_copy(update={"text": read.text.strip()})
    return out
