"""Where a slider or a progress bar stands in its range (``value``, 0-1), read from its pixels.

The box is laid out along its long axis, from its start (the left end, or the bottom of a vertical
one) to its end:

- a **slider**'s thumb is the thickest run of drawn pixels across the track; the value is where the
  thumb stands between the track's ends (its centre moves half a thumb short of each end);
- a **progress bar** is a fill from the start and a trough after it: the value is the split of the
  bar's colour profile into two runs that fits best. A bar of one colour is full when that colour
  is an accent colour (as fills are) and empty where it is a neutral grey (as troughs are).

The box's ends are first followed out to the bar's own (``fitted_ends``).

A slider whose thumb is no thicker than its track but drawn in another colour (Tk's raised block)
is read from the one run of its trough's colour profile that differs from the trough; one with
neither (a flat bar with a fill) is read as a bar.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caap.elements import Element
from caap.observe.primitives import background_colour, components, difference, true_runs
from caap.taxonomy import ElementType

END_TRIM = 2          # px at least cut off each end of a bar: its frame or rounded cap, not its fill
MIN_SPLIT = 40        # summed |RGB| between the two runs' colours below which a bar is one colour
THUMB_OVER_TRACK = 1.5  # a thumb is at least this much thicker than the track's median thickness
INK = 40              # summed |RGB| from the slider box's surroundings that counts as drawn
MIN_LENGTH = 12       # px: shorter boxes are not read
END_SEARCH = 0.15     # how far past a box's end (a share of its length) the bar's end is followed


def along_axis(rgb: np.ndarray, box: Sequence[int]) -> np.ndarray | None:
    """The box's pixels with the range running along axis 1 from its start: ``(thick, long, 3)``."""
    h_img, w_img = rgb.shape[:2]
    x1, y1 = max(0, int(box[0])), max(0, int(box[1]))
    x2, y2 = min(w_img, int(box[2])), min(h_img, int(box[3]))
    if x2 - x1 < 2 or y2 - y1 < 2:
        return None
    crop = rgb[y1:y2, x1:x2]
    if crop.shape[0] > crop.shape[1]:  # vertical: from the bottom up
        crop = crop[::-1].transpose(1, 0, 2)
    return crop if crop.shape[1] >= MIN_LENGTH else None


def looks_filled(colour: np.ndarray) -> bool:
    """Whether a bar of one colour is all fill: fills are drawn in an accent colour, troughs in a
    neutral grey (light or dark)."""
    c = colour.astype(np.float64)
    return bool(c.max() - c.min() > 60)


