"""The current tab, by the accent bar along one of its sides or by its held-down face in a
linked row; and linked toggles held down.

GTK 3 and 4 (and KDE's Breeze) draw the current page's tab with a bar of the accent colour, a few
pixels thick, along the tab's side that faces the page: under a tab on top, over one at the bottom,
beside one at the left or right. The tabs behind it have none. The state head learnt tabs mostly
from strips on top, and the detector boxes a tab at the side of the page as its word, a text, so a
tab is read from the bar: a box (a tab, or a text the detector took for one) with one straight
coloured bar that runs along one of its sides, about as long as the tab, and none along the
others, is the current tab; the tabs of its strip without one are not. A focus ring is coloured on
all four sides, a selected row's fill on two, a slider's or progress bar's fill runs on past a word
beside it, and a link's underline is one pixel thick: none is taken.

A stack switcher (GTK's pages as a row of linked buttons) draws the current page's button held
down, on a face darker than the others'; so do linked toggle buttons, of which several may be held
down. The detector boxes such buttons on their words, mostly as tabs, so each face is followed out
to its frame (``face_span``), and faces that touch, framed above and below on the same rows, are a
linked row. Where the faces left up share one face and the others are ``LINKED_DARKER`` levels
darker, two or more held down make a row of toggles (typed buttons, those checked); one held down,
also that much darker than the window round the row, is the current page of those typed tabs. A
notebook's tabs in Tk or Qt's Fusion are drawn the other way: the tabs behind are the window's
grey, the current one as light as its page, which it opens into with no line below it, and stands
taller; such rows are not linked. A held-down face's frame may be as dark as the face itself
(GTK 4's dark theme), so rows of framed faces are read first, then rows taking in unframed ones.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import SAME_COLOUR, dominant_colour, rgb_pixels
from caap.observe.steps.figures import RING_SATURATION
from caap.taxonomy import ElementType

TAB_TYPES = frozenset({ElementType.TAB, ElementType.TEXT})
BAR_REACH = 12      # px outside the box a tab's bar may lie (the detector boxes a side tab's word)
BAR_INSET = 6       # px inside the box (a tab's box may hold its own bar), at most a third of its depth
BAR_THICK = (2, 5)  # px: a bar's least and greatest thickness
BAR_COVER = 0.9     # share of the box's side the bar runs along, at least ...
BAR_OVERHANG = 24   # ... and px it may run on past each end of the side (the tab's padding)
MIN_SIDE = 8        # px: a box's side shorter than this carries no bar
LINKED_TYPES = frozenset({ElementType.TAB, ElementType.BUTTON})
LINKED_GAP = 3      # px between linked faces (their frames' shared line), at most
FACE_REACH = 60     # px a face is followed past its box, at most ...
FACE_COLUMN = 0.8   # ... through columns this much in its colour
LINE_SLACK = 1      # px: linked faces' frame lines lie on the same rows, give or take this
ROW_OVERLAP = 0.8   # share of the lower box's height two boxes share to stand in one row (a face unframed)
LINKED_DARKER = 12  # grey levels: the current page's button is this much darker than the others
BORDER_REACH = 4    # px: a linked box's frame lines lie within twice this past its top and bottom ...
BORDER_CONTRAST = 16  # ... a line of pixels this far (per channel) from its face ...
BORDER_SHARE = 0.8  # ... along this share of its width
FACE_INSET = 3      # px inside a box where its face is taken (past its border)
BAR_CLEAR = 3       # px round a bar that hold hardly any colour ...
BAR_STRAY = 0.15    # ... at most this many coloured pixels per px of its length (anti-aliased ends)
CORNER_REACH = 6    # px past a bar's long sides, at its ends, where a ring's corner would turn ...
CORNER_STRAY = 3    # ... holding at most this many coloured pixels


def _coloured(rgb: np.ndarray) -> np.ndarray:
    pixels = rgb.astype(np.int16)
    return (pixels.max(axis=2) - pixels.min(axis=2)) >= RING_SATURATION


def _bar_lines(coloured: np.ndarray, lo: int, hi: int, near: range) -> list[tuple[int, int, int]]:
    """The lines (rows of ``coloured``, taken along its second axis) in ``near`` holding one
    coloured run over at least ``BAR_COVER`` of ``[lo, hi)`` that ends within ``BAR_OVERHANG`` of
    each end, as (line, run start, run end)."""
    length = coloured.shape[1]
    a, b = max(0, lo - BAR_OVERHANG - 1), min(length, hi + BAR_OVERHANG + 1)
    lines = []
    for y in near:
        if not 0 <= y < coloured.shape[0]:
            continue
        line = coloured[y, a:b]
        if line.sum() < BAR_COVER * (hi - lo):
            continue
        edges = np.flatnonzero(np.diff(np.concatenate([[0], line.astype(np.int8), [0]])))
        for start, end in zip(edges[::2] + a, edges[1::2] + a, strict=True):
            if min(end, hi) - max(start, lo) >= BAR_COVER * (hi - lo):
                # a run cut by the window runs on too far
                if (start > a or a == 0) and (end < b or b == length):
                    lines.append((int(y), int(start), int(end)))
                break
    return lines


def _bar_extent(coloured: np.ndarray, lines: list[tuple[int, int, int]]) -> tuple[int, int] | None:
    """Where along its length (start, end) the lines found hold one bar of a tab's thickness (2-5
    consecutive lines) standing alone, or None: the ring of ``BAR_CLEAR`` px round a bar holds
    hardly any colour, and a focus ring's side turns a corner at each end."""
    if not lines or any(b[0] != a[0] + 1 for a, b in itertools.pairwise(lines)):
        return None
    if not BAR_THICK[0] <= len(lines) <= BAR_THICK[1]:
        return None
    first, last = lines[0][0], lines[-1][0]
    start, end = min(line[1] for line in lines), max(line[2] for line in lines)
    y1, y2 = max(0, first - BAR_CLEAR), min(coloured.shape[0], last + 1 + BAR_CLEAR)
    x1, x2 = max(0, start - BAR_CLEAR), min(coloured.shape[1], end + BAR_CLEAR)
    around = int(coloured[y1:y2, x1:x2].sum()) - int(coloured[first:last + 1, start:end].sum())
    if around > BAR_STRAY * (end - start):
        return None
    # A ring's side turns a corner at each end and runs on across, away from the bar.
    ends = 0
    for a, b in ((max(0, start - BAR_CLEAR), start + BAR_CLEAR), (max(0, end - BAR_CLEAR), end + BAR_CLEAR)):
        ends += int(coloured[max(0, first - CORNER_REACH):first, a:b].sum())
        ends += int(coloured[last + 1:last + 1 + CORNER_REACH, a:b].sum())
    return (start, end) if ends <= CORNER_STRAY else None


