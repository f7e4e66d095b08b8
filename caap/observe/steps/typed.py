"""Values the agent typed, read back.

After the agent types a value into a field, the next look reads the field like any other; a value
typed over something the page draws behind the field (email-inbox's search field lies over the grey
"Results" heading: the typed ``Sonny`` is read ``Snry``) is misread, and an agent that checks what
it typed types it again until it runs out of steps. The agent knows what it typed (``Typed``): where
the reading of the field it typed into differs from that value, PP-OCR reads the field again, as it
is and in its darkest ink alone (``value_cores``), and the value stands where the darkest-ink
reading shows no letter more than it and the readings together see every letter of it
(``confirmed``). That is the pixels' say, not the agent's: a
field that holds something else (a value the page corrected, cut short or cleared, a password's
dots) keeps its reading, since no reader sees the typed value's missing letters there.
"""

from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from caap.elements import Element
from caap.geometry import iou
from caap.observe.observation import Typed
from caap.observe.steps.field_ink import value_cores
from caap.taxonomy import ElementType

if TYPE_CHECKING:
    from caap.observe.pipeline import Look

SAME_FIELD = 0.5  # a field overlapping the box a value was typed into this much (IoU) is that field
FAR = 0.34        # a darkest-ink reading more edits off the typed value than this share of it confirms nothing


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


def _matched(text: str, value: str) -> tuple[list[bool], bool, int]:
    """Aligned with ``value`` (``difflib``): which of its letters ``text`` shows in a matching run,
    whether ``text`` has letters the value has not (more in some place than the value there), and
    how many letters the two differ by."""
    seen = [False] * len(value)
    more, edits = False, 0
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, value, text, autojunk=False).get_opcodes():
        if tag == "equal":
            seen[i1:i2] = [True] * (i2 - i1)
        else:
            edits += max(i2 - i1, j2 - j1)
            more = more or j2 - j1 > i2 - i1
    return seen, more, edits


def confirmed(core: str, others: Sequence[str], value: str) -> bool:
    """Whether a field's readings show the typed ``value``: ``core`` (PP-OCR in the field's darkest
    ink, the surest of a dark value over lighter ink) and ``others`` (the reader's, PP-OCR's as
    drawn). One of them reading exactly the value does; else the core reading must be at most
    ``FAR`` edits off it, add no letter to it, and each letter it misses must stand in another
    reading. ``Anne-Corinne`` read ``Anne-Coinne`` in the darkest ink and ``ArneCorinne`` as drawn
    is confirmed (the r the one misses the other sees); ``AnneCorinne`` or ``Ann-Corinne`` said
    typed there is not (the darkest ink shows a letter more), nor ``Sunny`` over ``Sonny`` (no reading
    has its u), nor a value the page cut short (no reading has its end)."""
    value = value.strip()
    texts = [t.strip() for t in (core, *others)]
    if not value or value in texts:
        return bool(value)
    seen, more, edits = _matched(texts[0], value)
    if more or edits > FAR * len(value):
        return False
    for text in texts[1:]:
        if all(seen):
            break
        theirs, _, _ = _matched(text, value)
        seen = [a or b for a, b in zip(seen, theirs, strict=True)]
    return all(seen)


def read_typed_values(look: Look, elements: list[Element]) -> list[Element]:
    """Each field read otherwise than the value typed into it takes the value where the readings of
    it confirm the value (``confirmed``): the reader's, and PP-OCR's in the field as the reader saw
    it (what shows through fields painted over), as the screen was taken, and in its darkest ink
    alone (``value_cores``: a value typed wholly over a grey heading)."""
    ocr = look.parts.ocr
    if not look.typed or ocr is None:
        return elements
    wanted = misread_typed_fields(elements, look.typed)
    if not wanted:
        return elements
    boxes = [elements[i].bbox for i, _ in wanted]
    kinds = [ElementType.INPUT_FIELD.value] * len(wanted)
    fields = [elements[i] for i, _ in wanted]
    plain = ocr.read(look.image, boxes, kinds)
    cores = ocr.read(value_cores(look.image, fields), boxes, kinds)
    # The screen as taken too, where a step painted the field's stray ink over: painting out a grey
    # heading under the value can take a letter of the value with it (``Jorie`` read ``Jore``, the
    # F of ``Feliza`` read ``-``). Either darkest-ink reading may confirm the value.
    painted = look.screen is not look.image
    taken = ocr.read(look.screen, boxes, kinds) if painted else plain
    taken_cores = ocr.read(value_cores(look.screen, fields), boxes, kinds) if painted else cores
    out = list(elements)
    for (i, value), drawn, core, shown, shown_core in zip(wanted, plain, cores, taken, taken_cores, strict=True):
        others = [drawn.text, shown.text, out[i].text or ""]
        if confirmed(core.text, [shown_core.text, *others], value) \
                or confirmed(shown_core.text, [core.text, *others], value):
            confidence = max(float(drawn.confidence), float(core.confidence))
            out[i] = out[i].model_copy(update={"text": value.strip(),
                                               "text_confidence": min(max(confidence, 0.0), 1.0)})
    return out
