"""Straight lines drawn at a slant: the arms of a plotted angle, a line between two points.

A page that draws with lines (an SVG ``<line>``: bisect-angle's two arms, right-angle's) gives each
its own element, boxed by its two ends. The detector never learned them and sees only the dots at
their ends. ``drawn_lines`` finds them with a probabilistic Hough transform on the screen's ink
outside the boxes already found (a dot's small box stays looked at: the arms run through their
dots), keeps the slanted ones (borders, rules, underlines and bars run level or upright), joins
the pieces of one line, and keeps a line that is drawn along its whole length, thin (blank a few
px to both sides) and not a side of an outline (a polygon's sides turn a corner at both ends; an
angle's arm ends free, or in a dot).
"""

from __future__ import annotations

import math

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, iou
from caap.observe.primitives import page_ink
from caap.taxonomy import ElementType

MIN_LENGTH = 30          # px
MAX_GAP = 3              # px a line may break (anti-aliasing) and stay one line
VOTES = 20               # Hough accumulator threshold
SLANT = (3.0, 87.0)      # degrees from level: outside it a line is a border, rule or bar
SAME_ANGLE = 4.0         # degrees: two pieces this close in angle ...
SAME_LINE_PX = 3.0       # ... whose middle lies this near the other's line are one line
DRAWN = 0.9              # least share of the points along a line that are ink
BESIDE_PX = (4, 2)       # px to either side of a line looked at ...
BESIDE_INK = (0.3, 0.5)  # ... at most this share of them ink (a thin line, not an edge of a patch)
CORNER_PX = 9            # px: the circle round a line's end where an outline's next side shows
                         # (past the dot a point is drawn as)
BACK_ARC = 30            # degrees each side of the line's own way in, left out of that circle
AHEAD_ARC = 45           # degrees each side of straight on, left out too (the dot the line ends in)
CORNER_INK = 2           # inked points on the rest of the circle that make a corner
THICK_PX = 4             # px: ink this thick all round is a patch, not a line
SMALL_BOX = 400          # px²: boxes up to this size (dots, markers) stay looked through
HELD = 0.5               # IoU with a box that already holds the line


Segment = tuple[int, int, int, int]


def _pieces(ink: np.ndarray) -> list[Segment]:
    import cv2  # the vision extra's

    # Only thin ink can hold a thin line: filled panels (half a dark desktop) would give the
    # transform thousands of pieces to return.
    thick = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((THICK_PX, THICK_PX), np.uint8))
    thin = ink & (1 - thick)
    found = cv2.HoughLinesP(thin * 255, 1, np.pi / 180, threshold=VOTES, minLineLength=MIN_LENGTH, maxLineGap=MAX_GAP)
    if found is None:
        return []
    pieces = []
    for x1, y1, x2, y2 in found.reshape(-1, 4).tolist():
        slant = math.degrees(math.atan2(abs(y2 - y1), abs(x2 - x1)))
        if SLANT[0] <= slant <= SLANT[1]:
            pieces.append((x1, y1, x2, y2))
    return pieces


def _joined(pieces: list[Segment]) -> list[Segment]:
    """Pieces of one straight line joined end to end, the longest pieces first."""
    lines: list[Segment] = []
    for p in sorted(pieces, key=lambda s: -math.hypot(s[2] - s[0], s[3] - s[1])):
        angle = math.atan2(p[3] - p[1], p[2] - p[0]) % math.pi
        mx, my = (p[0] + p[2]) / 2, (p[1] + p[3]) / 2
        for k, (x1, y1, x2, y2) in enumerate(lines):
            length = math.hypot(x2 - x1, y2 - y1)
            turn = abs(angle - math.atan2(y2 - y1, x2 - x1) % math.pi)
            off = abs((x2 - x1) * (y1 - my) - (x1 - mx) * (y2 - y1)) / length
            if min(turn, math.pi - turn) > math.radians(SAME_ANGLE) or off > SAME_LINE_PX:
                continue
            ux, uy = (x2 - x1) / length, (y2 - y1) / length
            ends = [(x1, y1), (x2, y2), (p[0], p[1]), (p[2], p[3])]
            along = [(ex - x1) * ux + (ey - y1) * uy for ex, ey in ends]
            first, last = ends[int(np.argmin(along))], ends[int(np.argmax(along))]
            lines[k] = (first[0], first[1], last[0], last[1])
            break
        else:
            lines.append(p)
    return lines


