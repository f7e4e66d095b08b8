"""Field boxes that are a table's row.

A white table row under its grid lines looks like an empty text field: a light frame round a white
face. The detector boxes some such rows' value cells as an ``input_field`` (read-table's last row,
right above its form), and the agent then types into the table. What tells them apart is the frame:
a field's frame ends at its corners, while a row's lines run on along the row, across the other
cells, whose text lies between them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box
from caap.observe.primitives import rgb_pixels
from caap.taxonomy import ElementType

LINE_SEARCH = 3  # px: how far a frame line may lie off the box's top or bottom side
LINE_TOLERANCE = 40  # summed |RGB| difference within one line's colour
LINE_CONTRAST = 60  # summed |RGB| difference between the line and the face right inside it
LINE_COVER = 0.9  # share of the box's width a line runs along
RUNS_ON = 12  # px: a frame line running this far past the box's side is a row's, not the field's
CELL_TYPES = (ElementType.TABLED_TEXT,)


def _line_colour(pixels: np.ndarray, y: int, x1: int, x2: int, inside: int) -> np.ndarray | None:
    """The colour of a line along row ``y`` from ``x1`` to ``x2`` that differs from the row
    ``inside`` (the face inside the frame); None where the row is no such line."""
    if not (0 <= y < pixels.shape[0] and 0 <= inside < pixels.shape[0]) or x2 - x1 < 8:
        return None
    row = pixels[y, x1:x2].astype(int)
    colour = np.median(row, axis=0)
    if np.mean(np.abs(row - colour).sum(axis=1) <= LINE_TOLERANCE) < LINE_COVER:
        return None
    face = pixels[inside, x1:x2].astype(int)
    if np.mean(np.abs(face - colour).sum(axis=1) >= LINE_CONTRAST) < LINE_COVER:
        return None
    return colour


def _frame_line(pixels: np.ndarray, box: Box, side: str) -> tuple[int, np.ndarray] | None:
    """The row and colour of the frame line along ``box``'s top or bottom side (nearest first)."""
    x1, y1, x2, y2 = box
    edge, inward = (y1, 1) if side == "top" else (y2 - 1, -1)
    for off in sorted(range(-LINE_SEARCH, LINE_SEARCH + 1), key=abs):
        y = edge + off
        colour = _line_colour(pixels, y, x1 + 3, x2 - 3, y + 2 * inward)
        if colour is not None:
            return y, colour
    return None


def _runs_on(pixels: np.ndarray, y: int, colour: np.ndarray, start: int, step: int) -> int:
    """How many px the line of ``colour`` on row ``y`` runs on from column ``start`` by ``step``."""
    if not 0 <= start < pixels.shape[1]:
        return 0
    row = pixels[y, start::-1] if step < 0 else pixels[y, start:]
    off = np.abs(row.astype(int) - colour).sum(axis=1) > LINE_TOLERANCE
    return int(np.argmax(off)) if off.any() else len(off)


def _on_a_row(pixels: np.ndarray, field: Element, texts: Sequence[Element]) -> bool:
    box = field.bbox
    # Only a cell on the box's line, beside it, can make it a row: most fields have none.
    if not any(t.bbox[1] >= box[1] - LINE_SEARCH and t.bbox[3] <= box[3] + LINE_SEARCH + 1
               and (t.bbox[2] <= box[0] or t.bbox[0] >= box[2]) for t in texts):
        return False
    top, bottom = _frame_line(pixels, box, "top"), _frame_line(pixels, box, "bottom")
    if top is None or bottom is None:
        return False
    for step, start in ((-1, box[0] - 1), (1, box[2])):
        reach = min(_runs_on(pixels, y, colour, start, step) for y, colour in (top, bottom))
        if reach < RUNS_ON:
            continue
        lo, hi = (start - reach, start) if step < 0 else (start, start + reach)
        # Another cell's text between the two lines: the lines are the row's.
        if any(lo <= t.bbox[0] and t.bbox[2] <= hi and top[0] < t.bbox[1] and t.bbox[3] <= bottom[0] + 1
               for t in texts):
            return True
    return False


def drop_table_row_fields(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements less each ``input_field`` box whose top and bottom frame lines run on, past one of
    its sides, round another cell's text: a table row taken for a field."""
    fields = [e for e in elements if e.type == ElementType.INPUT_FIELD]
    if not fields:
        return list(elements)
    pixels = rgb_pixels(image)
    texts = [e for e in elements if e.type in CELL_TYPES]
    drop = {id(f) for f in fields if _on_a_row(pixels, f, texts)}
    return [e for e in elements if id(e) not in drop]
