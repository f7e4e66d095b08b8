"""Safety around live OS input: a global stop hotkey and a confirmation gate.

The stop hotkey (pynput) sets the agent's stop event; the loop checks it before every OS event, so
the agent halts before its next click or keystroke. The confirmation gate holds actions that match
user-written rules (typing into a password-like field, clicking "Delete", "Pay", ...) until a
person says yes on the terminal; with nobody there, or no answer in time, the answer is no.
"""

from __future__ import annotations

import re
import select
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from caap.act.actions import PlannedAction
from caap.elements import Element, element_at

DEFAULT_STOP_HOTKEY = "<ctrl>+<alt>+x"


class SafetyError(RuntimeError):
    pass


def describe_hotkey(combo: str) -> str:
    """'<ctrl>+<alt>+x' → 'Ctrl+Alt+X' for messages."""
    return "+".join(p.strip("<>").capitalize() if p.startswith("<") else p.upper() for p in combo.split("+"))


class StopHotkey:
    """A system-wide hotkey that sets ``event`` when pressed (pynput.keyboard.GlobalHotKeys)."""

    def __init__(self, event: threading.Event, combo: str = DEFAULT_STOP_HOTKEY) -> None:
        self.event = event
        self.combo = combo
        self._listener: Any = None

    def start(self) -> StopHotkey:
        try:
            from pynput import keyboard
        except ImportError as exc:
            raise SafetyError(f"the stop hotkey needs pynput: pip install 'caap[screen]' ({exc})") from None
        try:
            self._listener = keyboard.GlobalHotKeys({self.combo: self.event.set})
        except ValueError as exc:
            raise SafetyError(f"invalid stop hotkey {self.combo!r}: {exc}") from None
        self._listener.start()
        self._listener.wait()  # returns once the listener is hooked into the input system
        return self

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.stop()
            self._listener.join(timeout=5)
            self._listener = None

    def __enter__(self) -> StopHotkey:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass(frozen=True)
class ConfirmRule:
    """Ask before an action whose name matches ``actions`` and whose target (the element, its label,
    or for typing the focused field and its label) matches ``target``."""

    actions: tuple[str, ...]
    target: str
    reason: str

    def matches(self, action: PlannedAction, target_texts: Sequence[str]) -> bool:
        if action.name not in self.actions:
            return False
        pattern = re.compile(self.target)
        return any(pattern.search(t) for t in target_texts if t)


# What a person would call a secret field (its text or its label): the confirmation gate asks before
# typing into one, and the recorder masks what is typed into one.
SECRET_WORDS = r"(?i)pass(word|code|phrase)?|\bpin\b|secret|\bcvv\b|\bcvc\b"

DEFAULT_RULES: tuple[ConfirmRule, ...] = (
    ConfirmRule(("type_text", "press_control_V"), SECRET_WORDS,
                "typing into a field that looks like a password or secret"),
    ConfirmRule(("click_element", "double_click_element", "control_click_element", "click_new_point"),
                r"(?i)\b(delete|remove|erase|send|pay|buy|purchase|order|checkout|transfer|confirm payment)\b",
                "clicking something that deletes, sends or spends"),
)


def label_of(element: Element, elements: Sequence[Element], reach_px: int = 60) -> str | None:
    """The text a person would read as the element's label: the nearest visible text element to its
    left on the same row, or just above it."""
    best: tuple[int, str] | None = None
    x1, y1, x2, y2 = element.bbox
    for other in elements:
        if other is element or not other.visible or not other.text or other.type.value not in (
            "text", "tabled_text", "hyperlink", "draggable_text"
        ):
            continue
        ox1, oy1, ox2, oy2 = other.bbox
        same_row = oy1 < y2 and oy2 > y1 and ox2 <= x1 + 2
        above = oy2 <= y1 + 2 and ox1 < x2 and ox2 > x1
        if same_row:
            distance = x1 - ox2
        elif above:
            distance = y1 - oy2
        else:
            continue
        if 0 <= distance + 2 <= reach_px and (best is None or distance < best[0]):
            best = (distance, other.text)
    return best[1] if best else None