def _points(ink: np.ndarray, line: Segment, offset: float = 0.0) -> np.ndarray:
    """Ink (0/1) at the points of ``line`` shifted ``offset`` px square to it."""
    x1, y1, x2, y2 = line
    n = max(abs(x2 - x1), abs(y2 - y1)) + 1
    angle = math.atan2(y2 - y1, x2 - x1)
    h, w = ink.shape
    xs = np.clip(np.round(np.linspace(x1, x2, n) - offset * math.sin(angle)).astype(int), 0, w - 1)
    ys = np.clip(np.round(np.linspace(y1, y2, n) + offset * math.cos(angle)).astype(int), 0, h - 1)
    return ink[ys, xs]


def _along(ink: np.ndarray, line: Segment, offset: float = 0.0) -> float:
    return float(_points(ink, line, offset).mean())


def _is_line(ink: np.ndarray, line: Segment) -> bool:
    # The joined ends may lie a pixel off the drawn line: a point within 1 px of it counts.
    drawn = np.maximum(np.maximum(_points(ink, line, -1), _points(ink, line)), _points(ink, line, 1))
    if drawn.mean() < DRAWN:
        return False
    return all(max(_along(ink, line, d), _along(ink, line, -d)) <= most
               for d, most in zip(BESIDE_PX, BESIDE_INK, strict=True))


def _turns_on(ink: np.ndarray, end: tuple[int, int], back: float) -> bool:
    """Whether ink leads on from a line's ``end`` in a new direction: a corner of an outline. Looked
    at on a circle round the end, less the arc the line itself comes in by (``back``, radians) and
    the arc straight on (a dot at the end, a line running on)."""
    h, w = ink.shape
    angles = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    turn = np.abs((angles - back + math.pi) % (2 * math.pi) - math.pi)  # 0: back along the line
    off = (turn > math.radians(BACK_ARC)) & (turn < math.pi - math.radians(AHEAD_ARC))
    xs = np.round(end[0] + CORNER_PX * np.cos(angles[off])).astype(int)
    ys = np.round(end[1] + CORNER_PX * np.sin(angles[off])).astype(int)
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    return int(ink[ys[inside], xs[inside]].sum()) >= CORNER_INK


def drawn_lines(image: Image.Image, elements: list[Element], ink: np.ndarray | None = None) -> list[Element]:
    """The elements with a shape added for every slanted line drawn on the screen that no box holds
    (see the module's docstring). ``ink``: the screen's ``page_ink`` where the caller has it."""
    ink = page_ink(image) if ink is None else ink
    free = ink.copy()  # searched: the ink outside the boxes; judged: all of it
    for e in elements:
        if area(e.bbox) > SMALL_BOX:
            x1, y1, x2, y2 = e.bbox
            free[max(0, y1):y2, max(0, x1):x2] = 0
    lines = _joined(_pieces(free))
    if not lines:
        return list(elements)
    import cv2  # the vision extra's

    wide = cv2.dilate(ink, np.ones((3, 3), np.uint8))  # a 1 px side crossing the corner circle is seen
    h, w = ink.shape
    out = list(elements)
    score = min((e.score or 0.0 for e in elements), default=0.25)
    for line in lines:
        x1, y1, x2, y2 = line
        if not _is_line(ink, line):
            continue
        towards = math.atan2(y2 - y1, x2 - x1)
        if _turns_on(wide, (x1, y1), towards) and _turns_on(wide, (x2, y2), towards + math.pi):
            continue  # a side of an outline: it turns a corner at both ends
        box: Box = (max(0, min(x1, x2) - 1), max(0, min(y1, y2) - 1), min(w, max(x1, x2) + 2), min(h, max(y1, y2) + 2))
        if all(iou(box, e.bbox) <= HELD for e in out):
            out.append(Element(type=ElementType.SHAPE, bbox=box, score=score))
    return out
