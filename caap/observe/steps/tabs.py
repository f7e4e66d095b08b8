"""The current tab by the accent bar drawn along one of its sides.

GTK 3 and 4 (and KDE's Breeze) draw the current page's tab with a bar of the accent colour, a few
pixels thick, along the tab's side that faces the page: under a tab on top, over one at the bottom,
beside one at the left or right. The tabs behind it have none. The state head learnt tabs mostly
from strips on top, and the detector boxes a tab at the side of the page as its word, a text, so a
tab is read from the bar: a box (a tab, or a text the detector took for one) with one straight
coloured bar that runs along one of its sides, about as long as the tab, and none along the
others, is the current tab; the tabs of its strip without one are not.

A focus ring is coloured on all four sides, a selected row's fill on two, a slider's or progress
bar's fill runs on past a word beside it, and a link's underline is one pixel thick: none is taken.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import rgb_pixels
from caap.observe.steps.figures import RING_SATURATION
from caap.taxonomy import ElementType

TAB_TYPES = frozenset({ElementType.TAB, ElementType.TEXT})
BAR_REACH = 12      # px outside the box a tab's bar may lie (the detector boxes a side tab's word)
BAR_INSET = 6       # px inside the box (a tab's box may hold its own bar), at most a third of its depth
BAR_THICK = (2, 5)  # px: a bar's least and greatest thickness
BAR_COVER = 0.9     # share of the box's side the bar runs along, at least ...
BAR_OVERHANG = 24   # ... and px it may run on past each end of the side (the tab's padding)
MIN_SIDE = 8        # px: a box's side shorter than this carries no bar
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
    coloured = _coloured(rgb)
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
    return side, start, end


def _same_strip(a: Sequence[int], b: Sequence[int], side: str) -> bool:
    """Whether box ``b`` stands in the strip of tabs whose current one is ``a``, barred on ``side``:
    beside it in a row (a bar on top or bottom) or in a column (a bar left or right)."""
    if side in ("top", "bottom"):
        overlap = min(a[3], b[3]) - max(a[1], b[1])
        return overlap >= 0.5 * min(a[3] - a[1], b[3] - b[1])
    overlap = min(a[2], b[2]) - max(a[0], b[0])
    return overlap >= 0.5 * min(a[2] - a[0], b[2] - b[0])


def tab_bars(image: Image.Image, elements: list[Element]) -> list[Element]:
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
        update: dict[str, object] = {"type": ElementType.TAB, "highlighted": True}
        if elements[i].type is ElementType.TEXT and side in ("left", "right"):
            x1, _, x2, _ = elements[i].bbox
            update["bbox"] = (x1, start, x2, end)
        out[i] = out[i].model_copy(update=update)
    for j, element in enumerate(out):
        if element.type is not ElementType.TAB or j in current or not element.highlighted:
            continue
        if any(_same_strip(out[i].bbox, element.bbox, side) for i, side in current.items()):
            out[j] = element.model_copy(update={"highlighted": False})
    return out
