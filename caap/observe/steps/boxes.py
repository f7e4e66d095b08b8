"""Boxes cleaned up after the detector (duplicates, rows spanning rows, words boxed in parts), and
box edits shared by several steps (moving boxes to where a fit puts them, cutting them into column
spans)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, as_box, intersection, iou_matrix
from caap.observe.primitives import rgb_pixels
from caap.taxonomy import ElementType


def rebox(image: Image.Image, elements: Sequence[Element], kind: ElementType, max_side: int,
          fit: Callable[[np.ndarray, Box], Box | None]) -> list[Element]:
    """The elements with each ``kind`` box of no side over ``max_side`` px moved to where ``fit``
    (the screenshot's RGB array, the box) puts it; None keeps the box."""
    small = [i for i, e in enumerate(elements) if e.type == kind
             and max(e.bbox[2] - e.bbox[0], e.bbox[3] - e.bbox[1]) <= max_side]
    if not small:
        return list(elements)
    pixels = rgb_pixels(image)
    out = list(elements)
    for i in small:
        box = fit(pixels, out[i].bbox)
        if box is not None and box != out[i].bbox:
            out[i] = out[i].model_copy(update={"bbox": box})
    return out


def cut_across(image: Image.Image, elements: Sequence[Element], chosen: Callable[[Element], bool],
               spans: Callable[[np.ndarray, Box], list[tuple[int, int]] | None]) -> list[Element]:
    """The elements with each ``chosen`` one cut into the column ``spans`` (screen x, exclusive
    ends) found in its box; a part keeps the box's top, bottom, type and score."""
    picked = {i for i, e in enumerate(elements) if chosen(e)}
    if not picked:
        return list(elements)
    pixels = rgb_pixels(image)
    out: list[Element] = []
    for i, e in enumerate(elements):
        parts = spans(pixels, e.bbox) if i in picked else None
        if not parts:
            out.append(e)
            continue
        out += [e.model_copy(update={"bbox": as_box((a, e.bbox[1], b, e.bbox[3]))}) for a, b in parts]
    return out


# The steps that cut, join or add boxes from a box's neighbours act on boxes the observer keeps at its
# default threshold only: low-confidence boxes (kept for evaluation) never change a sure one.
SURE_SCORE = 0.25
MERGE_IOU = 0.7  # boxes overlapping this much cover one thing, whatever class each was given


def merge_duplicates(elements: list[Element], threshold: float = MERGE_IOU) -> list[Element]:
    """Keep the most confident of boxes that cover the same thing (whatever class each was given)."""
    ranked = sorted(elements, key=lambda e: -(e.score or 0.0))
    if len(ranked) < 2:
        return ranked
    overlap = iou_matrix([e.bbox for e in ranked])  # every pair at once: a full-size screen has hundreds of boxes
    kept: list[int] = []
    for i in range(len(ranked)):
        if not kept or overlap[i, kept].max() < threshold:
            kept.append(i)
    return [ranked[i] for i in kept]


WORD_TYPES = (ElementType.TEXT, ElementType.HYPERLINK)
MIN_WORD_OVERLAP_PX = 3  # words on a line stand a space apart: boxes overlapping more are one thing
SAME_LINE = 0.7          # share of the lower box's height two boxes must share to lie on one line


def _one_thing(a: Element, b: Element) -> bool:
    """Two sure boxes of one word class on one line that run into each other."""
    if a.type != b.type or a.type not in WORD_TYPES or min(a.score or 0.0, b.score or 0.0) < SURE_SCORE:
        return False
    shared_y = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    shared_x = min(a.bbox[2], b.bbox[2]) - max(a.bbox[0], b.bbox[0])
    lower = min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1])
    return shared_y >= SAME_LINE * lower and shared_x >= MIN_WORD_OVERLAP_PX


def merge_overlapping_words(elements: list[Element]) -> list[Element]:
    """One box for text or link boxes of one class on one line that overlap: the words of a line
    stand a space apart, so two boxes that run into each other cover one thing the network boxed
    twice, in two parts ("ullamco" and "amcorper" for the link "ullamcorper") or a part inside the
    whole; the reader gets the union and reads it once. The most confident box's score stands."""
    return _merge_pairs(elements, _one_thing)


