"""Values the agent typed, read back.

After the agent types a value into a field, the next look reads the field like any other; a value
typed over something the page draws behind the field (email-inbox's search field lies over the grey
"Results" heading: the typed ``Sonny`` is read ``Snry``) is misread, and an agent that checks what
it typed types it again until it runs out of steps. The agent knows what it typed (``Typed``): where
the reading of the field it typed into differs from that value, PP-OCR reads the field again, as it
is and in its darkest ink alone (``value_cores``), and the value stands if PP-OCR reads exactly it.
A reader agreeing with the typed value letter for letter is the pixels' say, not the agent's: a
field that holds something else (a typo the page corrected, a value the page cleared, a password's
dots) keeps its reading, since PP-OCR does not read the typed value there either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from caap.elements import Element
from caap.geometry import iou
from caap.observe.observation import Typed
from caap.observe.steps.field_ink import value_cores
from caap.taxonomy import ElementType

if TYPE_CHECKING:
    from caap.observe.pipeline import Look

SAME_FIELD = 0.5  # a field overlapping the box a value was typed into this much (IoU) is that field


def typed_field(elements: Sequence[Element], typed: Typed) -> int | None:
    """The index of the input field ``typed`` went into: the one overlapping its box most, by at
    least ``SAME_FIELD``."""
    best, at = SAME_FIELD, None
    for i, e in enumerate(elements):
        if e.type == ElementType.INPUT_FIELD:
            overlap = iou(e.bbox, typed.box)
            if overlap >= best:
                best, at = overlap, i
    return at


def misread_typed_fields(elements: Sequence[Element], typed: Sequence[Typed]) -> list[tuple[int, str]]:
    """(index, typed value) of each field whose reading is not the value typed into it."""
    out: dict[int, str] = {}
    for t in typed:
        i = typed_field(elements, t)
        if i is not None and t.text.strip() and (elements[i].text or "").strip() != t.text.strip():
            out[i] = t.text
    return sorted(out.items())


def confirmed(reading: str, value: str) -> bool:
    """Whether PP-OCR's ``reading`` of a field is the typed ``value`` (spacing at the ends aside)."""
    return reading.strip() == value.strip()


def read_typed_values(look: Look, elements: list[Element]) -> list[Element]:
    """Each field read otherwise than the value typed into it takes the value where PP-OCR reads
    exactly it: in the field as the reader saw it (what shows through fields painted over), or in
    the field's darkest ink alone (``value_cores``: a value typed wholly over a grey heading)."""
    ocr = look.parts.ocr
    if not look.typed or ocr is None:
        return elements
    wanted = misread_typed_fields(elements, look.typed)
    if not wanted:
        return elements
    boxes = [elements[i].bbox for i, _ in wanted]
    kinds = [ElementType.INPUT_FIELD.value] * len(wanted)
    plain = ocr.read(look.image, boxes, kinds)
    cores = ocr.read(value_cores(look.image, [elements[i] for i, _ in wanted]), boxes, kinds)
    out = list(elements)
    for (i, value), *readings in zip(wanted, plain, cores, strict=True):
        reading = next((r for r in readings if confirmed(r.text, value)), None)
        if reading is not None:
            out[i] = out[i].model_copy(update={"text": value.strip(),
                                               "text_confidence": min(max(float(reading.confidence), 0.0), 1.0)})
    return out
