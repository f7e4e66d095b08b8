"""Figures told apart by their pixels: a filled square, triangle or circle from a glyph, and a
radio button's round control from a checkbox's square one.

The detector and the reader see a lone figure (identify-shape's yellow square, blue triangle) as a
large glyph often enough: a text ``A`` over the top half of a square, a blank text for a triangle,
a shape called a rectangle for a circle. A filled figure has a simple signature that letters do
not share: one colour, every row one solid run, no holes, and a fill ratio of its bounding box that
names the shape (≈1 square, ≈π/4 circle, ≈1/2 triangle, whose rows widen from apex to base).
Measured on the labelled test, validation and agent-met screens (60,000 text, button, link,
checkbox and icon boxes): no text, control or icon is taken for a figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area, intersection, iou, uncovered_part
from caap.observe.primitives import FAINT_INK, RIGHT_PAD, background_colour, ink_extent, ink_mask, page_ink, rgb_pixels
from caap.observe.steps.rewrite import rewrite_each
from caap.taxonomy import TEXT_ELEMENT_TYPES, ElementType

MIN_SIDE = 12        # px: smaller solid blobs are glyph strokes or bullets
INK = 60             # a channel this far from the background is the figure's
ONE_COLOUR = 40      # mean deviation from the figure's median colour (anti-aliased edges included)
SOLID_ROWS = 0.9     # share of rows that are one run of ink (no holes, no second stroke)
GROW_PX = 8          # a box cut short (half a square) grows by this much on a side its ink runs into,
GROWTHS = 3          # up to this many times


def _ink(rgb: np.ndarray, box: Sequence[int]) -> tuple[np.ndarray, np.ndarray, tuple[int, int], list[bool]] | None:
    """The ink in ``box`` widened by 2 px, the crop itself, its origin, and which of its edges
    (left, top, right, bottom) the ink reaches; None for a box with no pixels or no ink."""
    h, w = rgb.shape[:2]
    x1, y1 = max(0, int(box[0]) - 2), max(0, int(box[1]) - 2)
    x2, y2 = min(w, int(box[2]) + 2), min(h, int(box[3]) + 2)
    crop = rgb[y1:y2, x1:x2].astype(np.int16)
    if crop.shape[0] < 3 or crop.shape[1] < 3:
        return None
    border = np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])
    ink = ink_mask(crop, background_colour(border), INK, reduce="max")
    if not ink.any():
        return None
    edges = [bool(ink[:, 0].any()), bool(ink[0].any()), bool(ink[:, -1].any()), bool(ink[-1].any())]
    return ink, crop, (x1, y1), edges


def solid_figure(rgb: np.ndarray, box: Sequence[int]) -> tuple[str, tuple[int, int, int, int]] | None:
    """(subtype, tight box) of a filled rectangle, triangle or circle around ``box`` on the
    screenshot ``rgb`` (H × W × 3), or None for anything else. A box cut short (the top half of
    a square) grows on the sides its ink runs into; the figure must stand on background all round."""
    grown = [int(v) for v in box]
    for _ in range(GROWTHS + 1):
        found = _ink(rgb, grown)
        if found is None:
            return None
        ink, crop, (ox, oy), edges = found
        if not any(edges):
            break
        grown = [grown[0] - GROW_PX * edges[0], grown[1] - GROW_PX * edges[1],
                 grown[2] + GROW_PX * edges[2], grown[3] + GROW_PX * edges[3]]
    else:
        return None
    ys, xs = np.nonzero(ink)
    tight = ink[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    h, w = tight.shape
    if min(h, w) < MIN_SIDE:
        return None
    colours = crop[ys, xs]
    if np.abs(colours - np.median(colours, axis=0)).max(axis=1).mean() > ONE_COLOUR:
        return None
    runs = (np.diff(np.pad(tight.astype(np.int8), ((0, 0), (1, 1))), axis=1) == 1).sum(axis=1)
    if np.mean(runs == 1) < SOLID_ROWS:
        return None
    bbox = (ox + int(xs.min()), oy + int(ys.min()), ox + int(xs.max()) + 1, oy + int(ys.max()) + 1)
    fill = float(tight.mean())
    widths = tight.sum(axis=1).astype(float)
    top, bottom = widths[: h // 4].mean(), widths[-(h // 4):].mean()
    middle = widths[h // 2 - h // 8: h // 2 + h // 8 + 1].mean()
    if fill >= 0.9:
        return "rectangle", bbox
    if 0.4 <= fill <= 0.62 and (bottom > 2.5 * top or top > 2.5 * bottom):
        return "triangle", bbox
    if 0.68 <= fill <= 0.86 and middle > 1.5 * top and middle > 1.5 * bottom:
        return "circle", bbox
    return None


def _as_figure(rgb: np.ndarray, element: Element) -> Element | None:
    found = solid_figure(rgb, element.bbox)
    if found is None:
        return None
    subtype, bbox = found
    return Element(type=ElementType.SHAPE, bbox=bbox, subtype=subtype, score=element.score, id=element.id)


FIGURE_READING = 3  # a text read as this many letters at most may be a figure (a circle read ``D\nC``)


def solid_figures(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Texts of a few glyphs and shapes that are filled figures become shapes of the figure's
    kind, boxed tightly; everything else is kept as it is."""
    return rewrite_each(image, elements, lambda e: e.type == ElementType.SHAPE or (
        e.type == ElementType.TEXT and len("".join((e.text or "").split())) <= FIGURE_READING), _as_figure)

