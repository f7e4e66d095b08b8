"""The UI element taxonomy: the one place that says which element types exist, which subtypes they
may carry and which attributes each type has (CAAP Table 2, extended).

Detector classes, reader targets, annotation labels, JSON validation and the prompt format all
read from here.

The paper's 14 types come first and keep their meaning; the types after them were added for
desktop toolkits and generated UIs, where a widget has no paper type that tells the agent how to
act on it. Widgets that do map without loss are labelled with the paper's type:

- toggle switch -> checkbox (a state flipped by a click: ``checked``);
- toggle button (a button that stays down: a segmented control's segment, a stack switcher's
  page button, a tool button such as Bold) -> button with ``checked`` true while it is held down;
  a push button never stays down, so its ``checked`` is false;
- spin button -> input_field (its value is typed; the arrows, where drawn, are buttons or icons);
- menu-bar title, menu entry, list row, table cell -> tabled_text (``highlighted`` while
  selected or open), as MiniWoB's own menus are labelled;
- a date or time picker -> the input fields, buttons and table cells it is made of.

The added types:

- slider: the track (the agent drags the thumb along it or clicks a point of it);
- tab: a page tab (``highlighted`` on the one shown);
- tree_item: a row of a tree (``expanded`` when its children show; null for a leaf);
- progress_bar: a bar that only reports (nothing to click; the agent waits on it).

States beyond the paper's (DESIGN §6: states are perception):

- indeterminate: a check box or radio button drawn neither ticked nor clear (GTK "inconsistent",
  HTML ``indeterminate``, ``aria-checked="mixed"``); its ``checked`` is then null;
- enabled: false on a greyed-out control, which takes no input and is no target;
- value: where a slider's thumb or a progress bar's fill stands along it, as a fraction from 0.0
  (the left end, or the bottom of a vertical one) to 1.0: what the pixels show. The labellers turn a
  toolkit's range into it (a vertical scale drawn with its minimum at the top counts from the
  bottom). A spin box is an input field: its value is its text.

Detector weights trained before a type was added keep working: their classes are a prefix of
``DETECTOR_CLASSES`` (``PAPER_TYPES`` for the first release).
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
    # Added after the paper (see the module docstring); always append, never reorder: the class
    # index of a type is its position.
    SLIDER = "slider"
    TAB = "tab"
    TREE_ITEM = "tree_item"
    PROGRESS_BAR = "progress_bar"
    # Only the reader produces this: a generation it could not parse. Never a detector class.
    UNKNOWN = "unknown"


# Attribute names besides the box, in the order the prompt shows them.
TEXT, SUBTYPE, CHECKED, FOCUSED, HIGHLIGHTED = "text", "subtype", "checked", "focused", "highlighted"
EXPANDED, INDETERMINATE, ENABLED, VALUE = "expanded", "indeterminate", "enabled", "value"
ATTRIBUTES: tuple[str, ...] = (TEXT, SUBTYPE, CHECKED, FOCUSED, HIGHLIGHTED, EXPANDED, INDETERMINATE, ENABLED, VALUE)
BOOLEAN_ATTRIBUTES: tuple[str, ...] = (CHECKED, FOCUSED, HIGHLIGHTED, EXPANDED, INDETERMINATE, ENABLED)
# Numeric attributes: a fraction in [0, 1].
FRACTION_ATTRIBUTES: tuple[str, ...] = (VALUE,)
# Booleans whose usual value the prompt leaves out (almost every control is enabled and not
# indeterminate): only the exception is worth the model's attention and the prompt's length.
PROMPT_ONLY_IF: dict[str, bool] = {ENABLED: False, INDETERMINATE: True}
# The same for one type's attribute: nearly every button or icon is a push button, never held down.
TYPE_PROMPT_ONLY_IF: dict[tuple[str, str], bool] = {("button", CHECKED): True, ("icon", CHECKED): True}

TYPE_ATTRIBUTES: dict[ElementType, tuple[str, ...]] = {
    ElementType.TEXT: (TEXT, HIGHLIGHTED),
    ElementType.HYPERLINK: (TEXT, HIGHLIGHTED),
    ElementType.TABLED_TEXT: (TEXT, HIGHLIGHTED, ENABLED),
    ElementType.BUTTON: (TEXT, CHECKED, FOCUSED, ENABLED),
    ElementType.DROPDOWN: (TEXT, FOCUSED, ENABLED),
    ElementType.INPUT_FIELD: (TEXT, FOCUSED, ENABLED),
    ElementType.RADIO: (TEXT, CHECKED, INDETERMINATE, ENABLED),
    ElementType.CHECKBOX: (TEXT, CHECKED, INDETERMINATE, ENABLED),
    ElementType.TEXT_AREA: (TEXT, FOCUSED, ENABLED),
    ElementType.DRAGGABLE_TEXT: (TEXT,),
    ElementType.RESIZE_HANDLE: (),
    ElementType.SCROLLBAR: (),
    ElementType.SHAPE: (SUBTYPE,),
    ElementType.ICON: (SUBTYPE, CHECKED, ENABLED),
    ElementType.SLIDER: (ENABLED, VALUE),
    ElementType.TAB: (TEXT, HIGHLIGHTED, ENABLED),
    ElementType.TREE_ITEM: (TEXT, HIGHLIGHTED, EXPANDED),
    ElementType.PROGRESS_BAR: (VALUE,),
    ElementType.UNKNOWN: (TEXT,),
}

# Types that are their text (a label, a link, a table cell): such an element always shows some, on
# one line unless it wraps. Snapping fits their boxes to their words; an empty reading of one is a
# misreading that the observer hands to PP-OCR, never an answer.
TEXT_ELEMENT_TYPES: frozenset[ElementType] = frozenset(
    {ElementType.TEXT, ElementType.HYPERLINK, ElementType.TABLED_TEXT, ElementType.DRAGGABLE_TEXT})

SHAPE_SUBTYPES: tuple[str, ...] = ("point", "line", "circle", "triangle", "rectangle")
# The paper's icons (its e-mail and social-media tasks), which the reader names, then toolbar and menu
# glyphs named by the reader's glyph bank (``caap.observe.glyphs``: a jQuery UI menu's floppy disk,
# magnifiers, player controls) so that a task naming an item by its picture can be matched.
GLYPH_ICON_SUBTYPES: tuple[str, ...] = ("save", "print", "zoom_in", "zoom_out", "previous", "stop", "play", "next")
ICON_SUBTYPES: tuple[str, ...] = (
    "back", "delete", "important", "forward", "reply", "retweet", "like", "share", "menu", "search", "send",
    *GLYPH_ICON_SUBTYPES,
)
SUBTYPES: dict[ElementType, tuple[str, ...]] = {
    ElementType.SHAPE: SHAPE_SUBTYPES,
    ElementType.ICON: ICON_SUBTYPES,
}

# The detector's classes: every type but UNKNOWN, in a fixed order (class index = position).
DETECTOR_CLASSES: tuple[ElementType, ...] = tuple(t for t in ElementType if t is not ElementType.UNKNOWN)
# The CAAP paper's 14 types (Table 2): the classes of detectors trained before the taxonomy grew.
PAPER_TYPES: tuple[ElementType, ...] = DETECTOR_CLASSES[:14]


def attributes_of(element_type: ElementType | str) -> tuple[str, ...]:
    return TYPE_ATTRIBUTES[ElementType(element_type)]


def prompt_default(element_type: ElementType | str, name: str) -> bool | None:
    """The value the prompt leaves unsaid, and so implies when it says nothing (``PROMPT_ONLY_IF``,
    ``TYPE_PROMPT_ONLY_IF``): True for ``enabled``, False for ``indeterminate`` and a button's or
    icon's ``checked``; None where every known value is said."""
    only = TYPE_PROMPT_ONLY_IF.get((ElementType(element_type).value, name), PROMPT_ONLY_IF.get(name))
    return None if only is None else not only


def prompt_shows(element_type: ElementType | str, name: str, value: object) -> bool:
    """Whether the prompt writes this known attribute value."""
    usual = prompt_default(element_type, name)
    return usual is None or bool(value) != usual


def subtypes_of(element_type: ElementType | str) -> tuple[str, ...]:
    return SUBTYPES.get(ElementType(element_type), ())
