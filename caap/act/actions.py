"""The action registry: every action the agent can take, each defined exactly once.

From one ``ActionSpec`` come its OpenAI tool schema, its line in the text-mode prompt, the
validation of the arguments a model proposes (including "is that element on screen?"), and the
executor primitives it performs. Adding an action means adding one ``register(...)`` call here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from caap.act.executor import Executor
from caap.act.secrets import Secrets
from caap.elements import Element, click_point, quote

ParamKind = Literal["integer", "number", "string"]


class ActionError(Exception):
    """A proposed action that cannot be performed. ``code`` is stable; ``message`` is what the next
    prompt tells the model."""

    def __init__(self, code: str, message: str, action: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.action = action

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "action": self.action}


@dataclass(frozen=True)
class Param:
    name: str
    kind: ParamKind
    description: str
    required: bool = True
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    element: bool = False  # the value is an element id that must be on the current screen
    coordinate: Literal["x", "y"] | None = None  # a pixel coordinate inside the captured area
    # For strings with a grammar rather than a fixed list: returns the canonical form or None.
    normalise: Callable[[str], str | None] | None = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind, "description": self.description}
        if self.choices:
            out["enum"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        if not self.required and self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class ScreenState:
    """What validation needs to know about the current screen."""

    elements: Sequence[Element]
    width: int
    height: int

    def element(self, element_id: int) -> Element | None:
        for e in self.elements:
            if e.id == element_id:
                return e
        return None


@dataclass
class PlannedAction:
    """A validated action bound to the current screen: ready to execute or to show in a dry run."""

    name: str
    args: dict[str, Any]
    element: Element | None = None
    point: tuple[int, int] | None = None  # captured-image pixel the action aims at, if any

    @property
    def spec(self) -> ActionSpec:
        return REGISTRY[self.name]

    @property
    def terminal(self) -> bool:
        return self.spec.terminal is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "args": self.args,
            "element": self.element.to_json() if self.element else None,
            "point": list(self.point) if self.point else None,
        }

    def describe(self) -> str:
        """The action as the history shows it: its name plus the element it acted on, described as
        the model saw it (the id alone means nothing a few steps later), in braces."""
        return "{" + describe_action(self.name, self.args, self.element, with_id=True) + "}"


def describe_action(name: str, args: dict[str, Any], element: Element | None, *, with_id: bool) -> str:
    """``name: NAME, arg: {...}``: an action on an element as the history and the demonstrations show
    it. The element is described as the model saw it; ``with_id`` keeps its id first (the history of
    this episode), without it the id is left out (a demonstration of another episode, whose ids mean
    nothing here)."""
    rest = {k: v for k, v in args.items() if k != "element_id" or (element is None and with_id)}
    inner: list[str] = []
    if element is not None:
        if with_id:
            inner.append(f"element_id: {element.id}")
        inner.append(element.describe()[1:-1])
    inner.extend(f"{k}: {_fmt(v)}" for k, v in rest.items())
    return f"name: {name}" + (", arg: {" + ", ".join(inner) + "}" if inner else "")


def _fmt(value: Any) -> str:
    return quote(value) if isinstance(value, str) else str(value)


Perform = Callable[[Executor, PlannedAction], None]


# How an action is drawn on a screenshot: a click (left, right, double) at its point, a hover, the
# three parts of a drag, a scroll arrow, a label for typed text, keys or a wait; "none" for the
# actions that touch nothing (done, fail).
Mark = Literal["click", "right_click", "double_click", "hover", "press", "drag", "release", "scroll",
               "type", "keys", "wait", "none"]


@dataclass(frozen=True)
class ActionSpec:
    name: str
    description: str
    params: tuple[Param, ...]
    perform: Perform | None
    aliases: tuple[str, ...] = ()
    terminal: Literal["done", "fail"] | None = None
    from_paper: bool = False
    group: str = field(default="mouse")
    # What the action leaves the left button as: a run that ends between a press and its release
    # lets go of the button, so no drag stays held on the user's desktop.
    button: Literal["pressed", "released"] | None = None
    # How the action shows on a screenshot of the step (the run report draws it so).
    mark: Mark = "none"

    # --- derived views --------------------------------------------------------------------------
    @property
    def targets_element(self) -> bool:
        """Whether the action names an element of the screen (the rest act on a point or the focus)."""
        return any(p.element for p in self.params)

    @property
    def acts_on_screen(self) -> bool:
        """Whether the action sends input to the screen: ``done``, ``fail`` and ``wait`` do not, so
        they are no step of a trajectory or a demonstration."""
        return self.group != "control"

    def tool_schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry for this action."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.schema() for p in self.params},
                    "required": [p.name for p in self.params if p.required],
                    "additionalProperties": False,
                },
            },
        }

    def text_line(self) -> str:
        """The action's entry in the text-mode list of candidate actions."""
        sig = ", ".join(f"{p.name}: {p.kind}{'' if p.required else ' (optional)'}" for p in self.params)
        lines = [f"- functions.{self.name}({sig}): {self.description}"]
        for p in self.params:
            extra = f" One of: {', '.join(p.choices)}." if p.choices and len(p.choices) <= 12 else ""
            lines.append(f"    {p.name}: {p.description}{extra}")
        return "\n".join(lines)

    # --- validation -----------------------------------------------------------------------------
    def bind(self, raw_args: dict[str, Any], screen: ScreenState) -> PlannedAction:
        """Validate arguments against this definition and the current screen."""
        known = {p.name for p in self.params}
        unknown = sorted(set(raw_args) - known)
        if unknown:
            raise ActionError(
                "bad_argument",
                f"{self.name} takes {', '.join(sorted(known)) or 'no arguments'}; "
                f"got unexpected {', '.join(unknown)}",
                self.name,
            )
        args: dict[str, Any] = {}
        element: Element | None = None
        for p in self.params:
            if p.name not in raw_args or raw_args[p.name] is None:
                if p.required:
                    raise ActionError("missing_argument", f"{self.name} needs '{p.name}'", self.name)
                if p.default is not None:
                    args[p.name] = p.default
                continue
            value = _coerce(self.name, p, raw_args[p.name])
            if p.element:
                element = screen.element(value)
                if element is None:
                    raise ActionError(
                        "unknown_element",
                        f"element_{value} is not on the current screen; use an id from the element list",
                        self.name,
                    )
                if not element.visible:
                    raise ActionError(
                        "invisible_element",
                        f"element_{value} is no longer visible; act only on visible elements",
                        self.name,
                    )
            if p.coordinate == "x" and not 0 <= value < screen.width:
                raise ActionError(
                    "out_of_bounds", f"x={value} is outside the screen (0-{screen.width - 1})", self.name
                )
            if p.coordinate == "y" and not 0 <= value < screen.height:
                raise ActionError(
                    "out_of_bounds", f"y={value} is outside the screen (0-{screen.height - 1})", self.name
                )
            args[p.name] = value
        point: tuple[int, int] | None = None
        if element is not None:
            point = click_point(element, screen.elements)
        elif "x" in args and "y" in args:
            point = (int(args["x"]), int(args["y"]))
        return PlannedAction(self.name, args, element, point)