def bar_fraction(pixels: np.ndarray) -> float:
    """The fill's share of a bar laid out along axis 1 (``along_axis``)."""
    thick, length = pixels.shape[:2]
    band = pixels[thick // 3: max(thick // 3 + 1, thick - thick // 3)].astype(np.float64)
    profile = band.mean(axis=0)
    trim = min(max(END_TRIM, thick // 2), length // 8)  # a rounded cap is half the bar's thickness
    profile = profile[trim: length - trim] if trim else profile
    n = len(profile)
    # Squared error of one constant colour per run, for every split at once (prefix sums).
    c1 = np.vstack([np.zeros((1, 3)), np.cumsum(profile, axis=0)])
    c2 = np.concatenate([[0.0], np.cumsum((profile ** 2).sum(axis=1))])
    k = np.arange(1, n)
    left = c2[k] - (c1[k] ** 2).sum(axis=1) / k
    right = (c2[n] - c2[k]) - ((c1[n] - c1[k]) ** 2).sum(axis=1) / (n - k)
    best = int(k[np.argmin(left + right)])
    first, second = c1[best] / best, (c1[n] - c1[best]) / (n - best)
    if np.abs(first - second).sum() < MIN_SPLIT:
        return 1.0 if looks_filled(profile.mean(axis=0)) else 0.0
    return best / n


def thumb_fraction(pixels: np.ndarray, surround: np.ndarray) -> float | None:
    """Where the thumb stands on a slider laid out along axis 1, or None where no part of the
    track is clearly thicker than the rest (no thumb to find).

    Thickness is measured on what is joined to the track (a thumb drawn on it; not tick marks or a
    value label beside it) as the span from its first to its last drawn pixel across the track,
    so a hollow or page-coloured knob counts as thick as its outline."""
    drawn = difference(pixels, surround) > INK
    if not drawn.any():
        return None
    track_row = int(np.argmax(drawn.sum(axis=1)))
    _, labels, _ = components(drawn.astype(np.uint8))
    on_track = np.unique(labels[max(0, track_row - 1):track_row + 2][drawn[max(0, track_row - 1):track_row + 2]])
    joined = np.isin(labels, on_track[on_track > 0])
    rows = np.arange(joined.shape[0])[:, None]
    has = joined.any(axis=0)
    first = np.where(joined, rows, joined.shape[0]).min(axis=0)
    last = np.where(joined, rows, -1).max(axis=0)
    thickness = np.where(has, last - first + 1, 0).astype(np.float64)
    length = len(thickness)
    top = thickness.max()
    # The median over every column: a track drawn too faint to see leaves the thumb alone.
    if top < 2 or top < THUMB_OVER_TRACK * max(1.0, float(np.median(thickness))):
        return None
    centre = int(np.argmax(thickness))
    lo = hi = centre
    while lo > 0 and thickness[lo - 1] >= 0.6 * top:
        lo -= 1
    while hi < length - 1 and thickness[hi + 1] >= 0.6 * top:
        hi += 1
    width = hi - lo + 1
    if width >= length - 1:
        return None
    return float(np.clip(lo / (length - width), 0.0, 1.0))


def block_fraction(pixels: np.ndarray, surround: np.ndarray) -> float | None:
    """Where the thumb stands on a slider whose thumb is no thicker than its trough but drawn in
    another colour (Tk's raised block): the one run of the trough's profile that differs from the
    trough's own colour. Only the rows of the trough are looked at (a value or tick labels beside it
    are not), and only its length from its first drawn column to its last."""
    drawn = difference(pixels, surround) > INK
    per_row = drawn.sum(axis=1)
    if not per_row.any():
        return None
    top = int(np.argmax(per_row))
    rows = next(r for r in true_runs(per_row >= 0.6 * per_row.max()) if r[0] <= top <= r[1])
    lo_row, hi_row = rows[0] + (rows[1] - rows[0] >= 3), rows[1] - (rows[1] - rows[0] >= 3)  # not its frame
    cols = np.flatnonzero(drawn[rows[0]:rows[1] + 1].any(axis=0))
    first, last = int(cols[0]), int(cols[-1])
    profile = pixels[lo_row:hi_row + 1, first:last + 1].astype(np.float64).mean(axis=0)
    n = len(profile)
    if n < MIN_LENGTH:
        return None
    trough = np.median(profile, axis=0)
    away = np.abs(profile - trough).sum(axis=1) > MIN_SPLIT
    runs = [r for r in true_runs(away[1:-1], max(2, n // 30)) if r[1] - r[0] + 1 >= 3]
    if not runs:
        return None
    a, b = max(runs, key=lambda r: r[1] - r[0])
    a, b = a + 1, b + 1
    width = b - a + 1
    if width > 0.6 * n:
        return None
    return float(np.clip((a - 1) / max(1, n - 2 - width), 0.0, 1.0))


def _surround(rgb: np.ndarray, box: Sequence[int]) -> np.ndarray:
    """The colour round a box: the most common colour of a 3 px ring outside it."""
    h, w = rgb.shape[:2]
    x1, y1, x2, y2 = (int(v) for v in box)
    ring = []
    xa, xb, ya, yb = max(0, x1), min(w, x2), max(0, y1), min(h, y2)
    for part in (rgb[max(0, y1 - 3):ya, xa:xb], rgb[yb:min(h, y2 + 3), xa:xb],
                 rgb[ya:yb, max(0, x1 - 3):xa], rgb[ya:yb, xb:min(w, x2 + 3)]):
        if part.size:
            ring.append(part.reshape(-1, 3))
    if not ring:
        return background_colour(rgb[max(0, y1):y2, max(0, x1):x2])
    return background_colour(np.concatenate(ring))


def fitted_ends(rgb: np.ndarray, box: Sequence[int], page: np.ndarray) -> tuple[int, int, int, int]:
    """The box with its ends moved out to the bar's: a detector's box may stop short of a bar's
    end, and the value is measured between the ends. Along the middle third of the box's
    thickness, an end goes out while the bar's colour at it goes on, off the page's colour (up to
    ``END_SEARCH`` of the length). Ends are never moved in: a trough can be drawn in nearly the
    page's colour, and on labelled boxes moving in cost more than it won."""
    h, w = rgb.shape[:2]
    x1, y1, x2, y2 = (int(v) for v in box)
    vertical = y2 - y1 > x2 - x1
    lo, hi = (y1, y2) if vertical else (x1, x2)
    pad = max(3, round(END_SEARCH * (hi - lo)))
    a, b = max(0, lo - pad), min(h if vertical else w, hi + pad)
    if vertical:
        third = (x2 - x1) // 3
        band = rgb[a:b, x1 + third:max(x1 + third + 1, x2 - third)].astype(np.int32).mean(axis=1)
    else:
        third = (y2 - y1) // 3
        band = rgb[y1 + third:max(y1 + third + 1, y2 - third), a:b].astype(np.int32).mean(axis=0)
    off = np.abs(band - page.astype(np.float64)).sum(axis=1) > INK  # drawn, not page
    start, end = lo - a, hi - a  # [start, end) in the band

    def near(i: int, j: int) -> bool:
        return bool(np.abs(band[i] - band[j]).sum() <= MIN_SPLIT)

    while start > 0 and off[start - 1] and near(start - 1, start):
        start -= 1
    while end < len(band) and off[end] and near(end, end - 1):
        end += 1
    lo, hi = start + a, end + a
    return (x1, lo, x2, hi) if vertical else (lo, y1, hi, y2)


def level_of(rgb: np.ndarray, element: Element) -> float | None:
    """The value of one slider or progress bar, or None where its box cannot be read."""
    page = _surround(rgb, element.bbox)
    box = fitted_ends(rgb, element.bbox, page)
    pixels = along_axis(rgb, box)
    if pixels is None:
        return None
    surround = page if tuple(box) == tuple(element.bbox) else _surround(rgb, box)
    if element.type == ElementType.SLIDER:
        found = thumb_fraction(pixels, surround)
        if found is None:
            found = block_fraction(pixels, surround)
        if found is not None:
            return round(found, 3)
    return round(bar_fraction(pixels), 3)


def read_levels(rgb: np.ndarray, elements: list[Element]) -> list[Element]:
    """Every slider's and progress bar's ``value`` from its pixels."""
    out = []
    for e in elements:
        if e.type in (ElementType.SLIDER, ElementType.PROGRESS_BAR):
            value = level_of(rgb, e)
            if value is not None and value != e.value:
                e = e.model_copy(update={"value": value})
        out.append(e)
    return out
