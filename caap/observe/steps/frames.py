"""Icons grown to the button frame drawn round them.

A toolkit reports a colour button, a toolbar button or a tool-palette entry as the whole framed
button, while the detector tends to box what the button shows (the colour patch, the glyph): a
32×24 patch inside a 48×34 button overlaps the button by less than one half. The frame is plain to
see: on all four sides of the icon, past a clean margin of the button's face, a thin line of
another colour runs the icon's whole length, at about the same distance either side.
``grow_framed_icons`` takes that frame as the icon's box. An icon with anything else detected
inside the frame, or where a side's "line" is a thick band (the next swatch of a palette, a panel),
keeps its box.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box
from caap.observe.primitives import INK_SUM, rgb_pixels
from caap.observe.steps.boxes import rebox
from caap.taxonomy import ElementType

MAX_SIDE = 64  # px: icons larger than this are panels or pictures, not button faces
REACH = 14  # px: the farthest a frame may sit from the icon's box
LINE_SHARE = 0.85  # of a side's pixels that differ from the face: the frame's line
CLEAR_SHARE = 0.2  # at most this share of the margin's pixels may differ from the face
MAX_LINE = 3  # px: a frame is this thin at most (a wider band is something else)
ASYMMETRY = 2  # px: a button centres its content (left and right margins, top and bottom)


def _side_lines(pixels: np.ndarray, box: Box) -> list[np.ndarray]:
    """The four sides' strips outward from ``box`` (top, bottom, left, right), each a (depth, length,
    3) array ordered from the box outwards, as deep as the screen allows up to REACH + MAX_LINE + 1."""
    x1, y1, x2, y2 = box
    span = REACH + MAX_LINE + 1
    top = pixels[max(0, y1 - span):y1, x1:x2][::-1]
    bottom = pixels[y2:y2 + span, x1:x2]
    left = pixels[y1:y2, max(0, x1 - span):x1][:, ::-1].transpose(1, 0, 2)
    right = pixels[y1:y2, x2:x2 + span].transpose(1, 0, 2)
    return [top, bottom, left, right]


def _frame_distance(strip: np.ndarray, face: np.ndarray) -> int | None:
    """How far (1-based) past the box the frame's line lies in ``strip``, or None where there is none.
    A line is a row differing from the face across the side and thin (within MAX_LINE rows the side
    no longer has its colour). Rows of the content that run on past a tight box come first; the frame
    is the first line after a clear row of face, or a line right at the box with nothing past it."""
    if len(strip) == 0:
        return None
    differs = (np.abs(strip - face).sum(axis=2) > INK_SUM).mean(axis=1)
    reach = min(REACH, len(strip))

    def thin(d: int) -> bool:
        line = np.median(strip[d - 1], axis=0)
        for t in range(1, MAX_LINE + 1):
            if d - 1 + t >= len(strip):
                return True  # the screen's edge ends the line
            if (np.abs(strip[d - 1 + t] - line).sum(axis=1) <= INK_SUM).mean() < 0.5:
                return True
        return False

    d = 1
    while d <= reach and differs[d - 1] >= LINE_SHARE:  # the content, cut by a tight box
        d += 1
    lead = d - 1
    if lead and d <= reach and differs[d - 1] <= CLEAR_SHARE and lead <= MAX_LINE and thin(1) and \
            all(differs[k] <= CLEAR_SHARE for k in range(d - 1, reach)):
        return 1  # a loose box: the frame right at its edge, nothing past it
    seen_clear = False
    while d <= reach:
        share = differs[d - 1]
        if share >= LINE_SHARE:
            return d if seen_clear and thin(d) else None
        if share > CLEAR_SHARE:
            return None  # something in the margin: not a clean button face
        seen_clear = True
        d += 1
    return None


def framed_box(screen: np.ndarray, box: Box) -> Box | None:
    """The frame drawn round ``box`` in ``screen`` (an RGB screenshot's array), or None. The content
    (the ink inside the frame) must sit in the frame's middle, as a button centres what it shows."""
    bx1, by1, bx2, by2 = box
    if bx2 - bx1 < 4 or by2 - by1 < 4 or max(bx2 - bx1, by2 - by1) > MAX_SIDE:
        return None
    span = REACH + MAX_LINE + 1
    ox, oy = max(0, bx1 - span), max(0, by1 - span)
    pixels = screen[oy:by2 + span, ox:bx2 + span].astype(np.int32)  # only round the icon
    x1, y1, x2, y2 = bx1 - ox, by1 - oy, bx2 - ox, by2 - oy
    if x1 < 1 or y1 < 1 or x2 >= pixels.shape[1] or y2 >= pixels.shape[0]:
        return None
    ring = np.concatenate([pixels[y1 - 1, x1:x2], pixels[y2, x1:x2], pixels[y1:y2, x1 - 1], pixels[y1:y2, x2]])
    face = np.median(ring, axis=0)
    d = [_frame_distance(s, face) for s in _side_lines(pixels, (x1, y1, x2, y2))]
    if any(v is None for v in d):
        return None
    top, bottom, left, right = (int(v) for v in d)  # type: ignore[arg-type]
    fx1, fy1, fx2, fy2 = x1 - left, y1 - top, x2 + right, y2 + bottom
    inner = pixels[fy1 + MAX_LINE:fy2 - MAX_LINE, fx1 + MAX_LINE:fx2 - MAX_LINE]
    ink = np.abs(inner - face).sum(axis=2) > INK_SUM
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return None  # an empty frame: a field or a panel, not a button showing an icon
    slack = ((rows[0], inner.shape[0] - 1 - rows[-1]), (cols[0], inner.shape[1] - 1 - cols[-1]))
    if any(abs(int(a) - int(b)) > ASYMMETRY for a, b in slack):
        return None
    return (fx1 + ox, fy1 + oy, fx2 + ox, fy2 + oy)


def grow_framed_icons(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements with each ``icon`` that sits alone inside a drawn button frame boxed as the frame."""

    def alone_in_frame(pixels: np.ndarray, box: Box) -> Box | None:
        grown = framed_box(pixels, box)
        if grown is None:
            return None
        gx1, gy1, gx2, gy2 = grown
        crowded = any(e.bbox != box and gx1 <= (e.bbox[0] + e.bbox[2]) / 2 <= gx2
                      and gy1 <= (e.bbox[1] + e.bbox[3]) / 2 <= gy2 for e in elements)
        return None if crowded else grown

    return rebox(image, elements, ElementType.ICON, MAX_SIDE, alone_in_frame)


# --- framed controls boxed short of their frame ------------------------------------------------------
# The detector may box a wide framed control from its middle on: Qt's tool-box pages (a raised
# panel the width of the window, its name at the far left) and long line edits are boxed from a
# third of the way in, so the box holds none of the name or value, and both readers read it blank.
# Such a box, blank inside, is grown to the frame's sides where the frame holds what is drawn.
WIDE_FRAMED = frozenset({ElementType.BUTTON, ElementType.INPUT_FIELD, ElementType.DROPDOWN})
EDGE_SEARCH_PX = (3, 4)  # px outside and inside the box's top and bottom where the frame's lines may lie
LINE_SAME = 12  # largest channel difference between a frame line's pixels (one colour along it) ...
LINE_CONTRAST = 12  # ... and least between the line and the face inside it
LINE_SHARE = 0.9  # of the box's width the line runs along in that colour
SIDE_SHARE = 0.85  # of the rows between the lines that a side's column draws in a line's colour
CORNER_PX = 2  # px a rounded corner leaves between a line's end and the side
MIN_GROWTH_PX = 6  # px: a frame this close to the box is the box's own
BLANK_INK = 60  # largest channel difference from the face inside a box that holds nothing drawn


def _frame_line(rgb: np.ndarray, rows: range, x1: int, x2: int, face: np.ndarray) -> tuple[int, np.ndarray] | None:
    """The outermost row among ``rows`` drawn as one line of one colour from ``x1`` to ``x2``, other
    than the face's, with that colour; None where there is none."""
    for r in rows:
        if not 0 <= r < rgb.shape[0]:
            continue
        line = rgb[r, x1:x2]
        colour = np.median(line, axis=0)
        same = (np.abs(line - colour).max(axis=1) <= LINE_SAME).mean()
        if same >= LINE_SHARE and np.abs(colour - face).max() >= LINE_CONTRAST:
            return r, colour
    return None


def _frame_side(rgb: np.ndarray, top: tuple[int, np.ndarray], bottom: tuple[int, np.ndarray], start: int,
                step: int, limit: int, face: np.ndarray) -> int | None:
    """The column of the frame's side reached by following its two lines from ``start`` by ``step``
    (-1: leftwards) while both go on: a column within ``CORNER_PX`` of where they end, drawn (not in
    the face's colour) down most of the way between them; None where the lines stop without one."""
    (t, tc), (b, bc) = top, bottom
    end = min(rgb.shape[1] - 1, start + limit) if step > 0 else max(0, start - limit)
    span = slice(start, end + 1) if step > 0 else slice(end, start + 1)
    going = (np.abs(rgb[t, span] - tc).max(axis=1) <= LINE_SAME) & (np.abs(rgb[b, span] - bc).max(axis=1) <= LINE_SAME)
    if step < 0:
        going = going[::-1]  # from ``start`` outwards
    stops = np.flatnonzero(~going)
    x = start + step * ((int(stops[0]) if stops.size else going.size) - 1)  # the last column both lines reach
    for c in range(x + step * CORNER_PX, x - step * 2, -step):
        if not 0 <= c < rgb.shape[1] or b - t < 4:
            continue
        column = rgb[t + 1:b, c]
        if (np.abs(column - face).max(axis=1) >= LINE_CONTRAST).mean() >= SIDE_SHARE:
            return c
    return None


def frame_ends(rgb: np.ndarray, box: Box) -> Box | None:
    """``box`` grown left and right to the sides of the frame whose top and bottom lines run along
    it (``rgb``: the screen's RGB array), or None where no such frame closes on both sides, it is
    the box's own, or the box holds something drawn."""
    x1, y1, x2, y2 = (int(v) for v in box)
    if x2 - x1 < 3 * MIN_GROWTH_PX or y2 - y1 < 8:
        return None
    mid = (y1 + y2) // 2
    face = np.median(rgb[mid - 2:mid + 3, x1 + 2:x2 - 2].reshape(-1, 3), axis=0)
    out, inside = EDGE_SEARCH_PX
    top = _frame_line(rgb, range(y1 - out, y1 + inside + 1), x1 + 2, x2 - 2, face)
    bottom = _frame_line(rgb, range(y2 + out - 1, y2 - inside - 2, -1), x1 + 2, x2 - 2, face)
    if top is None or bottom is None:
        return None
    limit = 2 * (x2 - x1)
    left = _frame_side(rgb, top, bottom, x1 + 2, -1, limit, face)
    right = _frame_side(rgb, top, bottom, x2 - 3, 1, limit, face)
    if left is None or right is None:
        return None
    grown = (min(x1, left), y1, max(x2, right + 1), y2)
    if x1 - grown[0] < MIN_GROWTH_PX and grown[2] - x2 < MIN_GROWTH_PX:
        return None
    # Only a box that holds nothing drawn, where the frame's inside past it does: a control whose
    # name or value is outside its box (a row of linked buttons shares its lines too).
    t, b = top[0] + 2, bottom[0] - 1
    drawn = np.abs(rgb[t:b, grown[0] + 3:grown[2] - 3] - face).max(axis=2) > BLANK_INK
    inside = drawn[:, x1 + 3 - (grown[0] + 3):x2 - 3 - (grown[0] + 3)]
    if inside.any() or not drawn.any():
        return None
    return grown


def grow_to_frame_ends(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """Buttons, fields and drop-downs whose frame runs on past their box, blank inside, boxed to its
    sides (``frame_ends``). What the detector boxed apart inside the rest of that frame (the
    control's name as a text, or the control again under another class) is the same control and
    goes; a framed control standing only partly inside it keeps the box as it was."""
    todo = [i for i, e in enumerate(elements) if e.type in WIDE_FRAMED]
    if not todo:
        return list(elements)
    rgb = rgb_pixels(image)
    out: list[Element | None] = list(elements)
    for i in todo:
        current = out[i]
        if current is None:
            continue
        grown = frame_ends(rgb, current.bbox)
        if grown is None:
            continue
        gx1, gy1, gx2, gy2 = grown
        inside, blocked = [], False
        for j, other in enumerate(out):
            if j == i or other is None or other.type not in WIDE_FRAMED | {ElementType.TEXT}:
                continue
            ox1, oy1, ox2, oy2 = other.bbox
            if ox2 <= gx1 or ox1 >= gx2 or min(oy2, gy2) - max(oy1, gy1) <= 0.5 * min(oy2 - oy1, gy2 - gy1):
                continue  # not in the frame's row
            if gx1 - MIN_GROWTH_PX <= ox1 and ox2 <= gx2 + MIN_GROWTH_PX:  # a box may stick out a little
                inside.append(j)
            elif other.type in WIDE_FRAMED:
                blocked = True
        if blocked:
            continue
        out[i] = current.model_copy(update={"bbox": grown})
        for j in inside:
            out[j] = None
    return [e for e in out if e is not None]
