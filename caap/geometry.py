"""Coordinate conventions shared by every stage.

A box is ``(x1, y1, x2, y2)`` in integer pixels of the *captured image*: ``(x1, y1)`` is the
top-left pixel inside the box and ``(x2, y2)`` the first pixel past its bottom-right corner, so
``width = x2 - x1``. The centre used for clicking and for the prompt is the integer floor of the
midpoint; a click on an element that another of its type covers in part goes to the middle of the
band of its box that the other leaves (``uncovered_part``, ``caap.elements.click_point``). Mapping
captured-image pixels to OS input coordinates is the executor's business and happens in exactly
one place (the screen mapping), never here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Box = tuple[int, int, int, int]


def as_box(values: Sequence[float]) -> Box:
    """Round a 4-sequence to an integer box, checking that it is well formed."""
    if len(values) != 4:
        raise ValueError(f"a box needs 4 numbers [x1, y1, x2, y2], got {len(values)}")
    x1, y1, x2, y2 = (round(float(v)) for v in values)
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"box {[x1, y1, x2, y2]} is empty: x2 must exceed x1 and y2 exceed y1")
    return (x1, y1, x2, y2)


def centre(box: Box) -> tuple[int, int]:
    return ((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)


def area(box: Box) -> int:
    return max(0, box[2] - box[0]) * max(0, box[3] - box[1])


def intersection(a: Box, b: Box) -> int:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0


def iou(a: Box, b: Box) -> float:
    inter = intersection(a, b)
    if inter == 0:
        return 0.0
    return inter / float(area(a) + area(b) - inter)


def iou_matrix(boxes: Sequence[Box]) -> np.ndarray:
    """The IoU of every pair of ``boxes`` (n × n floats), as ``iou`` gives it for one pair."""
    return iou_between(boxes, boxes)


def iou_between(first: Sequence[Box], second: Sequence[Box]) -> np.ndarray:
    """The IoU of every box of ``first`` with every box of ``second`` (m × n floats)."""
    a = np.array(first, dtype=np.int64).reshape(-1, 4)
    b = np.array(second, dtype=np.int64).reshape(-1, 4)
    w = np.minimum(a[:, None, 2], b[None, :, 2]) - np.maximum(a[:, None, 0], b[None, :, 0])
    h = np.minimum(a[:, None, 3], b[None, :, 3]) - np.maximum(a[:, None, 1], b[None, :, 1])
    inter = np.where((w > 0) & (h > 0), w * h, 0)
    area_a = np.maximum(0, a[:, 2] - a[:, 0]) * np.maximum(0, a[:, 3] - a[:, 1])
    area_b = np.maximum(0, b[:, 2] - b[:, 0]) * np.maximum(0, b[:, 3] - b[:, 1])
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(inter > 0, inter / np.maximum(union, 1), 0.0)


def uncovered_part(box: Box, other: Box) -> Box:
    """The largest band of ``box`` that ``other`` does not reach (left, right, above or below it);
    ``box`` itself when they do not overlap or ``other`` covers it across."""
    if intersection(box, other) == 0:
        return box
    bands = [(box[0], box[1], min(box[2], other[0]), box[3]), (max(box[0], other[2]), box[1], box[2], box[3]),
             (box[0], box[1], box[2], min(box[3], other[1])), (box[0], max(box[1], other[3]), box[2], box[3])]
    best = max(bands, key=area)
    return best if area(best) > 0 else box


def grow(box: Box, by: int, width: int, height: int) -> Box:
    """``box`` grown by ``by`` px on every side, inside a ``width`` × ``height`` screen."""
    return (max(0, int(box[0]) - by), max(0, int(box[1]) - by), min(width, int(box[2]) + by),
            min(height, int(box[3]) + by))


def intersect(a: Box, b: Box) -> Box | None:
    """The box two boxes share; None when they share no pixel."""
    x1, y1, x2, y2 = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    return (x1, y1, x2, y2) if x2 > x1 and y2 > y1 else None


def clip(box: Box, width: int, height: int) -> Box | None:
    """Clip a box to an image of the given size; None when nothing of it is left."""
    return intersect(box, (0, 0, width, height))


def contains(box: Box, x: int, y: int) -> bool:
    return box[0] <= x < box[2] and box[1] <= y < box[3]


# --- captured image ↔ OS input -------------------------------------------------------------------
# The one place where captured-image pixels become OS input coordinates. A capture covers a region
# whose top-left corner sits at ``(left, top)`` in the OS's virtual-screen coordinates (the unit
# mouse input uses; with several monitors the origin of each monitor is part of it and may be
# negative). ``scale`` is image pixels per OS unit: 1 on ordinary screens, 2 on Retina/HiDPI where
# the capture has twice the pixels of the logical screen.


@dataclass(frozen=True)
class ScreenMapping:
    """Maps captured-image pixels to OS input coordinates and back."""

    left: float
    top: float
    scale: float = 1.0

    def __post_init__(self) -> None:
        if self.scale <= 0:
            raise ValueError(f"scale must be positive, got {self.scale}")

    def to_os(self, x: float, y: float) -> tuple[int, int]:
        """Image pixel (x, y) → OS input point. A pixel's centre decides which OS unit it falls in,
        so on a 2x capture image pixels 10 and 11 both map to OS unit 5."""
        return (math.floor(self.left + (x + 0.5) / self.scale), math.floor(self.top + (y + 0.5) / self.scale))

    def to_image(self, ox: float, oy: float) -> tuple[int, int]:
        """OS input point → an image pixel inside that OS unit (its centre, rounded down)."""
        return (math.floor((ox - self.left + 0.5) * self.scale), math.floor((oy - self.top + 0.5) * self.scale))
