"""Scrollbars found by their arrow buttons.

Chromium's classic scrollbars (MiniWoB++'s scrolling pages and panes) and Qt's Fusion style draw a
scrollbar as a strip 10-20 px wide with an arrow button at each end: a small triangle pointing up
at the top and down at the bottom (left and right on a horizontal bar). The detector misses most
that span a whole page (book-flight, social-media, daily-calendar) and many of Qt's. The arrows
are easy to see: two small solid triangles of ink, pointing away from each other, on one axis, the
strip of one colour (the trough) between them. ``arrow_scrollbars`` adds a scrollbar box from the
middle of one arrow button to the middle of the other, grown by half the strip's width at each
end (the buttons are square), across the trough's width.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection
from caap.observe.figures import page_ink
from caap.observe.pixels import components, rgb_pixels
from caap.taxonomy import ElementType

ARROW_LONG = (5, 11)     # px: an arrow's base (Chromium 7-9, Fusion 5-7)
ARROW_SHORT = (3, 6)     # px: its height
ARROW_FILL = (0.4, 0.8)  # share of its box a solid triangle fills
MIN_TRACK = 40           # px between the two arrows: shorter strips are spin buttons' pairs
STRIP_WIDTH = (10, 20)   # px: the trough's width across the bar
TROUGH_STEP = 6          # summed |RGB| between neighbouring pixels of one trough
TROUGH_PROBE = 8         # px past the first arrow where the trough's width is measured
GROUND_PX = 15           # px: a closing this big takes an arrow away and leaves the trough round it
DARK_STEP = 40           # grey levels an arrow lies below its ground
LIGHT_GROUND = 200       # the ground's least grey level (a light trough)
HELD = 0.5               # a box already holding this share of the bar has it


def _widening(profile: np.ndarray) -> int:
    """1 where counts of ink widen steadily along ``profile``, -1 where they narrow, else 0."""
    steps = np.diff(profile)
    if not steps.any():
        return 0
    return 1 if (steps >= 0).all() else -1 if (steps <= 0).all() else 0


def _pointing(blob: np.ndarray) -> str | None:
    """Where a solid triangle (a boolean mask fitted to it) points: up, down, left, right or None.
    Rows (columns) of ink widen steadily from the tip to the base."""
    h, w = blob.shape

    def sized(long_: int, short: int) -> bool:
        return ARROW_LONG[0] <= long_ <= ARROW_LONG[1] and ARROW_SHORT[0] <= short <= ARROW_SHORT[1]

    if sized(w, h):
        return {1: "up", -1: "down"}.get(_widening(blob.sum(axis=1)))
    if sized(h, w):
        return {1: "left", -1: "right"}.get(_widening(blob.sum(axis=0)))
    return None


def _arrows(ink: np.ndarray) -> dict[str, list[Box]]:
    """The screen's small solid triangles by where they point."""
    import cv2  # the vision extra's

    _, labels, stats = components(ink)
    w, h, filled = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    long_, short = np.maximum(w, h), np.minimum(w, h)
    fill = filled / np.maximum(1, w * h)
    sized = np.flatnonzero((long_ >= ARROW_LONG[0]) & (long_ <= ARROW_LONG[1]) & (short >= ARROW_SHORT[0])
                           & (short <= ARROW_SHORT[1]) & (fill >= ARROW_FILL[0]) & (fill <= ARROW_FILL[1]))
    found: dict[str, list[Box]] = {"up": [], "down": [], "left": [], "right": []}
    for k in sized[sized > 0].tolist():
        x, y, bw, bh = (int(v) for v in stats[k, :4])
        way = _pointing(labels[y:y + bh, x:x + bw] == k)
        if way is not None:
            found[way].append((x, y, x + bw, y + bh))
    return found


def _trough(line: np.ndarray, middle: int) -> tuple[int, int]:
    """The run of one colour through ``middle`` of a line of RGB pixels (its start, one past its end):
    the trough's extent across the bar, each pixel within TROUGH_STEP of the one at the middle."""
    ref = line[middle].astype(np.int32)
    same = np.abs(line.astype(np.int32) - ref).sum(axis=1) <= TROUGH_STEP
    start = middle
    while start > 0 and same[start - 1]:
        start -= 1
    end = middle + 1
    while end < len(line) and same[end]:
        end += 1
    return start, end


def _bars(rgb: np.ndarray, first: list[Box], second: list[Box], vertical: bool) -> list[Box]:
    """Scrollbars between pairs of arrows: each ``first`` arrow (up or left) with the nearest
    ``second`` one (down or right) on its axis at least MIN_TRACK px on."""
    along, across = (1, 0) if vertical else (0, 1)  # box coordinates: along the bar, across it
    bars = []
    for a in first:
        middle = (a[across] + a[across + 2]) / 2
        ends = [b for b in second if abs((b[across] + b[across + 2]) / 2 - middle) <= 1
                and b[along] - a[along + 2] >= MIN_TRACK]
        if not ends:
            continue
        b = min(ends, key=lambda e: e[along])
        probe = a[along + 2] + TROUGH_PROBE
        line = rgb[probe] if vertical else rgb[:, probe]
        start, end = _trough(line, round(middle))
        if not STRIP_WIDTH[0] <= end - start <= STRIP_WIDTH[1]:
            continue
        half = (end - start) / 2
        limit = rgb.shape[0] if vertical else rgb.shape[1]
        low = max(0, round((a[along] + a[along + 2]) / 2 - half))
        high = min(limit, round((b[along] + b[along + 2]) / 2 + half))
        bars.append((start, low, end, high) if vertical else (low, start, high, end))
    return bars


def arrow_scrollbars(image: Image.Image, elements: Sequence[Element], ink: np.ndarray | None = None,
                     rgb: np.ndarray | None = None) -> list[Element]:
    """The elements with a scrollbar added for every pair of arrow buttons with a trough between them
    that no box holds yet. ``ink``: the screen's ``page_ink``, ``rgb``: its RGB array, where the caller
    has them."""
    rgb = rgb_pixels(image) if rgb is None else rgb
    bars: list[Box] = []
    # On a coloured page the light trough is itself ink against the page, and its arrows merge into
    # it (book-flight's pale blue form): the arrows are also looked for as dark ink on light ground.
    for mask in (page_ink(image) if ink is None else ink, _dark_on_light(rgb)):
        found = _arrows(mask)
        for bar in _bars(rgb, found["up"], found["down"], True) + _bars(rgb, found["left"], found["right"], False):
            if not any(intersection(b, bar) > HELD * area(bar) for b in bars):
                bars.append(bar)
    score = min((e.score or 0.0 for e in elements), default=0.25)
    added = [Element(type=ElementType.SCROLLBAR, bbox=bar, score=score) for bar in bars
             if not any(intersection(e.bbox, bar) > HELD * area(bar) for e in elements)]
    return [*elements, *added]


def _dark_on_light(rgb: np.ndarray) -> np.ndarray:
    """Ink darker than its light surroundings (uint8 0/1): a black-hat of the grey image where the
    closed image (the ground round each mark) is light. Dark themes' text gives nothing here."""
    import cv2  # the vision extra's

    grey = cv2.cvtColor(np.ascontiguousarray(rgb), cv2.COLOR_RGB2GRAY)
    square = np.ones((GROUND_PX, GROUND_PX), np.uint8)
    ground = cv2.morphologyEx(grey, cv2.MORPH_CLOSE, square)
    return ((cv2.subtract(ground, grey) > DARK_STEP) & (ground >= LIGHT_GROUND)).astype(np.uint8)