CONTROL_INK = 40      # a channel this far from the control's background is its outline
ROUND_CORNERS = 0.35  # ink share of a control's corner squares: a radio's circle leaves them empty
                      # (labelled test/validation/agent screens: radios ≤ 0.3, checkboxes ≥ 0.4)
SQUARE_FILL = 0.9     # share of a closed outline's bounding box it encloses: a circle π/4, a rounded
                      # square more (GTK 3's check boxes 0.95, its radio buttons 0.81, GTK 4's 0.70)
OPEN_OUTLINE = 0.5    # an outline enclosing less is open (cut by the box, or too faint): it tells nothing


def _control_at(rgb: np.ndarray, box: Sequence[int]) -> tuple[np.ndarray, Box] | None:
    """The ink mask of a checkbox's or radio button's control and its box on the screen: the first
    run of ink columns at the left of ``box``, about square and 8-24 px wide; None where no such
    control shows."""
    x1, y1, x2, y2 = (int(v) for v in box)
    x1, y1 = max(0, x1), max(0, y1)
    crop = rgb[y1:y2, x1:x2].astype(np.int16)
    if crop.shape[0] < 8 or crop.shape[1] < 8:
        return None
    ink = ink_mask(crop, background_colour(crop), CONTROL_INK, reduce="max")
    cols = ink.any(axis=0)
    xs = np.flatnonzero(cols)
    if xs.size == 0:
        return None
    end = int(xs[0])
    while end < cols.size and cols[end]:
        end += 1
    control = ink[:, int(xs[0]):end]
    ys = np.flatnonzero(control.any(axis=1))
    control = control[ys[0]:ys[-1] + 1]
    h, w = control.shape
    if not (8 <= w <= 24 and 0.75 <= w / h <= 1.33):
        return None
    return control, (x1 + int(xs[0]), y1 + int(ys[0]), x1 + end, y1 + int(ys[-1]) + 1)


def _control(rgb: np.ndarray, box: Sequence[int]) -> np.ndarray | None:
    found = _control_at(rgb, box)
    return None if found is None else found[0]


def corner_ink(control: np.ndarray) -> float:
    """The mean ink share of a control's four corner squares (a fifth of its side): a circle leaves
    them empty, a square, even rounded, does not."""
    k = max(2, round(min(control.shape) * 0.2))
    return float(np.mean([control[:k, :k].mean(), control[:k, -k:].mean(),
                          control[-k:, :k].mean(), control[-k:, -k:].mean()]))


def enclosed_share(control: np.ndarray) -> float:
    """The share of the control's bounding box inside its outline (holes filled; an outline left
    open by a faint edge encloses little, and says nothing)."""
    free = np.pad(~control, 1, constant_values=True)
    outside = np.zeros_like(free)
    outside[0] = outside[-1] = True
    outside[:, 0] = outside[:, -1] = True
    while True:  # the background reached from the border, 4-connected (controls are at most 24 px)
        grown = outside.copy()
        grown[1:] |= outside[:-1]
        grown[:-1] |= outside[1:]
        grown[:, 1:] |= outside[:, :-1]
        grown[:, :-1] |= outside[:, 1:]
        grown &= free
        if (grown == outside).all():
            break
        outside = grown
    return float((~outside[1:-1, 1:-1]).mean())


def control_kind(rgb: np.ndarray, box: Sequence[int]) -> ElementType | None:
    """Radio button or checkbox by the control drawn at the left of ``box``: round corners and an
    outline enclosing less than a rounded square does make a radio button; None where no control
    shows whole. GTK draws its check boxes as rounded squares whose corners alone look round, and a
    box that cuts the control's edge off (the detector's, by 5 px) leaves corners that look round
    too: only a closed outline is judged."""
    control = _control(rgb, box)
    if control is None:
        return None
    enclosed = enclosed_share(control)
    if enclosed < OPEN_OUTLINE:
        return None
    if corner_ink(control) <= ROUND_CORNERS and enclosed < SQUARE_FILL:
        return ElementType.RADIO
    return ElementType.CHECKBOX


def _by_control(rgb: np.ndarray, element: Element) -> Element | None:
    kind = control_kind(rgb, element.bbox)
    return element.retyped(kind) if kind is not None and kind != element.type else None


MARK_INK = 60        # a channel this far from the control's inside is a mark in it (a tick, a dot, a bar)
MARK_SHARE = (0.06, 0.12)  # share of the control's middle a mark covers: below the first, empty (unticked);
                     # from the second, ticked; between, not sure (the reader's reading stands)
MIDDLE = 0.25        # of the control's side left out all round: its outline and inner bevel


