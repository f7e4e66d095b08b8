"""A text field's own ink: what is drawn in the value's colour, and what only shows through.

A field that holds no value may show a placeholder ("Name", "mm/dd/yyyy") in a grey;
``blank_placeholders`` gives such a field the empty text it holds, as the DOM and the accessibility
tree say (an agent that reads "Name" as the value never types it).

A field's value is drawn in one text colour. A second, clearly lighter text inside the same field
is something else: a heading behind a transparent field (MiniWoB++'s email search draws "Results"
under the typed name), or an inline completion hint. Read together, the two become one word
(``Kiley`` over ``Results`` read ``Kileyts``), and an agent that checks what it typed types it
again. The reader and PP-OCR get the screenshot with the lighter text painted over in the field's
background colour; everything else, the field's border and focus ring included, is left as it is.

A row's text (a tree's file names, a list's labels) may start with a colourful icon inside the
detector's box (a tree item is boxed with its icon). Read with it, a folder becomes a letter
(``Briana`` read ``C Briana``); ``leading_icon`` finds it, and ``reading_boxes`` gives the reader
the row's box without it (the icon stays where it is, for an element of its own to be read on).
An icon view's item and a tool button with its label under its icon are boxed with the picture
above the text; read with it, the label loses letters (``audio-volume-high`` read ``udio,-hig``):
``picture_above`` finds where the text starts, and the readers get the rows from there down.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection, iou, uncovered_part
from caap.observe.primitives import (
    background_colour,
    difference,
    frame_lines,
    ink_extent,
    ink_mask,
    rgb_pixels,
    true_runs,
)
from caap.taxonomy import ElementType

FIELD_TYPES = frozenset({ElementType.INPUT_FIELD})
# Rows and buttons may show a coloured icon before their text (Tk's demos: a red ✕ before Dismiss).
LEADING_ICON_TYPES = frozenset({ElementType.TEXT, ElementType.TABLED_TEXT, ElementType.TREE_ITEM, ElementType.BUTTON})
BORDER_PX = 3          # a field's border and focus ring stay untouched
INK_DIFFERENCE = 48    # a pixel this far (largest channel) from the background is ink
DARK_TEXT = 150        # the value's ink must reach this far from the background
CORE_FRACTION = 0.6    # ink at this share of the strongest contrast is the value's core
LIGHT_FRACTION = 0.4   # the second text's ink stays below this share of it (median)
MIN_PIECE_HEIGHT = 5   # a shorter piece of lighter ink is the light edge of one of the value's glyphs
MIN_FOREIGN_PX = 12    # fewer lighter pixels than this are noise, not a second text
TOUCH_PX = 4           # a second text runs into the value within this many columns; farther off,
                       # lighter ink is a control of its own (a spinner's arrows), which stays
# How far a field's text stands from its background, as a share of the farthest any colour could
# (strongest channel): a value is drawn in the text colour at 0.67 and up (black on white is 1; the
# muted themes of the generated pages and jQuery UI's spinner reach 0.67-0.69); a placeholder in a
# grey at 0.48-0.66 (Chromium's #757575 on white: 0.54, GTK's 0.50-0.66, Qt's 0.50); a disabled
# field's value dimmer still (Adwaita mixes the text half into the background: GTK's insensitive
# entries stand at 0.42-0.46), and it stays the value. Measured on the labelled fields of the
# MiniWoB, desktop and generated datasets.
PLACEHOLDER_SHARES = (0.48, 0.66)


def _background(crop: np.ndarray) -> np.ndarray:
    return background_colour(crop).astype(np.int16)


def foreign_ink(crop: np.ndarray) -> np.ndarray | None:
    """The mask of what to paint over inside a field's crop (H × W × 3, uint8, border already cut
    away), or None when the crop holds one text colour only.

    The value's ink is its core (the strongest contrast) and a fringe one pixel wide around it.
    Lighter ink farther off, in pieces of a glyph's height, of one clearly lighter tone, running
    into the value's columns, is a second text. Once one shows, only the value's core is kept:
    where the two texts cross, the lighter one lies inside the value's fringe as well (binarising
    every field instead loses thin strokes: 22 of 207 labelled field texts on the test and
    validation screens)."""
    import cv2  # the vision extra's, as for PP-OCR

    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return None
    bg = _background(crop)
    diff = difference(crop, bg, "max")
    strongest = int(diff.max())
    if strongest < DARK_TEXT:
        return None  # a placeholder or a light value: nothing darker to keep
    core = diff >= CORE_FRACTION * strongest
    # A glyph's anti-aliased fringe lies within one pixel of its core.
    fringe = cv2.dilate(core.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    apart = (diff > INK_DIFFERENCE) & ~fringe
    n, labels, stats, _ = cv2.connectedComponentsWithStats(apart.astype(np.uint8), connectivity=8)
    columns = np.flatnonzero(core.any(axis=0))
    left, right = int(columns[0]) - TOUCH_PX, int(columns[-1]) + TOUCH_PX
    second = np.zeros(n, bool)
    for k in sorted(range(1, n), key=lambda k: stats[k, cv2.CC_STAT_LEFT]):  # a word runs on glyph by glyph
        x, width, height = (stats[k, cv2.CC_STAT_LEFT], stats[k, cv2.CC_STAT_WIDTH], stats[k, cv2.CC_STAT_HEIGHT])
        if height >= MIN_PIECE_HEIGHT and x <= right and x + width - 1 >= left:
            second[k] = True
            right = max(right, x + width - 1 + TOUCH_PX)
    foreign = second[labels]
    if int(foreign.sum()) < MIN_FOREIGN_PX or float(np.median(diff[foreign])) > LIGHT_FRACTION * strongest:
        return None
    return ~core


CARET_MAX_WIDTH = 2     # a caret is a 1 px line, anti-aliased onto a second column at most
CARET_BELOW_PX = 2      # ... that reaches this far below the text's baseline
BASELINE_SHARE = 0.5    # the share of a text's glyphs that reach its baseline


def caret_columns(crop: np.ndarray, *, at: str = "end") -> slice | None:
    """The columns of a text caret at the end of the text in a field's crop (H × W × 3, border
    cut away), or at its start (``at="start"``: the caret put before the value), or None. Read with
    the value, a caret becomes a letter (``Tiphani`` + caret read ``Tiphanil``, a caret before
    ``Templates`` read ``|Templates``), and an agent that checks what it typed types it again.

    Chromium draws the caret over the whole line box: from the top of the tallest glyphs down to
    the descenders, in one unbroken column. A final ``l`` or ``I`` stops at the baseline, so the
    caret is the thin unbroken column at the end of the ink that reaches as high as the rest and at
    least ``CARET_BELOW_PX`` below the value's baseline (the lowest row that half its glyphs
    reach). At the start, the same caret is looked for in the crop mirrored. A caret inside the
    text (after a click there) is left to the readers."""
    import cv2  # the vision extra's, as for PP-OCR

    if at == "start":
        width = crop.shape[1]
        mirrored = caret_columns(crop[:, ::-1])
        return None if mirrored is None else slice(width - mirrored.stop, width - mirrored.start)
    if crop.shape[0] < 6 or crop.shape[1] < 4:
        return None
    diff = difference(crop, _background(crop), "max")
    ink = diff > INK_DIFFERENCE
    cols = np.flatnonzero(ink.any(axis=0))
    if cols.size < 4:
        return None
    last = int(cols[-1])
    strong = diff >= CORE_FRACTION * int(diff.max())
    # Widest first: the caret's own column and its anti-aliased outer side go together.
    for c, span in ((last - k, slice(last - k, last + 1)) for k in range(CARET_MAX_WIDTH - 1, -1, -1)):
        run = np.flatnonzero(ink[:, c])
        if run.size < 6 or run[-1] - run[0] + 1 != run.size:
            continue
        rest = ink.copy()
        rest[:, span] = False
        rest_cols = np.flatnonzero(rest.any(axis=0))
        if rest_cols.size < 3:
            continue
        # The baseline of the value's own ink (a lighter text behind it may sit higher): the lowest
        # row that half of its glyphs reach. Below it only descenders go; a T's bar or an H's
        # crossbar, which end many columns higher, do not move it.
        core = (strong & rest).astype(np.uint8)
        n, labels = cv2.connectedComponents(core, connectivity=8)
        if n < 2:
            continue
        glyphs_per_row = np.array([np.unique(row[row > 0]).size for row in labels])
        share = min(BASELINE_SHARE * (n - 1), float(glyphs_per_row.max()))  # glyphs on no one row: the most
        baseline = int(np.flatnonzero(glyphs_per_row >= share)[-1])
        rows = np.flatnonzero(rest.any(axis=1))
        inner = span.start - 1
        # Below the baseline the caret stands alone (a final "g" hooks back under its bowl); above
        # it, the last glyph's anti-aliased edge may touch it.
        apart = not (0 <= inner < ink.shape[1]) or not ink[baseline + 1:, inner].any()
        past_both = run[0] < rows[0] and run[-1] > rows[-1]
        if (apart and run[0] <= rows[0] + 1 and run[-1] >= baseline + CARET_BELOW_PX) or past_both:
            return span
    return None


ICON_GAP_HEIGHTS = 1.0  # blank before a trailing piece, in line heights, that sets it apart from the value
ICON_GAP_MIN_PX = 8
ICON_MAX_HEIGHTS = 2.5  # a trailing piece wider than this many line heights is words, not a control
RULE_SHARE = 0.9  # a column inked over this share of the field's height ...
RULE_MAX_PX = 2   # ... in a run at most this wide is a rule between parts of the field
MIN_VALUE_PX = 3  # a first piece narrower than this is a frame's inner line, not a value (a right-aligned
                  # number, alone in its field, is the value and stays)


def trailing_controls(crop: np.ndarray) -> slice | None:
    """The columns of the controls drawn at the right end of a field's crop (H × W × 3, border cut
    away), or None: an entry's clear or reload icon, a date field's calendar, a desktop spin
    button's − and + (GTK draws them inside the entry). Read with the value they become letters
    (``entry`` + clear icon read ``entryx``, ``50`` read ``50 - +``). They are the pieces of ink at
    the end, each at most ``ICON_MAX_HEIGHTS`` line heights wide, standing a blank of at least a
    line height (``ICON_GAP_HEIGHTS``, ``ICON_GAP_MIN_PX``) after what comes before them, which is
    kept: a field is never emptied here."""
    if crop.shape[0] < 3 or crop.shape[1] < 4:
        return None
    ink = ink_mask(crop, _background(crop), INK_DIFFERENCE, "max")
    # GTK 4 parts its spin button's − and + from the value by rules from the top to the bottom of
    # the field: they are no text, and measured as one they would make the line as high as the field.
    full = np.concatenate([[0], (ink.sum(axis=0) >= RULE_SHARE * crop.shape[0]).astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(full))
    for a, b in zip(edges[::2], edges[1::2], strict=True):
        if b - a <= RULE_MAX_PX:
            ink[:, a:b] = False
    # The line's height, from the rows inked in two columns or more: a rounded frame's corner left
    # in the crop's corners inks one.
    rows = np.flatnonzero(ink.sum(axis=1) >= 2)
    if rows.size == 0:
        return None
    height = int(rows[-1] - rows[0] + 1)
    cols = ink.any(axis=0).astype(np.int8)
    edges = np.flatnonzero(np.diff(np.concatenate([[0], cols, [0]])))
    runs = list(zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True))  # [start, end) of inked columns
    gap = max(ICON_GAP_MIN_PX, ICON_GAP_HEIGHTS * min(height, crop.shape[0]))
    # Runs closer than the gap are one piece (the letters of a word, the words of a value).
    pieces: list[list[int]] = []
    for a, b in runs:
        if pieces and a - pieces[-1][1] < gap:
            pieces[-1][1] = b
        elif pieces or b - a >= MIN_VALUE_PX:  # a thin line first is what is left of the frame
            pieces.append([a, b])
    cut = None
    while len(pieces) > 1 and pieces[-1][1] - pieces[-1][0] <= ICON_MAX_HEIGHTS * height:
        cut = pieces.pop()[0]
    return None if cut is None else slice(pieces[-1][1] + 1, crop.shape[1])


COLOURFUL = 80  # ink whose channels spread this far (max - min) is coloured, not grey or black
LEAD_ICON_MAX_HEIGHTS = 2.0  # a leading icon is at most this many ink heights wide
LEAD_GAP_PX = 2  # blank columns between the icon and the text
TEXT_COLOURFUL_MAX = 0.15  # the text after an icon is drawn in grey or black: at most this share coloured


def leading_icon(crop: np.ndarray) -> slice | None:
    """The columns from a row's left edge to the end of a coloured icon drawn before its grey or
    black text (H × W × 3), or None. The icon is the first run of coloured ink, at most
    ``LEAD_ICON_MAX_HEIGHTS`` ink heights wide and at most that far after the first ink (a tree's
    dotted guide or expander may come before it: left out with it), set off from the text by blank columns; the text
    after it must be mostly uncoloured, so a link or a coloured word is never cut, and the row's
    background grey or white (a coloured badge, or a highlight from edge to edge, is no icon)."""
    if crop.shape[0] < 3 or crop.shape[1] < 8:
        return None
    background = _background(crop)
    if int(background.max()) - int(background.min()) > COLOURFUL // 2:
        return None  # text on a coloured badge or highlight: its colour is no icon
    ink = ink_mask(crop, background, INK_DIFFERENCE, "max")
    rows = np.flatnonzero(ink.any(axis=1))
    if rows.size == 0:
        return None
    height = int(rows[-1] - rows[0] + 1)
    colour_ink = ink & (crop.max(axis=2).astype(np.int16) - crop.min(axis=2) > COLOURFUL)
    coloured = colour_ink.any(axis=0)
    first = np.flatnonzero(coloured)
    # Measured from the first ink: a button centres its icon and label behind blank columns.
    if first.size == 0 or first[0] - np.flatnonzero(ink.any(axis=0))[0] > LEAD_ICON_MAX_HEIGHTS * height:
        return None
    end = int(first[0])
    while end + 1 < coloured.size and (coloured[end + 1] or (end + 2 < coloured.size and coloured[end + 2])):
        end += 1
    if end - int(first[0]) + 1 > LEAD_ICON_MAX_HEIGHTS * height:
        return None
    blob = np.flatnonzero(colour_ink[:, first[0]:end + 1].any(axis=1))
    if blob[0] == 0 and blob[-1] == crop.shape[0] - 1:
        return None  # colour from the top edge to the bottom one: a highlight behind words, no icon
    inked = ink.any(axis=0)
    while end + 1 < inked.size and inked[end + 1]:
        end += 1  # the icon's dark outline past its last coloured column (Qt's red cross on Cancel)
    if end - int(first[0]) + 1 > LEAD_ICON_MAX_HEIGHTS * height:
        return None
    after = inked[end + 1:]
    text = np.flatnonzero(after)
    if text.size == 0 or text[0] < LEAD_GAP_PX or text[-1] - text[0] + 1 < height:
        return None
    if colour_ink[:, end + 1:].sum() > TEXT_COLOURFUL_MAX * ink[:, end + 1:].sum():
        return None
    return slice(0, end + 1 + int(text[0]) // 2 + 1)


PICTURE_OVER_TEXT = 1.8  # a band of ink this many times the height of the text lines under it is a picture
TEXT_LINE_PX = (6, 30)  # px: the height of a line of text under a picture, least and most
PICTURE_GAP_PX = 2  # blank rows between the picture and the text


def picture_above(crop: np.ndarray) -> int | None:
    """The first row of the text under a picture (an icon view's item, a tool button with its
    label under its icon), or None: the crop's ink is a band of rows at least
    ``PICTURE_OVER_TEXT`` times as tall as each line of text below it, blank rows between."""
    if crop.shape[0] < 3 * TEXT_LINE_PX[0] or crop.shape[1] < 8:
        return None
    ink = ink_mask(crop, _background(crop), INK_DIFFERENCE, "max")
    bands = true_runs(ink.any(axis=1), gap=1)
    if len(bands) < 2:
        return None
    picture, lines = bands[0], bands[1:]
    heights = [b - a + 1 for a, b in lines]
    if not all(TEXT_LINE_PX[0] <= h <= TEXT_LINE_PX[1] for h in heights):
        return None
    if picture[1] - picture[0] + 1 < PICTURE_OVER_TEXT * max(heights) or lines[0][0] - picture[1] - 1 < PICTURE_GAP_PX:
        return None
    return max(lines[0][0] - PICTURE_GAP_PX, picture[1] + 1)


LABEL_GAP_PX = 2  # px: blank columns between the letters of a word, at most (a space, or the next item's
                  # label in an icon view, stands wider)


def _label_width(image: Image.Image, box: Box) -> tuple[int, int]:
    """The left and right ends of the label in ``box``'s rows: where a word runs through a side of
    the box (a long name under an icon is drawn wider than the item), that word's ink followed
    across gaps of up to ``LABEL_GAP_PX`` past the side; elsewhere the box's own side."""
    x1, y1, x2, y2 = (int(v) for v in box)
    reach = (x2 - x1) // 2
    left, right = max(0, x1 - reach), min(image.width, x2 + reach)
    region = np.asarray(image.crop((left, y1, right, y2)).convert("RGB"))
    cols = ink_mask(region, _background(region), INK_DIFFERENCE, "max").any(axis=0)
    inside = np.flatnonzero(cols[x1 - left:x2 - left])
    if inside.size == 0:
        return x1, x2
    runs = true_runs(cols, gap=LABEL_GAP_PX)
    first, last = x1 - left + int(inside[0]), x1 - left + int(inside[-1])  # in the region's columns
    out_left, out_right = x1, x2
    if inside[0] == 0:  # ink on the box's left side: a word cut by it
        out_left = min(x1, next(left + a for a, b in runs if a <= first <= b))
    if inside[-1] == x2 - x1 - 1:
        out_right = max(x2, next(left + b + 1 for a, b in runs if a <= last <= b))
    return out_left, out_right