_BOOL_WORDS = {"true": True, "false": False}


def _coerce(action: str, p: Param, value: Any) -> Any:
    def bad(why: str) -> ActionError:
        return ActionError("bad_argument", f"{action}: '{p.name}' {why} (got {value!r})", action)

    if p.kind == "string":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise bad("must be a string")
        value = str(value)
        if p.choices:
            match = {c.lower(): c for c in p.choices}.get(value.strip().lower())
            if match is None:
                raise bad(f"must be one of {', '.join(p.choices)}")
            value = match
        if p.normalise:
            canonical = p.normalise(value)
            if canonical is None:
                raise bad(p.description)
            value = canonical
        return value

    if isinstance(value, bool):
        raise bad(f"must be {'an integer' if p.kind == 'integer' else 'a number'}")
    if isinstance(value, str):
        text = value.strip()
        if p.element:
            text = re.sub(r"^(?:element|elem|id)[_\s#-]*", "", text, flags=re.IGNORECASE)
        try:
            number = float(text)
        except ValueError:
            raise bad(f"must be {'an integer' if p.kind == 'integer' else 'a number'}") from None
    elif isinstance(value, int | float):
        number = float(value)
    else:
        raise bad("must be a number")
    if not math.isfinite(number):
        raise bad("must be finite")
    if p.kind == "integer":
        if number != int(number):
            if p.element:
                raise bad("must be a whole element id")
            number = round(number)
        out: Any = int(number)
    else:
        out = number
    if p.minimum is not None and out < p.minimum:
        raise bad(f"must be at least {p.minimum:g}")
    if p.maximum is not None and out > p.maximum:
        raise bad(f"must be at most {p.maximum:g}")
    return out


