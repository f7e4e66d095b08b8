"""The UI element taxonomy: the one place that says which element types exist, which subtypes they
may carry and which attributes each type has (CAAP Table 2, extended).

Detector classes, reader targets, annotation labels, JSON validation and the prompt format all
read from here.
"""

from __future__ import annotations

from enum import StrEnum


class ElementType(StrEnum):
    TEXT = "text"
    HYPERLINK = "hyperlink"
    TABLED_TEXT = "tabled_text"
    BUTTON = "button"
    DROPDOWN = "dropdown"
    INPUT_FIELD = "input_field"
    RADIO = "radio"
    CHECKBOX = "checkbox"
    TEXT_AREA = "text_area"
    DRAGGABLE_TEXT = "draggable_text"
    RESIZE_HANDLE = "resize_handle"
    SCROLLBAR = "scrollbar"
    SHAPE = "shape"
    ICON = "icon"
    # Only the reader produces this: a generation it could not parse. Never a detector class.
    UNKNOWN = "unknown"


# Attribute names besides the box, in the order the prompt shows them.
TEXT, SUBTYPE, CHECKED, FOCUSED, HIGHLIGHTED = "text", "subtype", "checked", "focused", "highlighted"
ATTRIBUTES: tuple[str, ...] = (TEXT, SUBTYPE, CHECKED, FOCUSED, HIGHLIGHTED)
BOOLEAN_ATTRIBUTES: tuple[str, ...] = (CHECKED, FOCUSED, HIGHLIGHTED)

TYPE_ATTRIBUTES: dict[ElementType, tuple[str, ...]] = {
    ElementType.TEXT: (TEXT, HIGHLIGHTED),
    ElementType.HYPERLINK: (TEXT, HIGHLIGHTED),
    ElementType.TABLED_TEXT: (TEXT, HIGHLIGHTED),
    ElementType.BUTTON: (TEXT, FOCUSED),
    ElementType.DROPDOWN: (TEXT, FOCUSED),
    ElementType.INPUT_FIELD: (TEXT, FOCUSED),
    ElementType.RADIO: (TEXT, CHECKED),
    ElementType.CHECKBOX: (TEXT, CHECKED),
    ElementType.TEXT_AREA: (TEXT, FOCUSED),
    ElementType.DRAGGABLE_TEXT: (TEXT,),
    ElementType.RESIZE_HANDLE: (),
    ElementType.SCROLLBAR: (),
    ElementType.SHAPE: (SUBTYPE,),
    ElementType.ICON: (SUBTYPE, CHECKED),
    ElementType.UNKNOWN: (TEXT,),
}

# Types that are their text (a label, a link, a table cell): such an element always shows some, on
# one line unless it wraps. Snapping fits their boxes to their words; an empty reading of one is a
# misreading that the observer hands to PP-OCR, never an answer.
TEXT_ELEMENT_TYPES: frozenset[ElementType] = frozenset(
    {ElementType.TEXT, ElementType.HYPERLINK, ElementType.TABLED_TEXT, ElementType.DRAGGABLE_TEXT})

SHAPE_SUBTYPES: tuple[str, ...] = ("point", "line", "circle", "triangle", "rectangle")
ICON_SUBTYPES: tuple[str, ...] = (
    "back", "delete", "important", "forward", "reply", "retweet", "like", "share", "menu", "search", "send",
)
SUBTYPES: dict[ElementType, tuple[str, ...]] = {
    ElementType.SHAPE: SHAPE_SUBTYPES,
    ElementType.ICON: ICON_SUBTYPES,
}

# The detector's classes: every type but UNKNOWN, in a fixed order (class index = position).
DETECTOR_CLASSES: tuple[ElementType, ...] = tuple(t for t in ElementType if t is not ElementType.UNKNOWN)


def attributes_of(element_type: ElementType | str) -> tuple[str, ...]:
    return TYPE_ATTRIBUTES[ElementType(element_type)]


def subtypes_of(element_type: ElementType | str) -> tuple[str, ...]:
    return SUBTYPES.get(ElementType(element_type), ())