FRAME_SHARE = 0.5  # a line of a button's crop this much ink is its frame, bevel or focus ring ...
FRAME_DEPTH_PX = 6  # ... when it lies this close to the crop's edge


def inside_frame(crop: np.ndarray) -> tuple[int, int, int, int]:
    """The part of a button's crop (H × W × 3) inside the frame lines, bevels and dotted focus ring
    drawn along its edges, as (left, top, right, bottom). Toolkits draw these at different depths
    (Tk's bevel and focus ring lie deeper than ``BORDER_PX``); one left in would count as ink right
    after an icon."""
    ink = ink_mask(crop, _background(crop), INK_DIFFERENCE, "max")
    height, width = ink.shape
    framed_rows, framed_columns = frame_lines(ink, FRAME_DEPTH_PX, FRAME_SHARE)
    top = [int(r) + 1 for r in framed_rows if r < FRAME_DEPTH_PX]
    bottom = [int(r) for r in framed_rows if r >= height - FRAME_DEPTH_PX]
    left = [int(c) + 1 for c in framed_columns if c < FRAME_DEPTH_PX]
    right = [int(c) for c in framed_columns if c >= width - FRAME_DEPTH_PX]
    return (max(left, default=0), max(top, default=0), min(right, default=width), min(bottom, default=height))


