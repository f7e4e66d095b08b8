"""Table cells boxed on their text.

caap boxes a ``tabled_text`` on its words, as the DOM labels, the generated pages and the desktop
labeller (``caap.bench.desktop.labels.drawn_box``) do. The detector still boxes some cells whole,
above all right-aligned numbers in a wide spreadsheet column, where the words sit farther from the
box's sides than text snapping moves them (``caap.observe.steps.snap``). ``fit_cells`` fits such a cell
the way the labeller fits a toolkit's cell: to its ink, less the cell's grid lines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, area
from caap.observe.primitives import frame_lines, ink_extent, ink_mask
from caap.taxonomy import ElementType

WHOLE_CELL = 0.5  # a box whose text's ink takes less than this share of it is a whole cell
# px: text starting this near a box's left side is a row's (a list option, boxed across its list
# in the DOM), not a number or date set right or centred in a cell
LEFT_ALIGNED = 12


def cell_ink_box(image: Image.Image, box: Box, pad: int = 1, edge: int = 3) -> Box | None:
    """Where the text of a table cell, list row or menu entry is drawn inside its ``box``: its ink,
    less the cell's own rules (grid lines, a focus frame: lines of ink along the outer ``edge`` px
    covering at least half the box's side), ``pad`` px around; None when nothing else is drawn.
    The toolkits report whole cells; caap's ``tabled_text`` is boxed like any text, on its words,
    as the DOM labels, the generated pages and the observer's snapping box it."""
    pixels = np.asarray(image.crop(box).convert("RGB"))
    if pixels.size == 0:
        return None
    ink = ink_mask(pixels)
    ink[frame_lines(ink, edge)[0]] = False
    ink[:, frame_lines(ink, edge)[1]] = False  # the columns looked at without the rows' lines
    return ink_extent(ink, box, pad)


def fit_cells(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """The elements with each ``tabled_text`` boxed whole (its text's ink under half of it, set right
    or centred) fitted to that ink. Text at a box's left side keeps the box: a list's rows are boxed
    across the list in the DOM labels."""
    out = list(elements)
    for i, e in enumerate(out):
        if e.type != ElementType.TABLED_TEXT:
            continue
        fitted = cell_ink_box(image, e.bbox)
        if fitted is not None and area(fitted) < WHOLE_CELL * area(e.bbox) and \
                fitted[0] - e.bbox[0] > LEFT_ALIGNED:
            out[i] = e.model_copy(update={"bbox": fitted})
    return out
