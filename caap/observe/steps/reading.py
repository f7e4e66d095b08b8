"""The read stage's own steps: fields cleaned of what shows through them, the boxes the reader reads
in, the reader's reading of every box, and rows wrongly called highlighted.

The reader reads every box of the screen in one batch (``caap.observe.read.inference.Reader``); its
readings (records, CTC texts, and the CTC frames where the text chooser needs them) stay on the
``Look`` for the steps after it.
"""

from __future__ import annotations

from PIL import Image

from caap.elements import Element
from caap.observe.pipeline import Look
from caap.observe.primitives import dominant_colour, on_page_colour, rgb_pixels
from caap.observe.steps.field_ink import reading_boxes, without_foreign_ink
from caap.taxonomy import SUBTYPE, ElementType, attributes_of


def merge_reading(detected: Element, read: Element, type_source: str = "detector") -> Element:
    """One element from the detector's box and class and the reader's record of it.

    ``reader`` (the paper): the reader's type and attributes; an unreadable generation keeps the
    detector's class. The box is the detector's (the reader may have read a narrower one,
    ``reading_boxes``). ``detector``: the detector's class wins a disagreement, and the reader's
    attributes are kept where that class carries them too (text, checked, focused, highlighted;
    the subtype only when both agree on the type) — for a reader whose type accuracy is below the
    detector's.
    """
    if read.type == ElementType.UNKNOWN and not read.text:
        read = read.model_copy(update={"type": detected.type})
    if type_source == "reader" or read.type == detected.type or detected.type == ElementType.UNKNOWN:
        return read.model_copy(update={"score": detected.score, "bbox": detected.bbox})
    carried = set(attributes_of(detected.type)) & set(attributes_of(read.type)) - {SUBTYPE}
    values = {name: getattr(read, name) for name in carried if getattr(read, name) is not None}
    return Element(type=detected.type, bbox=detected.bbox, score=detected.score, id=read.id, **values)


def plain_rows_unhighlighted(image: Image.Image, elements: list[Element]) -> list[Element]:
    """A table or list row the reader calls highlighted while its background is the page's own
    colour is not highlighted: a selected row is filled with a colour of its own. The reader's
    colour statistics see a list's focus outline around its first row and call that row
    selected, and an agent that toggles selections then deselects it again and again. On the
    labelled test screens every highlighted row has a fill of its own (138 of 138), and 1,311 of
    1,399 plain rows sit on the page colour."""
    suspects = [i for i, e in enumerate(elements) if e.highlighted and e.type == ElementType.TABLED_TEXT]
    if not suspects:
        return elements
    rgb = rgb_pixels(image)
    page = dominant_colour(rgb, step=max(1, max(rgb.shape[:2]) // 256))
    out = list(elements)
    for i in suspects:
        if on_page_colour(rgb, out[i].bbox, page):
            out[i] = out[i].model_copy(update={"highlighted": False})
    return out


# --- the steps ------------------------------------------------------------------------------------


def erase_foreign_ink(look: Look, elements: list[Element]) -> list[Element]:
    """The screen the reader and later steps see: every field's value alone, without a second text,
    a caret or trailing controls showing through it (``without_foreign_ink``)."""
    look.replace_image(without_foreign_ink(look.image, elements))
    return elements


def narrow_reading_boxes(look: Look, elements: list[Element]) -> list[Element]:
    """The boxes the readers read in: a row's or button's starts after the icon before its text;
    on desktop windows a keypad key's is its glyphs' own."""
    look.reading_boxes = reading_boxes(look.image, elements, keys=look.parts.screens == "desktop")
    return elements


def read_elements(look: Look, elements: list[Element]) -> list[Element]:
    """Every box read in one batch; the reader's record merged with the detector's box and class."""
    parts = look.parts
    assert parts.reader is not None  # the step needs a reader
    boxes = look.reading_boxes if look.reading_boxes is not None and len(look.reading_boxes) == len(elements) \
        else elements
    look.reading_boxes = boxes  # PP-OCR reads the doubtful ones again in the same boxes
    readings = parts.reader.read(look.image, boxes, type_hints=[e.type for e in elements],
                                 follow_hints=parts.type_source == "detector", log_probs=parts.chooser is not None,
                                 states_by_head=look.states_ahead)
    look.readings = readings
    return [merge_reading(det, got, parts.type_source) for det, got in zip(elements, readings.elements, strict=True)]


def unhighlight_plain_rows(look: Look, elements: list[Element]) -> list[Element]:
    return plain_rows_unhighlighted(look.image, elements)