# A key of a keypad: one to three glyphs small in a large framed button (galculator's ``7``). Both
# readers take the frame's sides for glyphs (``[4]``, ``1。``) and squeeze the glyph to a few pixels;
# read in the ink's own box they read it.
KEYPAD_SHARE = 0.5  # the ink spans at most this share of the inside, across and down ...
KEYPAD_WIDTH = 2.5  # ... and is at most this many of its heights wide
KEYPAD_PAD = 0.35   # the box read: the ink and this many of its heights around it (3 px at least)
KEYPAD_FAINT = 30   # a greyed label's ink (PP-OCR's faint threshold): it must pass for a key's glyphs too


def keypad_glyphs(crop: np.ndarray, box: Box) -> Box | None:
    """The box of the few small glyphs a button's inside holds (``crop``, H × W × 3, the pixels of
    ``box``); None where it holds a text of its size or none."""
    if crop.shape[0] < 3 or crop.shape[1] < 3:  # frame lines all the way (a sliver of a button)
        return None
    background = _background(crop)
    ink = ink_mask(crop, background, INK_DIFFERENCE, "max")
    tight = ink_extent(ink, box, 0)
    if tight is None:
        return None
    if not _key_sized(tight, crop.shape):
        return None
    # Measured at a faint threshold too: a greyed label (Qt's insensitive buttons) is fainter than
    # ink but for a few of its pixels, which alone would pass for a key's glyph.
    faint = ink_extent(ink_mask(crop, background, KEYPAD_FAINT, "max"), box, 0)
    if faint is not None and not _key_sized(faint, crop.shape):
        return None
    return ink_extent(ink, box, max(3, round(KEYPAD_PAD * (tight[3] - tight[1]))))