def control_state(rgb: np.ndarray, box: Sequence[int]) -> bool | None:
    """Whether the checkbox or radio button at the left of ``box`` shows a mark (a tick, a dot, the
    bar of an undecided box): its middle against the colour just inside its outline. None where no
    control shows whole or the middle is neither clearly empty nor clearly marked."""
    found = _control_at(rgb, box)
    if found is None:
        return None
    x1, y1, x2, y2 = found[1]
    side = min(x2 - x1, y2 - y1)
    inset = max(2, round(side * MIDDLE))
    inner = rgb[y1 + 2:y2 - 2, x1 + 2:x2 - 2]  # inside the outline
    middle = rgb[y1 + inset:y2 - inset, x1 + inset:x2 - inset]
    if inner.size == 0 or middle.size == 0:
        return None
    ring = np.concatenate([inner[0], inner[-1], inner[:, 0], inner[:, -1]])
    fill = background_colour(ring.reshape(-1, 1, 3))
    marked = float(ink_mask(middle, fill, MARK_INK, reduce="max").mean())
    if marked >= MARK_SHARE[1]:
        return True
    if marked < MARK_SHARE[0]:
        return False
    return None


def _with_state(rgb: np.ndarray, element: Element) -> Element | None:
    state = control_state(rgb, element.bbox)
    return element.model_copy(update={"checked": state}) if state is not None and state != element.checked else None


