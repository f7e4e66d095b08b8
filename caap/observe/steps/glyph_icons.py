"""Icons named by the reader's glyph bank (``caap.observe.glyphs``).

Where a glyph of the bank is drawn (a jQuery UI menu's floppy disk or magnifier, beside its item and
in a task's instruction), the detector has often boxed no icon: it was never taught these glyphs,
and takes the glyph into the text beside it (the instruction's "[magnifier] icon." boxed whole and
read ``•u, icon.``, a submenu's row boxed from its glyph and read ``~r Next``). Before reading,
``add_glyph_icons`` adds an icon over each glyph no icon box holds, and a text, link or row box that
starts or ends with the glyph gives that part up (as the labels box a row's text). After reading,
``name_glyph_icons`` gives each icon holding a glyph the glyph's subtype (the reader's record of an
icon names only the icons it was trained on).
"""

from __future__ import annotations

from collections.abc import Sequence

from caap.elements import Element
from caap.geometry import area, intersection
from caap.observe.glyphs import Found
from caap.taxonomy import ElementType

HELD = 0.5        # a box holding this share of the glyph holds it ...
ICON_AREA = 4.0   # ... and is the glyph's icon unless more than this many times its size (a toolbar boxed whole)
EDGE = 3          # px: a glyph this close to a text box's side starts or ends it
SCORE = 0.5       # the detector confidence an added icon carries
GIVES_WAY = (ElementType.TEXT, ElementType.HYPERLINK, ElementType.TABLED_TEXT)


def _icon_of(elements: Sequence[Element], glyph: tuple[int, int, int, int]) -> int | None:
    return next((i for i, e in enumerate(elements) if e.type == ElementType.ICON
                 and intersection(e.bbox, glyph) >= HELD * area(glyph)
                 and area(e.bbox) <= ICON_AREA * area(glyph)), None)


def add_glyph_icons(elements: list[Element], found: Sequence[Found]) -> list[Element]:
    out = list(elements)
    for f in found:
        g = f.box
        if _icon_of(out, g) is not None:
            continue
        for i, e in enumerate(out):
            if e.type not in GIVES_WAY or intersection(e.bbox, g) < HELD * area(g):
                continue
            x1, y1, x2, y2 = e.bbox
            if g[0] - x1 <= EDGE and x2 - g[2] > EDGE:
                out[i] = e.model_copy(update={"bbox": (g[2] + 1, y1, x2, y2)})
            elif x2 - g[2] <= EDGE and g[0] - x1 > EDGE:
                out[i] = e.model_copy(update={"bbox": (x1, y1, g[0] - 1, y2)})
        out.append(Element(type=ElementType.ICON, bbox=g, subtype=f.subtype, score=SCORE))
    return out


def name_glyph_icons(elements: list[Element], found: Sequence[Found]) -> list[Element]:
    out = list(elements)
    for f in found:
        i = _icon_of(out, f.box)
        if i is not None and out[i].subtype != f.subtype:
            out[i] = out[i].model_copy(update={"subtype": f.subtype})
    return out
