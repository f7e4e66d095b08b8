"""Text boxes snapped to the words they cover, found from the screenshot's pixels.

The detector places the sides of a one-line text box to within a few pixels, and on a line where
text and an inline link meet it is often several pixels off: the box then cuts a letter off a
word or takes a letter (or a word) of its neighbour, and the reader reads exactly that. The words
themselves are easy to see: ink columns separated by gaps wider than the gaps inside a word.

``snap_text_boxes`` moves the left and right sides of each text-like box (text, hyperlink, tabled
text, draggable text) to the words whose middle lies inside it; where those words are inked in two
clearly different colours (a link inside a sentence) it keeps the run of one colour that covers
most of the box. Underlines are not ink (two links side by side share one line of ink under
them otherwise), and a break in the underline within a blank gap ends a word (two links a
tight space apart). A side moves by at most ``max_shift`` px, unless it drops a link beside plain
text or plain text beside a link (another colour and another underline: a certain boundary, where
a colour change alone may be a text selection's background), or unless it cuts a word in two (the
box of a long line stopping short: the side goes out to the word's end, up to ``CUT_WORD_HEIGHTS``
line heights away); a box with no words (or only ink
that does not look like text) is left as detected, and boxes that become the same box are merged.
The tops and bottoms are the detector's. ``tools/snap_check.py`` measures the rules on a
dataset's labelled boxes.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, as_box, iou_matrix
from caap.observe.primitives import RIGHT_PAD, background_colour, ink_mask, rgb_pixels
from caap.observe.steps.boxes import SURE_SCORE, cut_across
from caap.taxonomy import TEXT_ELEMENT_TYPES, ElementType

SNAPPED_TYPES = TEXT_ELEMENT_TYPES
INK_DIFFERENCE = 60  # summed |RGB| difference from the line's background that counts as ink
SAME_COLOUR = 0.95  # cosine between two words' ink colours (as differences from the background)
COLOUR_GAP = 2  # px: the narrowest blank gap at which a change of ink colour separates two words
REACH = 12  # px looked at beyond each side (a word the box cuts is found whole) ...
CUT_WORD_HEIGHTS = 2.5  # ... or this many line heights, if more: a long word cut by a box stopping short
UNDERLINE_RUN = 1.0  # line heights: a horizontal run of ink this long low in the line is an underline


def _direction(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm else vector


def _same_colour(a: np.ndarray, b: np.ndarray) -> bool:
    return float(np.dot(_direction(a), _direction(b))) >= SAME_COLOUR


def _underline(ink: np.ndarray, longest: int | None = None) -> np.ndarray:
    """Ink of underlines: in the lower third of the band, horizontal runs longer than
    ``UNDERLINE_RUN`` line heights (or ``longest`` px) with mostly background (or more underline) in
    the row above them: a line, not the bottom of a filled surface such as a selection. Two links
    side by side are underlined across the space between them, which would otherwise join them into
    one word."""
    height = ink.shape[0]
    out = np.zeros_like(ink)
    longest = longest or max(4, round(UNDERLINE_RUN * height))
    for y in range(max(1, height - max(1, height // 3)), height):
        row = np.concatenate([[False], ink[y], [False]])
        edges = np.flatnonzero(row[1:] != row[:-1])
        starts, ends = edges[::2], edges[1::2]
        for k in np.flatnonzero(ends - starts >= longest).tolist():  # long runs only: few on a line
            start, end = int(starts[k]), int(ends[k])
            above = ink[y - 1, start:end] & ~out[y - 1, start:end]
            if above.mean() < 0.25:
                out[y, start:end] = True
    return out


SHORT_RUN_PX = 4  # px: the least length of a one- or two-letter link's underline


def _short_underline(ink: np.ndarray, found: np.ndarray) -> np.ndarray:
    """Ink of underlines shorter than ``_underline`` takes (a one-letter link, ``a`` inside a
    sentence, is underlined for 7 px on an 11 px line): in the lower third of the band, a run of
    ``SHORT_RUN_PX`` or more under a blank row, with ink a row further up (the glyph it underlines:
    a baseline stroke, a ``z``'s foot, touches the ink above it)."""
    height = ink.shape[0]
    out = np.zeros_like(ink)
    for y in range(max(2, height - max(1, height // 3)), height):
        row = np.concatenate([[False], ink[y] & ~found[y], [False]])
        edges = np.flatnonzero(row[1:] != row[:-1])
        for start, end in zip(edges[::2].tolist(), edges[1::2].tolist(), strict=True):
            if end - start >= SHORT_RUN_PX and not ink[y - 1, start:end].any() and ink[:y - 1, start:end].any():
                out[y, start:end] = True
    return out


@dataclass
class _Word:
    start: int  # first inked column
    end: int  # one past the last
    colour: np.ndarray  # summed ink difference from the background (its direction is the hue)
    underlined: bool  # an underline ran beneath it (a link)


def _words(band: np.ndarray, gap: int, beyond: tuple[np.ndarray, np.ndarray] | None = None) -> list[_Word]:
    """The words of an RGB band holding one line of text: runs of glyphs separated by blank gaps
    narrower than ``gap`` px and inked in one colour.

    A word's colour is the sum of its ink pixels' differences from the background: its direction
    tells black from blue whatever the anti-aliasing made of the glyph's edges (a thin "." is a
    light grey, still grey)."""
    background = background_colour(band).astype(np.int32)
    diff = band.astype(np.int32) - background
    ink = np.abs(diff).sum(axis=2) > INK_DIFFERENCE
    underline = _underline(ink)
    underline |= _short_underline(ink, underline)
    ink &= ~underline
    under = cast(np.ndarray, underline.any(axis=0))  # numpy types any(axis=...) as bool | array
    # A column of one colour top to bottom is another surface (a panel beside a selection, a
    # border), not a glyph: every glyph leaves some background above or below it on its line.
    uniform = np.abs(band.astype(np.int16) - band[:1].astype(np.int16)).sum(axis=2).max(axis=0) <= INK_DIFFERENCE
    if beyond is not None:
        # Given the rows a little above and below the band (``beyond``): a tall thin glyph (the
        # final ``l`` of ``E-mail``, ascender to baseline in a tight box) has the background on
        # both sides; a surface or its rounded corner does not.
        clear = [np.abs(row.astype(np.int32) - background).sum(axis=1) <= INK_DIFFERENCE for row in beyond]
        uniform &= ~(clear[0] & clear[1])
    inked = ink.any(axis=0) & ~uniform
    column_colour = (diff * ink[:, :, None]).sum(axis=0)
    # Glyph clusters: runs of inked columns, each with its columns' colours summed and whether an
    # underline runs under any of them (running sums: one pass, whatever the band's width).
    edges = np.flatnonzero(np.diff(np.concatenate(([0], inked.astype(np.int8), [0]))))
    starts, ends = edges[::2], edges[1::2]
    colour_sums = np.concatenate((np.zeros((1, 3), column_colour.dtype), np.cumsum(column_colour, axis=0)))
    under_sums = np.concatenate(([0], np.cumsum(under)))
    pieces = [_Word(int(a), int(b), colour_sums[b] - colour_sums[a], bool(under_sums[b] > under_sums[a]))
              for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    words: list[_Word] = []
    for piece in pieces:
        apart = piece.start - words[-1].end if words else gap
        # Glyphs closer than COLOUR_GAP px are one word whatever their colours (a selection
        # that ends inside a word changes the colours mid-word).
        # Two links a space apart: the glyphs may stand as close as inside a word, but each link
        # has its own underline, broken within the blank between them. (Underlines also break
        # around descenders, but there the columns beside the break are a glyph's, not blank.)
        own_lines = (words and words[-1].underlined and piece.underlined and apart >= COLOUR_GAP
                     and not under[words[-1].end:piece.start].all())
        if not own_lines and (apart < COLOUR_GAP or (apart < gap and _same_colour(words[-1].colour, piece.colour))):
            words[-1].end = piece.end
            words[-1].colour = words[-1].colour + piece.colour
            words[-1].underlined |= piece.underlined
        else:
            words.append(piece)
    return words


BEYOND = 2  # px above and below a text box where a surface beside its words goes on and a glyph does not


def _glyphs_at(band: np.ndarray, x: int, height: int) -> bool:
    """Whether glyphs are inked in the middle third of the line's ``band`` within two columns of
    ``x`` and blank rows lie above and below them there (a fill or a frame runs to the band's edge)."""
    ink = ink_mask(band[:, max(0, x - 2):x + 3], background_colour(band), INK_DIFFERENCE).any(axis=1)
    third = max(1, height // 3)
    return bool(ink[third:height - third].any() and not ink[0] and not ink[-1])


def _word_edge(image: np.ndarray, box: Box, gap: int, side: int) -> int | None:
    """The last inked column of the word a text box's right side (``side`` 1) or left side (-1)
    cuts, followed outwards until a blank of ``gap`` px, at most ``CUT_WORD_HEIGHTS`` line heights;
    None where the ink goes on further (no word's end within reach)."""
    x1, y1, x2, y2 = box
    reach = round(CUT_WORD_HEIGHTS * (y2 - y1))
    if side > 0:
        band = image[y1:y2, x2:min(image.shape[1], x2 + reach)]
    else:
        band = image[y1:y2, max(0, x1 - reach):x1][:, ::-1]
    if band.shape[1] == 0:
        return None
    ink = ink_mask(band, background_colour(image[y1:y2, x1:x2]), INK_DIFFERENCE).any(axis=0)
    blank = 0
    for k, inked in enumerate(ink.tolist()):
        blank = 0 if inked else blank + 1
        if blank >= gap:
            last = k - blank  # the word's last inked column, counted outwards from the side
            return x2 + last if side > 0 else x1 - 1 - last
    return None


def _snap(image: np.ndarray, box: Box, max_shift: int) -> Box:
    x1, y1, x2, y2 = box
    height = y2 - y1
    if height < 6 or height > 40:  # not one line of text
        return box
    left, right = max(0, x1 - REACH), min(image.shape[1], x2 + REACH)
    band = image[y1:y2, left:right]
    gap = max(3, round(height * 0.25))
    above, below = y1 - BEYOND, y2 - 1 + BEYOND
    beyond = (image[above, left:right], image[below, left:right]) if above >= 0 and below < image.shape[0] else None
    words = _words(band, gap, beyond)
    for w in words:
        w.start, w.end = w.start + left, w.end + left
    inside = [w for w in words if x1 <= (w.start + w.end) / 2 < x2]
    if not inside:
        return box
    # Runs of one ink colour; the run covering most of the box is the element.
    runs: list[list[_Word]] = [[inside[0]]]
    for word in inside[1:]:
        if not _same_colour(word.colour, runs[-1][-1].colour):
            runs.append([word])
        else:
            runs[-1].append(word)
    at = max(range(len(runs)), key=lambda k: sum(min(w.end, x2) - max(w.start, x1) for w in runs[k]))
    best = runs[at]
    # A word running into the edge of the band may go on beyond it: that side stays as detected,
    # unless the box cuts the word in two (a long line's box stopping short): then it goes out to
    # the word's end, up to CUT_WORD_HEIGHTS line heights away.
    cut_left = cut_right = False
    nx1 = x1 if best[0].start <= left and left > 0 else best[0].start
    if best[0].start <= left < x1 < best[0].end and left > 0 and _glyphs_at(band, x1 - left, height):
        far = _word_edge(image, box, gap, -1)
        if far is not None:
            nx1, cut_left = far, True
    nx2 = x2 if best[-1].end >= right and right < image.shape[1] else best[-1].end + RIGHT_PAD
    if best[-1].start < x2 < best[-1].end >= right and right < image.shape[1] and _glyphs_at(band, x2 - left, height):
        far = _word_edge(image, box, gap, 1)
        if far is not None:
            nx2, cut_right = far + RIGHT_PAD, True
    # A side may move further where it drops a link beside plain text (or plain text beside a
    # link): another colour *and* another underline make that boundary certain, where a colour
    # change alone may be a selection's background. The run next to the kept one decides: past it
    # may lie more plain text (a box over "per a eget", the link "a" inside a sentence).
    linked = any(w.underlined for w in best)
    far_left = at > 0 and all(w.underlined != linked for w in runs[at - 1])
    far_right = at < len(runs) - 1 and all(w.underlined != linked for w in runs[at + 1])
    if (abs(nx1 - x1) > max_shift and not (far_left and nx1 > x1) and not cut_left) or \
            (abs(nx2 - x2) > max_shift and not (far_right and nx2 < x2) and not cut_right) or nx2 - nx1 < 2:
        return box
    return (nx1, y1, nx2, y2)


def snap_text_boxes(image: Image.Image, elements: Sequence[Element], *, max_shift: int = 16,
                    merge_iou: float = 0.8) -> list[Element]:
    """The elements with the sides of their one-line text boxes moved to the words they cover;
    of boxes that end up covering the same words the most confident is kept."""
    pixels = rgb_pixels(image)
    out: list[Element] = []
    for e in elements:
        if e.type in SNAPPED_TYPES:
            box = _snap(pixels, e.bbox, max_shift)
            if box != e.bbox:
                e = e.model_copy(update={"bbox": box})
        out.append(e)
    ranked = sorted(out, key=lambda e: -(e.score or 0.0))
    snapped = [i for i, e in enumerate(ranked) if e.type in SNAPPED_TYPES]
    overlap = iou_matrix([ranked[i].bbox for i in snapped])  # every pair at once: hundreds on a full screen
    dropped: set[int] = set()
    taken: list[int] = []  # rows of ``overlap`` kept so far
    for row, i in enumerate(snapped):
        if taken and overlap[row, taken].max() >= merge_iou:
            dropped.add(i)
        else:
            taken.append(row)
    kept = [e for i, e in enumerate(ranked) if i not in dropped]
    order = {id(e): i for i, e in enumerate(out)}
    return sorted(kept, key=lambda e: order[id(e)])


# --- words no box holds ---------------------------------------------------------------------------
LINE_TYPES = frozenset({ElementType.TEXT, ElementType.HYPERLINK})
WORD_SPACE = 0.7  # line heights: the widest blank between two words of one line of running text
MISSED_LINES = 3  # whole lines looked for below a paragraph, one after another
WORD_REACH = 3  # line heights either side of a line's boxes where its missed words are looked for
GROW_REACH = 8  # ... then past the grown boxes' right side, again and again (a long line, word by word) ...
GROW_ROUNDS = 12  # ... this many times at most
WORD_ROWS = 0.4  # of the line's height a missed word's ink spans at least (a bar or a rule beside it: less)
RULE_COLUMNS = 0.5  # of a missed word's inked columns inked in two rows at most: a line, not letters
EDGE_ROWS = 0.9  # of the line's rows a column inks from top to bottom: a frame's edge, which no word crosses


def _same_line(a: Box, b: Box) -> bool:
    """Two one-line boxes of the same line of text: they overlap vertically for most of their height
    and are about as tall."""
    overlap = min(a[3], b[3]) - max(a[1], b[1])
    ha, hb = a[3] - a[1], b[3] - b[1]
    return overlap >= 0.7 * min(ha, hb) and abs(ha - hb) <= 2


def _next_lines(lines: list[list[int]], boxes: list[Box]) -> list[tuple[int, int, int, list[int]]]:
    """Bands where a paragraph's next line stands but no box was found: one line pitch below a
    line that has a line above it at the same left edge and pitch, when no line was found there.
    Each band is (top, bottom, left edge, the paragraph's line above it)."""
    spans = [(min(boxes[i][0] for i in line), int(np.median([boxes[i][1] for i in line])),
              int(np.median([boxes[i][3] for i in line]))) for line in lines]
    bands = []
    for k, (left, y1, y2) in enumerate(spans):
        height = y2 - y1
        above = [(y1 - b[1]) for b in spans if abs(b[0] - left) <= 2 and height <= y1 - b[1] <= 1.6 * height]
        if not above:
            continue
        pitch = min(above)
        if any(abs(b[1] - (y1 + pitch)) <= 2 for b in spans):
            continue
        bands.append((y1 + pitch, y2 + pitch, left, lines[k]))
    return bands


def add_missed_words(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements with the words of their lines of running text that no box holds.

    The detector misses very short inline words, most often a two-letter link inside a sentence
    ("ac", "id"), and now and then ends a line's box a word short: on a line whose other words it
    found, such a word is found again here from the pixels. A word counts only if no element's box
    overlaps it, it lies within one word space of the line's found words (or of another word found
    so), and it looks like text (``_words``). A word inked in another colour than the line's plain
    text (or, on a line of links only, underlined) is a link of its own: a new hyperlink. Any other
    word belongs to the plain text beside it, whose box grows to hold it; with no plain text box
    beside it, it becomes a new text element. New elements get the lowest score of their line.

    A paragraph's last line can be missed whole (click-collapsible-2's lone link "adipiscing." on
    the last line of a section): one line pitch below a paragraph's last line (two lines or more at
    one left edge), the words that run on from the paragraph's left edge are found the same way,
    inked like the paragraph's plain text (else links)."""
    pixels = rgb_pixels(image)
    bottom = pixels.shape[0]
    out = list(elements)
    boxes = [e.bbox for e in elements]
    lines = _group_lines(elements)
    added: list[Element] = []
    for line in lines:
        members = [boxes[i] for i in line]
        y1 = int(np.median([b[1] for b in members]))
        y2 = int(np.median([b[3] for b in members]))
        _add_band(pixels, elements, out, added, y1, y2, line, [(boxes[i][0], boxes[i][2], i) for i in line])
        # A line's box that stopped far short (the detector boxes no line wider than about 460 px)
        # grows a few words at a time to the right: each round looks GROW_REACH line heights past
        # the grown box, so a long bar or a field's edge beside a text never passes for one of its words.
        for _ in range(GROW_ROUNDS):
            if not _ink_after(pixels, [out[i].bbox for i in line], y1, y2):
                break  # nothing a word space after the line: it ends there (most lines)
            grown = [out[i].bbox for i in line]
            count = len(added)
            _add_band(pixels, out, out, added, y1, y2, line, [(out[i].bbox[0], out[i].bbox[2], i) for i in line],
                      rightwards=True, reach=GROW_REACH)
            if [out[i].bbox for i in line] == grown and len(added) == count:
                break
    found = [*out, *added]
    for _ in range(MISSED_LINES):
        boxes = [e.bbox for e in found]
        more: list[Element] = []
        sure = [[i for i in line if (found[i].score or 0.0) >= SURE_SCORE] for line in _group_lines(found)]
        for y1, y2, left, above in _next_lines([line for line in sure if line], boxes):
            if y2 > bottom:
                continue
            # The paragraph's left edge anchors the chain; its line above gives the text colour.
            _add_band(pixels, found, list(found), more, y1, y2, above, [(left, left, None)], colour_line=(
                int(np.median([boxes[i][1] for i in above])), int(np.median([boxes[i][3] for i in above]))))
        if not more:
            break
        found += more
    return found


def _ink_after(pixels: np.ndarray, boxes: Sequence[Box], y1: int, y2: int) -> bool:
    """Whether anything is drawn within a word space after the last of a line's ``boxes``, against
    the colour round the line: where nothing is, no word can chain on from it."""
    start, end = min(b[0] for b in boxes), max(b[2] for b in boxes)
    space = max(3, round(WORD_SPACE * (y2 - y1)))
    band = pixels[y1:y2, start:end + space]
    if band.size == 0 or end >= pixels.shape[1]:
        return False
    return bool(ink_mask(band[:, end - start:], background_colour(band), INK_DIFFERENCE).any())


def _rule_like(ink: np.ndarray) -> bool:
    """Whether a word's ink (rows × columns) is mostly a line: over ``RULE_COLUMNS`` of its inked
    columns ink two rows at most (a frame's line with a corner at its end), where a letter's
    strokes ink more."""
    counts = ink.sum(axis=0)
    inked = counts[counts > 0]
    return bool(inked.size) and float((inked <= 2).mean()) > RULE_COLUMNS


def _group_lines(elements: Sequence[Element]) -> list[list[int]]:
    """Indexes of the one-line text and link boxes, grouped by line."""
    lines: list[list[int]] = []
    for i, e in enumerate(elements):
        h = e.bbox[3] - e.bbox[1]
        if e.type not in LINE_TYPES or h < 6 or h > 40:
            continue
        for line in lines:
            if _same_line(elements[line[0]].bbox, e.bbox):
                line.append(i)
                break
        else:
            lines.append([i])
    return lines


def _add_band(pixels: np.ndarray, elements: Sequence[Element], out: list[Element], added: list[Element],
              y1: int, y2: int, line: list[int], spans: list[tuple[int, int, int | None]],
              colour_line: tuple[int, int] | None = None, rightwards: bool = False,
              reach: int = WORD_REACH) -> None:
    """Find the missed words of the band ``y1``–``y2`` that chain out from ``spans`` (the found
    words of the line, (left, right, element index or None)); grow ``out``'s plain text boxes of
    ``line`` or append new elements to ``added``. ``colour_line``: the band whose plain text of
    ``line`` gives the text colour (default: this band); ``rightwards``: only words after the
    line's boxes; ``reach``: how far past the line's boxes, in line heights."""
    width = pixels.shape[1]
    boxes = {i: tuple(elements[i].bbox) for i in line}
    height = y2 - y1
    space = max(3, round(WORD_SPACE * height))
    left = max(0, min(sp[0] for sp in spans) - (0 if rightwards else reach * height))
    right = min(width, max(b[2] for b in boxes.values()) + reach * height)
    gap = max(3, round(height * 0.25))
    band = pixels[y1:y2, left:right]
    words = _words(band, gap)
    rows = ink_mask(band, background_colour(band), INK_DIFFERENCE)
    # Everything already boxed on this band, whatever its type (a button's label, a checkbox's).
    taken = [tuple(e.bbox) for e in out + added if min(e.bbox[3], y2) - max(e.bbox[1], y1) > 0.3 * height]
    plain = [i for i in line if elements[i].type is ElementType.TEXT]
    # The ink colour of the line's plain text: a missed word inked otherwise is a link.
    coloured = words if colour_line is None else _words(pixels[colour_line[0]:colour_line[1], left:right], gap)
    text_colour = sum((w.colour for w in coloured
                       if any(boxes[i][0] <= (w.start + w.end) / 2 + left < boxes[i][2] for i in plain)),
                      np.zeros(3))
    if colour_line is not None:
        plain = []  # a new line's words never grow the boxes of the line above
    missed = []
    for w in words:
        start, end = w.start + left, w.end + left
        if (start <= left and left > 0) or (end >= right and right < width) or end - start < 2:
            continue  # may go on beyond the band: not a whole word
        inked = np.flatnonzero(rows[:, w.start:w.end].any(axis=1))
        if not inked.size or inked[-1] - inked[0] + 1 < WORD_ROWS * height:
            continue  # a bar, a rule or a field's edge: no word
        if _rule_like(rows[:, w.start:w.end]):
            continue  # a group box's frame line running on from its title
        # A word the line's own plain text box cuts at its right side (a long line's box stopping
        # short): the rest of it is missed, right beside the box. (Not at its left side: a box that
        # starts inside a word may hold a popup's item over a window's text, the rest of which runs
        # on under the popup's edge.)
        cut = [boxes[i][2] for i in plain if boxes[i][0] < start < boxes[i][2] < end - 1]
        if cut:
            start = max(cut)
        elif rightwards and start < max(b[2] for b in boxes.values()):
            continue
        if any(min(end, b[2]) - max(start, b[0]) > 0 for b in taken):
            continue
        link = not _same_colour(w.colour, text_colour) if text_colour.any() else w.underlined
        missed.append((start, end, link))
    # Chain outwards from the found words: each missed word must be a word space from the line, with
    # no frame's edge between (a line of ink top to bottom: a field's side after its label).
    edges = np.flatnonzero(rows.mean(axis=0) >= EDGE_ROWS) + left

    def apart(a: tuple[int, int], b: tuple[int, int]) -> bool:  # a frame's edge between two spans
        lo, hi = (a[1], b[0]) if a[0] <= b[0] else (b[1], a[0])
        return bool(((edges >= lo) & (edges < hi)).any())

    grown = True
    while grown and missed:
        grown = False
        for m in list(missed):
            near = [sp for sp in spans if m[0] - sp[1] <= space and sp[0] - m[1] <= space and not apart(sp[:2], m[:2])]
            if not near:
                continue
            missed.remove(m)
            grown = True
            beside = [sp[2] for sp in near if sp[2] is not None and sp[2] in plain]
            if not m[2] and beside:
                k = beside[0]  # plain text: the text box beside it grows to hold it
                b = tuple(out[k].bbox)
                grown_box = as_box((min(b[0], m[0]), b[1], max(b[2], min(width, m[1] + RIGHT_PAD)), b[3]))
                out[k] = out[k].model_copy(update={"bbox": grown_box})
                spans.append((grown_box[0], grown_box[2], k))
                continue
            kind = ElementType.HYPERLINK if m[2] else ElementType.TEXT
            score = min((elements[i].score or 0.0) for i in line)
            added.append(Element(type=kind, bbox=as_box((m[0], y1, min(width, m[1] + RIGHT_PAD), y2)), score=score))
            spans.append((m[0], m[1], None))


# --- rows of a list ---------------------------------------------------------------------------------
ROW_TYPES = frozenset({ElementType.TABLED_TEXT, ElementType.TREE_ITEM})
ROW_EDGE_PX = 2  # rows of one list start within this many px of one left edge
ROW_STEPS = 4    # a gap of up to this many rows between two found rows is filled
ROW_REACH = 30   # rows looked for beyond a list's first and last found rows, one after another
MIN_ROW_PITCH = 8  # px


def _columns(elements: Sequence[Element]) -> list[list[int]]:
    """Indexes of the sure one-line rows (list entries, table cells, tree rows) that stand in one
    column, by type: a shared left edge and one height; top to bottom."""
    columns: list[list[int]] = []
    for i, e in enumerate(elements):
        h = e.bbox[3] - e.bbox[1]
        if e.type not in ROW_TYPES or (e.score or 0.0) < SURE_SCORE or not 6 <= h <= 40:
            continue
        for column in columns:
            first = elements[column[0]].bbox
            if elements[column[0]].type == e.type and abs(first[0] - e.bbox[0]) <= ROW_EDGE_PX \
                    and abs(first[3] - first[1] - h) <= 2:
                column.append(i)
                break
        else:
            columns.append([i])
    return [sorted(c, key=lambda i: elements[i].bbox[1]) for c in columns]


def _row_at(pixels: np.ndarray, taken: list[Box], top: float, height: int, left: int, right: int) -> Box | None:
    """The box of a list row whose text starts at ``left`` on the band from ``top``, ``height`` px
    high: its words from the left edge on, a word space apart; None where the band is taken by a
    box, or holds no text that starts at the edge, or its text runs on past ``right`` (not a row)."""
    y1 = round(top)
    y2 = y1 + height
    if y1 < 0 or y2 > pixels.shape[0]:
        return None
    x0, x9 = max(0, left - 2 * ROW_EDGE_PX), min(pixels.shape[1], right + 3 * height)
    if any(min(y2, b[3]) - max(y1, b[1]) > 0.3 * height and min(x9, b[2]) > max(left, b[0]) for b in taken):
        return None
    words = _words(pixels[y1:y2, x0:x9], max(3, round(height * 0.25)))
    if not words or abs(words[0].start + x0 - left) > ROW_EDGE_PX + 1:
        return None
    space, end = max(3, round(WORD_SPACE * height)), words[0].end
    for w in words[1:]:
        if w.start - end > space:
            break
        end = w.end
    if end + x0 >= x9 or end - words[0].start < max(6, height // 2):
        return None
    return as_box((words[0].start + x0, y1, min(pixels.shape[1], end + x0 + RIGHT_PAD), y2))


def add_missed_rows(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements with the rows of a list that no box holds.

    The detector may box a few rows of a plain list and miss the rest (Qt's list views: 4 of 17
    rows found). A list's rows are easy to follow from the ones found: three or more sure rows of
    one type at one left edge and one height, two of them one pitch apart, give the pitch. One
    pitch after another, within a gap between found rows (up to ``ROW_STEPS`` rows) and beyond the
    first and last found rows (while each band holds one), a band whose text starts at the list's
    left edge and that no box overlaps is a missed row: a new element of the list's type, boxed on
    its words, as tall as the found rows, with their lowest score."""
    pixels = rgb_pixels(image)
    out = list(elements)
    for column in _columns(elements):
        if len(column) < 3:
            continue
        boxes = [elements[i].bbox for i in column]
        steps = [b[1] - a[1] for a, b in itertools.pairwise(boxes) if b[1] > a[1]]
        if not steps:
            continue
        shortest = min(steps)
        one_row = [s for s in steps if abs(s - shortest) <= 1]
        if shortest < MIN_ROW_PITCH or len(one_row) < 2:
            continue
        pitch = float(np.mean(one_row))
        height = int(np.median([b[3] - b[1] for b in boxes]))
        left, right = int(np.median([b[0] for b in boxes])), max(b[2] for b in boxes)
        if height > pitch:
            continue
        kind = elements[column[0]].type
        score = min(elements[i].score or 0.0 for i in column)
        tops: list[float] = []
        for a, b in itertools.pairwise(boxes):
            rows = round((b[1] - a[1]) / pitch)
            if 2 <= rows <= ROW_STEPS and abs(b[1] - a[1] - rows * pitch) <= rows:
                tops += [a[1] + j * (b[1] - a[1]) / rows for j in range(1, rows)]
        for top in tops:
            row = _row_at(pixels, [e.bbox for e in out], top, height, left, right)
            if row is not None:
                out.append(Element(type=kind, bbox=row, score=score))
        for direction, top in ((-1, boxes[0][1]), (1, boxes[-1][1])):
            for _ in range(ROW_REACH):
                top += direction * pitch
                row = _row_at(pixels, [e.bbox for e in out], top, height, left, right)
                if row is None:
                    break
                out.append(Element(type=kind, bbox=row, score=score))
    return out


# --- links that run into each other ----------------------------------------------------------------
MIN_PART_PX = 3  # a part of a split link holds at least this many glyph columns
UNDERLINE_BELOW_PX = 2  # a link's box may end right above its underline
WORD_GAP_PX = 3  # the narrowest blank between two words (letters of a word stand 1-2 px apart)
NARROW_GAP_PX = 2  # ... or between two links, where their underlines break with nothing drawn across
SHORT_UNDERLINE_PX = 5  # the underline of a two-letter link


def split_links(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements with every link box that holds two links cut in two. Each link has its own
    underline: where the underline under a link box breaks within a blank gap between glyphs, one
    link ends and the next begins (click-collapsible-2's links "eu" and "lobortis." a space apart,
    boxed as one link "eu lobortis."). The parts keep the box's top, bottom and score."""
    return cut_across(image, elements, lambda e: e.type is ElementType.HYPERLINK and (e.score or 0.0) >= SURE_SCORE,
                      _link_parts)


def _link_parts(pixels: np.ndarray, box: Box) -> list[tuple[int, int]] | None:
    """The column spans (screen x, exclusive ends) of the links in one link box, or None for one."""
    x1, y1, x2, y2 = (int(v) for v in box)
    band = pixels[y1:min(pixels.shape[0], y2 + UNDERLINE_BELOW_PX), x1:x2]  # the underline may lie just below
    if band.shape[0] < 6 or band.shape[1] < 2 * MIN_PART_PX + 2:
        return None
    diff = band.astype(np.int32) - background_colour(band).astype(np.int32)
    ink = np.abs(diff).sum(axis=2) > INK_DIFFERENCE
    # A short link's underline ("in" before "porttitor") is shorter than a line height.
    underline = _underline(ink, SHORT_UNDERLINE_PX)
    under = cast(np.ndarray, underline.any(axis=0))  # numpy types any(axis=...) as bool | array
    glyphs = (ink & ~underline).any(axis=0)
    if not under.any():
        return None
    lined = np.flatnonzero(under)
    # Breaks in the underline between its first and last column, within a word space: a run of at
    # least WORD_GAP_PX blank glyph columns. (An underline also skips round a descender, leaving a
    # break beside the "q" of "aliquet", but there the blank between two letters is narrower.)
    blank = ~glyphs
    edges = np.flatnonzero(np.diff(np.concatenate([[0], blank.astype(np.int8), [0]])))
    spaces = [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=True) if b - a >= WORD_GAP_PX]
    # A narrower space is one where the underline breaks with nothing drawn across its rows: the
    # underline skips round a descender, which runs through the gap, while two links' underlines end
    # a space apart ("Suspendisse" and "accumsan" 2 px apart in click-collapsible-2).
    counts = underline.sum(axis=1)
    rows = np.flatnonzero(counts >= counts.max() / 2)  # the underline's own rows (not a line below's top)
    across = ink[max(0, int(rows[0]) - 1):int(rows[-1]) + 2].any(axis=0)
    gone = np.flatnonzero(np.diff(np.concatenate([[1], under[lined[0]:lined[-1] + 1].astype(np.int8), [1]])))
    spaces += [(int(lined[0]) + a, int(lined[0]) + b) for a, b in zip(gone[::2], gone[1::2], strict=True)
               if b - a >= NARROW_GAP_PX and not across[lined[0] + a:lined[0] + b].any()]
    cuts = [x for x in range(int(lined[0]), int(lined[-1]) + 1)
            if not under[x] and any(a <= x < b for a, b in spaces)]
    if not cuts:
        return None
    parts: list[tuple[int, int]] = []
    start = 0
    for x in cuts:
        if glyphs[start:x].sum() >= MIN_PART_PX and glyphs[x:].sum() >= MIN_PART_PX:
            cols = np.flatnonzero(glyphs[start:x]) + start
            parts.append((x1 + int(cols[0]), x1 + min(int(cols[-1]) + 1 + RIGHT_PAD, x)))
            start = x + 1
    if not parts:
        return None
    cols = np.flatnonzero(glyphs[start:]) + start
    parts.append((x1 + int(cols[0]), x1 + int(cols[-1]) + 1 + RIGHT_PAD))
    return parts