def control_states(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Checkboxes and radio buttons ticked or not as their control shows it (``control_state``)."""
    return rewrite_each(image, elements, lambda e: e.type in (ElementType.CHECKBOX, ElementType.RADIO), _with_state)


def control_kinds(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Checkboxes and radio buttons typed by their control's outline: round is a radio button,
    square a checkbox (the detector confuses the two on pages that mix them: click-widget)."""
    return rewrite_each(image, elements, lambda e: e.type in (ElementType.CHECKBOX, ElementType.RADIO), _by_control)


# --- focus rings -----------------------------------------------------------------------------------
FOCUSABLE = (ElementType.INPUT_FIELD, ElementType.TEXT_AREA, ElementType.DROPDOWN, ElementType.BUTTON)
RING_PX = 2          # the band along a control's box where a focus ring is drawn
RING_INSET = 4       # px: the control's inside, left out of the ring's band
RING_SATURATION = 60  # a pixel whose channels spread this much is coloured (an accent), not grey
RING_SHARE = 0.25    # of the band coloured: a ring (desktop-val, focused controls 0.46-0.98, others ≤ 0.1)
RING_FILL = 0.2      # of the face's edge inside the ring coloured at most: a plain face, not a coloured button
GREY_FACE_SPREAD = 4  # the most a grey face's channels spread (median); Fusion's default button: 8-9
RING_LINE = 0.6      # of a row or column inside the box's span coloured: a line of a ring ...
RING_SIDES = 3       # ... found on at least this many sides to move the box onto the ring


def ring_box(rgb: np.ndarray, box: Sequence[int], reach: int) -> tuple[int, int, int, int] | None:
    """The box moved onto a coloured ring whose sides lie within ``reach`` px of the box's: the
    detector boxes a drop-down or a field a few pixels off its ring (a box 4 px taller than the ring
    sees none of it in its band). None where fewer than ``RING_SIDES`` sides have a ring line."""
    x1, y1, x2, y2 = (int(v) for v in box)
    h, w = rgb.shape[:2]
    if x2 - x1 < 3 * RING_INSET + 2 * reach or y2 - y1 < 2.5 * RING_INSET + 2 * reach:
        return None
    def share(lines: np.ndarray) -> np.ndarray:
        lines = lines.astype(np.int16)
        return ((lines.max(axis=2) - lines.min(axis=2)) >= RING_SATURATION).mean(axis=1)

    def pick(at: range, shares: np.ndarray, outward: int) -> int | None:
        """The outer line of the strongest ring line in ``at``: the band takes it and the next one in."""
        if not len(at) or float(shares.max()) < RING_LINE:
            return None
        best = int(np.argmax(shares))
        nxt = best + outward
        return at[nxt] if 0 <= nxt < len(at) and shares[nxt] >= RING_LINE else at[best]

    cols = slice(max(0, x1 + RING_INSET + reach), min(w, x2 - RING_INSET - reach))
    rows = slice(max(0, y1 + RING_INSET + reach), min(h, y2 - RING_INSET - reach))
    tops = range(max(0, y1 - reach), min(h, y1 + reach + 1))
    bottoms = range(max(0, y2 - 1 - reach), min(h, y2 + reach))
    lefts = range(max(0, x1 - reach), min(w, x1 + reach + 1))
    rights = range(max(0, x2 - 1 - reach), min(w, x2 + reach))
    top = pick(tops, share(rgb[tops.start:tops.stop, cols]), -1)
    bottom = pick(bottoms, share(rgb[bottoms.start:bottoms.stop, cols]), 1)
    left = pick(lefts, share(rgb[rows, lefts.start:lefts.stop].transpose(1, 0, 2)), -1)
    right = pick(rights, share(rgb[rows, rights.start:rights.stop].transpose(1, 0, 2)), 1)
    if sum(v is not None for v in (top, bottom, left, right)) < RING_SIDES:
        return None
    return (x1 if left is None else left, y1 if top is None else top,
            x2 if right is None else right + 1, y2 if bottom is None else bottom + 1)


def focus_ring(rgb: np.ndarray, box: Sequence[int], *, grey_face: bool = False, reach: int = 0) -> bool:
    """Whether a control is drawn with a coloured ring round a face that is not coloured: the focus
    ring GTK, Qt and browsers draw in their accent colour. A coloured button (its face coloured too)
    is not ringed. ``grey_face``: the face next to the ring must also be untinted, as a focused
    button's is, where Qt's Fusion tints the default button's and a web page's outlined buttons
    have a pale colour of their own. ``reach``: px the box may lie off the ring (``ring_box``)."""
    if _ringed(rgb, box, grey_face):
        return True
    moved = ring_box(rgb, box, reach) if reach else None
    return moved is not None and _ringed(rgb, moved, grey_face)


def _ringed(rgb: np.ndarray, box: Sequence[int], grey_face: bool) -> bool:
    x1, y1, x2, y2 = (int(v) for v in box)
    h, w = rgb.shape[:2]
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
    if x2 - x1 < 3 * RING_INSET or y2 - y1 < 2.5 * RING_INSET:
        return False
    crop = rgb[y1:y2, x1:x2].astype(np.int16)
    coloured = (crop.max(axis=2) - crop.min(axis=2)) >= RING_SATURATION
    band = np.zeros(coloured.shape, bool)
    band[:RING_PX] = band[-RING_PX:] = True
    band[:, :RING_PX] = band[:, -RING_PX:] = True
    # The face just inside the ring: a coloured button is coloured up to its edge, where a field's
    # selected text (coloured too) keeps the field's padding from it.
    face = np.zeros(coloured.shape, bool)
    i, j = RING_INSET, RING_INSET + RING_PX
    face[i:j, i:-i] = face[-j:-i, i:-i] = True
    face[i:-i, i:j] = face[i:-i, -j:-i] = True
    if not (float(coloured[band].mean()) >= RING_SHARE and float(coloured[face].mean()) < RING_FILL):
        return False
    return not grey_face or float(np.median((crop.max(axis=2) - crop.min(axis=2))[face])) <= GREY_FACE_SPREAD


def _with_focus(rgb: np.ndarray, element: Element) -> Element | None:
    return element.model_copy(update={"focused": True}) if not element.focused and focus_ring(rgb, element.bbox) \
        else None


def focus_rings(image: Image.Image, elements: list[Element]) -> list[Element]:
    """Fields, drop-downs and buttons drawn with a focus ring are focused (``focus_ring``); where
    none shows, the reader's reading stands."""
    return rewrite_each(image, elements, lambda e: e.type in FOCUSABLE, _with_focus)


# --- lone glyphs ---------------------------------------------------------------------------------------
LONE_MIN_HEIGHT = 13   # px: a glyph this tall is drawn large on purpose (ascending-numbers: 14 px digits)
LONE_MAX_SIDE = 80     # px: larger blobs are pictures or panels, not one glyph
LONE_CLEARANCE = 6     # px of background all round, free of other ink and of every element's box (10 left
                       # form-sequence-2's unchecked radio buttons, 7 px from their neighbours, unboxed)
LONE_MAX_ASPECT = 6    # a blob taller than this many widths is a rule (a pane's 4 x 36 px divider), no glyph
GLYPH_GAP = 3          # px between the pieces of one glyph


def _taken(elements: Sequence[Element], h: int, w: int) -> np.ndarray:
    taken = np.zeros((h, w), bool)
    for e in elements:
        x1, y1, x2, y2 = (int(v) for v in e.bbox)
        taken[max(0, y1):y2, max(0, x1):x2] = True
    return taken


def lone_glyphs(image: Image.Image, elements: list[Element], ink: np.ndarray | None = None) -> list[Element]:
    """The elements with a text element added for every large glyph that stands alone on the page
    and that no box holds (identify-shape's letter "j", drawn 30 px high, was not proposed at all).
    A glyph is one connected blob of ink LONE_MIN_HEIGHT to LONE_MAX_SIDE px high, at most
    LONE_MAX_ASPECT times as high as wide, with background LONE_CLEARANCE px all round; the reader
    reads it, and ``solid_figures`` makes a filled figure a shape. ``ink``: the screen's
    ``page_ink`` where the caller has it."""
    import cv2  # the vision extra's

    ink = page_ink(image) if ink is None else ink
    h, w = ink.shape
    # A glyph's pieces (the dot of a "j") lie within a few pixels of each other.
    joined = cv2.dilate(ink, np.ones((2 * GLYPH_GAP + 1, 2 * GLYPH_GAP + 1), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(joined, connectivity=8)
    if n < 2:
        return elements
    taken = _taken(elements, h, w)
    added: list[Element] = []
    # The joined blob is GLYPH_GAP px larger than the glyph on every side; only blobs of a large
    # glyph's size are looked at further (a full-size screen has thousands of small ones).
    sizes = stats[:, [cv2.CC_STAT_WIDTH, cv2.CC_STAT_HEIGHT]] - 2 * GLYPH_GAP
    sized = np.flatnonzero((sizes[:, 1] >= LONE_MIN_HEIGHT) & (sizes[:, 1] <= LONE_MAX_SIDE)
                           & (sizes[:, 0] > 0) & (sizes[:, 0] <= LONE_MAX_SIDE)
                           & (sizes[:, 1] <= LONE_MAX_ASPECT * sizes[:, 0]))
    for k in sized[sized > 0].tolist():
        x, y = int(stats[k, cv2.CC_STAT_LEFT]) + GLYPH_GAP, int(stats[k, cv2.CC_STAT_TOP]) + GLYPH_GAP
        bw, bh = int(sizes[k, 0]), int(sizes[k, 1])
        c = LONE_CLEARANCE
        x1, y1, x2, y2 = max(0, x - c), max(0, y - c), min(w, x + bw + c), min(h, y + bh + c)
        if x1 == 0 or y1 == 0 or x2 == w or y2 == h:
            continue  # at the screen's edge: may go on beyond it
        region = labels[y1:y2, x1:x2]
        if taken[y1:y2, x1:x2].any() or ((region != 0) & (region != k)).any():
            continue
        added.append(Element(type=ElementType.TEXT, bbox=(x, y, x + bw, y + bh),
                             score=min((e.score or 0.0 for e in elements), default=0.25)))
    return [*elements, *added] if added else elements


# --- small figures on lines -----------------------------------------------------------------------------
DOT_OPENING = 5        # px: the disc an opening rolls through the ink (strokes and lines up to 4 px vanish)
DOT_SIDES = (6, 24)    # px: a dot's or small square's side
DOT_FILL = 0.6         # least share of its box the opened blob fills (a ring or a glyph's stroke fills less)
DOT_RING = 3           # px round the blob looked at
DOT_RING_INK = 0.12    # most ink share of that ring: background with at most thin lines through it
DOT_RULE = 15          # px: a level or upright run this long through a figure's surroundings is a rule
DOT_RULES_DENSE = 0.45 # share of a DOT_RULE px square that rules fill: more is a hatched picture (two axes
                       # crossing fill about 0.36)
DOT_TOUCH = 0.3        # a text box may overlap this share of a figure (a tick label's box runs into its marker)
DOT_END_PX = 3         # a marker boxed with its label lies within this many px of one end of the text box
DOT_OWN_COLOUR = 90    # summed |RGB| a marker boxed with its label differs from the box's background and text
DOT_TEXT_SHARE = 0.2   # ... at most this share of the label's drawn pixels has the marker's colour


def _ring_ink(mask: np.ndarray, box: Sequence[int], r: int, cleared: Sequence[Sequence[int]] = ()) -> tuple[int, int]:
    """Ink pixels in the ``r`` px round ``box`` (the image's edge cuts the ring) and how many pixels
    that ring holds; ink inside the ``cleared`` boxes does not count."""
    h, w = mask.shape
    x1, y1, x2, y2 = (int(v) for v in box)
    rx1, ry1, rx2, ry2 = max(0, x1 - r), max(0, y1 - r), min(w, x2 + r), min(h, y2 + r)
    ring = mask[ry1:ry2, rx1:rx2].copy()
    ring[y1 - ry1:y2 - ry1, x1 - rx1:x2 - rx1] = 0
    for bx1, by1, bx2, by2 in cleared:
        ring[max(0, int(by1) - ry1):max(0, int(by2) - ry1), max(0, int(bx1) - rx1):max(0, int(bx2) - rx1)] = 0
    return int(ring.sum()), ring.size - (x2 - x1) * (y2 - y1)


def _marker_in_label(rgb: np.ndarray, ink: np.ndarray, box: Box, figure: Box) -> bool:
    """Whether a figure the detector boxed together with its label (grid-coordinate's axis points
    and their numbers in one text box) is a marker of its own: at one end of the text box, a solid
    core, no side of it running on into more ink (a highlighted word's start does), and a colour
    neither the box's background nor its text's."""
    x1, y1, x2, y2 = (int(v) for v in box)
    fx1, fy1, fx2, fy2 = (int(v) for v in figure)
    if not (fx2 >= x2 - DOT_END_PX or fx1 <= x1 + DOT_END_PX) or area(box) < 2 * area(figure):
        return False
    w, h = fx2 - fx1, fy2 - fy1
    if ink[fy1 + h // 4:fy2 - h // 4, fx1 + w // 4:fx2 - w // 4].mean() < 0.97:
        return False  # white letters inside: a highlight, not a marker
    height, width = ink.shape
    sides = (ink[fy1 - 1, fx1:fx2] if fy1 > 0 else None, ink[fy2, fx1:fx2] if fy2 < height else None,
             ink[fy1:fy2, fx1 - 1] if fx1 > 0 else None, ink[fy1:fy2, fx2] if fx2 < width else None)
    if any(side is not None and side.mean() > 0.5 for side in sides):
        return False  # lines cross a marker; a band of ink runs on from a glyph
    crop, inked = rgb[y1:y2, x1:x2].astype(np.int32), ink[y1:y2, x1:x2] > 0
    inside = np.zeros(inked.shape, bool)
    inside[fy1 - y1:fy2 - y1, fx1 - x1:fx2 - x1] = True
    if not (inside & inked).any():
        return False
    colour = np.median(crop[inside & inked], axis=0)
    background = background_colour(rgb[y1:y2, x1:x2]).astype(np.int32)
    if np.abs(colour - background).sum() < DOT_OWN_COLOUR:
        return False
    text = crop[~inside & (np.abs(crop - background).sum(axis=2) >= DOT_OWN_COLOUR)]  # on the box's own background
    # Glyphs in the figure's colour: a bold letter pair ("ll"), not a marker.
    return not len(text) or (np.abs(text - colour).sum(axis=1) < DOT_OWN_COLOUR).mean() < DOT_TEXT_SHARE


def small_figures(image: Image.Image, elements: list[Element], ink: np.ndarray | None = None) -> list[Element]:
    """The elements with a shape added for every small filled figure (a dot, a small square) that
    no box holds: the ends of a drawn line, the points of a plotted grid, a marker on an axis. A
    text box may run a little into it (a tick label under its marker, less than ``DOT_TOUCH`` of the
    figure): the text box gives way, and the label's glyphs do not count as the figure's surroundings.
    A text box holding the whole figure at one end gives way too where the figure is a marker of
    its own (``_marker_in_label``): the detector often boxes an axis point with its number. What is
    left of a label that gave way is fitted to its glyphs, the axis beside them left out.
    The detector misses dots drawn on lines (the MiniWoB++ tasks outside the 67: bisect-angle's,
    find-midpoint's and right-angle's, 9 of 52 found). Rolling a 5 px disc through the ink (an
    opening) wipes lines and strokes away and leaves blobs at least that thick; a blob 6-24 px a
    side, about square, mostly filled and standing on background (thin level or upright rules, the
    axes and grid lines through a plotted point, left aside; at most thin lines through the 3 px
    round it: not a patch of a photograph, not a glyph of a word) is a figure. ``ink``: the
    screen's ``page_ink`` where the caller has it."""
    import cv2  # the vision extra's

    ink = page_ink(image) if ink is None else ink
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (DOT_OPENING, DOT_OPENING))
    opened = cv2.morphologyEx(ink, cv2.MORPH_OPEN, disc)
    n, _, stats, _ = cv2.connectedComponentsWithStats(opened, connectivity=8)
    if n < 2:
        return elements
    lo, hi = DOT_SIDES
    bw, bh, blob = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    sized = np.flatnonzero((bw >= lo) & (bw <= hi) & (bh >= lo) & (bh <= hi) & (bw <= 1.4 * bh) & (bh <= 1.4 * bw)
                           & (blob >= DOT_FILL * bw * bh))
    added: list[Element] = []
    out = list(elements)
    ruled: np.ndarray | None = None
    cut: set[int] = set()
    for k in sized[sized > 0].tolist():
        x, y = int(stats[k, cv2.CC_STAT_LEFT]), int(stats[k, cv2.CC_STAT_TOP])
        figure = (x, y, x + int(bw[k]), y + int(bh[k]))
        touching = [i for i, e in enumerate(out) if intersection(e.bbox, figure) > 0]
        if any(out[i].type not in TEXT_ELEMENT_TYPES for i in touching):
            continue
        if any(intersection(out[i].bbox, figure) > DOT_TOUCH * area(figure)
               and not _marker_in_label(rgb_pixels(image), ink, out[i].bbox, figure) for i in touching):
            continue
        if ruled is None:  # the ink less thin level and upright rules: axes and grid lines run through points
            rules = np.maximum(cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((1, DOT_RULE), np.uint8)),
                               cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((DOT_RULE, 1), np.uint8)))
            solid = cv2.dilate(cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((DOT_OPENING, DOT_OPENING), np.uint8)),
                               np.ones((3, 3), np.uint8))  # a picture's inside is no rule ...
            hatched = cv2.blur(rules.astype(np.float32), (DOT_RULE, DOT_RULE)) > DOT_RULES_DENSE  # ... nor a hatching
            ruled = ink & (1 - (rules & (1 - solid) & ~hatched))
        # A touching label's glyphs are its text's, not the figure's surroundings.
        inked, size = _ring_ink(ruled, figure, DOT_RING, [out[i].bbox for i in touching])
        if inked > DOT_RING_INK * size:
            continue
        for i in touching:  # a tick label's box that runs into the marker gives way
            out[i] = out[i].model_copy(update={"bbox": uncovered_part(out[i].bbox, figure)})
            cut.add(i)
        added.append(Element(type=ElementType.SHAPE, bbox=figure,
                             score=min((e.score or 0.0 for e in elements), default=0.25)))
    if not added:
        return elements
    assert ruled is not None  # every figure added was looked at against it
    for i in cut:  # what is left of a label that gave way, fitted to its glyphs (not the axis beside them)
        fitted = _label_left(ruled, out[i].bbox, [a.bbox for a in added])
        if fitted is not None:
            out[i] = out[i].model_copy(update={"bbox": fitted})
    return [*out, *added]