def _key_sized(extent: Box, shape: tuple[int, ...]) -> bool:
    """Whether ink spanning ``extent`` is a few small glyphs in a crop of ``shape``: a key's."""
    width, height = extent[2] - extent[0], extent[3] - extent[1]
    return height <= KEYPAD_SHARE * shape[0] and width <= KEYPAD_SHARE * shape[1] and width <= KEYPAD_WIDTH * height


STACK_REACH = 5   # px a detector box's side may lie off the frame it boxes
STACK_LINE = 0.8  # of the rows (or columns) two stacked buttons share, a frame line inks this share at least
STACK_INK = 40    # a frame pixel is this far (largest channel) from the face under it


def _frame_line(rgb: np.ndarray, vertical: bool, at: int, span: tuple[int, int], face: np.ndarray) -> int | None:
    """Where a line off ``face`` runs unbroken along ``span`` within ``STACK_REACH`` px of ``at`` (a
    column where ``vertical``, else a row), nearest ``at``; None where none does."""
    lo, hi = span
    if hi - lo < 4:
        return None
    size = rgb.shape[1] if vertical else rgb.shape[0]
    for pos in sorted(range(at - STACK_REACH, at + STACK_REACH + 1), key=lambda v: abs(v - at)):
        if not 0 <= pos < size:
            continue
        line = (rgb[lo:hi, pos] if vertical else rgb[pos, lo:hi]).astype(np.int16)
        if float((np.abs(line - face).max(axis=1) >= STACK_INK).mean()) >= STACK_LINE:
            return pos
    return None