# --- keys -------------------------------------------------------------------------------------
MODIFIERS = ("ctrl", "shift", "alt", "meta")
KEYS = (
    "enter", "tab", "escape", "backspace", "delete", "space", "up", "down", "left", "right",
    "home", "end", "pageup", "pagedown", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10",
    "f11", "f12",
)
_KEY_ALIASES = {
    "return": "enter", "esc": "escape", "del": "delete", "pgup": "pageup", "pgdn": "pagedown",
    "page_up": "pageup", "page_down": "pagedown", "arrowup": "up", "arrowdown": "down",
    "arrowleft": "left", "arrowright": "right", "control": "ctrl", "cmd": "meta", "super": "meta",
    "win": "meta", "spacebar": "space",
}


def _normalise_key(value: str) -> str | None:
    """'Shift+Tab', 'ctrl-a', 'RETURN' → 'shift+tab', 'ctrl+a', 'enter'; None if not a key."""
    pieces = [p.strip().lower() for p in re.split(r"\s*[+-]\s*", value.strip()) if p.strip()]
    if not pieces:
        return None
    pieces = [_KEY_ALIASES.get(p, p) for p in pieces]
    *mods, key = pieces
    if any(m not in MODIFIERS for m in mods) or len(set(mods)) != len(mods):
        return None
    if key not in KEYS and not (len(key) == 1 and key.isprintable() and mods):
        return None
    return "+".join([*mods, key])


def split_keys(key: str) -> list[str]:
    return key.split("+") if key != "+" else ["+"]


# --- the registry -----------------------------------------------------------------------------
REGISTRY: dict[str, ActionSpec] = {}
_ALIASES: dict[str, str] = {}


def register(spec: ActionSpec) -> ActionSpec:
    for name in (spec.name, *spec.aliases):
        key = name.lower()
        if key in _ALIASES:
            raise ValueError(f"action name {name!r} registered twice")
        _ALIASES[key] = spec.name
    REGISTRY[spec.name] = spec
    return spec


def lookup(name: str) -> ActionSpec:
    """Find an action by name or alias, forgiving case and a ``functions.`` prefix."""
    key = name.strip().strip("`*\"' ").lower()
    key = re.sub(r"^(?:functions|function|tools)\.", "", key)
    spec_name = _ALIASES.get(key)
    if spec_name is None:
        raise ActionError(
            "unknown_action",
            f"there is no action called '{name.strip()}'; choose one of: {', '.join(REGISTRY)}",
            name.strip(),
        )
    return REGISTRY[spec_name]


def actions(names: Iterable[str] | None = None) -> list[ActionSpec]:
    return list(REGISTRY.values()) if names is None else [lookup(n) for n in names]


