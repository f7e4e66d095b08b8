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
from caap.observe.steps.field_ink import BORDER_PX
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


# --- text areas boxed in part -------------------------------------------------------------------------
GROW_SOLID = 0.6      # least share of the panel its colour fills (a view full of text shows less of it)
GROW_SLACK = 6        # px the box may stand out of the panel on a side (the view's frame, the window's edge)
GROW_MAX_SCREEN = 0.95  # a larger region is the window behind a box, not a text view's panel ...
GROW_EDGES = 3         # ... as is one touching this many of the screen's sides
GROW_HOLDS = frozenset({ElementType.TEXT, ElementType.SCROLLBAR, ElementType.TEXT_AREA, ElementType.HYPERLINK})


def _panel_round(rgb: np.ndarray, box: Box, mask: np.ndarray) -> tuple[Box, int] | None:
    """The panel of one colour a text area's box stands on, flooded from the box's own background."""
    x1, y1, x2, y2 = box
    crop = rgb[y1:y2, x1:x2]
    if crop.size == 0:
        return None
    colour = background_colour(crop).astype(np.int16)
    at = np.argwhere(np.abs(crop.astype(np.int16) - colour).max(axis=2) == 0)
    if not len(at):
        return None
    mid = np.array([(y2 - y1) / 2, (x2 - x1) / 2])
    y, x = at[int(np.argmin(np.abs(at - mid).sum(axis=1)))]
    mask[:] = 0
    return _fill(rgb, mask, (x1 + int(x), y1 + int(y)), 1)


def _stands_out(rgb: np.ndarray, panel: Box) -> bool:
    """Whether the rows and columns just outside a panel are mostly of another colour than its own."""
    x1, y1, x2, y2 = panel
    colour = background_colour(rgb[y1:y2, x1:x2]).astype(np.int16)
    ring = [rgb[max(0, y1 - RING_PX):y1, x1:x2], rgb[y2:y2 + RING_PX, x1:x2],
            rgb[y1:y2, max(0, x1 - RING_PX):x1], rgb[y1:y2, x2:x2 + RING_PX]]
    pixels = np.concatenate([r.reshape(-1, 3) for r in ring]).astype(np.int16)
    return bool(len(pixels)) and float((np.abs(pixels - colour).max(axis=1) <= SAME).mean()) <= STANDS_OUT


def grown_text_areas(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Text areas boxed in part, grown to the panel of the view's colour they stand on. The
    detector's boxes reach about 460 px, so it boxes a wider or taller text view in parts, or one
    part only; the caret or the lines outside the box are then lost. A box grows where the panel
    round it is solid, holds nothing but the view's lines, and is no window behind it."""
    todo = [i for i, e in enumerate(elements) if e.type is ElementType.TEXT_AREA]
    if not todo:
        return elements
    rgb = np.array(rgb_pixels(image))  # writable: floodFill takes the image as an output
    h, w = rgb.shape[:2]
    mask = np.zeros((h + 2, w + 2), np.uint8)
    out = list(elements)
    grown: list[int] = []
    for i in todo:
        box = tuple(int(v) for v in out[i].bbox)
        found = _panel_round(rgb, box, mask)  # type: ignore[arg-type]
        if found is None:
            continue
        panel, filled = found
        if (filled < GROW_SOLID * area(panel)
                or area(panel) > GROW_MAX_SCREEN * w * h):
            continue
        if sum((panel[0] == 0, panel[1] == 0, panel[2] >= w, panel[3] >= h)) >= GROW_EDGES \
                or not _stands_out(rgb, panel):
            continue
        if (box[0] < panel[0] - GROW_SLACK or box[1] < panel[1] - GROW_SLACK or box[2] > panel[2] + GROW_SLACK
                or box[3] > panel[3] + GROW_SLACK):
            continue
        inside = [e for k, e in enumerate(elements) if k != i and intersection(e.bbox, panel) > INSIDE * area(e.bbox)]
        if any(e.type not in GROW_HOLDS for e in inside):
            continue
        # The panel's own edge may hold the caret (GTK 4's at the start of a line): its box reaches
        # past the edge by the border that caret and ink reading leave out.
        new = (min(box[0], max(0, panel[0] - BORDER_PX)), min(box[1], max(0, panel[1] - BORDER_PX)),
               max(box[2], min(w, panel[2] + BORDER_PX)), max(box[3], min(h, panel[3] + BORDER_PX)))
        if new != box:
            out[i] = out[i].model_copy(update={"bbox": new})
            grown.append(i)
    # Two parts of one view grow to one box: the more confident stays.
    drop = {j for a in grown for j in grown if j != a and iou(out[a].bbox, out[j].bbox) > HELD
            and ((out[j].score or 0.0), -j) < ((out[a].score or 0.0), -a)}
    return [e for k, e in enumerate(out) if k not in drop]