def _drawn_over(rgb: np.ndarray, top: Box, under: Box, face: np.ndarray) -> Box | None:
    """``top`` with its sides moved onto their frame lines where a side that lies well inside
    ``under`` is drawn as a frame line across it; None where none is (a side near ``under``'s own,
    on the same side, may be either box's frame)."""
    rows = (max(top[1], under[1]) + 2, min(top[3], under[3]) - 2)
    cols = (max(top[0], under[0]) + 2, min(top[2], under[2]) - 2)
    moved, drawn = list(top), False
    for k, (vertical, lo, hi, edge) in enumerate(((True, 0, 2, 0), (False, 1, 3, 0), (True, 0, 2, 1),
                                                  (False, 1, 3, 1))):
        if not under[lo] + STACK_REACH < top[k] < under[hi] - STACK_REACH:
            continue
        pos = _frame_line(rgb, vertical, top[k] - edge, rows if vertical else cols, face)
        if pos is not None:
            moved[k], drawn = pos + edge, True
    return (moved[0], moved[1], moved[2], moved[3]) if drawn else None


def stacked_under(rgb: np.ndarray, a: Box, b: Box) -> Box | None:
    """Where button ``a`` lies under button ``b``, which covers part of it, ``b``'s box on its frame:
    a side of ``b``'s runs as a frame line across ``a``'s face, and none of ``a``'s across ``b``'s
    (click-test-2's ONE and TWO; ``a`` read whole took in ``b``'s first letters, ``ON TW``). None
    where it does not."""
    shared = intersection(a, b)
    if shared == 0 or iou(a, b) >= 0.5 or shared >= 0.9 * min(area(a), area(b)):
        return None  # apart, one thing boxed twice, or one box inside the other
    x1, y1, x2, y2 = (max(int(v), 0) for v in a)
    crop = rgb[y1:y2, x1:x2]
    if crop.size == 0:
        return None
    face = np.median(crop.reshape(-1, 3), axis=0).astype(np.int16)
    over = _drawn_over(rgb, b, a, face)
    return over if over is not None and _drawn_over(rgb, a, b, face) is None else None


