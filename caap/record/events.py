"""Raw input events and their merging into registry actions, with no display involved.

The recorder's listeners turn pynput callbacks into the timestamped events below (pointer positions
already in captured-image pixels); :class:`Merger` folds them into :class:`Gesture`s — one user
action such as a click, a drag or a run of typed characters, each made of one or more registry
steps. :func:`annotate` then binds a gesture to the elements observed on its before-screenshot
(element ids, ``click_new_point`` where nothing lies under the pointer, password masking). Both are
pure, so the whole mapping from input to demonstration steps is unit-tested without a screen.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from caap.act.actions import KEYS, MODIFIERS, REGISTRY, _normalise_key, lookup
from caap.act.safety import SECRET_WORDS, label_of
from caap.act.secrets import Secrets, masks_itself
from caap.decide.demos import DemoStep
from caap.elements import Element, element_at

# Thresholds a person's hand produces; close to common desktop defaults.
DOUBLE_CLICK_S = 0.4
DOUBLE_CLICK_PX = 4
DRAG_PX = 4  # a press that moved farther than this before its release is a drag, not a click
MAX_DRAG_POINTS = 10
SCROLL_IDLE_S = 0.5  # wheel clicks closer than this in time (and place) are one scroll step
SCROLL_PX = 20
MAX_SCROLL = 25  # the scroll action's own maximum amount
HOVER_S = 0.4  # a pointer resting this long after it moved (no button held) may be pointing at something

Button = Literal["left", "right", "middle"]


@dataclass(frozen=True)
class MouseButton:
    t: float
    x: int
    y: int
    button: Button
    pressed: bool


@dataclass(frozen=True)
class MouseMove:
    t: float
    x: int
    y: int


@dataclass(frozen=True)
class Wheel:
    t: float
    x: int
    y: int
    dx: int
    dy: int  # pynput's sign: positive is up


@dataclass(frozen=True)
class Key:
    """``key`` is a name ``press_key`` knows ("enter", "ctrl", "shift", ...) or, for a character key,
    the character without modifiers applied; ``char`` is what the key types (None for special keys)."""

    t: float
    key: str
    pressed: bool
    char: str | None = None


RawEvent = MouseButton | MouseMove | Wheel | Key


@dataclass
class Step:
    """One registry action of a gesture, before it is bound to observed elements."""

    action: str
    args: dict[str, Any]
    t: float
    point: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self.action = lookup(self.action).name  # only names the registry knows


@dataclass
class Gesture:
    """What one user action produced: its steps and when it began (its before-screenshot's moment).
    ``hover``: the pointer came to rest there; the recorder keeps it only where that changed the
    screen beyond the element under it (a submenu opened), since every move would be noise."""

    t: float
    steps: list[Step]
    hover: bool = False


def parse_hotkey(combo: str) -> tuple[frozenset[str], str]:
    """'<ctrl>+<alt>+x' (pynput's syntax) → ({'ctrl', 'alt'}, 'x'), in the merger's key names."""
    parts = [p.strip().strip("<>").lower() for p in combo.split("+") if p.strip()]
    names = [_KEY_NAMES.get(p, p) for p in parts]
    return frozenset(n for n in names[:-1]), names[-1] if names else ""


# pynput's names for special keys → the names press_key uses.
_KEY_NAMES = {
    "ctrl_l": "ctrl", "ctrl_r": "ctrl", "control": "ctrl", "shift_l": "shift", "shift_r": "shift",
    "alt_l": "alt", "alt_r": "alt", "alt_gr": "alt", "cmd": "meta", "cmd_l": "meta", "cmd_r": "meta",
    "super": "meta", "win": "meta", "esc": "escape", "return": "enter", "page_up": "pageup",
    "page_down": "pagedown",
}


def key_name(name: str) -> str:
    return _KEY_NAMES.get(name.lower(), name.lower())


@dataclass
class _Click:
    t: float
    x: int
    y: int
    release_t: float


@dataclass
class _Press:
    t: float
    x: int
    y: int
    button: Button
    mods: frozenset[str]
    second: bool  # the second press of a double click
    path: list[tuple[int, int, float]] = field(default_factory=list)  # x, y, t


@dataclass
class _Typing:
    t: float
    text: str = ""


@dataclass
class _Scroll:
    t: float
    last_t: float
    x: int
    y: int
    direction: str
    amount: int


class Merger:
    """Folds raw events, in time order, into gestures.

    ``feed`` returns the gestures an event completed; ``tick`` those that completed because time
    passed (a single click once no second click can follow, a scroll once the wheel rests);
    ``finish`` whatever is still pending when the recording stops. ``pending_t`` is the start time
    of the gesture in progress, so the recorder knows which event's frame is a before-screenshot.
    """

    def __init__(self, stop_hotkey: str | None = None) -> None:
        self.mods: set[str] = set()
        self._hotkey = parse_hotkey(stop_hotkey) if stop_hotkey else None
        self._click: _Click | None = None  # a released left click that may still become a double
        self._press: _Press | None = None
        self._typing: _Typing | None = None
        self._scroll: _Scroll | None = None
        self._hover: MouseMove | None = None  # where the pointer last moved to, with no button held

    @property
    def pending_t(self) -> float | None:
        for p in (self._click, self._press, self._typing, self._scroll, self._hover):
            if p is not None:
                return p.t
        return None

    @property
    def hovering(self) -> bool:
        """Whether the gesture in progress is only a pointer at rest (no action began)."""
        return self._hover is not None and all(
            p is None for p in (self._click, self._press, self._typing, self._scroll))

    # --- flushing ---------------------------------------------------------------------------------
    def _flush_click(self) -> list[Gesture]:
        c, self._click = self._click, None
        if c is None:
            return []
        return [Gesture(c.t, [Step("click_element", {}, c.t, (c.x, c.y))])]

    def _flush_typing(self) -> list[Gesture]:
        ty, self._typing = self._typing, None
        if ty is None or not ty.text:  # typed and erased again: nothing happened
            return []
        return [Gesture(ty.t, [Step("type_text", {"string_to_type": ty.text}, ty.t)])]

    def _flush_scroll(self) -> list[Gesture]:
        s, self._scroll = self._scroll, None
        if s is None:
            return []
        args = {"direction": s.direction, "amount": min(s.amount, MAX_SCROLL)}
        return [Gesture(s.t, [Step("scroll", args, s.t, (s.x, s.y))])]

    def _flush(self, *, keep_typing: bool = False, keep_scroll: bool = False) -> list[Gesture]:
        out = self._flush_click()
        if not keep_typing:
            out += self._flush_typing()
        if not keep_scroll:
            out += self._flush_scroll()
        return out

    def tick(self, now: float) -> list[Gesture]:
        out: list[Gesture] = []
        if self._click is not None and now - self._click.release_t > DOUBLE_CLICK_S:
            out += self._flush_click()
        if self._scroll is not None and now - self._scroll.last_t > SCROLL_IDLE_S:
            out += self._flush_scroll()
        if self._hover is not None and now - self._hover.t >= HOVER_S and self.hovering:
            h, self._hover = self._hover, None
            out.append(Gesture(h.t, [Step("point_element", {}, h.t, (h.x, h.y))], hover=True))
        return out

    def finish(self) -> list[Gesture]:
        self._press = None  # a button still held when the recording stops is no finished action
        self._hover = None  # nor is a pointer that had not come to rest
        return self._flush()

    # --- events -----------------------------------------------------------------------------------
    def feed(self, ev: RawEvent) -> list[Gesture]:
        out = self.tick(ev.t)
        if not isinstance(ev, MouseMove):
            self._hover = None  # a click or a key covers where the pointer was
        if isinstance(ev, Key):
            out += self._key(ev)
        elif isinstance(ev, MouseButton):
            out += self._button(ev)
        elif isinstance(ev, MouseMove):
            if self._press is not None:
                self._press.path.append((ev.x, ev.y, ev.t))
            else:
                self._hover = ev  # a new resting place replaces the last one
        elif isinstance(ev, Wheel):
            out += self._wheel(ev)
        return out

    def _key(self, ev: Key) -> list[Gesture]:
        name = key_name(ev.key)
        if name in MODIFIERS:
            (self.mods.add if ev.pressed else self.mods.discard)(name)
            return []
        if not ev.pressed:
            return []
        held = frozenset(self.mods)
        if self._hotkey is not None and (held, name.lower()) == self._hotkey:
            return []  # the stop hotkey is not part of the demonstration
        command = held & {"ctrl", "alt", "meta"}
        char = ev.char
        if char is not None and len(char) == 1 and char.isprintable() and not command:
            if "shift" in held and char.islower():
                char = char.upper()  # a backend that reports the unshifted character
            out = self._flush(keep_typing=True)
            if self._typing is None:
                self._typing = _Typing(ev.t)
            self._typing.text += char
            return out
        if name == "backspace" and not held and self._typing is not None and self._typing.text:
            self._typing.text = self._typing.text[:-1]  # an edit of the pending text, not a step
            return []
        out = self._flush()
        if held == {"ctrl"} and name.lower() in ("a", "c", "v"):
            return [*out, Gesture(ev.t, [Step(f"press_control_{name.upper()}", {}, ev.t)])]
        base = name.lower() if len(name) == 1 else name
        if len(base) != 1 and base not in KEYS:
            return out  # caps lock, insert, media keys...: nothing press_key can replay
        combo = _normalise_key("+".join([m for m in MODIFIERS if m in held] + [base]))
        if combo is None:
            return out
        return [*out, Gesture(ev.t, [Step("press_key", {"key": combo}, ev.t)])]

    def _button(self, ev: MouseButton) -> list[Gesture]:
        if ev.button == "middle":
            return []
        if ev.pressed:
            c = self._click
            second = (ev.button == "left" and c is not None and ev.t - c.release_t <= DOUBLE_CLICK_S
                      and math.dist((c.x, c.y), (ev.x, ev.y)) <= DOUBLE_CLICK_PX)
            out = self._flush(keep_typing=False) if not second else self._flush_typing() + self._flush_scroll()
            if second:
                assert c is not None
                self._press = _Press(c.t, c.x, c.y, "left", frozenset(self.mods), True)
                self._click = None
            else:
                self._press = _Press(ev.t, ev.x, ev.y, ev.button, frozenset(self.mods), False)
            return out
        p, self._press = self._press, None
        if p is None or p.button != ev.button:
            return []
        path = [(x, y) for x, y, _ in p.path] + [(ev.x, ev.y)]
        moved = max(math.dist((p.x, p.y), q) for q in path)
        if ev.button == "left" and moved > DRAG_PX and not p.second:
            return [self._drag(p, ev)]
        if ev.button == "right":
            return [Gesture(p.t, [Step("right_click_element", {}, p.t, (p.x, p.y))])]
        if p.second:
            return [Gesture(p.t, [Step("double_click_element", {}, p.t, (p.x, p.y))])]
        if "ctrl" in p.mods:
            return [Gesture(p.t, [Step("control_click_element", {}, p.t, (p.x, p.y))])]
        self._click = _Click(p.t, p.x, p.y, ev.t)  # may still become a double click
        return []

    def _drag(self, p: _Press, release: MouseButton) -> Gesture:
        end = (release.x, release.y, release.t)
        moves = [q for q in p.path if q[:2] != (p.x, p.y)]
        if len(moves) > MAX_DRAG_POINTS - 1:
            # Evenly spaced samples of the path; the release point is always the last one.
            n = MAX_DRAG_POINTS - 1
            moves = [moves[round(i * (len(moves) - 1) / n)] for i in range(n)]
        moves = [q for q in moves if q[:2] != end[:2]] + [end]
        steps = [Step("drag_mouse_hold_down", {"x": p.x, "y": p.y}, p.t, (p.x, p.y))]
        steps += [Step("drag_mouse_move", {"x": x, "y": y}, t, (x, y)) for x, y, t in moves]
        steps.append(Step("drag_mouse_release", {}, release.t, end[:2]))
        return Gesture(p.t, steps)

    def _wheel(self, ev: Wheel) -> list[Gesture]:
        if ev.dy:
            direction, amount = ("up" if ev.dy > 0 else "down"), abs(ev.dy)
        elif ev.dx:
            direction, amount = ("right" if ev.dx > 0 else "left"), abs(ev.dx)
        else:
            return []
        s = self._scroll
        if (s is not None and s.direction == direction and ev.t - s.last_t <= SCROLL_IDLE_S
                and math.dist((s.x, s.y), (ev.x, ev.y)) <= SCROLL_PX):
            s.amount += amount
            s.last_t = ev.t
            return self._flush_click() + self._flush_typing()
        out = self._flush()
        self._scroll = _Scroll(ev.t, ev.t, ev.x, ev.y, direction, amount)
        return out


# --- binding gestures to observed elements --------------------------------------------------------

# The actions that name an element (the rest act on a point or on the keyboard focus).
ELEMENT_ACTIONS = frozenset(s.name for s in REGISTRY.values() if s.targets_element)
# A secret field: its text or its label says so (the confirmation gate's words), or it shows only bullets.
PASSWORD_WORDS = re.compile(SECRET_WORDS)
TEXT_FIELDS = ("input_field", "text_area")


def is_password_field(element: Element | None, elements: Sequence[Element] | None = None) -> bool:
    if element is None or element.type.value not in TEXT_FIELDS:
        return False
    if getattr(element, "subtype", None) == "password":  # should the taxonomy ever grow the subtype
        return True
    text = (element.text or "").strip()
    label = label_of(element, elements or []) or ""
    return masks_itself(text) or bool(PASSWORD_WORDS.search(text) or PASSWORD_WORDS.search(label))


class Annotator:
    """Turns gestures into demonstration steps against the element lists around them, in order.

    It remembers the focused field (the one the observer says is focused, else the last element
    clicked) so text typed into a password-like field is stored as ``*`` per character. A given
    secret's value in typed text is stored as its placeholder (``{NAME}``), which replay types back;
    ``secret_fields`` collects the fields a secret was typed into, for the screenshots to hide.
    """

    def __init__(self, secrets: Secrets | None = None) -> None:
        self.focus: Element | None = None
        self._focus_list: list[Element] = []
        self.secrets = secrets or Secrets()
        self.secret_fields: list[Element] = []

    def __call__(self, gesture: Gesture, before: list[Element] | None = None, after: list[Element] | None = None,
                 screenshots: dict[str, str] | None = None) -> list[DemoStep]:
        out: list[DemoStep] = []
        for s in gesture.steps:
            args = dict(s.args)
            action = s.action
            element = element_at(before, s.point) if s.point is not None else None
            masked = False
            if action == "point_element" and element is None:
                continue  # resting over nothing observed: no element to point at again
            if action in ELEMENT_ACTIONS and element is not None:
                assert element.id is not None
                args["element_id"] = element.id
            elif action == "click_element" and s.point is not None:
                action = "click_new_point"  # nothing observed under the pointer: keep the point itself
                args = {"x": s.point[0], "y": s.point[1]}
            if action in ("click_element", "control_click_element", "double_click_element", "click_new_point"):
                self.focus, self._focus_list = element, list(before or [])
            if action == "type_text":
                focused = next((e for e in before or () if e.visible and e.focused), None)
                field_, context = (focused, before) if focused is not None else (self.focus, self._focus_list)
                hidden = self.secrets.redact(args["string_to_type"])
                if hidden != args["string_to_type"]:
                    args["string_to_type"] = hidden
                    if field_ is not None:
                        self.secret_fields.append(field_)
                elif is_password_field(field_, context):
                    args["string_to_type"] = "*" * len(args["string_to_type"])
                    masked = True
            if action == "press_key" and args.get("key") in ("tab", "shift+tab"):
                self.focus = None  # focus moved somewhere we did not see
            out.append(DemoStep(action=action, args=args, element=element, before=before, after=after,
                                point=s.point, t=round(s.t, 3), masked=masked, screenshots=screenshots))
        return out
