"""From what a toolkit says about its widgets to caap annotations.

Both sources (the AT-SPI tree, ``atspi.py``, and Tk's own introspection, ``tk.py``) produce
``Candidate`` records in screen pixels: a taxonomy type, a box, the attributes, the X window the
widget is drawn in and the boxes it is clipped to (its scrolled viewports). ``finish`` turns them
into the elements of one captured image: each box is clipped to its viewports and its window, cut
by the windows stacked above it, moved into the capture, checked against the pixels (text boxes are
fitted to their ink and dropped where nothing is drawn) and kept only if it is still big enough.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np
from PIL import Image

from caap.bench.desktop.session import XWindow
from caap.elements import Element
from caap.geometry import Box, area, intersect, uncovered_part
from caap.observe.primitives import INK_SUM, background_colour, components, ink_mask
from caap.observe.steps.cells import cell_ink_box
from caap.observe.steps.figures import control_kind
from caap.observe.steps.shape_fit import ink_box
from caap.taxonomy import ATTRIBUTES, TEXT_ELEMENT_TYPES, ElementType

MIN_SIDE = 5  # px: a box thinner than this is no widget anyone could see or click
THIN_TYPES = frozenset({"progress_bar", "slider", "scrollbar"})  # these may be drawn as thin as 3 px
MIN_THIN_SIDE = 3
MIN_AREA = 60  # px²
MIN_VISIBLE = 0.6  # share of a box that must be left once the windows above it are cut away
INK_DIFFERENCE = INK_SUM  # summed |RGB| difference from the background that counts as drawn
TEXT_TYPES = frozenset(t.value for t in TEXT_ELEMENT_TYPES if t is not ElementType.TABLED_TEXT)


# Characters a toolkit draws as a plainer one, labelled as what a reader sees: GTK writes times with
# the ratio sign (``12∶53``), which looks like a colon, and a text view's line separator breaks the
# line.
DRAWN_AS = {"\u2236": ":", "\u2028": "\n", "\u2029": "\n"}

@dataclass
class Candidate:
    """One widget as the toolkit reports it, in screen pixels."""

    type: str  # an ElementType value; types this caap's taxonomy lacks are dropped in ``finish``
    box: Box
    text: str | None = None
    checked: bool | None = None
    focused: bool | None = None
    highlighted: bool | None = None
    expanded: bool | None = None
    indeterminate: bool | None = None
    enabled: bool | None = None
    value: float | None = None  # a fraction of the range (``caap.taxonomy``)
    window: int | None = None  # X window id the widget is drawn in; None: the topmost one under it
    clips: list[Box] = field(default_factory=list)  # viewports it is clipped to
    lines: list[tuple[str, Box]] | None = None  # where a wrapped text's lines are, when known
    wrapped: list[str] | None = None  # the lines the toolkit wraps the text into, when it says (not where)
    source: str = ""  # role or class, for messages
    name: str = ""  # the toolkit's name for it (an icon button's too), for choosing what to click
    grow: bool = False  # the box is the widget's content only (GTK 4): widen it to the frame drawn round it
    cells: bool = False  # a view whose cells the toolkit does not report: one element per cell of ink
    # Qt reports a checkable push or tool button as a check box (a radio button when its group is
    # exclusive), as it does a real one: which of the two it is shows in the pixels (``drawn_kind``).
    qt_checkable: bool = False

    def with_box(self, box: Box) -> Candidate:
        return replace(self, box=box)


def capture_box(windows: Sequence[XWindow], width: int, height: int) -> Box | None:
    """What to capture: all of the application's windows (the main one, its dialogs and open
    popups) together, on the screen."""
    boxes = [w.box for w in windows]
    if not boxes:
        return None
    union = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
    return intersect(union, (0, 0, width, height))


def _window_of(c: Candidate, windows: Sequence[XWindow]) -> int | None:
    """Index of the window the candidate is drawn in: its own, or the topmost one holding its centre."""
    if c.window is not None:
        for i, w in enumerate(windows):
            if w.id == c.window:
                return i
    cx, cy = (c.box[0] + c.box[2]) // 2, (c.box[1] + c.box[3]) // 2
    for i in range(len(windows) - 1, -1, -1):
        b = windows[i].box
        if b[0] <= cx < b[2] and b[1] <= cy < b[3]:
            return i
    return None


def visible_box(c: Candidate, windows: Sequence[XWindow]) -> Box | None:
    """The candidate's box clipped to its viewports and its window, less the windows above it;
    None when too little of it is left to see."""
    box: Box | None = c.box
    for clip in c.clips:
        box = intersect(box, clip) if box else None
    index = _window_of(c, windows)
    if box is None or index is None:
        return None
    box = intersect(box, windows[index].box)
    if box is None:
        return None
    whole = area(box)
    for above in windows[index + 1:]:
        if intersect(box, above.box) is None:
            continue
        part = uncovered_part(box, above.box)
        if part == box:  # covered across: nothing of it shows
            return None
        box = part
    if area(box) < MIN_VISIBLE * whole:
        return None
    return box


# Boxed on what they draw, not the whole row or cell the toolkit reports. Tabs keep the toolkit's box:
# the generated pages box a flat tab with its padding (the DOM element), and the detector learned that.
DRAWN_TYPES = frozenset({"tabled_text", "tree_item"})


def drawn_box(kind: str, text: str | None, image: Image.Image, box: Box) -> Box | None:
    """The box caap gives a table cell, list row, menu entry or tree row the toolkit reports as
    ``box`` (the whole row or cell), as the DOM labels and the generated pages box them: what is
    drawn in it, less its grid lines (``cell_ink_box``). A tree row keeps its expander and icon (a
    generated tree item spans them too). None: it has a text that is not drawn; one with no text
    and no ink keeps its box."""
    has_text = bool(text and text.strip())
    fitted = cell_ink_box(image, box)
    if fitted is None:
        # An empty cell: the cell is what there is to click. (One whose text is not known, cut by
        # its view, is boxed on what shows of it, as the detector sees it.)
        return None if has_text else box
    return _grow_left(image, box, fitted) if kind == "tree_item" else fitted


EXPANDER_GAP = 12  # px: the most blank between a tree row's expander arrow and its first letter
EXPANDER_WIDTHS = 1.0  # an expander is at most this many row heights wide
EXPANDER_BLANK = 4  # px left blank before an expander (letters and a colon stand closer)


def _grow_left(image: Image.Image, box: Box, fitted: Box, gap: int = 6, reach: int = 48, pad: int = 1) -> Box:
    """A tree row's ``fitted`` box widened to the left over the ink it leaves out: GTK 3 reports
    the cells of a tree's expander column about 18 px right of where it draws them, so their first
    letters, and the expander arrow before them, lie outside. When the row's ink starts within
    ``gap`` px of the reported left side, the ink beyond it is followed leftwards across gaps of up
    to ``gap`` px (letters), at most ``reach`` px; then an expander, a run of ink no wider than the
    row is high within ``EXPANDER_GAP`` px further left, is taken too, as the generated tree items
    box it."""
    x1, y1, x2, y2 = fitted
    if x1 - box[0] > gap or box[0] == 0:
        return fitted
    start = max(0, box[0] - reach)
    pixels = np.asarray(image.crop((start, y1, box[0], y2)).convert("RGB"))
    inside = np.asarray(image.crop(box).convert("RGB"))
    cols = (np.abs(pixels.astype(np.int32) - background_colour(inside).astype(np.int32)).sum(axis=2)
            > INK_DIFFERENCE).any(axis=0)
    left, empty = None, 0
    for j in range(len(cols) - 1, -1, -1):
        if cols[j]:
            left, empty = j, 0
        else:
            empty += 1
            if empty > gap:
                break
    edge = len(cols) if left is None else left
    # the nearest ink further left, across a blank of up to EXPANDER_GAP px from the first letter
    first = x1 - start if left is None else left
    reach_from = max(0, first - EXPANDER_GAP - 1)
    before = np.flatnonzero(cols[reach_from:edge])
    if before.size:
        end = reach_from + int(before[-1])
        run = end
        while run > 0 and cols[run - 1]:
            run -= 1
        # Alone, with blank before it: not a word's last letter or a colon, nor one cut by the reach.
        alone = run > 0 and not cols[max(0, run - EXPANDER_BLANK):run].any()
        if alone and end - run + 1 <= EXPANDER_WIDTHS * (y2 - y1):
            edge = run
    return fitted if edge >= len(cols) else (max(0, start + edge - pad), y1, x2, y2)


def _outside(pixels: np.ndarray, box: Box, side: int, k: int) -> np.ndarray | None:
    """The line of pixels ``k`` px outside ``box`` on ``side`` (0 left, 1 top, 2 right, 3 bottom),
    along that side; None past the image's edge."""
    height, width = pixels.shape[:2]
    x1, y1, x2, y2 = box
    if side in (0, 2):
        x = x1 - k if side == 0 else x2 - 1 + k
        return pixels[y1:y2, x] if 0 <= x < width else None
    y = y1 - k if side == 1 else y2 - 1 + k
    return pixels[y, x1:x2] if 0 <= y < height else None