def reading_boxes(image: Image.Image, elements: Sequence[Element], *, keys: bool = False) -> list[Element]:
    """The elements with the boxes the readers read them in: a row's or button's box starts after
    the icon drawn before its text (``leading_icon``), a field's ends before the controls at its end
    that are elements of their own (``trailing_controls``), and with ``keys`` (desktop windows) a
    button holding a few small glyphs is read in their box (``keypad_glyphs``); every other box is
    the element's own."""
    out = list(elements)
    for i, element in enumerate(elements):
        if element.type in FIELD_TYPES:
            # Trailing controls still there are elements of their own (``without_foreign_ink`` paints
            # the others out): the field's value is read up to them.
            fx1, fy1, fx2, fy2 = _inside_border(element, image)
            if fx2 - fx1 >= 4 and fy2 - fy1 >= 3:
                controls = trailing_controls(np.asarray(image.crop((fx1, fy1, fx2, fy2)).convert("RGB")))
                if controls is not None:
                    x1, y1, _, y2 = (int(v) for v in element.bbox)
                    out[i] = element.model_copy(update={"bbox": (x1, y1, fx1 + controls.start, y2)})
            continue
        if element.type not in LEADING_ICON_TYPES:
            continue
        x1, y1, x2, y2 = (int(v) for v in element.bbox)
        x1, y1, x2, y2 = max(x1, 0), max(y1, 0), min(x2, image.width), min(y2, image.height)
        # A button's frame and bevel run along its box: looked for inside them.
        inset = BORDER_PX + 1 if element.type == ElementType.BUTTON else 0
        if x2 - x1 <= 2 * inset or y2 - y1 <= 2 * inset:
            continue
        crop = np.asarray(image.crop((x1 + inset, y1 + inset, x2 - inset, y2 - inset)).convert("RGB"))
        left, top, right, bottom = inside_frame(crop) if inset else (0, 0, crop.shape[1], crop.shape[0])
        text_top = picture_above(crop[top:bottom, left:right])
        if text_top is not None:
            ty1 = y1 + inset + top + text_top
            lx1, lx2 = _label_width(image, (x1, ty1, x2, y2))
            out[i] = element.model_copy(update={"bbox": (lx1, ty1, lx2, y2)})
            continue
        icon = leading_icon(crop[top:bottom, left:right])
        if icon is not None:
            out[i] = element.model_copy(update={"bbox": (x1 + inset + left + icon.stop, y1, x2, y2)})
        elif keys and inset and (glyphs := keypad_glyphs(crop[top:bottom, left:right], (
                x1 + inset + left, y1 + inset + top, x1 + inset + right, y1 + inset + bottom))) is not None:
            out[i] = element.model_copy(update={"bbox": glyphs})
    # A button another is stacked over is read in the part of it that shows.
    buttons = [i for i, e in enumerate(elements) if e.type == ElementType.BUTTON]
    pairs = [(i, j) for i in buttons for j in buttons if i != j and intersection(elements[i].bbox, elements[j].bbox)]
    for i, j in pairs:
        if (over := stacked_under(rgb_pixels(image), elements[i].bbox, elements[j].bbox)) is not None:
            out[i] = out[i].model_copy(update={"bbox": uncovered_part(out[i].bbox, over)})
    return out


