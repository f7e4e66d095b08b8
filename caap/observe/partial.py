"""A partial look: a screen that changed only in part is looked at again only where it changed.

After most actions the screen is mostly what it was: a box is ticked, a menu drops down, a dialog
opens over the window. The observer keeps its last look (the screen's pixels and its elements), and
on the next screen of the same size ``plan`` finds where the pixels differ:

1. changed pixels are grouped into regions (pixels ``GROUP`` px apart or nearer are one region);
2. every element of the last look that a region touches is dropped, and the region grows to hold
   it whole (a field whose value changed is read again whole), until no kept element touches one;
3. each region, with ``CONTEXT`` px of the unchanged screen round it (frames, the panel's colour), is
   cut out as a screen of its own; regions whose cut-outs overlap become one.

The pipeline's steps after the detector run on each cut-out, with the detector's boxes that fall in
it, as on a whole screen; the observation is the kept elements and the new ones centred in a region
(``new_in_region``: not in its context, which kept elements hold).
Where the regions hold more than ``max_changed`` of the screen the whole screen is looked at: a
new page, a scroll. The steps are local (each reads the pixels round an element), so a region
seen as a screen of its own reads as it does within the whole: ``tools/partial_look_ab.py``
compares the two on labelled screen pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from caap.elements import Element
from caap.geometry import Box, iou_between

GROUP = 16      # px: changed pixels this near each other are one region
CONTEXT = 24    # px of unchanged screen round a region that its cut-out shows
SAME_IOU = 0.5  # a new element overlapping a kept one this much is that one, found again at the edge
SAME_BOX = 0.85  # a box of the detector's on two screens overlapping this much, of one class, is one box


@dataclass(frozen=True)
class Plan:
    """What a partial look looks at: the cut-outs (screen boxes); for each, its region, the changed
    boxes in it (an element of the cut-out centred in one of them is new); and the last look's
    elements kept (their indices)."""

    cutouts: tuple[Box, ...]
    regions: tuple[tuple[Box, ...], ...]
    kept: tuple[int, ...]


def changed_boxes(before: np.ndarray, after: np.ndarray) -> list[Box]:
    """Boxes round the groups of pixels that differ between two screens of one size (``GROUP``)."""
    import cv2  # the vision extra's

    if before.shape != after.shape:
        raise ValueError(f"screens of different sizes: {before.shape} and {after.shape}")
    diff = before != after
    changed = (diff.any(axis=2) if diff.ndim == 3 else diff).astype(np.uint8)
    if not changed.any():
        return []
    grouped = cv2.dilate(changed, np.ones((GROUP, GROUP), np.uint8))
    count, labels = cv2.connectedComponents(grouped, connectivity=8)
    ys, xs = np.nonzero(changed)
    group = labels[ys, xs].astype(np.int64)
    # Each group's box is that of its changed pixels (the dilation only joined them).
    x1 = np.full(count, changed.shape[1], np.int64)
    y1 = np.full(count, changed.shape[0], np.int64)
    x2 = np.zeros(count, np.int64)
    y2 = np.zeros(count, np.int64)
    np.minimum.at(x1, group, xs)
    np.minimum.at(y1, group, ys)
    np.maximum.at(x2, group, xs + 1)
    np.maximum.at(y2, group, ys + 1)
    return [(int(x1[g]), int(y1[g]), int(x2[g]), int(y2[g])) for g in range(1, count)]


def detector_changes(before: Sequence[Element], after: Sequence[Element]) -> list[Box]:
    """Where the detector's boxes on two screens differ: each box of either screen that the other
    has not (of its class, ``SAME_BOX``), joined with the other screen's boxes it overlaps."""
    if not before or not after:
        return [e.bbox for e in (*before, *after)]
    a = np.array([e.bbox for e in before], np.int64)
    b = np.array([e.bbox for e in after], np.int64)
    same = (iou_between([e.bbox for e in after], [e.bbox for e in before]) >= SAME_BOX) \
        & (np.array([e.type for e in after])[:, None] == np.array([e.type for e in before])[None, :])
    touch = _touch(b, a)
    out = []
    for boxes, others, matched, touching in ((b, a, same.any(axis=1), touch), (a, b, same.any(axis=0), touch.T)):
        for i in np.flatnonzero(~matched):
            group = np.vstack([boxes[i:i + 1], others[touching[i]]])
            out.append((int(group[:, 0].min()), int(group[:, 1].min()), int(group[:, 2].max()), int(group[:, 3].max())))
    return out


