"""Element records: one detected-and-read UI element, and the list of them for one screen.

The JSON form is the contract of ``caap observe --json`` (DESIGN §7): ``{"elements": [{"id",
"type", "bbox", "text", "subtype", "checked", "focused", "highlighted", "expanded", "indeterminate",
"enabled", "value", "score", "text_confidence"}], ...}`` with absent attributes as null
(``caap.taxonomy`` says which type carries which). The prompt form is the paper's: centre and extent per axis.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from caap.geometry import Box, area, as_box, centre, contains, intersection, iou, uncovered_part
from caap.taxonomy import (
    ATTRIBUTES,
    BOOLEAN_ATTRIBUTES,
    FRACTION_ATTRIBUTES,
    SUBTYPE,
    VALUE,
    ElementType,
    attributes_of,
    prompt_shows,
    subtypes_of,
)


class Element(BaseModel):
    """One UI element on a captured screen. ``bbox`` is in captured-image pixels (see geometry)."""

    model_config = ConfigDict(extra="forbid", frozen=False, use_enum_values=False)

    id: int | None = Field(default=None, ge=1, description="stable id within an episode; 1-based")
    type: ElementType
    bbox: Box
    text: str | None = None
    subtype: str | None = None
    checked: bool | None = None
    focused: bool | None = None
    highlighted: bool | None = None
    expanded: bool | None = None
    indeterminate: bool | None = None
    enabled: bool | None = None
    value: float | None = Field(default=None, ge=0.0, le=1.0,
                                description="a slider's or progress bar's place in its range, 0 (minimum) to 1")
    score: float | None = Field(default=None, ge=0.0, le=1.0, description="detector confidence")
    text_confidence: float | None = Field(default=None, ge=0.0, le=1.0,
                                          description="how sure the text source (reader or OCR) is of the text")
    visible: bool = True

    @field_validator("bbox", mode="before")
    @classmethod
    def _box(cls, value: Any) -> Box:
        if not isinstance(value, list | tuple):
            raise ValueError("bbox must be a list [x1, y1, x2, y2]")
        return as_box(value)

    @model_validator(mode="after")
    def _attributes_fit_type(self) -> Element:
        allowed = attributes_of(self.type)
        for name in ATTRIBUTES:
            if getattr(self, name) is not None and name not in allowed:
                raise ValueError(
                    f"a {self.type.value} element has no '{name}' attribute "
                    f"(allowed: {', '.join(allowed) or 'none'})"
                )
        if self.subtype is not None and self.subtype not in subtypes_of(self.type):
            raise ValueError(
                f"'{self.subtype}' is not a {self.type.value} subtype "
                f"(one of: {', '.join(subtypes_of(self.type))})"
            )
        return self

    def retyped(self, kind: ElementType, **update: Any) -> Element:
        """A copy typed ``kind``, with ``update`` applied and every attribute that type does not
        carry cleared (a button read focused and retyped a checkbox keeps no focus)."""
        allowed = attributes_of(kind)
        cleared = {name: None for name in ATTRIBUTES if name not in allowed}
        if SUBTYPE not in cleared and self.subtype not in subtypes_of(kind):
            cleared[SUBTYPE] = None
        return self.model_copy(update={**cleared, **update, "type": kind})

    # --- geometry -------------------------------------------------------------------------------
    @property
    def centre(self) -> tuple[int, int]:
        return centre(self.bbox)

    @property
    def label(self) -> str:
        return f"element_{self.id}" if self.id is not None else "element_?"

    # --- JSON -----------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """The observe-contract record: every attribute present, absent ones null."""
        record: dict[str, Any] = {"id": self.id, "type": self.type.value, "bbox": list(self.bbox)}
        for name in ATTRIBUTES:
            record[name] = getattr(self, name)
        record["score"] = self.score
        record["text_confidence"] = self.text_confidence
        if not self.visible:
            record["visible"] = False
        return record

    # --- prompt ---------------------------------------------------------------------------------
    def describe(self, *, with_visibility: bool = False) -> str:
        """``{type: button, X: 50 [2-98], Y: 114 [99-130], text: "Submit", focused: False}``.

        Attributes the type carries but whose value is unknown (null) are left out, so the model
        never reads a guess; so are ``enabled: True``, ``indeterminate: False`` and a button's or icon's
        ``checked: False``, the usual case (``taxonomy.prompt_shows``). A value is a fraction with two decimals.
        """
        x1, y1, x2, y2 = self.bbox
        cx, cy = self.centre
        parts = [f"type: {self.type.value}", f"X: {cx} [{x1}-{x2}]", f"Y: {cy} [{y1}-{y2}]"]
        for name in attributes_of(self.type):
            value = getattr(self, name)
            if value is None or not prompt_shows(self.type, name, value):
                continue
            if name in FRACTION_ATTRIBUTES:
                parts.append(f"{name}: {float(value):.2f}")
            elif name in BOOLEAN_ATTRIBUTES:
                parts.append(f"{name}: {bool(value)}")
            elif name == SUBTYPE:
                parts.append(f"{name}: {value}")
            else:
                parts.append(f"{name}: {quote(value)}")
        if with_visibility or not self.visible:
            parts.append(f"visible: {self.visible}")
        return "{" + ", ".join(parts) + "}"

    def prompt_line(self) -> str:
        return f"- ID: {self.label}, data: {self.describe()}"


def element_at(elements: Sequence[Element] | None, point: tuple[int, int]) -> Element | None:
    """The smallest visible element whose box contains the point."""
    hits = [e for e in elements or () if e.visible and contains(e.bbox, *point)]
    return min(hits, key=lambda e: area(e.bbox), default=None)


STACKED_MIN_PX = 6  # a band of a covered element narrower than this is no place to click it
CONTROL_TYPES = frozenset({ElementType.CHECKBOX, ElementType.RADIO})
CONTROL_WIDTHS = 2.0  # a check box or radio button this many heights wide holds its label


def _inside(a: Box, b: Box) -> bool:
    return b[0] <= a[0] and b[1] <= a[1] and a[2] <= b[2] and a[3] <= b[3]


def click_point(element: Element, elements: Sequence[Element] | None) -> tuple[int, int]:
    """Where a click on ``element`` goes: its centre, unless other visible elements of its type
    overlap part of it (stacked buttons covering one another, click-test-2's ONE and TWO). Then it
    goes to the middle of the largest band of its box that none of them reaches, which is this
    element's whichever lies in front. Boxes that mostly coincide (one thing boxed twice) or that
    hold one another are left alone.

    A check box or radio button boxed with its label (wider than ``CONTROL_WIDTHS`` heights) is
    clicked on its control, a square of its height at the left: a click on the label toggles it on
    a web page or a toolkit's check box, but not in a list's or tree's checkable row, where it picks
    the row (GTK 3's toggle cells, Qt's checkable items)."""
    if element.type in CONTROL_TYPES:
        x1, y1, x2, y2 = element.bbox
        if x2 - x1 >= CONTROL_WIDTHS * (y2 - y1):
            return (int(x1 + (y2 - y1) / 2), int((y1 + y2) / 2))
    part = element.bbox
    for other in elements or ():
        if other is element or other.type != element.type or not other.visible or other.bbox == element.bbox:
            continue
        if (intersection(element.bbox, other.bbox) == 0 or iou(element.bbox, other.bbox) >= 0.5
                or _inside(element.bbox, other.bbox) or _inside(other.bbox, element.bbox)):
            continue
        part = uncovered_part(part, other.bbox)
    if min(part[2] - part[0], part[3] - part[1]) < STACKED_MIN_PX:
        return element.centre
    return centre(part)


NUMBER = re.compile(r"[-−+]?\d+(?:[.,]\d+)?")  # a number as a label shows it: 40, -9, 0.5, 3,14


def value_labels(element: Element, elements: Sequence[Element] | None) -> list[Element]:
    """The texts that show the value of an element that has one (a slider, a progress bar) beside it: a lone
    number (``40``, ``0.5``, ``75 %``) starting within one bar thickness (at least 24 px) of its box, as
    GTK's scales draw their value above or beside the trough, zenity's and Qt's examples beside it. Moving
    the bar redraws them, which is part of acting on the bar, not a change elsewhere on the screen."""
    if VALUE not in attributes_of(element.type):
        return []
    x1, y1, x2, y2 = element.bbox
    reach = max(24, min(x2 - x1, y2 - y1))
    near = (x1 - reach, y1 - reach, x2 + reach, y2 + reach)
    return [e for e in elements or () if e is not element and e.type == ElementType.TEXT and e.text
            and NUMBER.fullmatch(e.text.strip().removesuffix("%").rstrip()) and intersection(e.bbox, near) > 0]


def quote(text: str) -> str:
    """Quote text for the prompt: JSON string escaping, so quotes, backslashes and newlines in OCR
    output can never break the line structure the model reads."""
    return json.dumps(text, ensure_ascii=False)


class ElementFileError(ValueError):
    """An element file that cannot be used; the message names the file and the field."""


def _field_path(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_elements(data: Any, *, source: str = "<data>") -> list[Element]:
    """Elements from observe-contract JSON: ``{"elements": [...]}`` or a bare list."""
    items = data.get("elements") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ElementFileError(f"{source}: expected {{\"elements\": [...]}} or a list of elements")
    elements: list[Element] = []
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ElementFileError(f"{source}: elements[{index}] is not an object")
        try:
            elements.append(Element.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = _field_path(err["loc"])
            field = f".{where}" if where else ""
            raise ElementFileError(f"{source}: elements[{index}]{field}: {err['msg']}") from None
    ids = [e.id for e in elements if e.id is not None]
    if len(ids) != len(set(ids)):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ElementFileError(f"{source}: duplicate element ids {dup}")
    return elements


def load_elements(path: str | Path) -> list[Element]:
    """Read an element file written by ``caap observe --json`` (the first object if JSON Lines)."""
    path = Path(path)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ElementFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ElementFileError(f"{path}: cannot read ({exc})") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        first = raw.strip().splitlines()[0] if raw.strip() else ""
        try:
            data = json.loads(first)
        except json.JSONDecodeError as exc:
            raise ElementFileError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from None
    return parse_elements(data, source=str(path))


def dump_elements(elements: Iterable[Element]) -> dict[str, Any]:
    return {"elements": [e.to_json() for e in elements]}


COORDINATE_NOTE = (
    "(Coordinates read as: X: centre_x [left_x-right_x], Y: centre_y [top_y-bottom_y], in screen pixels "
    "from the top-left corner of the captured area.)"
)


def render_element_list(elements: Sequence[Element]) -> str:
    """The element list block of the prompt, one line per element, in the given order."""
    if not elements:
        return "(no elements detected: the screen looks empty)"
    return "\n".join(e.prompt_line() for e in elements)