def tab_bar(rgb: np.ndarray, box: Sequence[int]) -> tuple[str, int, int] | None:
    """The one side (``top``, ``bottom``, ``left``, ``right``) of ``box`` that a tab's accent bar
    runs along, with where along that side it starts and ends (x for top and bottom, y for left
    and right), or None where no side or more than one has one."""
    x1, y1, x2, y2 = (int(v) for v in box)
    if x2 - x1 < MIN_SIDE or y2 - y1 < MIN_SIDE:
        return None
    # Only the pixels a bar and its clear ring can lie on are looked at, in the window's own
    # coordinates (a screen holds hundreds of texts).
    h, w = rgb.shape[:2]
    reach = BAR_REACH + BAR_THICK[1] + max(BAR_OVERHANG, CORNER_REACH) + BAR_CLEAR + 1
    ox, oy = max(0, x1 - reach), max(0, y1 - reach)
    coloured = _coloured(rgb[oy:min(h, y2 + reach), ox:min(w, x2 + reach)])
    x1, y1, x2, y2 = x1 - ox, y1 - oy, x2 - ox, y2 - oy
    across = coloured.T  # columns as lines, for the left and right sides
    inset_h, inset_w = min(BAR_INSET, (y2 - y1) // 3), min(BAR_INSET, (x2 - x1) // 3)
    thick = BAR_THICK[1]
    # A bar may begin up to BAR_REACH px out, and is followed on for its whole thickness.
    sides = {
        "top": _bar_extent(coloured, _bar_lines(coloured, x1, x2, range(y1 - BAR_REACH - thick, y1 + inset_h))),
        "bottom": _bar_extent(coloured, _bar_lines(coloured, x1, x2, range(y2 - inset_h, y2 + BAR_REACH + thick))),
        "left": _bar_extent(across, _bar_lines(across, y1, y2, range(x1 - BAR_REACH - thick, x1 + inset_w))),
        "right": _bar_extent(across, _bar_lines(across, y1, y2, range(x2 - inset_w, x2 + BAR_REACH + thick))),
    }
    found = [(side, extent) for side, extent in sides.items() if extent is not None]
    if len(found) != 1:
        return None
    side, (start, end) = found[0]
    shift = ox if side in ("top", "bottom") else oy
    return side, start + shift, end + shift


def _same_strip(a: Sequence[int], b: Sequence[int], side: str) -> bool:
    """Whether box ``b`` stands in the strip of tabs whose current one is ``a``, barred on ``side``:
    beside it in a row (a bar on top or bottom) or in a column (a bar left or right)."""
    if side in ("top", "bottom"):
        overlap = min(a[3], b[3]) - max(a[1], b[1])
        return overlap >= 0.5 * min(a[3] - a[1], b[3] - b[1])
    overlap = min(a[2], b[2]) - max(a[0], b[0])
    return overlap >= 0.5 * min(a[2] - a[0], b[2] - b[0])


def face_span(rgb: np.ndarray, box: Sequence[int]) -> tuple[int, int, np.ndarray] | None:
    """How far left and right (x1, x2) the face inside ``box`` runs on its middle rows, up to
    ``FACE_REACH`` px past the box (the detector boxes a linked button on its word, short of its
    frame), and the face's colour; None for a box too small to hold a face."""
    h, w = rgb.shape[:2]
    x1, y1, x2, y2 = (int(v) for v in box)
    rows = rgb[max(0, y1 + FACE_INSET):min(h, y2 - FACE_INSET)]
    inner = rows[:, max(0, x1 + FACE_INSET):min(w, x2 - FACE_INSET)]
    if inner.size == 0:
        return None
    face = dominant_colour(inner).astype(np.int32)
    ox = max(0, x1 - FACE_REACH)
    near = rows[:, ox:min(w, x2 + FACE_REACH)].astype(np.int32)
    on_face = (np.abs(near - face).max(axis=2) <= SAME_COLOUR).mean(axis=0)
    left = max(0, x1)
    while left > ox and on_face[left - 1 - ox] >= FACE_COLUMN:
        left -= 1
    right = min(w, x2)
    while right < ox + len(on_face) and on_face[right - ox] >= FACE_COLUMN:
        right += 1
    return left, right, face


def linked_rows(spans: Mapping[int, Sequence[int]], boxes: Mapping[int, Sequence[int]],
                faces: Mapping[int, np.ndarray], framed: Collection[int]) -> list[list[int]]:
    """Rows of two or more faces side by side, left to right, each touching the next (within
    ``LINKED_GAP`` px either way) or running into it, where two held-down faces of one colour meet
    with no line between. ``spans``: per element index, its face's extent (x1, y1, x2, y2), between
    its frame's lines for the ``framed`` ones, whose lines lie on the same rows in a row (a
    notebook's current tab stands taller than the tabs behind it); ``boxes``, ``faces``: its box
    and face colour."""
    def level_with(i: int, j: int) -> bool:
        if i in framed and j in framed:
            return abs(spans[i][1] - spans[j][1]) <= LINE_SLACK and abs(spans[i][3] - spans[j][3]) <= LINE_SLACK
        a, b = boxes[i], boxes[j]
        return min(a[3], b[3]) - max(a[1], b[1]) >= ROW_OVERLAP * min(a[3] - a[1], b[3] - b[1])

    rows: list[list[int]] = []
    for i in sorted(spans, key=lambda k: spans[k][0]):
        span = spans[i]
        for row in rows:
            j = row[-1]
            last = spans[j]
            touching = abs(span[0] - last[2]) <= LINKED_GAP
            merged = (span[0] < last[2] and boxes[i][0] >= boxes[j][2] - LINKED_GAP
                      and int(np.abs(faces[i] - faces[j]).max()) <= SAME_COLOUR)
            if (touching or merged) and level_with(i, j):
                row.append(i)
                break
        else:
            rows.append([i])
    return [row for row in rows if len(row) > 1]


def _level(colour: np.ndarray) -> int:
    return int(np.asarray(colour, dtype=np.int32).sum()) // 3


def frame_lines(rgb: np.ndarray, box: Sequence[int], face: np.ndarray) -> tuple[int, int] | None:
    """The rows of the border lines above and below the face in ``box`` (each looked for from
    ``BORDER_REACH`` px inside the box to twice that past it: the detector boxes a button a little
    inside its frame), or None where either is missing: a linked button is framed all round, a
    notebook's current tab opens into its page and a side tab's word stands on the strip's face."""
    x1, y1, x2, y2 = (int(v) for v in box)
    h = rgb.shape[0]

    def line_past(start: int, step: int) -> int | None:
        y = start
        for _ in range(3 * BORDER_REACH + 1):
            if not 0 <= y < h:
                return None
            line = rgb[y, x1 + FACE_INSET:x2 - FACE_INSET].astype(np.int32)
            if line.size and (np.abs(line - face).max(axis=1) >= BORDER_CONTRAST).mean() >= BORDER_SHARE:
                return y
            y += step
        return None

    top, bottom = line_past(y1 + BORDER_REACH, -1), line_past(y2 - BORDER_REACH - 1, 1)
    return None if top is None or bottom is None else (top, bottom)


def held_in_row(rgb: np.ndarray, boxes: Sequence[Sequence[int]]) -> list[int] | None:
    """Which of a linked row's boxes are drawn held down: faces ``LINKED_DARKER`` levels darker
    than the others, which share one face (one such face alone also as much darker than the window
    above and below the row); None where the row shows none so (or all)."""
    h, w = rgb.shape[:2]
    faces = []
    for box in boxes:
        x1, y1, x2, y2 = (int(v) for v in box)
        inner = rgb[max(0, y1 + FACE_INSET):min(h, y2 - FACE_INSET), max(0, x1 + FACE_INSET):min(w, x2 - FACE_INSET)]
        if inner.size == 0:
            return None
        faces.append(dominant_colour(inner).astype(np.int32))
    levels = [_level(face) for face in faces]
    light = max(levels)
    dark = [k for k, level in enumerate(levels) if light - level >= LINKED_DARKER]
    others = [faces[k] for k in range(len(faces)) if k not in dark]
    if not dark or any(int(np.abs(face - others[0]).max()) > SAME_COLOUR for face in others):
        return None
    if any(light - levels[k] < LINKED_DARKER for k in dark):
        return None
    x1, x2 = min(int(b[0]) for b in boxes), max(int(b[2]) for b in boxes)
    y1, y2 = min(int(b[1]) for b in boxes), max(int(b[3]) for b in boxes)
    # The window just above and just below the row (where it lies within the screen).
    bands = [band for band in (rgb[y1 - 6:y1 - 2, x1:x2] if y1 >= 6 else rgb[:0], rgb[y2 + 2:y2 + 6, x1:x2])
             if band.shape[0] == 4 and band.size]
    darkest_allowed = min((_level(dominant_colour(band)) for band in bands), default=0) - LINKED_DARKER
    # One face held down is a stack switcher's page only if darker than the window: Fusion draws the
    # tabs behind the current one in the window's grey (dark themes draw toggles held down so too,
    # two or more of which say toggles anyway).
    if len(dark) == 1 and (not bands or levels[dark[0]] > darkest_allowed):
        return None
    return dark


def current_tabs(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Tabs (and texts boxed on a tab's word) with an accent bar along one side are the current
    tab, typed a tab; the other tabs of a strip with a current one so found are not current. A text
    beside a bar at its left or right (a tab at the page's side) is boxed as tall as the bar, which
    is as tall as the tab."""
    wanted = [i for i, e in enumerate(elements) if e.type in TAB_TYPES]
    if not wanted:
        return elements
    rgb = rgb_pixels(image)
    current: dict[int, str] = {}
    out = list(elements)
    for i in wanted:
        bar = tab_bar(rgb, elements[i].bbox)
        if bar is None:
            continue
        side, start, end = bar
        current[i] = side
        update: dict[str, object] = {"highlighted": True}
        if elements[i].type is ElementType.TEXT and side in ("left", "right"):
            x1, _, x2, _ = elements[i].bbox
            update["bbox"] = (x1, start, x2, end)
        out[i] = out[i].retyped(ElementType.TAB, **update)
    if not any(e.type is ElementType.TAB for e in out):
        return out  # a linked row is read only where it holds a tab
    spans, boxes, faces = {}, {}, {}
    framed: set[int] = set()
    for i, e in enumerate(out):
        if e.type not in LINKED_TYPES or (span := face_span(rgb, e.bbox)) is None:
            continue
        lines = frame_lines(rgb, (span[0], e.bbox[1], span[1], e.bbox[3]), span[2])
        if lines is not None:
            framed.add(i)
        top, bottom = lines if lines is not None else (e.bbox[1], e.bbox[3])
        spans[i], boxes[i], faces[i] = (span[0], top, span[1], bottom), e.bbox, span[2]
    # Rows of framed faces first; then rows that take in unframed faces too (a held-down face's
    # frame may be as dark as it), where a face that runs on unframed can join a row it is no part of.
    read: set[int] = set(current)
    for pool in (framed, set(spans)):
        some = {i: spans[i] for i in pool if i not in read}
        for row in linked_rows(some, boxes, faces, framed):
            if not any(out[i].type is ElementType.TAB for i in row):
                continue
            held = held_in_row(rgb, [spans[i] for i in row])
            # The faces left up must be framed all round.
            if held is None or any(i not in framed for k, i in enumerate(row) if k not in held):
                continue
            read.update(row)
            if len(held) > 1:
                # Two pages are never current at once: a row of linked toggles, some held down.
                for k, i in enumerate(row):
                    out[i] = out[i].retyped(ElementType.BUTTON, checked=k in held)
                continue
            # One held down: a stack switcher's current page, or a toggle held down among linked
            # ones, which look alike. Only boxes typed a tab are read here; a held-down toggle typed
            # a button is read by ``read_shaded_buttons``.
            for k, i in enumerate(row):
                if out[i].type is ElementType.TAB:
                    out[i] = out[i].model_copy(update={"highlighted": k == held[0]})
    for j, element in enumerate(out):
        if element.type is not ElementType.TAB or j in current or not element.highlighted:
            continue
        if any(_same_strip(out[i].bbox, element.bbox, side) for i, side in current.items()):
            out[j] = element.model_copy(update={"highlighted": False})
    return out