def _merge_pairs(elements: list[Element], one: Callable[[Element, Element], bool]) -> list[Element]:
    """The elements with every pair ``one`` says is one thing replaced by the more confident of
    the two, boxed as their union (which may reach a third box: it is looked at again)."""
    merged = list(elements)
    i = 0
    while i < len(merged):
        a = merged[i]
        j = next((j for j in range(i + 1, len(merged)) if one(a, merged[j])), None)
        if j is None:
            i += 1
            continue
        b = merged.pop(j)
        box = (min(a.bbox[0], b.bbox[0]), min(a.bbox[1], b.bbox[1]),
               max(a.bbox[2], b.bbox[2]), max(a.bbox[3], b.bbox[3]))
        merged[i] = (a if (a.score or 0.0) >= (b.score or 0.0) else b).model_copy(update={"bbox": box})
    return merged


BAR_TYPES = frozenset({ElementType.SLIDER, ElementType.PROGRESS_BAR, ElementType.SCROLLBAR})
NESTED_SHARE = 0.9  # a bar box this much inside another bar box is part of that bar


def merge_nested_bars(elements: list[Element]) -> list[Element]:
    """One box for a slider, progress bar or scrollbar boxed twice, the whole and a part inside it
    (a scale's trough, or its filled part, boxed again inside the scale). No toolkit draws a bar
    inside a bar, and the outer box is the one that spans the thumb's whole travel, which is where
    the bar's value is read: the inner one goes, whatever its class, where the outer one is at
    least as confident. A less confident box round a bar is more often the bar with its label or a
    neighbour's end, and then the bar's own box stays."""
    bars = [e for e in elements if e.type in BAR_TYPES]
    if len(bars) < 2:
        return elements
    drop = {id(e) for e in bars
            if any(o is not e and area(o.bbox) > area(e.bbox) and (o.score or 0.0) >= (e.score or 0.0)
                   and intersection(e.bbox, o.bbox) >= NESTED_SHARE * area(e.bbox) for o in bars)}
    return [e for e in elements if id(e) not in drop]


SPLIT_EDGE_PX = 6      # px: two halves of one text view share their top and bottom (or sides) this closely ...
SPLIT_OVERLAP_PX = 8   # ... and overlap at least this much


def _halves(a: Element, b: Element) -> bool:
    """Two text-view boxes that are one text view boxed in two overlapping parts, side by side or
    one over the other: no toolkit draws two text views overlapping."""
    if a.type is not ElementType.TEXT_AREA or b.type is not ElementType.TEXT_AREA:
        return False
    (ax1, ay1, ax2, ay2), (bx1, by1, bx2, by2) = a.bbox, b.bbox
    rows = abs(ay1 - by1) <= SPLIT_EDGE_PX and abs(ay2 - by2) <= SPLIT_EDGE_PX
    columns = abs(ax1 - bx1) <= SPLIT_EDGE_PX and abs(ax2 - bx2) <= SPLIT_EDGE_PX
    return ((rows and min(ax2, bx2) - max(ax1, bx1) >= SPLIT_OVERLAP_PX)
            or (columns and min(ay2, by2) - max(ay1, by1) >= SPLIT_OVERLAP_PX))


def merge_split_text_areas(elements: list[Element]) -> list[Element]:
    """One box for a text view the detector boxed in two overlapping halves: it boxes nothing much
    wider than about 460 px (its box head reaches 15 strides either side of an anchor), so an empty
    text view 600-750 px wide comes back as a left and a right box sharing its top and bottom. The
    union is the text view; the more confident half's score stands."""
    return _merge_pairs(elements, _halves)


ROW_TYPES = (ElementType.TABLED_TEXT,)


def drop_spanning_rows(elements: list[Element]) -> list[Element]:
    """Drop a row box that spans two or more rows the detector also found: the network sometimes
    proposes one box over two neighbouring selected list rows ("Theodora Catherine"), and an agent
    clicking it hits whichever row lies under its middle. A box goes when it holds the middles of
    at least two other boxes of its class, each more confident than it, that share most of its
    width (a sure row never goes for the sake of unsure ones below the confidence threshold)."""
    rows = [e for e in elements if e.type in ROW_TYPES]
    if len(rows) < 3:
        return elements
    drop: set[int] = set()
    for e in rows:
        x1, y1, x2, y2 = e.bbox
        held = [r for r in rows if r is not e and (r.score or 0.0) >= (e.score or 0.0)
                and y1 < (r.bbox[1] + r.bbox[3]) / 2 < y2
                and min(x2, r.bbox[2]) - max(x1, r.bbox[0]) >= 0.5 * min(x2 - x1, r.bbox[2] - r.bbox[0])]
        if len(held) >= 2:
            drop.add(id(e))
    return [e for e in elements if id(e) not in drop]
