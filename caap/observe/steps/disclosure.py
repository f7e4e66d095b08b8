"""Disclosure triangles: whether a tree row or an expander is open, from the arrow drawn before it.

Desktop toolkits draw a small solid triangle before every row that can open (a tree's branch, a
GTK expander's title): pointing right (▸) while closed, down (▾) while open. GTK, Qt's Fusion and
Tk's themes all draw it so. The triangle tells the state outright, where the state head sees only
the view around the row's box, which may hold the text alone (a tree row is boxed at its text, the
arrow about 16 px to its left). And the detector calls a GTK expander's title, arrow and all, a
text or a check box: a title with a triangle before it is a row that opens.

``disclosure(rgb, box)`` looks for the triangle in a strip from ``ROW_REACH_PX`` left of a tree
row's box (``TITLE_REACH_PX`` of a text's) to a third of the way into it, at the box's height; the
triangle nearest the box's left edge counts. A triangle is one solid blob whose rows (▸) or
columns (▾) are single runs, centred on the blob's middle line and growing steadily shorter towards
its tip, half as deep as it is long: a letter's strokes (``V``, ``A``, ``T``, ``L``) have holes,
two runs or no steady slope.

Qt's Windows style draws a small square with a plus (closed, ⊞) or a minus (open, ⊟) instead: a
square outline, hollow but for the sign in its middle (``box_sign``).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import background_colour, components, difference, rgb_pixels
from caap.taxonomy import ElementType

ROW_REACH_PX = 36      # px left of a tree row's box (and at most that far into it) where its arrow may stand: a
                       # check box may come between (Qt's check-box trees)
TITLE_REACH_PX = 26    # the same for a text taken for a row: an expander's arrow is in its box or just before it
DEPTH_MIN_PX = 3        # px: a triangle's least depth (two rows of ink are a stroke's end, a descender)
BASE_PX = (5, 14)       # px: a triangle's base (its long side); Adwaita's is 9-10, Fusion's 7-9, Tk's 7-9
DEPTH_SHARE = (0.3, 0.75)  # its depth (base to tip) as a share of the base: an even triangle is 0.5
FILL_SHARE = (0.35, 0.75)  # share of its bounding box it fills: 0.5 for an ideal triangle
ROW_PAD_PX = 4          # px above and below a box where its arrow may reach
INK = 60                # largest channel difference from the strip's background that is the arrow's ink
CORE_SHARE = 0.6        # a blob that is no triangle is tried again at this share of its strongest ink:
                        # a focus ring's dotted line or a guide line touching the arrow is fainter
TIP_SHARE = 0.45        # the run at the tip is at most this share of the base's run
RULE_SHARE = 0.75       # a column drawn over this share of the strip's height is a rule ...
RULE_INK = 24           # ... in a channel at least this far from the background (rules are light greys)
STRAIGHT_PX = 2         # each slice's length lies this close to a straight-sided triangle's
CENTRED_PX = 1.5        # each run's middle lies this close to the base's middle
RETYPED = frozenset({ElementType.TEXT, ElementType.CHECKBOX, ElementType.HYPERLINK, ElementType.TABLED_TEXT})
# (what the detector calls an expander's title or a tree row of a view with columns)
# Controls that draw a triangle of their own (a combo box's ▾, a scrollbar's arrows, a spin
# button's): one standing inside such a box belongs to it, not to the row beside it.
OWN_ARROWS = frozenset({ElementType.DROPDOWN, ElementType.BUTTON, ElementType.INPUT_FIELD, ElementType.SCROLLBAR,
                        ElementType.SLIDER, ElementType.TAB})


def _runs_ok(mask: np.ndarray) -> bool:
    """Whether ``mask`` (rows = slices across the triangle from its base to its tip) is a solid
    triangle: each slice one run, centred, and not growing towards the tip."""
    lengths, middles = [], []
    for line in mask:
        on = np.flatnonzero(line)
        if on.size == 0:
            return False
        if on[-1] - on[0] + 1 != on.size:
            return False  # a hole or a second stroke
        lengths.append(on.size)
        middles.append((on[0] + on[-1]) / 2)
    base, base_middle = max(lengths[:2]), middles[int(np.argmax(lengths[:2]))]
    if lengths[-1] > TIP_SHARE * base:
        return False
    if any(abs(m - base_middle) > CENTRED_PX for m in middles):
        return False
    # From the base on, each slice is at most one pixel longer than the one before (anti-aliasing),
    # and the slices shorten steadily, as the sides are straight (a K's stem and arm do not).
    if not all(b <= a + 1 for a, b in pairwise(lengths)):
        return False
    steady = np.linspace(base, lengths[-1], len(lengths))
    return bool(np.abs(np.asarray(lengths) - steady).max() <= STRAIGHT_PX)


def triangle_direction(blob: np.ndarray) -> str | None:
    """``"right"`` (▸), ``"down"`` (▾) or None for a blob's mask (H × W, bool, cut to its extent)."""
    h, w = blob.shape
    fill = float(blob.mean())
    if min(h, w) < DEPTH_MIN_PX or not FILL_SHARE[0] <= fill <= FILL_SHARE[1]:
        return None
    if BASE_PX[0] <= h <= BASE_PX[1] and DEPTH_SHARE[0] * h <= w <= DEPTH_SHARE[1] * h + 1:
        return "right" if _runs_ok(blob.T) else None  # columns from the left (the base) to the tip
    if BASE_PX[0] <= w <= BASE_PX[1] and DEPTH_SHARE[0] * w <= h <= DEPTH_SHARE[1] * w + 1:
        return "down" if _runs_ok(blob) else None  # rows from the top (the base) to the tip
    return None


