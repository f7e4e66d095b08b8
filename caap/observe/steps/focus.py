"""Where the keyboard focus is drawn: a dotted rectangle inside a button, a text caret, an accent
ring, Tk's dark frame.

GTK 3's themes and Qt's classic styles mark the focused button with a rectangle of dots one pixel
apart, a few pixels inside its frame or round its label. It is the plainest sign of focus a desktop
draws, and too faint for the state head, which sees the button squeezed into 32 px. A dotted line
is a run of pixels that are ink and background by turns; ``dotted_ring`` asks for such runs along
a row near the box's top and one near its bottom, over about the same columns.

Only the focused field draws a text caret: ``text_caret`` finds one alone in an empty field or text
view (a thin upright line, the only ink inside the border), or at the end of a field's value or of
one of a text view's lines (``caap.observe.steps.field_ink.caret_columns``). A caret blinks, so a
screenshot may miss it. A caret alone is also what the readers read as ``|`` or ``1`` in an empty field:
``empty_caret_fields`` (its own step) says such a field holds nothing.

Tk draws a one-pixel black line round the focused button or field (its highlight ring, drawn in the
window's colour round the others): ``dark_frame``.

``drawn_focus`` is the step: where the state head read no element of the screen focused, the one
focusable element that shows a dotted ring, or else a caret, or else a field's ring in an accent
colour (``caap.observe.steps.figures.focus_ring``), or else a dark frame, or else a button's
accent ring, is. A screen shows one keyboard
focus, so where elements in two places show the same sign the step says nothing (overlapping boxes
of one control are one place). It looks at the screen as taken (``Look.screen``): the read stage
paints a field's caret out for the readers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import area, intersection
from caap.observe.primitives import background_colour, difference, face_colour, rgb_pixels, true_runs
from caap.observe.steps.field_ink import BORDER_PX, INK_DIFFERENCE, caret_columns
from caap.observe.steps.figures import focus_ring
from caap.taxonomy import FOCUSED, ElementType, attributes_of

DOT_INK = 20           # least channel difference from the button's face that may make a dot ...
DOT_SHARE = 0.6        # ... and, in a row, at least this share of the row's strongest: GTK's dashes are
                       # drawn at 30 % opacity, with fainter anti-aliased pixels between them
DOT_EDGE_PX = 3        # px at each end of a row that set no level
DOT_ON_PX = 2          # a dot or dash is at most this long ...
DOT_OFF_PX = 3         # ... and the gaps between them at most this long
DOT_ROWS = 12          # px from the box's top (and bottom) where the ring's rows may lie
DOT_MIN_RUN = 16       # px: the shortest dotted run that counts ...
DOT_RUN_SHARE = 0.35   # ... and at least this share of the box's width
DOT_OVERLAP = 0.8      # the top and bottom runs share this share of the longer one's columns (a
                       # frame's rounded corner may join one of them at an end)
# Qt's Fusion frames the default button (the one Enter presses) in its accent colour too, so a
# coloured ring tells focus on fields, drop-downs and text views first; a ringed button only where
# nothing else shows the focus and its face is grey (``ringed_button``).
RING_TYPES = frozenset({ElementType.INPUT_FIELD, ElementType.DROPDOWN, ElementType.TEXT_AREA})
RINGED_BUTTONS = frozenset({ElementType.BUTTON})
RING_REACH = 5         # px a control's box may lie off its ring (``caap.observe.steps.figures.ring_box``)


def ringed_field(rgb: np.ndarray, box: Sequence[int]) -> bool:
    """Whether a field, drop-down or text view shows its focus by an accent ring, a few px off its
    box at most."""
    return focus_ring(rgb, box, reach=RING_REACH)


def ringed_button(rgb: np.ndarray, box: Sequence[int], *, held: bool = False) -> bool:
    """Whether a button shows its focus by an accent ring round a grey face (GTK 4, Qt's Fusion):
    Fusion rings the default button too but tints its face, and an outlined web button has a pale
    face of its own colour. ``held``: the button is held down, whose face is a shade of its own
    (GTK 4's warm grey spreads as much as Fusion's tint), and no default button."""
    return focus_ring(rgb, box, grey_face=not held, reach=RING_REACH)


CARET_TYPES = frozenset({ElementType.INPUT_FIELD, ElementType.TEXT_AREA})
MIN_BOX = (24, 14)     # px (width, height): smaller boxes hold no dotted ring


def _dotted_runs(row: np.ndarray) -> list[tuple[int, int]]:
    """The stretches ``[start, end)`` of a row of ink differences where short dots and short gaps
    take turns (``DOT_ON_PX``, ``DOT_OFF_PX``), at least ``DOT_MIN_RUN`` long."""
    inner = row[DOT_EDGE_PX:-DOT_EDGE_PX]  # the frame's rounded corners are stronger than the dots
    if inner.size == 0 or int(inner.max()) <= DOT_INK:
        return []
    on = row > max(DOT_INK, DOT_SHARE * int(inner.max()))
    edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
    dots = list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))  # [start, end) of each run of ink
    runs: list[tuple[int, int]] = []
    first = last = None
    for a, b in dots:
        fits = b - a <= DOT_ON_PX
        if fits and last is not None and a - last <= DOT_OFF_PX:
            last = b
            continue
        if first is not None and last is not None and last - first >= DOT_MIN_RUN:
            runs.append((first, last))
        first, last = (a, b) if fits else (None, None)
    if first is not None and last is not None and last - first >= DOT_MIN_RUN:
        runs.append((first, last))
    return runs


def dotted_ring(rgb: np.ndarray, box: Sequence[int]) -> bool:
    """Whether a dotted rectangle is drawn inside ``box``: a dotted run along a row in its top
    ``DOT_ROWS`` px and one in its bottom ``DOT_ROWS`` px that span about the same columns."""
    h, w = rgb.shape[:2]
    x1, y1, x2, y2 = max(int(box[0]), 0), max(int(box[1]), 0), min(int(box[2]), w), min(int(box[3]), h)
    if x2 - x1 < MIN_BOX[0] or y2 - y1 < MIN_BOX[1]:
        return False
    crop = rgb[y1:y2, x1:x2]
    ink = difference(crop, face_colour(crop), "max")
    least = max(DOT_MIN_RUN, DOT_RUN_SHARE * (x2 - x1))
    reach = min(DOT_ROWS, (y2 - y1) // 3)  # the label's rows lie between: a word's stems can look dotted

    def runs(rows: range) -> list[tuple[int, int]]:
        return [r for y in rows for r in _dotted_runs(ink[y]) if r[1] - r[0] >= least]

    tops, bottoms = runs(range(0, reach)), runs(range(y2 - y1 - reach, y2 - y1))
    return any(min(a[1], b[1]) - max(a[0], b[0]) >= DOT_OVERLAP * max(a[1] - a[0], b[1] - b[0])
               for a in tops for b in bottoms)


CARET_MAX_WIDTH = 2    # px: a caret is one pixel wide, two with anti-aliasing
CARET_MIN_PX = 8       # px: its least height ...
CARET_GAP_PX = 4       # px: the most blank between a value's last letter and the caret after it
CARET_MAX_SHARE = 0.85  # ... and at most this share of the field's inside (a longer line is the frame's)
MERGED_LINES = 1.6     # a text view's band of ink this many times its shortest line's height holds lines that touch
CARET_CLEAR_PX = 6     # px of blank after a caret on the rows it spans, where lines touch


def text_caret(rgb: np.ndarray, box: Sequence[int]) -> bool:
    """Whether a text caret shows in a field or text view boxed at ``box``: alone inside its
    border, or at the end of a one-line value."""
    return _caret(rgb, box) is not None


def lone_caret(rgb: np.ndarray, box: Sequence[int]) -> bool:
    """Whether the only ink inside the field's border is a caret: the field is empty."""
    return _caret(rgb, box) == "alone"


def _caret(rgb: np.ndarray, box: Sequence[int]) -> str | None:
    """Where a caret shows in the field boxed at ``box``: ``alone``, ``after`` its one-line
    value, or None."""
    h, w = rgb.shape[:2]
    # A box at the screen's edge has no border there: a text view's caret may stand in its first column.
    x1, y1 = (max(int(v) + BORDER_PX, 0) if v > 0 else 0 for v in box[:2])
    x2 = min(int(box[2]) - BORDER_PX, w) if box[2] < w else w
    y2 = min(int(box[3]) - BORDER_PX, h) if box[3] < h else h
    if x2 - x1 < 6 or y2 - y1 < CARET_MIN_PX:
        return None
    crop = rgb[y1:y2, x1:x2]
    ink = difference(crop, background_colour(crop), "max") > INK_DIFFERENCE
    # What is left of a thick focus ring or frame lies along the crop's edges: its rows are not
    # looked at, nor its columns where they are inked nearly all the way down (a caret may stand
    # a pixel from the border: GTK 4's in an empty field).
    inner = ink  # a fresh array: cleared in place
    inner[:2] = inner[-2:] = False
    for side in (slice(0, 2), slice(-2, None)):
        edge = inner[:, side]
        edge[:, edge.mean(axis=0) > CARET_MAX_SHARE] = False
    cols = np.flatnonzero(inner.any(axis=0))
    if cols.size == 0:
        return None
    if cols[-1] - cols[0] < CARET_MAX_WIDTH:
        rows = np.flatnonzero(inner[:, cols[0]:cols[-1] + 1].any(axis=1))
        length = rows[-1] - rows[0] + 1
        return "alone" if rows.size == length and CARET_MIN_PX <= length <= CARET_MAX_SHARE * ink.shape[0] else None
    # A text view's caret ends one of its lines: each line is looked at as a one-line value.
    lines = _ink_lines(inner)
    shortest = min((b - t for t, b in lines), default=0)
    for top, bottom in lines if len(lines) > 1 else [(0, crop.shape[0])]:
        if _ends_with_caret(crop[top:bottom], inner[top:bottom]):
            return "after"
        # Lines that touch (a raised word's descender on the line below) come as one band: each
        # thin upright stroke with blank after it is looked at with the rows it spans.
        if len(lines) > 1 and bottom - top > MERGED_LINES * shortest:
            band_ink = inner[top:bottom]
            for c in np.flatnonzero(band_ink.any(axis=0)).tolist():
                for a, b in true_runs(band_ink[:, c]):
                    if b - a + 1 < CARET_MIN_PX or band_ink[a:b + 1, c + 1:c + 1 + CARET_CLEAR_PX].any():
                        continue
                    span = slice(max(0, top + a - LINE_PAD_PX), top + b + 1 + LINE_PAD_PX)
                    if _ends_with_caret(crop[span, :c + 1], inner[span, :c + 1]):
                        return "after"
    return None


def _ends_with_caret(band: np.ndarray, ink: np.ndarray) -> bool:
    """Whether a line's crop ends with a caret right after its value (a line standing apart at the
    field's far end is a drop-down's divider)."""
    caret = caret_columns(band)
    if caret is None:
        return False
    line_cols = np.flatnonzero(ink.any(axis=0))
    before = line_cols[line_cols < caret.start]
    return bool(before.size and caret.start - before[-1] <= CARET_GAP_PX)


LINE_PAD_PX = 2  # px of blank kept above and below a text view's line when it is looked at alone


def _ink_lines(ink: np.ndarray) -> list[tuple[int, int]]:
    """The rows of each line of ink (runs of inked rows between blank ones), ``LINE_PAD_PX``
    round each."""
    rows = np.asarray(ink.any(axis=1))
    return [(max(0, a - LINE_PAD_PX), min(ink.shape[0], b + 1 + LINE_PAD_PX)) for a, b in true_runs(rows)]


FRAME_DARK = 80        # a highlight frame's pixels are at most this bright (brightest channel) ...
FRAME_CONTRAST = 90    # ... and at least this much darker than the window round the control
FRAME_SHARE = 0.9      # share of a side's line that must be that dark
FRAME_REACH_PX = 6     # px above and below the box where the frame's top and bottom lines may lie
FRAME_SIDE_REACH = 0.1  # of the box's width: how far left and right of it the frame's sides may lie
                        # (at least FRAME_REACH_PX): the detector may box a Tk entry on its text and
                        # stop short of its frame by 8 px on the left or 30 px on the right


def dark_frame(rgb: np.ndarray, box: Sequence[int]) -> bool:
    """Whether a closed dark rectangle is drawn round ``box``: Tk's focus highlight, a black line
    round the focused button or field (drawn in the window's colour round the others). A raised
    or sunken bevel is dark on two sides only."""
    h, w = rgb.shape[:2]
    ry = FRAME_REACH_PX
    rx = max(FRAME_REACH_PX, round(FRAME_SIDE_REACH * (int(box[2]) - int(box[0]))))
    x1, y1 = max(int(box[0]) - rx, 0), max(int(box[1]) - ry, 0)
    x2, y2 = min(int(box[2]) + rx, w), min(int(box[3]) + ry, h)
    if x2 - x1 < MIN_BOX[0] + 4 * rx or y2 - y1 < MIN_BOX[1] + 2 * ry:
        return False
    bright = rgb[y1:y2, x1:x2].max(axis=2).astype(np.int16)
    edge = np.concatenate([bright[0], bright[-1], bright[:, 0], bright[:, -1]])
    dark = (bright <= FRAME_DARK) & (int(np.median(edge)) - bright >= FRAME_CONTRAST)
    # The top and bottom lines across the middle of the box's span, so that a corner's rounding
    # or an inexact box does not cut them; the sides over the box's height.
    rows, cols = dark[:, 2 * rx:-2 * rx], dark[ry:-ry, :]

    def lined(lines: np.ndarray) -> bool:
        return bool(lines.size and (lines.mean(axis=1) >= FRAME_SHARE).any())

    return (lined(rows[:2 * ry + 1]) and lined(rows[-(2 * ry + 1):]) and lined(cols[:, :2 * rx + 1].T)
            and lined(cols[:, -(2 * rx + 1):].T))


SAME_PLACE = 0.5  # two boxes sharing this share of the smaller one's area see the same sign


def _one_place(shown: list[int], elements: Sequence[Element]) -> bool:
    """Whether the elements showing a sign are one control: one box, or boxes the detector left
    overlapping (two boxes of one text view see its one caret)."""
    boxes = [elements[i].bbox for i in shown]
    return bool(boxes) and all(intersection(a, b) >= SAME_PLACE * min(area(a), area(b))
                               for k, a in enumerate(boxes) for b in boxes[k + 1:])


# The signs of focus, in the order they are trusted, each with the types it is looked for on (None: all).
SIGNS = ((dotted_ring, None), (text_caret, CARET_TYPES), (ringed_field, RING_TYPES), (dark_frame, None),
         (ringed_button, RINGED_BUTTONS))


def _shows(sign: Callable[..., bool], rgb: np.ndarray, element: Element) -> bool:
    if sign is ringed_button:
        return ringed_button(rgb, element.bbox, held=bool(element.checked))
    return sign(rgb, element.bbox)


def _shows_focus(rgb: np.ndarray, element: Element) -> bool:
    """Whether any sign of focus is drawn on ``element`` (the signs ``drawn_focus`` looks for)."""
    return any((types is None or element.type in types) and _shows(sign, rgb, element) for sign, types in SIGNS)


def drawn_focus(image: Image.Image, elements: list[Element]) -> list[Element]:
    """The elements with the one whose focus is drawn focused, where none is read focused yet, or
    the one read focused shows no sign of it (the head reads a large glyph boxed as a button
    focused); and where several are read focused and the focus is drawn on one of them alone, that
    one alone (a window has one focus: Qt draws its default button as it draws a focused one, and
    the state head reads both focused)."""
    focusable = [i for i, e in enumerate(elements) if FOCUSED in attributes_of(e.type)]
    if not focusable:
        return elements
    read = [i for i in focusable if elements[i].focused]
    if len(read) > 1:
        rgb = rgb_pixels(image)
        shown = [i for i in read if _shows_focus(rgb, elements[i])]
        if len(shown) != 1:
            return elements
        return [e.model_copy(update={"focused": False}) if i in read and i != shown[0] else e
                for i, e in enumerate(elements)]
    rgb = rgb_pixels(image)
    if read and _shows_focus(rgb, elements[read[0]]):
        return elements
    drawn = _drawn(rgb, elements, focusable)
    if drawn is None:
        return elements
    return [e.model_copy(update={"focused": i == drawn}) if i == drawn or i in read else e
            for i, e in enumerate(elements)]


def _drawn(rgb: np.ndarray, elements: Sequence[Element], focusable: list[int]) -> int | None:
    """The one control a sign of focus is drawn on, by the signs in their order; None where no sign
    shows, or the first that shows does in two places (two controls cannot both hold the focus)."""
    for sign, types in SIGNS:
        shown = [i for i in focusable
                 if (types is None or elements[i].type in types) and _shows(sign, rgb, elements[i])]
        if _one_place(shown, elements):
            return max(shown, key=lambda i: elements[i].score or 0.0)
        if shown:
            return None
    return None


# What the readers make of a caret standing alone in an empty field.
CARET_READINGS = frozenset({"|", "I", "l", "1", "i", "!", "/", "[", "]", "丨"})


def empty_caret_fields(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Fields and text views whose one glyph read is a caret standing alone: empty. (On desktop
    windows: a web page's number field may hold a lone ``1`` as thin as a caret.)"""
    todo = [i for i, e in enumerate(elements) if e.type in CARET_TYPES and (e.text or "").strip() in CARET_READINGS]
    if not todo:
        return elements
    rgb = rgb_pixels(image)
    out = list(elements)
    for i in todo:
        if lone_caret(rgb, out[i].bbox):
            out[i] = out[i].model_copy(update={"text": ""})
    return out