def _label_left(ruled: np.ndarray, box: Box, figures: Sequence[Box]) -> Box | None:
    """``box`` fitted to the ink in it, rules and the ``figures`` left out, 1 px past the ink on the
    right and below as text boxes are; None where no ink is left."""
    x1, y1, x2, y2 = box
    ink = ruled[y1:y2, x1:x2].copy()
    for fx1, fy1, fx2, fy2 in figures:
        ink[max(0, fy1 - y1):max(0, fy2 - y1), max(0, fx1 - x1):max(0, fx2 - x1)] = 0
    tight = ink_extent(ink, box, 0)
    if tight is None:
        return None
    h, w = ruled.shape
    return tight[0], tight[1], min(w, tight[2] + RIGHT_PAD), min(h, tight[3] + RIGHT_PAD)


# --- thin bars ---------------------------------------------------------------------------------------
THIN_BAR_THICKNESS = (3, 10) # px: GTK's progress bars are 4-6 px thick, its framed level bars 9; 1-2 px lines
                             # are separators and underlines
THIN_BAR_MIN_LENGTH = 40     # px, and at least 8 thicknesses
THIN_BAR_FILL = 0.85         # least share of its box the bar fills (rounded ends leave a little out)
THIN_BAR_RING = 4            # px round the bar looked at: stacked lines (a list icon's) are closer than that
THIN_BAR_RING_INK = 0.05     # most share of that ring that differs from the background
THIN_BAR_SEGMENT_GAP = 3     # px between the segments of one bar (GTK's level bars: 2)
THIN_BAR_FRAMED = 7          # px: the least thickness of a bar drawn as an outline (GTK 3's level bars: 9)
THIN_BAR_SIDES = 0.7         # least share of each side of such an outline that is drawn (rounded corners)
THIN_BAR_HELD = 0.3          # a box holding this share of the bar has it already (a slider's trough, a button)


