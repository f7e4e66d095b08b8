"""Text areas found as the panel their lines stand on.

A toolkit's multi-line text field (Qt's QTextEdit, GTK's GtkTextView) is a rectangle of the field
colour (white on a grey window) with its text from the top. The detector boxes its lines but often
not the field: it never saw many, and an area with one short line looks like anything. The panel
is easy to see from the lines: the colour behind a line, followed outwards, fills a rectangle that
stands out of the window round it. ``framed_text_areas`` takes such a rectangle as a text area where
it is at least 100 × 50 px, holds nothing but lines of text (a list's rows, buttons or fields
inside make it a list or a form), its first line starts near its top, and it holds one or two
lines or a paragraph that fills it (several short lines in a panel are a list's or a menu's).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection, iou
from caap.observe.primitives import background_colour, rgb_pixels
from caap.taxonomy import ElementType

SAME = 4              # largest channel difference that is still the panel's colour
MIN_SIZE = (100, 50)  # px
SOLID = 0.75          # least share of its box the panel's colour fills (a rectangle, not a shape; the
                      # lines' glyphs take the rest)
MAX_SCREEN = 0.4      # larger panels are the page or a window, not a field
STANDS_OUT = 0.5      # at most this share of the rows just above the panel is its colour
RING_PX = 3           # ... looked at this many px above it
FIRST_LINE_PX = 14    # the first line's top lies this near the panel's top
FEW_LINES = 2         # a field holding more lines than this holds a wrapped paragraph ...
DENSE = 0.85          # ... and its colour shows through at most this share of it (the lines fill it)
INSIDE = 0.5          # a box this much inside the panel is in it
HELD = 0.5            # IoU with a box that already is the area
MAX_REGIONS = 254     # regions flooded on one screen (floodFill's mask holds 8-bit labels)
ALLOWED = frozenset({ElementType.TEXT, ElementType.SCROLLBAR})


def _fill(rgb: np.ndarray, mask: np.ndarray, seed: tuple[int, int], label: int) -> tuple[Box, int]:
    """Flood the region of the seed pixel's colour into ``mask`` as ``label``: its box and size."""
    import cv2  # the vision extra's

    flags = 4 | cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (label << 8)
    filled, _, _, (x, y, bw, bh) = cv2.floodFill(rgb, mask, seed, (0, 0, 0), (SAME,) * 3, (SAME,) * 3, flags)
    return (x, y, x + bw, y + bh), int(filled)


def _is_panel(rgb: np.ndarray, panel: Box, filled: int, colour: np.ndarray) -> bool:
    h, w = rgb.shape[:2]
    px1, py1, px2, py2 = panel
    pw, ph = px2 - px1, py2 - py1
    if pw < MIN_SIZE[0] or ph < MIN_SIZE[1] or filled < SOLID * pw * ph or pw * ph > MAX_SCREEN * w * h:
        return False
    if px1 == 0 or py1 == 0 or px2 >= w or py2 >= h:
        return False  # runs off the screen: the page itself
    above = rgb[max(0, py1 - RING_PX):py1, px1:px2].reshape(-1, 3).astype(np.int16)
    return bool(len(above)) and (np.abs(above - colour).max(axis=1) <= SAME).mean() <= STANDS_OUT


def framed_text_areas(image: Image.Image, elements: list[Element]) -> list[Element]:
    """The elements with a text area added for every panel of text lines (see the module's
    docstring) no box already is."""
    lines = sorted((e for e in elements if e.type is ElementType.TEXT), key=lambda e: (e.bbox[1], e.bbox[0]))
    if not lines:
        return elements
    # Writable: floodFill takes the image as an output, though it fills the mask only.
    rgb = np.array(rgb_pixels(image))
    h, w = rgb.shape[:2]
    out = list(elements)
    mask = np.zeros((h + 2, w + 2), np.uint8)  # floodFill's: each region filled once, by its label
    regions: list[tuple[Box, int]] = []
    seen: list[Box] = []
    for line in lines:
        x1, y1, x2, y2 = line.bbox
        if any(intersection(line.bbox, s) > 0 for s in seen):
            continue
        crop = rgb[y1:y2, x1:x2]
        colour = background_colour(crop).astype(np.int16)
        at = np.argwhere(np.abs(crop.astype(np.int16) - colour).max(axis=2) == 0)
        if not len(at):
            continue
        seed = (x1 + int(at[0][1]), y1 + int(at[0][0]))
        label = int(mask[seed[1] + 1, seed[0] + 1])
        if label == 0:
            if len(regions) == MAX_REGIONS:
                continue
            regions.append(_fill(rgb, mask, seed, len(regions) + 1))
            label = len(regions)
        panel, filled = regions[label - 1]
        if not _is_panel(rgb, panel, filled, colour):
            continue
        seen.append(panel)
        inside = [e for e in elements if intersection(e.bbox, panel) > INSIDE * area(e.bbox)]
        if any(e.type not in ALLOWED for e in inside):
            continue
        texts = [e for e in inside if e.type is ElementType.TEXT]
        if min(e.bbox[1] for e in texts) - panel[1] > FIRST_LINE_PX:
            continue
        if len(texts) > FEW_LINES and filled > DENSE * area(panel):
            continue  # several short lines with room round them: a list's rows, a menu's items
        box = (max(0, panel[0] - 1), max(0, panel[1] - 1), min(w, panel[2] + 1), min(h, panel[3] + 1))
        if all(iou(box, e.bbox) <= HELD for e in out):
            out.append(Element(type=ElementType.TEXT_AREA, bbox=box, score=min(e.score or 0.0 for e in elements)))
    return out
