"""What the agent typed into which field this episode, for the observer to read back (``Typed``).

The loop reports every action it ran (``after``) with the elements of the screen it was chosen on.
A click on an input field (or the focused field, where typing starts without a click) makes it the
field being typed into, a click elsewhere or Tab or Escape ends that; Control+A selects its value,
so what is typed next replaces it; typing adds to the value the field is known to hold (what the
agent typed there before, else its reading). Keys that edit a value in ways not followed here
(Backspace, Delete, a paste) forget the field's value. The values are kept for the episode, by the
field's box; the observer sets a reading right only where a reader confirms the value.
"""

from __future__ import annotations

from collections.abc import Sequence

from caap.act.actions import PlannedAction
from caap.elements import Element, element_at
from caap.geometry import Box, iou
from caap.observe.observation import Typed
from caap.observe.steps.typed import SAME_FIELD
from caap.taxonomy import ElementType

SELECT_ALL = "press_control_A"
TYPING = "type_text"
PASTE = "press_control_V"
EDITING_KEYS = ("backspace", "delete")  # keys that change a value otherwise than typing does
LEAVING_KEYS = ("tab", "escape")  # keys that take the focus off a field (or may)


class TypedValues:
    """The values typed into fields so far this episode (``typed``), following each action run (``after``)."""

    def __init__(self) -> None:
        self._values: dict[Box, str] = {}
        self._field: Element | None = None
        self._selected = False
        self._screen: Sequence[Element] | None = None  # the screen the last action was chosen on
        self._blurred = False  # since then a click or Tab moved the focus somewhere not followed

    def receiving(self, elements: Sequence[Element]) -> Element | None:
        """The field that keys typed now go to: the one clicked last, else the focused one."""
        if self._field is not None:
            return self._field
        if self._blurred and elements is self._screen:
            return None
        return next((e for e in elements if e.type == ElementType.INPUT_FIELD and e.focused), None)

    def typed(self) -> list[Typed]:
        """The values typed this episode, one per field."""
        return [Typed(box, text) for box, text in self._values.items()]

    def _known(self, field: Element) -> tuple[Box | None, str]:
        """The box a value was typed into that is ``field``'s, and the value it holds."""
        box = tuple(field.bbox)
        for typed_box in self._values:
            if iou(typed_box, box) >= SAME_FIELD:  # type: ignore[arg-type]
                return typed_box, self._values[typed_box]
        return None, field.text or ""

    def after(self, action: PlannedAction, elements: Sequence[Element]) -> None:
        """Follow ``action``, run on the screen of ``elements``."""
        name, mark = action.name, action.spec.mark
        if elements is not self._screen:  # a new screen: its focused field is where keys go, until a click
            self._screen, self._blurred = elements, False
        if mark in ("click", "double_click", "right_click"):
            e = action.element
            if e is None and action.point is not None:  # a click at a point: the field under it, if any
                e = element_at(elements, action.point)
            self._field = e if e is not None and e.type == ElementType.INPUT_FIELD else None
            self._selected, self._blurred = False, True
            return
        keys = str(action.args.get("key", "")).lower().split("+") if name == "press_key" else []
        select_all = name == SELECT_ALL or (keys[-1:] == ["a"] and "ctrl" in keys)
        if self._field is None and not self._blurred and (select_all or name == TYPING):
            self._field = next((e for e in elements if e.type == ElementType.INPUT_FIELD and e.focused), None)
        field = self._field
        if field is None:
            return
        old, value = self._known(field)
        if select_all:
            self._selected = True
        elif name == TYPING:
            text = str(action.args.get("string_to_type", ""))
            if old is not None:
                del self._values[old]
            self._values[tuple(field.bbox)] = text if self._selected else value + text  # type: ignore[index]
            self._selected = False
        elif name == PASTE or (keys[-1:] and keys[-1] in EDITING_KEYS):
            if old is not None:
                del self._values[old]
            self._selected = False
        elif keys[-1:] and keys[-1] in LEAVING_KEYS:
            self._field, self._selected, self._blurred = None, False, True