def thin_bars(image: Image.Image, elements: list[Element], difference: np.ndarray | None = None) -> list[Element]:
    """The elements with a progress bar added for every long thin bar standing alone on the page
    that no box holds. GTK draws its progress bars 4-6 px thick (a trough with its fill); the
    detector, which learns from 480 px canvases, rarely boxes them. A bar is one 4-connected blob of
    pixels that differ, even faintly, from the background: 3-10 px thick, at least 40 px and eight
    thicknesses long, filling most of its box or drawn as a rectangle's outline (GTK 3's level
    bars: a 1 px frame, white, the fill), with background all round (traced on the training apps'
    screens: zenity's progress bar is found, a list icon's stacked lines are not). Pieces on one
    line a few px apart are one bar (``_chains``: GTK's level bars are drawn in segments). A box
    holding two bars one above the other, or a progress bar's box that is not the bar it holds,
    gives way to its bars. ``difference``: the screen's ``page_difference`` where the caller has it."""
    import cv2  # the vision extra's

    faint = page_ink(image, FAINT_INK, difference)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(faint, connectivity=4)
    lo, hi = THIN_BAR_THICKNESS
    bw, bh, blob = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    thin, long_ = np.minimum(bw, bh), np.maximum(bw, bh)
    shaped = (thin >= lo) & (thin <= hi) & (long_ >= 2 * thin)
    pieces = np.flatnonzero(shaped & (blob >= THIN_BAR_FILL * bw * bh)).tolist()
    # GTK 3's level bars: a 1 px frame round the fill, a pixel of white between them.
    outlines = np.flatnonzero(shaped & (thin >= THIN_BAR_FRAMED) & (blob < THIN_BAR_FILL * bw * bh)).tolist()
    pieces += [k for k in outlines if k > 0 and _outline(labels[stats[k, 1]:stats[k, 1] + bh[k],
                                                                 stats[k, 0]:stats[k, 0] + bw[k]] == k)]
    bars: list[Box] = []
    for bar in _chains([(int(stats[k, 0]), int(stats[k, 1]), int(stats[k, 0] + bw[k]), int(stats[k, 1] + bh[k]))
                        for k in pieces if k > 0]):
        if max(bar[2] - bar[0], bar[3] - bar[1]) < max(THIN_BAR_MIN_LENGTH, 8 * min(bar[2] - bar[0], bar[3] - bar[1])):
            continue
        inked, size = _ring_ink(faint, bar, THIN_BAR_RING)
        if inked <= THIN_BAR_RING_INK * size:
            bars.append(bar)
    held = {b: [i for i, e in enumerate(elements) if intersection(e.bbox, b) > THIN_BAR_HELD * area(b)] for b in bars}
    # A box that holds two bars one above the other, or a progress bar's box that is not its bar,
    # is the bars it holds (GTK's stacked level bars came back as one box; a bar's fill alone as
    # the bar). A slider keeps its trough, cut in two by the knob or not.
    holds: dict[int, list[Box]] = {}
    for bar, holders in held.items():
        for i in holders:
            holds.setdefault(i, []).append(bar)
    replaced = {i for i, got in holds.items() if elements[i].type not in TEXT_ELEMENT_TYPES and (
        _stacked(got) or (len(got) == 1 and elements[i].type is ElementType.PROGRESS_BAR
                          and iou(elements[i].bbox, got[0]) < 0.5))}
    new = [b for b, holders in held.items() if not holders or any(i in replaced for i in holders)]
    if not new:
        return elements
    score = min((e.score or 0.0 for e in elements), default=0.25)
    return [*(e for i, e in enumerate(elements) if i not in replaced),
            *(Element(type=ElementType.PROGRESS_BAR, bbox=b, score=score) for b in new)]