Ask = Callable[[str], bool]

# What closes a pop-up: its Close or Cancel button, a cross, Escape. Any other action on it (its
# Continue, its field) is what a pop-up's author wants, not the user.
DISMISS_WORDS = re.compile(r"(?i)^\s*(close|cancel|dismiss|no,? thanks|not now|skip|later|maybe later|[x×✕✖╳])\s*$")
DISMISS_KEYS = frozenset({"escape", "esc"})


def action_target(action: PlannedAction, elements: Sequence[Element], last: Element | None = None) -> Element | None:
    """What an action acts on: its element; for a click on a bare point, the element under it; for
    keys, the focused element the observer saw, else ``last`` (the one the agent clicked last)."""
    target = action.element
    if target is None and action.point is not None:
        target = element_at(elements, action.point)
    if target is None and action.spec.group == "keyboard":
        target = next((e for e in elements if e.visible and e.focused), None) or last
    return target


class PopupGuard:
    """With ``[safety] popups = "confirm"``: an action on an element that appeared by itself (the
    loop's ``appeared`` ids) waits for a yes, unless it closes it (``DISMISS_WORDS``, Escape)."""

    def __init__(self, ask: Ask) -> None:
        self.ask = ask

    def __call__(self, action: PlannedAction, elements: Sequence[Element], appeared: set[int]) -> str | None:
        if not appeared:
            return None
        if action.name == "press_key" and str(action.args.get("key", "")).lower() in DISMISS_KEYS:
            return None
        target = action_target(action, elements)
        if target is None or target.id not in appeared or DISMISS_WORDS.match(target.text or ""):
            return None
        what = f"{action.name} on {target.label} {target.text or ''!r}"
        if self.ask(f"acting on something that appeared by itself (a pop-up): {what}."):
            return None
        return (f"the user did not allow {what}: it appeared by itself, not because of the task; close it or "
                "go on with the task")


def terminal_ask(timeout_s: float = 30.0, stream_in: TextIO | None = None, stream_out: TextIO | None = None) -> Ask:
    """Ask y/N on the terminal; no terminal, no answer within ``timeout_s`` or anything but yes → no."""
    stream_in = stream_in or sys.stdin
    stream_out = stream_out or sys.stderr

    def ask(question: str) -> bool:
        try:
            interactive = stream_in.isatty()
        except (AttributeError, ValueError):
            interactive = False
        if not interactive:
            stream_out.write(f"caap: {question} -> denied (no terminal to ask)\n")
            return False
        stream_out.write(f"caap: {question} Allow? [y/N] (no answer in {timeout_s:g}s = no) ")
        stream_out.flush()
        ready, _, _ = select.select([stream_in], [], [], timeout_s)
        if not ready:
            stream_out.write("\ncaap: no answer, denied\n")
            return False
        return stream_in.readline().strip().lower() in ("y", "yes")

    return ask


class ConfirmationGate:
    """Decides, per planned action, whether it may run; returns a denial reason or None."""

    def __init__(self, rules: Sequence[ConfirmRule] = DEFAULT_RULES, ask: Ask | None = None) -> None:
        self.rules = list(rules)
        self.ask = ask or terminal_ask()
        self._last_target: Element | None = None

    def _targets(self, action: PlannedAction, elements: Sequence[Element]) -> tuple[Element | None, list[str]]:
        target = action_target(action, elements, self._last_target)
        texts = []
        if target is not None:
            texts = [target.text or "", label_of(target, elements) or ""]
        return target, texts

    def __call__(self, action: PlannedAction, elements: Sequence[Element]) -> str | None:
        target, texts = self._targets(action, elements)
        for rule in self.rules:
            if rule.matches(action, texts):
                what = f"{action.name} on {target.label} {texts[0]!r}" if target else action.name
                if not self.ask(f"{rule.reason}: {what}."):
                    return f"the user did not allow {what} ({rule.reason}); do not retry it"
        if action.element is not None:
            self._last_target = action.element  # only actions that will happen move the focus
        return None
