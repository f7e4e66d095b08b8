"""Lines of text the detector missed, found by PP-OCR's text detector where no box stands.

The detector misses whole lines of text it never learned to see that way: the names in
navigate-tree's file tree, the axis labels of grid-coordinate, the letters inside click-shape's
figures, most rows of a Qt list view. PP-OCR's text detector (the DB network in the ``rapidocr``
wheel, which the observer loads for reading anyway) finds text of any kind. Run on a whole 1080p
screen it takes seconds, so ``missed_lines`` runs it only where something is drawn that no box
holds: the screen's edges (steps between neighbouring pixels: glyph strokes, outlines) outside
every box, less long straight runs (frames, rules), are grouped into regions, and the detector
reads each region on its own, enlarged (about 0.8 s for a 1080p desktop seen the first time; a
region's lines are remembered by its pixels, so a screen seen before costs about 50 ms). Each
line it finds, fitted to its ink, that no box overlaps and that PP-OCR's recogniser reads as
letters or digits, and sure of them, becomes a text element.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, as_box, intersection
from caap.observe.primitives import fit_to_ink, rgb_pixels
from caap.taxonomy import TEXT_ELEMENT_TYPES, ElementType

if TYPE_CHECKING:
    from caap.observe.ocr.ppocr import PPOCR

EDGE = 40                 # largest channel step between neighbours that counts as an edge
STRAIGHT = 40             # px: an edge running straight this long is a line, not a glyph
GROUP = (5, 11)           # px (rows, columns): edges this near each other belong to one region
MIN_REGION_HEIGHT = 9     # px, grouping included: flatter regions are rules and borders
MAX_REGION_AREA = 120_000  # px²: larger regions are pictures and panels, not lines of text
MARGIN = 4                # px of screen kept round each region
SCALE = 3.0               # each region is enlarged this much for the detector (UI text is small)
LINE_HEIGHT = (6, 48)     # px: a fitted line's height
MIN_WIDTH = 4             # px
MIN_CONFIDENCE = 0.8      # the recogniser's confidence in a new line's reading
TAKEN = 0.2               # a line this much of which a box covers is that box's (or its part)


def _edges(rgb: np.ndarray) -> np.ndarray:
    """Pixels that differ from their right or lower neighbour by more than EDGE in some channel."""
    import cv2  # the vision extra's

    def steps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        d = cv2.absdiff(np.ascontiguousarray(a), np.ascontiguousarray(b))
        # np.maximum over the channel planes: a reduction over axis 2 is ten times slower here
        return np.maximum(np.maximum(d[:, :, 0], d[:, :, 1]), d[:, :, 2]) > EDGE

    edge = np.zeros(rgb.shape[:2], np.uint8)
    edge[:, 1:] = steps(rgb[:, 1:], rgb[:, :-1])
    edge[1:] |= steps(rgb[1:], rgb[:-1]).astype(np.uint8)
    return edge


def uncovered_regions(rgb: np.ndarray, boxes: Sequence[Box]) -> list[Box]:
    """Regions of the screen where something is drawn outside every box: groups of edges, each
    with a MARGIN px border, large pictures and thin rules left out."""
    import cv2  # the vision extra's

    edges = _edges(rgb)
    for x1, y1, x2, y2 in boxes:
        edges[max(0, y1):max(0, y2), max(0, x1):max(0, x2)] = 0
    if not edges.any():
        return []
    # Long straight runs are frames, rules and grid lines: left in, they join a list's rows, its
    # frame and the panel round it into one region too large to look at.
    across = cv2.morphologyEx(edges, cv2.MORPH_OPEN, np.ones((1, STRAIGHT), np.uint8))
    down = cv2.morphologyEx(edges, cv2.MORPH_OPEN, np.ones((STRAIGHT, 1), np.uint8))
    edges[(across > 0) | (down > 0)] = 0
    grouped = cv2.dilate(edges, np.ones(GROUP, np.uint8))
    _, _, stats, _ = cv2.connectedComponentsWithStats(grouped, connectivity=8)
    h, w = rgb.shape[:2]
    regions = []
    for x, y, bw, bh, _ in stats[1:].tolist():
        if bh < MIN_REGION_HEIGHT or bw * bh > MAX_REGION_AREA:
            continue
        regions.append((max(0, x - MARGIN), max(0, y - MARGIN), min(w, x + bw + MARGIN), min(h, y + bh + MARGIN)))
    return regions


def missed_lines(image: Image.Image, elements: Sequence[Element], ocr: PPOCR) -> list[Element]:
    """The elements with a text element added for every line of text PP-OCR's detector finds where
    no box stands (see the module's docstring); new elements get the lowest score of the others."""
    rgb = rgb_pixels(image)
    if min(rgb.shape[:2]) < MIN_REGION_HEIGHT:
        return list(elements)  # too small to hold a line of text
    regions = uncovered_regions(rgb, [e.bbox for e in elements])
    if not regions:
        return list(elements)
    held = list(elements)
    score = min((e.score or 0.0 for e in elements), default=0.25)
    found = ocr.region_lines(rgb, regions, SCALE)
    for (rx1, ry1, rx2, ry2), lines in zip(regions, found, strict=True):
        for lx1, ly1, lx2, ly2 in lines:
            line = (max(rx1, rx1 + int(lx1)), max(ry1, ry1 + int(ly1)),
                    min(rx2, rx1 + int(np.ceil(lx2))), min(ry2, ry1 + int(np.ceil(ly2))))
            if line[2] - line[0] >= MIN_WIDTH and line[3] - line[1] >= LINE_HEIGHT[0]:
                new = _line_element(rgb, line, held, score)
                if new is not None:
                    held.append(new)
    added = held[len(elements):]
    if not added:
        return held
    # What the detector takes for a line may be no text (a card's shadowed edge, a button's end):
    # a line stays where PP-OCR's recogniser reads a letter or digit in it, sure enough.
    read = ocr.read(image, [e.bbox for e in added], [e.type.value for e in added])
    return [*elements, *(e for e, got in zip(added, read, strict=True)
                         if got.confidence >= MIN_CONFIDENCE and any(ch.isalnum() for ch in got.text))]


def _line_element(rgb: np.ndarray, line: Box, held: Sequence[Element], score: float) -> Element | None:
    """A text element for ``line`` fitted to its ink; None where it is too small or tall for a line
    of text or a box holds part of it. A box across the line's height at one of its ends is cut off
    first where it is a picture or a control (an icon before a name); where it is text, the line
    is that text's own, cut by its box (``caap.observe.steps.snap`` grows text boxes to their words)."""
    x1, y1, x2, y2 = line
    for e in held:
        b = e.bbox
        if min(y2, b[3]) - max(y1, b[1]) < 0.5 * (y2 - y1) or b[2] <= x1 or b[0] >= x2:
            continue
        half = (b[2] - b[0]) / 2
        at_start, at_end = b[0] - x1 < half and b[2] < x2, x2 - b[2] < half and b[0] > x1
        if (at_start or at_end) and e.type in TEXT_ELEMENT_TYPES:
            return None
        if at_start:
            x1 = b[2]
        elif at_end:
            x2 = b[0]
    if x2 - x1 < MIN_WIDTH:
        return None
    fitted = fit_to_ink(rgb, (x1, y1, x2, y2))
    if fitted is None:
        return None
    fw, fh = fitted[2] - fitted[0], fitted[3] - fitted[1]
    if fw < MIN_WIDTH or not LINE_HEIGHT[0] <= fh <= LINE_HEIGHT[1]:
        return None
    if any(intersection(fitted, e.bbox) > TAKEN * fw * fh for e in held):
        return None
    return Element(type=ElementType.TEXT, bbox=as_box(fitted), score=score)