def _stacked(bars: Sequence[Box]) -> bool:
    """Whether two of ``bars`` lie side by side, one above the other (or beside it), along most of
    the shorter one's length: two bars. Pieces of one bar in a line (a slider's trough cut by its
    knob) are not."""
    for k, a in enumerate(bars):
        for b in bars[k + 1:]:
            lying = a[2] - a[0] >= a[3] - a[1]
            along, across = (0, 1) if lying else (1, 0)
            shared = min(a[along + 2], b[along + 2]) - max(a[along], b[along])
            apart = max(a[across], b[across]) - min(a[across + 2], b[across + 2])
            shorter = min(a[along + 2] - a[along], b[along + 2] - b[along])
            if apart >= 0 and shared >= 0.5 * shorter:
                return True
    return False


def _outline(piece: np.ndarray) -> bool:
    """Whether a piece of ink (a boolean mask fitted to it) is a rectangle's outline: all four
    sides drawn, its inside mostly not."""
    sides = (piece[0], piece[-1], piece[:, 0], piece[:, -1])
    return min(float(side.mean()) for side in sides) >= THIN_BAR_SIDES and float(piece[1:-1, 1:-1].mean()) <= 0.5


def _chains(pieces: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int]]:
    """Thin pieces joined end to end into one bar where they lie on one line a few px apart (a
    GTK level bar drawn in segments); a piece alone is a bar of its own."""
    bars: list[list[int]] = []
    # Along each bar's length, so that every piece meets the end of the chain before it.
    def along(p: tuple[int, int, int, int]) -> tuple[int, int, int]:
        return (0, p[0], p[1]) if p[2] - p[0] >= p[3] - p[1] else (1, p[1], p[0])

    for x1, y1, x2, y2 in sorted(pieces, key=along):
        across = x2 - x1 >= y2 - y1
        for bar in bars:
            bar_across = bar[2] - bar[0] >= bar[3] - bar[1]
            if across and bar_across and abs(bar[1] - y1) <= 1 and abs(bar[3] - y2) <= 1 \
                    and 0 <= x1 - bar[2] <= THIN_BAR_SEGMENT_GAP:
                bar[1:] = [min(bar[1], y1), x2, max(bar[3], y2)]
                break
            if not across and not bar_across and abs(bar[0] - x1) <= 1 and abs(bar[2] - x2) <= 1 \
                    and 0 <= y1 - bar[3] <= THIN_BAR_SEGMENT_GAP:
                bar[:] = [min(bar[0], x1), bar[1], max(bar[2], x2), y2]
                break
        else:
            bars.append([x1, y1, x2, y2])
    return [(b[0], b[1], b[2], b[3]) for b in bars]


