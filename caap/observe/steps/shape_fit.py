"""Small figures' boxes fitted to the figure the screenshot shows.

The detector places a box's sides to within a pixel or two, which is nothing for a button and
everything for an 8 px dot: a box one pixel loose on each side of an 8 px figure overlaps it by
only 0.64, and two pixels on one axis bring it under one half. The figure itself is easy to see:
one blob of ink on a plain background. ``fit_small_shapes`` moves each side of a small ``shape``
box to the blob under the box's middle. A side where the blob runs out of the box (a grid line or
an axis through the figure) stays where the detector put it, and a box whose middle holds no ink,
or whose blob is much smaller than the box (a ring drawn thin, a figure in parts), is left as it is.

Icons are boxed on their picture, as the desktop labeller boxes them (``ink_box`` with a ring: what
differs from the colour round the toolkit's box). The detector often boxes a flat icon button's
padding with it: a 10 px glyph in a 15 px box overlaps its label by less than one half.
``fit_icons`` fits each icon box the same way, so a framed button (``caap.observe.steps.frames``), whose
frame is ink, keeps its box and a flat one shrinks to its glyph.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box
from caap.observe.primitives import INK_SUM, background_colour, ink_extent, ink_mask
from caap.observe.steps.boxes import rebox
from caap.taxonomy import ElementType

MAX_SIDE = 24  # px: larger figures are boxed well enough by the detector
MARGIN = 2  # px looked at round the box: a figure the box cuts is seen whole
MIN_SHARE = 0.3  # the fitted box keeps at least this share of the detected box's area
ICON_MAX_SIDE = 48  # px: larger icon boxes are pictures and panels, fitted well enough
ICON_RING = 2  # px round an icon box whose colour is its background
ICON_MIN_SIDE = 6  # px: a fitted icon thinner than this (with its 1 px pad) is one stroke of it (a dash)


def fitted_shape_box(pixels: np.ndarray, box: Box) -> Box:
    """``box`` (a small figure in ``pixels``, an RGB screenshot) fitted to the blob of ink under
    its middle; ``box`` itself where that is not one clear figure."""
    height, width = pixels.shape[:2]
    x1, y1, x2, y2 = box
    rx1, ry1, rx2, ry2 = max(0, x1 - MARGIN), max(0, y1 - MARGIN), min(width, x2 + MARGIN), min(height, y2 + MARGIN)
    region = pixels[ry1:ry2, rx1:rx2].astype(np.int32)
    if region.shape[0] < 3 or region.shape[1] < 3:
        return box
    ring = np.concatenate([region[0], region[-1], region[:, 0], region[:, -1]])
    ink = ink_mask(region, background_colour(ring.reshape(-1, 1, 3)))
    cy, cx = (y1 + y2) // 2 - ry1, (x1 + x2) // 2 - rx1
    near = np.argwhere(ink[max(0, cy - 1):cy + 2, max(0, cx - 1):cx + 2])
    if not len(near):
        return box
    import cv2  # the vision extra's, as the detector itself

    _, labels = cv2.connectedComponents(ink.astype(np.uint8), connectivity=8)
    blob = labels == labels[max(0, cy - 1) + int(near[0][0]), max(0, cx - 1) + int(near[0][1])]
    rows, cols = np.flatnonzero(blob.any(axis=1)), np.flatnonzero(blob.any(axis=0))
    fx1, fy1, fx2, fy2 = rx1 + int(cols[0]), ry1 + int(rows[0]), rx1 + int(cols[-1]) + 1, ry1 + int(rows[-1]) + 1
    # A blob reaching the looked-at region's edge runs on past the figure (a line through it).
    fx1 = x1 if cols[0] == 0 and rx1 > 0 else fx1
    fy1 = y1 if rows[0] == 0 and ry1 > 0 else fy1
    fx2 = x2 if cols[-1] == region.shape[1] - 1 and rx2 < width else fx2
    fy2 = y2 if rows[-1] == region.shape[0] - 1 and ry2 < height else fy2
    fitted = (fx1, fy1, fx2, fy2)
    if fx2 - fx1 < 3 or fy2 - fy1 < 3 or (fx2 - fx1) * (fy2 - fy1) < MIN_SHARE * (x2 - x1) * (y2 - y1):
        return box
    return fitted


def fit_small_shapes(image: Image.Image, elements: Sequence[Element], max_side: int = MAX_SIDE) -> list[Element]:
    """The elements with each small ``shape`` box (no side over ``max_side`` px) fitted to its figure."""
    return rebox(image, elements, ElementType.SHAPE, max_side, fitted_shape_box)


def ring_colour(image: Image.Image, box: Box, ring: int) -> np.ndarray:
    """The most common colour of the ``ring`` px round ``box`` (int32 RGB)."""
    x1, y1, x2, y2 = box
    around = np.asarray(image.crop((max(0, x1 - ring), max(0, y1 - ring), min(image.width, x2 + ring),
                                    min(image.height, y2 + ring))).convert("RGB"))
    edge = np.concatenate([around[:ring].reshape(-1, 3), around[-ring:].reshape(-1, 3),
                           around[:, :ring].reshape(-1, 3), around[:, -ring:].reshape(-1, 3)])
    return background_colour(edge.reshape(-1, 1, 3)).astype(np.int32)


def ink_box(image: Image.Image, box: Box, pad: int = 1, ring: int = 0) -> Box | None:
    """The part of ``box`` (image pixels) where something is drawn, ``pad`` px around; None when
    the box shows only its background. The background is the box's most common colour, or with
    ``ring`` that of the ``ring`` px round it (a picture may fill its box: a colour swatch)."""
    pixels = np.asarray(image.crop(box).convert("RGB"))
    if pixels.size == 0:
        return None
    ink = ink_mask(pixels, ring_colour(image, box, ring), INK_SUM) if ring else ink_mask(pixels)
    return ink_extent(ink, box, pad)


def fit_icons(image: Image.Image, elements: Sequence[Element], max_side: int = ICON_MAX_SIDE) -> list[Element]:
    """The elements with each icon box (no side over ``max_side`` px) fitted to what differs from
    the colour round it, 1 px around; a fit thinner than ``ICON_MIN_SIDE`` keeps the box."""

    def fit(_: np.ndarray, box: Box) -> Box | None:
        fitted = ink_box(image, box, ring=ICON_RING)
        if fitted is None or min(fitted[2] - fitted[0], fitted[3] - fitted[1]) < ICON_MIN_SIDE:
            return None
        return fitted

    return rebox(image, elements, ElementType.ICON, max_side, fit)