def tool_schemas(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    return [spec.tool_schema() for spec in actions(names)]


def text_catalogue(names: Iterable[str] | None = None) -> str:
    return "\n".join(spec.text_line() for spec in actions(names))


def execute(action: PlannedAction, executor: Executor, secrets: Secrets | None = None) -> None:
    """Perform a planned action with the executor's primitives (terminal actions do nothing).
    ``secrets``: their placeholders in the action's text are filled in for the executor alone; the
    action itself, as the loop records it, keeps them."""
    perform = action.spec.perform
    if perform is None:
        return
    if secrets:
        action = replace(action, args={k: secrets.fill(v) if isinstance(v, str) else v for k, v in action.args.items()})
    perform(executor, action)


def _point(a: PlannedAction) -> tuple[int, int]:
    assert a.point is not None
    return a.point


_SCROLL_VECTORS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def _scroll(ex: Executor, a: PlannedAction) -> None:
    ux, uy = _SCROLL_VECTORS[a.args["direction"]]
    amount = int(a.args["amount"])
    ex.scroll(*_point(a), dx=ux * amount, dy=uy * amount)


ELEMENT_ID = Param(
    "element_id",
    "integer",
    "Id of the screen element to act on: the N of element_N in the element list.",
    minimum=1,
    element=True,
)
X = Param("x", "integer", "Horizontal pixel position, counted from the left edge of the screen.",
          minimum=0, coordinate="x")
Y = Param("y", "integer", "Vertical pixel position, counted from the top edge of the screen.",
          minimum=0, coordinate="y")


# The paper's eleven actions (CAAP Table 3), in its order.
register(ActionSpec(
    "click_element",
    "Move the mouse pointer onto a screen element and left-click it, to press, select, open or focus it.",
    (ELEMENT_ID,),
    lambda ex, a: ex.click(*_point(a)),
    aliases=("click",), from_paper=True,
    mark="click",
))
register(ActionSpec(
    "click_new_point",
    "Left-click at an exact pixel position that is not covered by a listed element "
    "(for example a spot on a canvas).",
    (X, Y),
    lambda ex, a: ex.click(*_point(a)),
    aliases=("click_point", "click_xy"), from_paper=True,
    mark="click",
))
register(ActionSpec(
    "control_click_element",
    "Left-click a screen element while holding the Control key; used to add an item to a "
    "multiple selection.",
    (ELEMENT_ID,),
    lambda ex, a: ex.click(*_point(a), modifiers=("ctrl",)),
    aliases=("ctrl_click_element", "control_click"), from_paper=True,
    mark="click",
))
register(ActionSpec(
    "type_text",
    "Type a string with the keyboard into whatever has keyboard focus. Click the input field "
    "first: without focus the keystrokes go nowhere.",
    (Param("string_to_type", "string", "The exact text to type."),),
    lambda ex, a: ex.type_text(a.args["string_to_type"]),
    aliases=("type", "enter_text"), from_paper=True, group="keyboard",
    mark="type",
))
register(ActionSpec(
    "point_element",
    "Move the mouse pointer over a screen element without clicking; hovering can reveal hidden "
    "menus, tooltips or scrollbars.",
    (ELEMENT_ID,),
    lambda ex, a: ex.move(*_point(a)),
    aliases=("hover_element", "hover"), from_paper=True,
    mark="hover",
))
register(ActionSpec(
    "press_control_A",
    "Press Control+A (select all): selects all text in the focused field.",
    (),
    lambda ex, a: ex.press_keys(["ctrl", "a"]),
    aliases=("select_all",), from_paper=True, group="keyboard",
    mark="keys",
))
register(ActionSpec(
    "press_control_C",
    "Press Control+C (copy): copies the selected text to the clipboard.",
    (),
    lambda ex, a: ex.press_keys(["ctrl", "c"]),
    aliases=("copy",), from_paper=True, group="keyboard",
    mark="keys",
))
register(ActionSpec(
    "press_control_V",
    "Press Control+V (paste): inserts the clipboard text where the keyboard focus is.",
    (),
    lambda ex, a: ex.press_keys(["ctrl", "v"]),
    aliases=("paste",), from_paper=True, group="keyboard",
    mark="keys",
))
register(ActionSpec(
    "drag_mouse_hold_down",
    "Start a drag: move to a pixel position and press and hold the left button there. Use it to "
    "grab an object or to start selecting text.",
    (X, Y),
    lambda ex, a: ex.mouse_down(*_point(a)),
    aliases=("mouse_down",), from_paper=True, button="pressed",
    mark="press",
))
register(ActionSpec(
    "drag_mouse_move",
    "Continue a drag: move the pointer to a pixel position with the left button still held; a "
    "grabbed object follows, a text selection extends to here.",
    (X, Y),
    lambda ex, a: ex.move(*_point(a)),
    aliases=("mouse_move",), from_paper=True,
    mark="drag",
))
register(ActionSpec(
    "drag_mouse_release",
    "Finish a drag: release the left mouse button where the pointer is now.",
    (),
    lambda ex, a: ex.mouse_up(),
    aliases=("mouse_up", "drag_release"), from_paper=True, button="released",
    mark="release",
))

# Extensions beyond the paper.
register(ActionSpec(
    "scroll",
    "Turn the mouse wheel over a screen element (or over the middle of the screen when no element "
    "is given) to reveal content above, below or beside it.",
    (
        Param("direction", "string", "Which way to scroll: 'down' brings what is below into view.",
              choices=("up", "down", "left", "right")),
        Param("amount", "integer", "Wheel clicks; each moves the content a few lines.",
              required=False, default=3, minimum=1, maximum=25),
        Param("element_id", "integer", "Id of the element to scroll over (optional).", required=False,
              minimum=1, element=True),
    ),
    lambda ex, a: _scroll(ex, a),
    aliases=("scroll_element",),
    mark="scroll",
))
register(ActionSpec(
    "press_key",
    "Press one key, optionally with modifiers, e.g. enter, tab, escape, backspace, up, down, "
    "shift+tab, ctrl+z.",
    (Param("key", "string",
           "The key, with modifiers (ctrl, shift, alt, meta) joined by '+'. Keys: "
           + ", ".join(KEYS) + ", or a single character when a modifier is given.",
           normalise=_normalise_key),),
    lambda ex, a: ex.press_keys(split_keys(a.args["key"])),
    aliases=("key", "press", "hotkey"), group="keyboard",
    mark="keys",
))
register(ActionSpec(
    "double_click_element",
    "Double-click a screen element, e.g. to select a word or open an item.",
    (ELEMENT_ID,),
    lambda ex, a: ex.click(*_point(a), count=2),
    aliases=("double_click", "dblclick"),
    mark="double_click",
))
register(ActionSpec(
    "right_click_element",
    "Right-click a screen element to open its context menu.",
    (ELEMENT_ID,),
    lambda ex, a: ex.click(*_point(a), button="right"),
    aliases=("right_click", "context_click"),
    mark="right_click",
))
register(ActionSpec(
    "wait",
    "Do nothing for a moment, to let the screen finish changing (loading, animations).",
    (Param("seconds", "number", "How long to wait.", required=False, default=1.0, minimum=0.1,
           maximum=10.0),),
    lambda ex, a: ex.wait(float(a.args["seconds"])),
    aliases=("sleep", "pause"), group="control",
    mark="wait",
))
register(ActionSpec(
    "done",
    "Declare the task complete. Use it only after the final step (such as Submit) has been done.",
    (Param("reason", "string", "Why the task is complete.", required=False),),
    None, aliases=("finish", "complete", "task_complete"), terminal="done", group="control",
))
register(ActionSpec(
    "fail",
    "Give up: the task cannot be completed from here. Say why.",
    (Param("reason", "string", "What prevents completing the task."),),
    None, aliases=("give_up", "abort"), terminal="fail", group="control",
))


def _fill_scroll_point(action: PlannedAction, screen: ScreenState) -> PlannedAction:
    if action.name == "scroll" and action.point is None:
        action.point = (screen.width // 2, screen.height // 2)
    return action


def plan(name: str, raw_args: dict[str, Any], screen: ScreenState) -> PlannedAction:
    """Look up an action by (possibly sloppy) name and bind its arguments to the screen."""
    return _fill_scroll_point(lookup(name).bind(raw_args, screen), screen)