def _inside_border(field: Element, image: Image.Image) -> tuple[int, int, int, int]:
    """A field's box less its border and focus ring (``BORDER_PX``), clipped to the image."""
    x1, y1, x2, y2 = (int(v) for v in field.bbox)
    return (max(x1 + BORDER_PX, 0), max(y1 + BORDER_PX, 0),
            min(x2 - BORDER_PX, image.width), min(y2 - BORDER_PX, image.height))


def _insides(rgb: np.ndarray, image: Image.Image,
             fields: Sequence[Element]) -> Iterator[tuple[Element, np.ndarray, tuple[int, int, int, int]]]:
    """Each field with the view of ``rgb`` inside its border (painting it paints ``rgb``) and that
    box, where at least 3 px a side are left."""
    for field in fields:
        x1, y1, x2, y2 = _inside_border(field, image)
        if x2 - x1 >= 3 and y2 - y1 >= 3:
            yield field, rgb[y1:y2, x1:x2], (x1, y1, x2, y2)


def without_foreign_ink(image: Image.Image, elements: Sequence[Element]) -> Image.Image:
    """``image`` with the second text, the caret and the trailing controls of every text field
    painted in that field's background colour (``image`` itself when no field shows any)."""
    fields = [e for e in elements if e.type in FIELD_TYPES]
    if not fields:
        return image
    rgb = np.array(rgb_pixels(image))  # painted below
    painted = False
    for element, crop, (x1, y1, x2, y2) in _insides(rgb, image, fields):
        mask = foreign_ink(crop)
        if mask is not None:
            crop[mask] = _background(crop).astype(np.uint8)
            painted = True
        # With the second text gone, the caret is the last thing on the line, or the first.
        for at in ("end", "start"):
            caret = caret_columns(crop, at=at)
            if caret is not None:
                crop[:, caret] = _background(crop).astype(np.uint8)
                painted = True
        # A control at the field's end that is an element of its own (a spin box's ▲/▼ buttons)
        # is read as that element: only pixels no other box holds are painted.
        controls = trailing_controls(crop)
        if controls is not None and not any(e.bbox[0] < x2 and e.bbox[2] > x1 + controls.start
                                            and e.bbox[1] < y2 and e.bbox[3] > y1
                                            for e in elements if e is not element):
            crop[:, controls] = _background(crop).astype(np.uint8)
            painted = True
    return Image.fromarray(rgb) if painted else image