def grow_to_frame(image: Image.Image, box: Box, reach: tuple[int, int] = (20, 10), *,
                  whole_frame: bool = False) -> Box:
    """Widen a widget's content box to the frame drawn round it: on each side, the first line of
    pixels (going outwards, within ``reach`` px) that differs from the widget's padding along most
    of its length is its border. A side without such a line (a flat button) stays where it is;
    with ``whole_frame``, the box grows only where all four sides find their line (a glyph beside
    a flat picture button is no frame)."""
    pixels = np.asarray(image.convert("RGB")).astype(np.int32)
    height, width = pixels.shape[:2]
    out = list(box)
    for side in range(4):
        first = _outside(pixels, box, side, 1)
        if first is None or len(first) == 0:
            if whole_frame:
                return box
            continue
        padding = np.median(first, axis=0)
        step = 0
        for k in range(2, (reach[0] if side in (0, 2) else reach[1]) + 1):
            line = _outside(pixels, box, side, k)
            if line is None:
                break
            if (np.abs(line - padding).sum(axis=1) > INK_DIFFERENCE // 2).mean() >= 0.7:
                step = k
                break
        if whole_frame and not step:
            return box
        out[side] += -step if side in (0, 1) else step
    return (max(0, out[0]), max(0, out[1]), min(width, out[2]), min(height, out[3]))


KNOB_REACH = 16  # px beyond a GTK 4 slider's trough box its knob may reach
KNOB_SPAN = 48   # px: the widest a knob's row of ink is; a label's line beside the slider is wider


def grow_to_knob(image: Image.Image, box: Box) -> Box:
    """A GTK 4 slider's box (its trough and a little margin) grown across the trough to its knob,
    which the toolkit leaves outside: on each side, line by line outwards (within KNOB_REACH px),
    as long as the line has ink no wider than a knob (KNOB_SPAN px). A slider is grabbed by its
    knob, and GTK 3 and Qt report their sliders with it."""
    pixels = np.asarray(image.convert("RGB")).astype(np.int32)
    height, width = pixels.shape[:2]
    out = list(box)
    across = (1, 3) if box[2] - box[0] >= box[3] - box[1] else (0, 2)  # the sides the knob stands out of
    for side in across:
        for k in range(1, KNOB_REACH + 1):
            line = _outside(pixels, box, side, k)
            if line is None or not len(line):
                break
            inked = np.flatnonzero(np.abs(line - np.median(line, axis=0)).sum(axis=1) > INK_DIFFERENCE // 2)
            if not len(inked) or inked[-1] - inked[0] >= KNOB_SPAN:
                break
            out[side] = box[side] - k if side in (0, 1) else box[side] + k
    return (max(0, out[0]), max(0, out[1]), min(width, out[2]), min(height, out[3]))


def range_fraction(current: float, minimum: float, maximum: float) -> float | None:
    """Where ``current`` stands between ``minimum`` and ``maximum``, as the taxonomy's ``value``
    (0-1); None for an empty or unknown range."""
    try:
        span = float(maximum) - float(minimum)  # below zero where a scale runs from high to low
        if span == 0:
            return None
        return round(min(1.0, max(0.0, (float(current) - float(minimum)) / span)), 4)
    except (TypeError, ValueError):
        return None


def big_enough(kind: str, box: Box) -> bool:
    """Is a labelled box of this type big enough for anyone to see or click it?"""
    least = MIN_THIN_SIDE if kind in THIN_TYPES else MIN_SIDE
    return min(box[2] - box[0], box[3] - box[1]) >= least and area(box) >= MIN_AREA


def _element(c: Candidate, box: Box) -> Element | None:
    try:
        kind = ElementType(c.type)
    except ValueError:
        return None  # a type the taxonomy does not have (yet)
    from caap.taxonomy import attributes_of

    allowed = attributes_of(kind)
    record: dict[str, Any] = {"type": kind, "bbox": box}
    values = {"text": c.text, "checked": c.checked, "focused": c.focused, "highlighted": c.highlighted,
              "expanded": c.expanded, "indeterminate": c.indeterminate, "enabled": c.enabled, "value": c.value}
    for name in allowed:
        if name in values and name in ATTRIBUTES:
            record[name] = values[name]
    if "text" in allowed and isinstance(record.get("text"), str):
        # Format characters (a left-to-right mark before GTK's ``00∶43``) are never drawn; a few
        # others are drawn as a plainer one a reader sees (``DRAWN_AS``).
        text = "".join(DRAWN_AS.get(ch, ch) for ch in record["text"] if unicodedata.category(ch) != "Cf")
        record["text"] = " ".join(text.split()) if kind.value in TEXT_TYPES else text.strip()
    try:
        return Element.model_validate(record)
    except ValueError:
        return None


def ink_bands(image: Image.Image, box: Box, min_height: int = 4) -> list[Box]:
    """The lines of ink inside ``box`` (image pixels), top to bottom: runs of rows with ink,
    separated by blank rows, each fitted to its ink; runs lower than ``min_height`` px (a rule, an
    underline on its own) are not lines."""
    x1, y1, _, _ = box
    pixels = np.asarray(image.crop(box).convert("RGB"))
    if pixels.size == 0:
        return []
    ink = ink_mask(pixels)
    rows: list[bool] = np.asarray(ink.any(axis=1), dtype=bool).tolist()
    bands: list[Box] = []
    top = None
    for y, inked in enumerate([*rows, False]):
        if inked and top is None:
            top = y
        elif not inked and top is not None:
            if y - top >= min_height:
                cols = np.flatnonzero(ink[top:y].any(axis=0))
                bands.append((x1 + int(cols[0]), y1 + top, x1 + int(cols[-1]) + 1, y1 + y))
            top = None
    return bands


def ink_cells(image: Image.Image, box: Box, gap: int = 14) -> list[Box]:
    """Cells of a table drawn inside ``box``: its lines of ink, each split where a blank gap of at
    least ``gap`` px separates two columns."""
    cells: list[Box] = []
    for x1, y1, x2, y2 in ink_bands(image, box, min_height=6):
        ink = ink_mask(np.asarray(image.crop((x1, y1, x2, y2)).convert("RGB")))
        cols = ink.any(axis=0)
        start, blank = None, 0
        for x, inked in enumerate([*np.asarray(cols, dtype=bool).tolist(), *([False] * gap)]):
            if inked:
                start = x if start is None else start
                blank = 0
            elif start is not None:
                blank += 1
                if blank >= gap:
                    cells.append((x1 + start, y1, x1 + x - blank + 1, y2))
                    start, blank = None, 0
    return cells


# Where a text longer than its box may be scrolled inside it rather than cut.
SCROLLED_TEXT_TYPES = frozenset({"input_field", "text_area", "dropdown"})
# How much wider than its box a one-line text may measure and still be drawn whole in it: the
# measure is one font's (text_width) and toolkits draw in others. On the validation desktop apps,
# 71 of 4,232 one-line texts measure over 1.3 times their box, every one elided ("Radically ne…"),
# cut by a column or never drawn (an icon's name); 1.2-1.3 holds 42 more of fonts a little wider.
TEXT_OVERFLOW = 1.3


def drawn_whole(text: str, box: Box) -> bool:
    """Whether a one-line ``text`` can be drawn whole in ``box`` (image pixels): its measured width
    is at most ``TEXT_OVERFLOW`` times the box's. A text of several lines is not judged."""
    if "\n" in text or not text.strip():
        return True
    return text_width(text) <= TEXT_OVERFLOW * max(1, box[2] - box[0])


@lru_cache(maxsize=4096)
def text_width(text: str) -> float:
    """Roughly how wide ``text`` is drawn in a desktop's usual UI font (13 px DejaVu Sans); the
    ratios between texts are what matter."""
    from caap.report.draw import label_font

    return float(label_font(13).getlength(text))


def _line_misfit(band: float) -> float:
    """How far a line's measured width (in its band's scale) may miss the ``band`` px its ink spans:
    a few px, or a few per cent of a long line (kerning, two spaces after a full stop)."""
    return max(6.0, 0.08 * band)


def wrap_texts(text: str, bands: Sequence[Box]) -> list[str | None]:
    """Which words of ``text`` each line band shows, found by measuring: the paragraphs (lines of
    ``text``) are laid over the bands in order, each broken where the lines' measured widths best
    match their bands' (least squares over every place a line may break, in the scale that makes
    the whole text as wide as the bands together). Where even the best split leaves a line off
    its band by more than ``_line_misfit``, every band gets None rather than a guess."""
    unknown: list[str | None] = [None] * len(bands)
    paragraphs = [" ".join(p.split()).split(" ") for p in text.split("\n") if p.strip()]
    if not paragraphs or not bands or len(paragraphs) > len(bands):
        return unknown
    if len(paragraphs) == len(bands):
        return [" ".join(words) for words in paragraphs]
    widths = [float(b[2] - b[0]) for b in bands]
    scale = _scale([" ".join(words) for words in paragraphs], widths)
    words = [w for para in paragraphs for w in para]  # all paragraphs as one run of words ...
    para_of = [k for k, para in enumerate(paragraphs) for _ in para]  # ... a line never spans two
    n, m = len(words), len(bands)
    # best[k][i]: the least cost of laying the first i words on the first k bands; back: where the
    # k-th line started
    best = [[float("inf")] * (n + 1) for _ in range(m + 1)]
    back = [[-1] * (n + 1) for _ in range(m + 1)]
    best[0][0] = 0.0
    for k in range(m):
        for i in range(n):
            if best[k][i] == float("inf"):
                continue
            for j in range(i + 1, n + 1):
                if para_of[j - 1] != para_of[i]:
                    break
                miss = scale * text_width(" ".join(words[i:j])) - widths[k]
                if best[k][i] + miss * miss < best[k + 1][j]:
                    best[k + 1][j], back[k + 1][j] = best[k][i] + miss * miss, i
                if miss > _line_misfit(widths[k]):
                    break  # longer lines only miss by more
    if best[m][n] == float("inf"):
        return unknown
    cuts = [n]
    for k in range(m, 0, -1):
        cuts.append(back[k][cuts[-1]])
    lines = [" ".join(words[a:b]) for a, b in itertools.pairwise(reversed(cuts))]
    return list[str | None](lines) if lines_fit(lines, bands) else unknown


def _scale(lines: Sequence[str], widths: Sequence[float]) -> float:
    """Pixels of ink per unit of ``text_width``: the lines' measure made as wide as their bands."""
    return sum(widths) / max(1.0, sum(text_width(line) for line in lines))


def lines_fit(lines: Sequence[str], bands: Sequence[Box]) -> bool:
    """Whether each of ``lines`` measures its band's width (in the scale of the whole), within
    ``_line_misfit``: a toolkit's own word wrap checked against what it drew."""
    texts = [" ".join(line.split()) for line in lines]
    widths = [float(b[2] - b[0]) for b in bands]
    scale = _scale(texts, widths)
    return all(abs(scale * text_width(t) - w) <= _line_misfit(w) for t, w in zip(texts, widths, strict=True))


def _lines(c: Candidate, box: Box, image: Image.Image, origin: tuple[int, int]) -> list[tuple[str | None, Box]]:
    """The lines of a text candidate in image pixels, each with its text where it is known."""
    ox, oy = origin
    if c.lines:
        out: list[tuple[str | None, Box]] = []
        for text, (x1, y1, x2, y2) in c.lines:
            part = intersect((x1 - ox, y1 - oy, x2 - ox, y2 - oy), box)
            # A line the viewport cuts in half is not readable; leave it out.
            if part is not None and (part[3] - part[1]) >= 0.7 * (y2 - y1):
                out.append((text, part))
        return out
    bands = ink_bands(image, box)
    if not bands:
        return [(c.text, box)]
    if len(bands) == 1:  # one line: the rules beside it (a group box's frame) are not part of it
        return [(c.text, bands[0])]
    # Tk's lines as the driver measures them, unless they do not measure up to what Tk drew (its
    # wrap may keep a word the measure pushes to the next line): then the lines are found by measuring.
    shown = [line for line in c.wrapped or () if line.strip()]
    if len(shown) == len(bands) and lines_fit(shown, bands):
        return list(zip(shown, bands, strict=True))
    return list(zip(wrap_texts(c.text or "", bands), bands, strict=True))


ELLIPSIS = ("...", "…")
DOT_SHARE = 0.25  # an ellipsis dot is at most this share of its line's height, or 3 px (anti-aliased)
DOT_PITCH = 0.6  # and the dots stand at most this share of it apart


def ends_in_ellipsis(image: Image.Image, box: Box) -> bool:
    """Whether the ink in ``box`` ends in an ellipsis: three dots, each small, sitting on the
    baseline of the letters before them, evenly spaced, with nothing drawn after them. A toolkit
    draws one where it elides a text too long for its box; the name it reports stays whole."""
    pixels = np.asarray(image.crop(box).convert("RGB"))
    if pixels.size == 0:
        return False
    n, _, stats = components(ink_mask(pixels).astype(np.uint8))
    parts = sorted((tuple(int(v) for v in stats[i][:4]) for i in range(1, n)), key=lambda s: s[0])
    if len(parts) < 4:
        return False
    letters, dots = parts[:-3], parts[-3:]
    if max(x + w for x, _, w, _ in letters) > dots[-1][0]:
        return False  # a letter reaches past the last dot (a kerned Y may overhang the first): no trailing dots
    # The line is measured on the letters: specks (a tree's dotted branch lines, an i's dot) are not.
    tallest = max(h for _, _, _, h in letters)
    letters = [s for s in letters if 3 * s[3] > tallest]
    height = max(y + h for _, y, _, h in letters) - min(y for _, y, _, _ in letters)
    baseline = float(np.median([y + h for _, y, _, h in letters]))
    side = max(3, round(DOT_SHARE * height))
    if any(w > side or h > side or abs(y + h - baseline) > 1 for _, y, w, h in dots):
        return False
    steps = [dots[k + 1][0] - dots[k][0] for k in range(2)]
    return min(steps) > 1 and max(steps) - min(steps) <= 1 and max(steps) <= DOT_PITCH * height


def _text_cut(image: Image.Image, box: Box, whole: Box, shown: Box, edge: int = 3) -> bool:
    """Whether clipping (to ``shown``, on the screen) cut into what ``whole`` draws: on a side that
    was cut, ink reaches the edge of what is left (``box``, in image pixels). Blank there means the
    words ended before the cut."""
    cut_sides = [shown[0] > whole[0] + 2, shown[1] > whole[1] + 2, shown[2] < whole[2] - 2, shown[3] < whole[3] - 2]
    if not any(cut_sides):
        return False
    pixels = np.asarray(image.crop(box).convert("RGB"))
    if pixels.size == 0:
        return True
    ink = ink_mask(pixels)
    strips = (ink[:, :edge], ink[:edge, :], ink[:, -edge:], ink[-edge:, :])
    return any(cut and bool(strip.any()) for cut, strip in zip(cut_sides, strips, strict=True))


def finish(candidates: Iterable[Candidate], windows: Sequence[XWindow], capture: Box,
           image: Image.Image) -> list[tuple[Element, Candidate]]:
    """The elements of ``image`` (the pixels of ``capture`` on the screen), each with the candidate
    it came from."""
    ox, oy = capture[0], capture[1]
    out: list[tuple[Element, Candidate]] = []
    seen: set[tuple[str, Box]] = set()
    for c in candidates:
        shown = visible_box(c, windows)
        if shown is None:
            continue
        box = intersect((shown[0] - ox, shown[1] - oy, shown[2] - ox, shown[3] - oy), (0, 0, image.width, image.height))
        if box is None:
            continue
        if c.grow:
            box = grow_to_knob(image, box) if c.type == ElementType.SLIDER.value else grow_to_frame(
                image, box, whole_frame=c.type == ElementType.ICON.value)
        if c.text is not None and _text_cut(image, box, c.box, shown):
            # Part of its text is hidden (under a menu, scrolled out of its view): the text is no
            # longer what shows, and what shows is not known.
            c = replace(c, text=None, lines=None)
        if c.type in CONTROL_TYPES and c.source in STRETCHED_ROLES:
            box = drawn_span(image, box)
        parts: list[tuple[str | None, Box]] = [(c.text, box)]
        if c.cells:
            parts = [(None, cell) for cell in ink_cells(image, box)]
        if c.type == "icon":  # the picture, not the flat button round it
            fitted = ink_box(image, box, ring=3)
            if fitted is None or (c.source == "table cell" and ink_box(image, box) is None):
                continue  # nothing drawn; or an empty cell's fill alone (Qt's spreadsheet greys its unused rows)
            if min(fitted[2] - fitted[0], fitted[3] - fitted[1]) >= MIN_SIDE:
                parts = [(c.text, fitted)]
        if c.type == ElementType.SCROLLBAR.value and not scrollbar_drawn(image, box):
            continue  # in the tree, not on the screen (GTK 4's overlay scrollbars)
        if c.type in DRAWN_TYPES and not c.cells:
            fitted = drawn_box(c.type, c.text, image, box)
            if fitted is None:
                continue  # a cell whose text is not drawn (scrolled, clipped to nothing)
            parts = [(c.text, fitted)]
        if c.type in TEXT_TYPES:
            parts = []
            for text, line in _lines(c, box, image, (ox, oy)):
                fitted = ink_box(image, line)
                if fitted is not None and (text is None or text.strip()):
                    parts.append((text, fitted))
        for text, part in parts:
            if not big_enough(c.type, part):
                continue
            if text is not None and c.type not in SCROLLED_TEXT_TYPES and not drawn_whole(text, part):
                text = None  # elided or cut by its cell, or a name never drawn: what shows is not known
            elif text is not None and not text.rstrip().endswith(ELLIPSIS) and ends_in_ellipsis(image, part):
                text = None  # elided, though it measured as fitting: the box holds the row's icon and indicator too
            key = (c.type, part)
            if key in seen:
                continue
            element = _element(replace(c, text=text, type=drawn_kind(c.type, image, part, c.qt_checkable)), part)
            if element is not None:
                seen.add(key)
                out.append((element, c))
    return _toggles_with_their_names(_without_stray_icons(out), image)


CONTROL_TYPES = frozenset({"checkbox", "radio"})
# AT-SPI's roles (Tk's classes keep their boxes: Tk's check and radio buttons are boxed by Tk).
STRETCHED_ROLES = frozenset({"check box", "radio button"})
STRETCH = 1.5  # an allocation this many times as wide as what is drawn in it is stretched by its layout
SPAN_PAD = 3  # px kept each side of what is drawn


def drawn_span(image: Image.Image, box: Box) -> Box:
    """A check box's or radio button's box across what it draws: GTK stretches a check button's
    allocation over its grid column or box (a radio button 787 px wide round a 60 px circle and
    word), and draws the indicator and label at its left; the detector, like every other source,
    boxes the indicator and the label."""
    drawn = ink_box(image, box)
    if drawn is None or box[2] - box[0] <= STRETCH * (drawn[2] - drawn[0]) + 2 * SPAN_PAD:
        return box
    return (max(box[0], drawn[0] - SPAN_PAD), box[1], min(box[2], drawn[2] + SPAN_PAD), box[3])


SLIDER_STEP = 30  # summed |RGB| a scrollbar's slider (or its trough's end) differs from the trough along it
SLIDER_RUN = 6    # px: the least run of such a difference along the bar; a line crossing the box is 1-2 px


def scrollbar_drawn(image: Image.Image, box: Box) -> bool:
    """Whether a scrollbar shows anything in ``box``: across it the mean colour along it changes
    (a slider narrower than its trough, even one as long as the trough), or along its length the
    mean colour across it changes (a slider, an arrow, the trough's end) for at least SLIDER_RUN px.
    GTK 4's overlay scrollbars are in the accessibility tree with their full extents while nothing
    of them is drawn until the pointer comes near (GTK 4 ignores GTK_OVERLAY_SCROLLING)."""
    pixels = np.asarray(image.crop(box).convert("RGB"), dtype=np.float32)
    if pixels.size == 0:
        return False
    along = 0 if pixels.shape[0] >= pixels.shape[1] else 1  # the bar's long axis in the array
    across = pixels.mean(axis=along)  # one mean colour per position across the bar
    if np.abs(across - across.max(axis=0)).sum(axis=1).max() >= SLIDER_STEP:
        return True
    profile = pixels.mean(axis=1 - along)  # one mean colour per position along the bar
    base = np.median(profile, axis=0)
    differs = np.abs(profile - base).sum(axis=1) >= SLIDER_STEP
    if not differs.any():
        return False
    edges = np.flatnonzero(np.diff(np.concatenate(([0], differs.astype(np.int8), [0]))))
    return bool((edges[1::2] - edges[::2]).max() >= SLIDER_RUN)


# Qt's check boxes and radio buttons are 21-23 px high in its styles (fusion, windows), its push
# and tool buttons with text 24-30 px (the training apps' and caap's Qt showcase's).
QT_BUTTON_HEIGHT = 24


def drawn_kind(kind: str, image: Image.Image, box: Box, qt_checkable: bool = False) -> str:
    """The type a widget the toolkit reports as ``kind`` has by what it draws: a check box whose
    control is a radio button's round one is a radio button (GTK 4 reports its grouped check
    buttons, its radio buttons, as check boxes; gtk4-widget-factory's 51 radio buttons were
    labelled check boxes), told as the observer tells the two (``caap.observe.steps.figures.control_kind``).
    A Qt check box or radio button (``qt_checkable``) as high as a button is a checkable button: a
    button, held down while checked. (Its height, not the lack of a control at its left: a flat
    tool button's first letter, ``U`` or ``M``, passes for a check box's square.)"""
    if qt_checkable and kind in (ElementType.CHECKBOX.value, ElementType.RADIO.value) \
            and box[3] - box[1] >= QT_BUTTON_HEIGHT:
        return ElementType.BUTTON.value
    if kind != ElementType.CHECKBOX.value:
        return kind
    crop = np.asarray(image.crop(box).convert("RGB"))
    round_control = control_kind(crop, (0, 0, box[2] - box[0], box[3] - box[1])) is ElementType.RADIO
    return ElementType.RADIO.value if round_control else kind


def _without_stray_icons(labelled: list[tuple[Element, Candidate]]) -> list[tuple[Element, Candidate]]:
    """Drop icons whose ink is mostly another element's text: an empty picture cell beside a text
    cell (GTK's file list) fits its box to its neighbour's words."""
    texts = [e.bbox for e, _ in labelled if e.type.value in ("text", "tabled_text", "hyperlink", "tree_item")]
    kept = []
    for e, c in labelled:
        if e.type.value == "icon" and any(intersect(e.bbox, t) is not None and area(intersect(e.bbox, t) or e.bbox)
                                          >= 0.6 * area(e.bbox) for t in texts):
            continue
        kept.append((e, c))
    return kept


NAME_GAP_ROWS = 1.0  # the most blank, in row heights, between a toggle cell and the name cell beside it
ROW_NAME_TYPES = frozenset({"tabled_text", "tree_item"})


def _toggles_with_their_names(labelled: list[tuple[Element, Candidate]],
                              image: Image.Image) -> list[tuple[Element, Candidate]]:
    """One check box per checkable row, as every other source boxes it. Qt draws a checkable item's
    box and name in one cell, a web page's label holds its box and words, and the generated pages box
    the two together; GTK 3 draws a tree's or list's check box in a toggle cell of its own, beside
    the cell with the row's name. Such a toggle cell (a nameless check box reported as a table cell)
    and the name cell that starts within ``NAME_GAP_ROWS`` row heights right of it, on the same row,
    become one check box: from the box's ink to the name's end, with the name as its text."""
    names = [(i, e) for i, (e, _) in enumerate(labelled) if e.type.value in ROW_NAME_TYPES and e.text]
    merged: dict[int, tuple[Element, Candidate]] = {}
    taken: set[int] = set()
    for i, (e, c) in enumerate(labelled):
        if e.type is not ElementType.CHECKBOX or e.text or c.source != "table cell":
            continue
        _, y1, x2, y2 = e.bbox
        middle = (y1 + y2) / 2
        beside = [(n.bbox[0] - x2, j, n) for j, n in names if j not in taken
                  and n.bbox[1] <= middle <= n.bbox[3] and -2 <= n.bbox[0] - x2 <= NAME_GAP_ROWS * (y2 - y1)]
        if not beside:
            continue
        _, j, name = min(beside, key=lambda t: t[0])
        drawn = ink_box(image, e.bbox) or e.bbox
        box = (drawn[0], min(drawn[1], name.bbox[1]), name.bbox[2], max(drawn[3], name.bbox[3]))
        element = e.model_copy(update={"bbox": box, "text": name.text})
        merged[i] = (element, replace(c, text=name.text))
        taken.add(j)
    return [merged.get(i, pair) for i, pair in enumerate(labelled) if i not in taken]
