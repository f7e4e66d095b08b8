"""States read by the state head (``caap.observe.read.states``) where the reader carries one.

The head reads every element whose type has one of its states (checked, focused, highlighted,
expanded, indeterminate, enabled) from its pixels and replaces the reader's record of those states;
a box read as indeterminate has no ``checked``. A tree row the head reads as not
expanded may be a leaf: ``expanded: False`` says that no children show, not that there are some.
"""

from __future__ import annotations

from caap.elements import Element
from caap.observe.pipeline import Look
from caap.observe.primitives import rgb_pixels
from caap.taxonomy import ElementType


def read_states(look: Look, elements: list[Element]) -> list[Element]:
    reader = look.parts.reader
    head = getattr(reader, "state_head", None)
    if head is None or not elements:
        return elements
    said = head.states(rgb_pixels(look.image), elements)
    look.states_read = True
    out: list[Element] = []
    for element, states in zip(elements, said, strict=True):
        update: dict[str, bool | None] = {
            name: value for name, value in states.items() if getattr(element, name) != value
            and not (element.type == ElementType.ICON and element.checked is None)}
        if states.get("indeterminate"):
            update["checked"] = None  # neither ticked nor clear
        out.append(element.model_copy(update=update) if update else element)
    return out
