"""Scrollbars found by their arrow buttons, or by a slider in a trough.

Chromium's classic scrollbars (MiniWoB++'s scrolling pages and panes) and Qt's Fusion style draw a
scrollbar as a strip 10-20 px wide with an arrow button at each end: a small triangle pointing up
at the top and down at the bottom (left and right on a horizontal bar). The detector misses most
that span a whole page (book-flight, social-media, daily-calendar) and many of Qt's. The arrows
are easy to see: two small solid triangles of ink, pointing away from each other, on one axis, the
strip of one colour (the trough) between them. ``arrow_scrollbars`` adds a scrollbar box from the
middle of one arrow button to the middle of the other, grown by half the strip's width at each
end (the buttons are square), across the trough's width.

GTK 3's scrollbars have no arrow buttons: a trough 11-18 px wide, a shade off the window, with a
narrower rounded slider in it (gtk3-widget-factory's text and list views; the detector missed 13
of 16 there). ``trough_scrollbars`` takes a long solid strip of that width standing off the page,
with a run of another colour along its middle that leaves the trough's colour on both sides, for
a scrollbar.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection
from caap.observe.primitives import FAINT_INK, components, page_difference, page_ink, rgb_pixels
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
TROUGH_WIDTH = (11, 18)  # px: a slider's trough across the bar (GTK 3: 15)
TROUGH_LONG = 100        # px: the least length of a trough, and at least TROUGH_ASPECT widths
TROUGH_ASPECT = 6
TROUGH_FILL = 0.9        # least share of its box the trough's strip fills
SLIDER_STEP = 30         # summed |RGB| the slider differs from the trough along the bar's middle
SLIDER_MIN = 16          # px: the least length of the slider
SLIDER_SOLID = 0.9       # least share of the slider's middle half in its own colour
PIECE_INSIDE = 0.8       # a scrollbar box this much inside a found bar is a piece of it


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


def arrow_scrollbars(image: Image.Image, elements: Sequence[Element], ink: np.ndarray | None = None) -> list[Element]:
    """The elements with a scrollbar added for every pair of arrow buttons with a trough between them
    that no box holds yet. ``ink``: the screen's ``page_ink`` where the caller has it."""
    rgb = rgb_pixels(image)
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


def _slider_in(rgb: np.ndarray, bar: Box) -> bool:
    """Whether a trough holds a slider: along the bar's middle a run of at least SLIDER_MIN px of
    another colour than the trough's ends, with the trough's colour 2 px in from both sides there,
    solid across the trough's middle half."""
    x1, y1, x2, y2 = bar
    crop = rgb[y1:y2, x1:x2].astype(np.int16)
    if y2 - y1 < x2 - x1:
        crop = crop.transpose(1, 0, 2)  # along the bar is down the rows
    trough = crop[2, 2]
    middle = crop[:, crop.shape[1] // 2]
    other = np.abs(middle - trough).sum(axis=1) >= SLIDER_STEP
    edges = np.flatnonzero(np.diff(np.concatenate(([0], other.astype(np.int8), [0]))))
    runs = [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=True) if b - a >= SLIDER_MIN]
    if not runs:
        return False
    a, b = max(runs, key=lambda r: r[1] - r[0])
    if b - a >= len(middle) - 4:
        return False  # one colour end to end: a bar, not a trough with a slider
    sides = crop[(a + b) // 2, [1, -2]]
    if not (np.abs(sides - trough).sum(axis=1) < SLIDER_STEP).all():
        return False
    # A slider is one solid bar down the trough's middle half, not the glyphs of a shaded row.
    t = crop.shape[1]
    body = crop[a + 2:b - 2, t // 4:t - t // 4].reshape(-1, 3)
    return bool(len(body)) and bool((np.abs(body - np.median(body, axis=0)).sum(axis=1) < SLIDER_STEP).mean()
                                    >= SLIDER_SOLID)


def trough_scrollbars(image: Image.Image, elements: Sequence[Element],
                      difference: np.ndarray | None = None) -> list[Element]:
    """The elements with a scrollbar added for every trough with a slider in it that no box holds
    yet (see the module's docstring); scrollbar boxes lying inside it (pieces of it) give way.
    ``difference``: the screen's ``page_difference`` where the caller has it."""
    import cv2  # the vision extra's

    rgb = rgb_pixels(image)
    faint = page_ink(image, FAINT_INK, page_difference(image) if difference is None else difference)
    # The trough meets its view's 1 px frame: an opening along each axis keeps only strips at least
    # a trough wide and long.
    lo = TROUGH_WIDTH[0]
    strips = np.maximum(cv2.morphologyEx(faint, cv2.MORPH_OPEN, np.ones((TROUGH_LONG, lo), np.uint8)),
                        cv2.morphologyEx(faint, cv2.MORPH_OPEN, np.ones((lo, TROUGH_LONG), np.uint8)))
    _, _, stats, _ = cv2.connectedComponentsWithStats(strips, connectivity=4)
    w, h, filled = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    thick, long_ = np.minimum(w, h), np.maximum(w, h)
    found = np.flatnonzero((thick >= TROUGH_WIDTH[0]) & (thick <= TROUGH_WIDTH[1]) & (long_ >= TROUGH_LONG)
                            & (long_ >= TROUGH_ASPECT * thick) & (filled >= TROUGH_FILL * w * h))
    out = list(elements)
    score = min((e.score or 0.0 for e in elements), default=0.25)
    for k in found[found > 0].tolist():
        x, y = int(stats[k, cv2.CC_STAT_LEFT]), int(stats[k, cv2.CC_STAT_TOP])
        bar = (x, y, x + int(w[k]), y + int(h[k]))
        if not _slider_in(rgb, bar):
            continue
        pieces = [e for e in out
                  if e.type is ElementType.SCROLLBAR and intersection(e.bbox, bar) >= PIECE_INSIDE * area(e.bbox)]
        others = [e for e in out if e not in pieces]
        if any(intersection(e.bbox, bar) > HELD * area(bar) for e in others):
            continue
        out = [*others, Element(type=ElementType.SCROLLBAR, bbox=bar, score=score)]
    return out