def value_cores(image: Image.Image, fields: Sequence[Element]) -> Image.Image:
    """``image`` with everything inside each of ``fields`` but its value's core (ink at
    ``CORE_FRACTION`` of the strongest contrast, where that reaches ``DARK_TEXT``) painted in the
    field's background colour: a value wholly over a lighter text, where ``foreign_ink`` finds no
    piece of the lighter one apart from it, stands alone. Binarising every field loses thin strokes
    (``foreign_ink``), so this is read only to confirm a value (``caap.observe.steps.typed``)."""
    rgb = np.array(rgb_pixels(image))  # painted below
    for _, crop, _ in _insides(rgb, image, fields):
        bg = _background(crop)
        diff = difference(crop, bg, "max")
        strongest = int(diff.max())
        if strongest >= DARK_TEXT:
            crop[diff < CORE_FRACTION * strongest] = bg.astype(np.uint8)
    return Image.fromarray(rgb)


def placeholder_only(crop: np.ndarray) -> bool:
    """Whether a field's crop (H × W × 3, uint8, border cut away) shows only a placeholder: its
    strongest ink stands within ``PLACEHOLDER_SHARES`` of the farthest any colour could stand from
    the background (in its strongest channel)."""
    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return False
    bg = _background(crop)
    strongest = int(np.abs(crop.astype(np.int16) - bg).max())
    reach = int(np.maximum(bg, 255 - bg).max())
    low, high = PLACEHOLDER_SHARES
    return strongest > INK_DIFFERENCE and low * reach <= strongest < high * reach


def blank_placeholders(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements with the text of every field that shows only a placeholder made empty."""
    out = list(elements)
    rgb: np.ndarray | None = None
    for i, e in enumerate(out):
        if e.type not in FIELD_TYPES or not (e.text or "").strip():
            continue
        if rgb is None:
            rgb = rgb_pixels(image)
        x1, y1, x2, y2 = _inside_border(e, image)
        if placeholder_only(rgb[y1:max(y1, y2), x1:max(x1, x2)]):
            out[i] = e.model_copy(update={"text": ""})
    return out
