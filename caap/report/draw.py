"""Elements drawn on a screenshot: each box in its type's colour with a label (type, text, states),
for the run reports, dataset contact sheets and ``caap observe --out-image``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from caap.taxonomy import ElementType

# One colour per type, distinct enough on white and on dark screens alike.
TYPE_COLOURS: dict[ElementType, tuple[int, int, int]] = {
    ElementType.TEXT: (31, 119, 180),
    ElementType.HYPERLINK: (23, 190, 207),
    ElementType.TABLED_TEXT: (148, 103, 189),
    ElementType.BUTTON: (214, 39, 40),
    ElementType.DROPDOWN: (255, 127, 14),
    ElementType.INPUT_FIELD: (44, 160, 44),
    ElementType.RADIO: (227, 119, 194),
    ElementType.CHECKBOX: (188, 189, 34),
    ElementType.TEXT_AREA: (0, 128, 96),
    ElementType.DRAGGABLE_TEXT: (140, 86, 75),
    ElementType.RESIZE_HANDLE: (127, 127, 127),
    ElementType.SCROLLBAR: (90, 90, 200),
    ElementType.SHAPE: (255, 0, 255),
    ElementType.ICON: (0, 200, 0),
    ElementType.SLIDER: (255, 187, 120),
    ElementType.TAB: (199, 21, 133),
    ElementType.TREE_ITEM: (205, 133, 63),
    ElementType.PROGRESS_BAR: (64, 224, 208),
    ElementType.UNKNOWN: (0, 0, 0),
}


@lru_cache(maxsize=8)
def label_font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    # DejaVu has the check marks; Pillow's bundled default (load_default(size=...), Pillow >= 10.1
    # with FreeType) does not, and the bare bitmap default is the last resort.
    with_marks = ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    for name in with_marks:
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            pass
    try:
        return ImageFont.load_default(size=size)
    except (TypeError, ImportError, OSError):
        return ImageFont.load_default()


def _render(font: Any, char: str) -> bytes:
    img = Image.new("L", (64, 64))
    ImageDraw.Draw(img).text((8, 8), char, font=font, fill=255)
    return img.tobytes()


@lru_cache(maxsize=16)
def _has_glyph(font: Any, char: str) -> bool:
    """Whether ``font`` draws ``char`` differently from a character it surely lacks (the .notdef box)."""
    try:
        return _render(font, char) != _render(font, "\U0010fffd")
    except Exception:  # any rendering trouble means: do not rely on the glyph
        return False


def element_label(e: Any, font: Any = None, *, text_chars: int = 12) -> str:
    """``button "Submit" F``: type (and subtype), the first ``text_chars`` of the text, ✓/✗ (checked),
    F (focused), H (highlighted), ▾/▸ (expanded or not)."""
    parts = [e.type.value]
    if e.subtype:
        parts.append(e.subtype)
    if e.text:
        t = " ".join(e.text.split())
        parts.append(f'"{t[:text_chars]}{"…" if len(t) > text_chars else ""}"')
    if e.checked is not None:
        marks = ("✓", "✗") if font is None or (_has_glyph(font, "✓") and _has_glyph(font, "✗")) else ("[x]", "[ ]")
        parts.append(marks[0] if e.checked else marks[1])
    if e.focused:
        parts.append("F")
    if e.highlighted:
        parts.append("H")
    if getattr(e, "expanded", None) is not None:  # trace records of old runs have no such field
        marks = ("▾", "▸") if font is None or (_has_glyph(font, "▾") and _has_glyph(font, "▸")) else ("[-]", "[+]")
        parts.append(marks[0] if e.expanded else marks[1])
    return " ".join(parts)


def fit_text(draw: ImageDraw.ImageDraw, text: str, font: Any, width: int) -> str:
    if draw.textlength(text, font=font) <= width:
        return text
    while text and draw.textlength(text + "…", font=font) > width:
        text = text[:-1]
    return text + "…"


def draw_elements(img: Image.Image, elements: Sequence[Any], *, scale: float = 1.0, font: Any = None,
                  with_ids: bool = False) -> Image.Image:
    """The screenshot (scaled by ``scale``) with each element's box in its type's colour and a label
    (type, text, states; the id first when ``with_ids``) above it, below it, or inside it."""
    small = font or label_font(10)
    size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
    # NEAREST keeps small screens' pixels crisp when enlarging; shrinking huge ones needs filtering.
    base = img.convert("RGB").resize(size, Image.Resampling.NEAREST if scale >= 1 else Image.Resampling.BOX)
    # Boxes and labels go on a translucent overlay so the screen under a label stays legible.
    overlay = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    line_h = round(small.size if hasattr(small, "size") else 10) + 2
    labels: list[tuple[tuple[int, int, int, int], str, tuple[int, int, int]]] = []
    for e in elements:
        colour = TYPE_COLOURS.get(e.type, (0, 0, 0))
        x1, y1, x2, y2 = (round(v * scale) for v in e.bbox)
        box = (x1, y1, max(x1, x2 - 1), max(y1, y2 - 1))
        draw.rectangle(box, outline=(*colour, 255), width=1 if scale < 2 else 2)
        label = element_label(e, small)
        if with_ids and getattr(e, "id", None) is not None:
            label = f"{e.id} {label}"
        tw = min(math.ceil(draw.textlength(label, font=small)) + 4, size[0])
        label = fit_text(draw, label, small, tw - 4)
        # Above the box when there is room, else below it (so the box's content stays visible), else inside.
        if box[1] - line_h >= 0:
            ty = box[1] - line_h
        elif box[3] + 1 + line_h <= size[1]:
            ty = box[3] + 1
        else:
            ty = box[1]
        tx = max(0, min(box[0], size[0] - tw))
        labels.append(((tx, ty, tx + tw - 1, ty + line_h - 1), label, colour))
    for rect, label, colour in labels:  # labels after all boxes, so no box line crosses a label
        draw.rectangle(rect, fill=(*colour, 200))
        luminance = 0.299 * colour[0] + 0.587 * colour[1] + 0.114 * colour[2]
        draw.text((rect[0] + 2, rect[1]), label, font=small, fill=(0, 0, 0, 255) if luminance > 140 else (255,) * 4)
    return Image.alpha_composite(base.convert("RGBA"), overlay).convert("RGB")