def _touch(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Whether each of ``boxes`` (n × 4) shares pixels with each of ``others`` (m × 4): n × m."""
    return (boxes[:, None, 0] < others[None, :, 2]) & (others[None, :, 0] < boxes[:, None, 2]) \
        & (boxes[:, None, 1] < others[None, :, 3]) & (others[None, :, 1] < boxes[:, None, 3])


def _touching(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """For each of ``boxes`` (n × 4), whether it shares pixels with any of ``others`` (m × 4)."""
    if not len(boxes) or not len(others):
        return np.zeros(len(boxes), bool)
    return np.asarray(_touch(boxes, others).any(axis=1), bool)


def _clipped(boxes: Sequence[Sequence[int]], w: int, h: int) -> np.ndarray:
    """Boxes (n × 4) clipped to a w × h screen; those left empty are zero-sized, not dropped."""
    a = np.array(boxes, np.int64).reshape(-1, 4)
    a[:, [0, 2]] = a[:, [0, 2]].clip(0, w)
    a[:, [1, 3]] = a[:, [1, 3]].clip(0, h)
    return a


def plan(changed: Sequence[Box], elements: Sequence[Element], size: tuple[int, int],
         detected: Sequence[Element] = ()) -> Plan:
    """Where a screen of ``size`` (width, height) must be looked at again, given the boxes round its
    ``changed`` pixels (``changed_boxes``, ``detector_changes``), the last look's ``elements`` and
    the detector's boxes on the new screen (``detected``): the changed boxes grown by every element
    of the last look and every box detected now that one touches, the cut-outs round them, and the
    last look's elements kept."""
    import cv2  # the vision extra's

    w, h = size
    frontier = _clipped(changed, w, h)
    dirty = [frontier]
    olds = _clipped([e.bbox for e in elements], w, h)
    news = _clipped([e.bbox for e in detected], w, h)
    dropped = np.zeros(len(olds), bool)
    taken = np.zeros(len(news), bool)
    while len(frontier):
        grown = []
        for boxes, done in ((olds, dropped), (news, taken)):
            hit = ~done & _touching(boxes, frontier)
            done |= hit
            grown.append(boxes[hit])
        frontier = np.vstack(grown)
        dirty.append(frontier)
    boxes = np.vstack(dirty)
    boxes = boxes[(boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])]
    kept = tuple(int(i) for i in np.flatnonzero(~dropped))
    if not len(boxes):
        return Plan((), (), kept)
    # Changed boxes whose cut-outs would overlap are one cut-out: two looks would find one element twice.
    mask = np.zeros((h, w), np.uint8)
    for x1, y1, x2, y2 in boxes.tolist():
        mask[max(0, y1 - CONTEXT):y2 + CONTEXT, max(0, x1 - CONTEXT):x2 + CONTEXT] = 1
    _, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    groups: dict[int, list[Box]] = {}
    for x1, y1, x2, y2 in boxes.tolist():
        groups.setdefault(int(labels[y1, x1]), []).append((x1, y1, x2, y2))
    cutouts, regions = [], []
    for label in sorted(groups):
        x, y, bw, bh, _ = stats[label].tolist()
        cutouts.append((x, y, x + bw, y + bh))
        regions.append(tuple(dict.fromkeys(groups[label])))
    return Plan(tuple(cutouts), tuple(regions), kept)


def shifted(element: Element, dx: int, dy: int) -> Element:
    """The element moved by (dx, dy) px."""
    x1, y1, x2, y2 = element.bbox
    return element.model_copy(update={"bbox": (x1 + dx, y1 + dy, x2 + dx, y2 + dy)})


def cut_to(element: Element, cutout: Box) -> Element:
    """A screen element as the cut-out sees it: its box in the cut-out's pixels, clipped to them."""
    x1, y1, x2, y2 = element.bbox
    w, h = cutout[2] - cutout[0], cutout[3] - cutout[1]
    box = (min(max(0, x1 - cutout[0]), w), min(max(0, y1 - cutout[1]), h),
           min(max(0, x2 - cutout[0]), w), min(max(0, y2 - cutout[1]), h))
    return element.model_copy(update={"bbox": box})


def new_in_region(found: Sequence[Element], cutout: Box, region: Sequence[Box],
                  kept: Sequence[Element]) -> list[int]:
    """Which of a cut-out's elements (boxes in the cut-out's pixels) are new: centred in one of its
    changed boxes (``region``, screen boxes), not elsewhere in it (kept elements hold the rest), and
    not a kept element found again."""
    if not found:
        return []
    boxes = [(x1 + cutout[0], y1 + cutout[1], x2 + cutout[0], y2 + cutout[1]) for x1, y1, x2, y2 in
             (e.bbox for e in found)]
    at = np.array(boxes, np.float64)
    cx, cy = (at[:, 0] + at[:, 2]) / 2, (at[:, 1] + at[:, 3]) / 2
    r = np.array(region, np.float64).reshape(-1, 4)
    centred = ((r[None, :, 0] <= cx[:, None]) & (cx[:, None] < r[None, :, 2])
               & (r[None, :, 1] <= cy[:, None]) & (cy[:, None] < r[None, :, 3])).any(axis=1)
    again = (iou_between(boxes, [k.bbox for k in kept]) >= SAME_IOU).any(axis=1) if kept \
        else np.zeros(len(boxes), bool)
    return [int(i) for i in np.flatnonzero(centred & ~again)]


def area_share(boxes: Sequence[Box], width: int, height: int) -> float:
    """The share of a width × height screen the boxes' areas come to (where cut-outs overlap, the
    pixels the steps go through twice count twice)."""
    return sum((x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in boxes) / max(1, width * height)