# --- small letters taken for icons --------------------------------------------------------------------
LETTER_MAX_SIDE = 24   # px: a box this size at most may hold one UI-sized letter or digit
LETTER_OCR = 0.95      # PP-OCR's confidence from which the two readers' agreement stands


def may_be_letter(element: Element, ctc_text: str) -> bool:
    """Whether an icon or shape box may be one letter or digit the detector took for a figure: small
    and read by the reader's CTC head as one letter or digit (``solid_figure`` then tells a filled
    figure, which is no letter)."""
    x1, y1, x2, y2 = element.bbox
    text = ctc_text.strip()
    return (element.type in (ElementType.ICON, ElementType.SHAPE) and max(x2 - x1, y2 - y1) <= LETTER_MAX_SIDE
            and len(text) == 1 and text.isalnum())


def lone_letter(ctc_text: str, ocr_text: str, ocr_confidence: float) -> str | None:
    """The letter or digit a candidate box holds where PP-OCR reads the same one as the reader (case
    aside; PP-OCR's case stands), None otherwise.
    click-shape's letters and ascending-numbers' digits were boxed as shapes and icons and lost
    their text; desktop icons that look like a letter (GTK's refresh arrow, a "C") PP-OCR reads
    less sure."""
    mine, theirs = ctc_text.strip(), ocr_text.strip()
    if len(theirs) == 1 and theirs.lower() == mine.lower() and ocr_confidence >= LETTER_OCR:
        return theirs
    return None


# --- bars read as digits -------------------------------------------------------------------------------
BAR_DIGITS = frozenset({"1", "|"})
BAR_ASPECT = 3.0   # a bar is at least this many times as tall as it is wide


def plain_bar(rgb: np.ndarray, box: Sequence[int]) -> bool:
    """Whether the ink in ``box`` is one plain vertical bar: every row one run of the same width at
    the same place (a "1" has its flag at the top, and in many fonts a foot)."""
    found = _ink(rgb, box)
    if found is None:
        return False
    ink = found[0]
    rows = [np.flatnonzero(r) for r in ink if r.any()]
    if len(rows) < 6:
        return False
    lefts = np.array([r[0] for r in rows])
    rights = np.array([r[-1] for r in rows])
    widths = rights - lefts + 1
    solid = all(r.size == r[-1] - r[0] + 1 for r in rows)
    return (solid and int(np.ptp(lefts)) <= 1 and int(np.ptp(rights)) <= 1
            and len(rows) >= BAR_ASPECT * float(np.median(widths)))


def _as_letter(rgb: np.ndarray, element: Element) -> Element | None:
    return element.model_copy(update={"text": "l"}) if plain_bar(rgb, element.bbox) else None


def bars_as_letters(image: Image.Image, elements: list[Element]) -> list[Element]:
    """A lone glyph read as the digit one (or a pipe) whose ink is a plain vertical bar is the letter
    l: identify-shape's "l" was read "1", and the agent answered Number."""
    return rewrite_each(image, elements, lambda e: e.type == ElementType.TEXT and (e.text or "").strip() in BAR_DIGITS,
                    _as_letter)