def _core(blob: np.ndarray, diff: np.ndarray) -> tuple[tuple[int, int], np.ndarray] | None:
    """The largest 4-connected piece of a blob's strongest ink (``CORE_SHARE``), cut to its extent,
    with its top-left corner in the blob, or None."""
    import cv2  # the vision extra's (4-connected, which ``primitives.components`` is not)

    strong = (blob & (diff >= CORE_SHARE * int(diff[blob].max()))).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(strong, connectivity=4)
    if n < 2:
        return None
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    x, y, w, h = (int(v) for v in stats[k, :4])
    return (y, x), labels[y:y + h, x:x + w] == k


SIGN_BOX_PX = (7, 13)   # px: the side of a ⊞/⊟ square
SIGN_SIDES = 0.8        # share of the square's outline that is ink
SIGN_BAR = 0.6          # share of the inside's middle row (column) a minus (plus) bar covers


def box_sign(outline: np.ndarray, ink: np.ndarray) -> bool | None:
    """For a blob's mask cut to its extent (``outline``) and all the ink in the same rectangle:
    True for a ⊟ (open), False for a ⊞ (closed), None when it is no such square."""
    # A tree's dotted guide lines run into the square: its sides are the long rows and columns.
    rows = np.flatnonzero(outline.sum(axis=1) >= SIGN_SIDES * outline.shape[1] - 1)
    cols = np.flatnonzero(outline.sum(axis=0) >= SIGN_SIDES * outline.shape[0] - 1)
    if rows.size < 2 or cols.size < 2:
        return None
    outline = outline[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    ink = ink[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    h, w = outline.shape
    if not (SIGN_BOX_PX[0] <= min(h, w) and max(h, w) <= SIGN_BOX_PX[1]) or abs(h - w) > 1:
        return None
    sides = np.concatenate([outline[0], outline[-1], outline[:, 0], outline[:, -1]])
    if sides.mean() < SIGN_SIDES or outline[1:-1, 1:-1].any():
        return None  # not a closed, hollow square
    inside = ink[2:-2, 2:-2]
    if inside.size == 0:
        return None
    middle_rows = slice(inside.shape[0] // 2 - (inside.shape[0] % 2 == 0), inside.shape[0] // 2 + 1)
    middle_cols = slice(inside.shape[1] // 2 - (inside.shape[1] % 2 == 0), inside.shape[1] // 2 + 1)
    across, down = inside[middle_rows].any(axis=0), inside[:, middle_cols].any(axis=1)
    if across.mean() < SIGN_BAR:
        return None
    plus = bool(down.mean() >= SIGN_BAR)
    rest = inside.copy()
    rest[middle_rows] = False
    if plus:
        rest[:, middle_cols] = False
    # Nothing but the sign inside: a ticked check box's tick runs across rows and columns.
    return None if rest.any() else not plus


def disclosure(rgb: np.ndarray, box: Sequence[int], others: Sequence[Sequence[int]] = (),
               reach: int = ROW_REACH_PX) -> bool | None:
    """Whether the row boxed at ``box`` is open (True: ▾), closed (False: ▸), or shows no
    disclosure triangle (None). A triangle whose middle lies in one of the ``others`` boxes is
    theirs."""
    height, width = rgb.shape[:2]
    x1, y1, x2, y2 = (int(v) for v in box)
    inside = min(reach, max((x2 - x1) // 3, 0))
    sx1, sx2 = max(x1 - reach, 0), min(x1 + inside, width)
    pad = max(ROW_PAD_PX, (y2 - y1) // 2)  # a box fitted to a row's letters is shorter than its arrow
    sy1, sy2 = max(y1 - pad, 0), min(y2 + pad, height)
    if sx2 - sx1 < BASE_PX[0] or sy2 - sy1 < BASE_PX[0]:
        return None
    strip = rgb[sy1:sy2, sx1:sx2]
    diff = difference(strip, background_colour(strip), "max")
    ink = (diff > INK).astype(np.uint8)
    n, labels, stats = components(ink)
    # Columns inked over the strip's height, above and below the box: a rule between a table's
    # header cells (the previous column's sort arrow stands before it), which no row's arrow lies
    # behind (a check box between a row's arrow and its text is no taller than the text).
    rules = np.flatnonzero((diff > RULE_INK).mean(axis=0) >= RULE_SHARE)
    best: tuple[float, bool] | None = None

    def consider(x: int, y: int, w: int, h: int, state: bool) -> None:
        nonlocal best
        cx, cy = sx1 + x + w / 2, sy1 + y + h / 2
        if any(o[0] <= cx <= o[2] and o[1] <= cy <= o[3] for o in others):
            return
        if np.any((rules > x + w) & (rules < max(x1 - sx1, x + w + 1))):
            return
        gap = abs(cx - x1)
        if best is None or gap < best[0]:
            best = (gap, state)

    for k in range(1, n):
        x, y, w, h = (int(v) for v in stats[k, :4])
        if not (min(w, h) >= DEPTH_MIN_PX and max(w, h) <= BASE_PX[1]):
            continue
        if y == 0 or y + h == strip.shape[0]:
            continue  # cut by the strip's edge: part of something larger
        blob = labels[y:y + h, x:x + w] == k
        sign = box_sign(blob, ink[y:y + h, x:x + w] > 0)
        if sign is not None:
            consider(x, y, w, h, sign)
            continue
        direction = triangle_direction(blob)
        if direction is None:
            core = _core(blob, diff[y:y + h, x:x + w])
            if core is None:
                continue
            (cy1, cx1), blob = core
            x, y, h, w = x + cx1, y + cy1, blob.shape[0], blob.shape[1]
            direction = triangle_direction(blob)
            if direction is None:
                continue
        consider(x, y, w, h, direction == "down")
    return None if best is None else best[1]


def disclosure_triangles(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Tree rows with ``expanded`` from the triangle drawn before them; a text or check box with
    one before it is an expander's title, a row that opens (``TREE_ITEM``)."""
    wanted = [i for i, e in enumerate(elements) if e.type == ElementType.TREE_ITEM or e.type in RETYPED]
    if not wanted:
        return elements
    rgb = rgb_pixels(image)
    arrowed = [e.bbox for e in elements if e.type in OWN_ARROWS]
    out = list(elements)
    for i in wanted:
        e = out[i]
        state = disclosure(rgb, e.bbox, [b for b in arrowed if b is not e.bbox],
                           ROW_REACH_PX if e.type == ElementType.TREE_ITEM else TITLE_REACH_PX)
        if state is None:
            continue
        if e.type in RETYPED:
            out[i] = Element(type=ElementType.TREE_ITEM, bbox=e.bbox, score=e.score, id=e.id, text=e.text,
                             text_confidence=e.text_confidence, highlighted=e.highlighted, expanded=state)
        elif e.expanded != state:
            out[i] = e.model_copy(update={"expanded": state})
    return out
