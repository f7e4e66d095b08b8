"""The checks that score a desktop task: what the application's final state must be.

A check reads the state the application itself reports, never the pixels the agent saw:

* ``Output``: what the application wrote and how it ended (zenity prints the value a dialog was
  answered with and exits 0 for OK, 1 for Cancel);
* ``Node``: a widget of the accessibility tree (AT-SPI, ``caap.bench.desktop.atspi_walk``) found by
  its role and name, and its text, value or states (checked, selected, expanded, focused...);
* ``Tcl``: for Tk, which has no accessibility bridge, a Tcl expression evaluated in the demo's
  interpreter (a variable a check box or an entry is tied to);
* ``FileText``: a file the application saved under the session's home;
* ``NoWindow``: no window whose title matches is shown any more (a dialog closed).

Checks are declared with ``{field}`` placeholders that the task's seeded parameters fill
(``Check.filled``). ``Check.verify(state)`` returns None when it holds, else one line saying what
was found instead: the line goes into the episode's record and the FAILURES page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

# How a name or text is compared: exact (after folding spaces), or a regular expression.
Match = str


def fold(text: Any) -> str:
    """Text as people compare it: whitespace runs as one space, ends stripped."""
    return " ".join(("" if text is None else str(text)).split())


def _matches(want: str, got: Any) -> bool:
    """``want`` as ``re:PATTERN`` (a full match of the folded text) or a literal compared folded."""
    text = fold(got)
    if want.startswith("re:"):
        return re.fullmatch(want[3:], text, re.S) is not None
    return text == fold(want)


@dataclass
class FinalState:
    """What the checks read, gathered once the agent has finished: the accessibility tree's nodes
    (the walker's JSON), the application's output and exit code (None: still running), a Tcl
    evaluator for Tk, the session's home folder and the titles of the windows on the screen."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    output: str | None = None
    exit_code: int | None = None
    tcl: Any = None  # Callable[[str], str] for Tk apps
    home: Path = Path()
    windows: list[str] = field(default_factory=list)


class Check:
    """One condition on the final state (subclasses below)."""

    def filled(self, params: dict[str, str]) -> Check:
        """The check with ``{field}`` placeholders in its string fields replaced by ``params``."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]
        return replace(self, **{k: v.format(**params) if isinstance(v, str) else v  # type: ignore[type-var]
                                for k, v in values.items()})

    def verify(self, state: FinalState) -> str | None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Output(Check):
    """The application ended with ``exit_code`` and, unless ``text`` is None, printed ``text``
    (its stdout, ends stripped; a ``re:`` pattern or a literal)."""

    text: str | None = None
    exit_code: str = "0"  # a string, so that a task's parameter can fill it ("{code}")

    def verify(self, state: FinalState) -> str | None:
        if state.exit_code is None:
            return "the application is still running (the dialog was not answered)"
        if str(state.exit_code) != self.exit_code:
            return f"the application exited with {state.exit_code}, not {self.exit_code}"
        if self.text is not None and not _matches(self.text, (state.output or "").strip()):
            return f"it printed {(state.output or '').strip()!r}, not {self.text!r}"
        return None

    def describe(self) -> str:
        said = f" printing {self.text!r}" if self.text is not None else ""
        return f"the application exits with {self.exit_code}{said}"


# Accessibility roles by what a task calls them (toolkits name some roles differently).
ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "check box": ("check box", "check menu item", "toggle button"),
    "radio button": ("radio button", "radio menu item"),
    "switch": ("switch", "toggle button", "check box"),
    "spin button": ("spin button", "text"),
    "slider": ("slider", "scroll bar"),
    "text": ("text", "entry", "password text", "editbar", "paragraph"),
    "tab": ("page tab",),
    "list item": ("list item", "table cell", "tree item", "table row", "label"),
    "tree item": ("tree item", "table cell", "tree table", "table row", "list item"),
    "combo box": ("combo box",),
    "button": ("push button", "button", "toggle button"),
}


@dataclass(frozen=True)
class Node(Check):
    """A widget of the accessibility tree, by ``role`` (or one of its aliases) and ``name`` (a
    literal or ``re:``; None: any name; ``index``: the n-th of those, in tree order), must have
    ``states`` (``"checked"``, or ``"!checked"`` for not), ``text`` and ``value`` (its current value,
    compared as a number) as given; ``exists`` False: no such widget may be shown."""

    role: str
    name: str | None = None
    states: tuple[str, ...] = ()
    text: str | None = None
    value: str | None = None
    index: int = 0
    exists: bool = True

    def filled(self, params: dict[str, str]) -> Check:
        out = super().filled(params)
        assert isinstance(out, Node)
        return replace(out, states=tuple(s.format(**params) for s in self.states))

    def found(self, state: FinalState) -> list[dict[str, Any]]:
        roles = ROLE_ALIASES.get(self.role, (self.role,))
        return [n for n in state.nodes if n.get("role") in roles
                and (self.name is None or _matches(self.name, n.get("name")))]

    def verify(self, state: FinalState) -> str | None:
        found = self.found(state)
        if not self.exists:
            return f"{self._what()} is still shown" if found else None
        if len(found) <= self.index:
            return f"{self._what()} is not shown"
        node = found[self.index]
        have = set(node.get("states", []))
        for want in self.states:
            if want.startswith("!") and want[1:] in have:
                return f"{self._what()} is {want[1:]}"
            if not want.startswith("!") and want not in have:
                return f"{self._what()} is not {want} (its states: {', '.join(sorted(have)) or 'none'})"
        if self.text is not None and not _matches(self.text, node.get("text", node.get("name"))):
            return f"{self._what()} holds {node.get('text', node.get('name'))!r}, not {self.text!r}"
        if self.value is not None:
            got = (node.get("value") or [None])[0]
            try:
                ok = got is not None and abs(float(got) - float(self.value)) < 1e-6
            except ValueError:
                ok = False
            if not ok:
                return f"{self._what()} is at {got}, not {self.value}"
        return None

    def _what(self) -> str:
        name = f" {self.name!r}" if self.name is not None else ""
        return f"the {self.role}{name}" + (f" (#{self.index + 1})" if self.index else "")

    def describe(self) -> str:
        parts = [f"{s}" for s in self.states]
        if self.text is not None:
            parts.append(f"text {self.text!r}")
        if self.value is not None:
            parts.append(f"value {self.value}")
        if not self.exists:
            return f"{self._what()} is gone"
        return f"{self._what()}: {', '.join(parts) or 'shown'}"


@dataclass(frozen=True)
class Tcl(Check):
    """For Tk: ``script`` evaluated in the demo's interpreter gives ``equals`` (literal or ``re:``)."""

    script: str
    equals: str

    def verify(self, state: FinalState) -> str | None:
        if state.tcl is None:
            return "no Tk interpreter to ask"
        try:
            got = state.tcl(self.script)
        except Exception as exc:  # a variable the demo never set, a closed demo
            return f"Tk could not evaluate {self.script!r} ({exc})"
        return None if _matches(self.equals, got) else f"{self.script!r} is {got!r}, not {self.equals!r}"

    def describe(self) -> str:
        return f"Tk's {self.script!r} is {self.equals!r}"


@dataclass(frozen=True)
class FileText(Check):
    """The file ``path`` (relative to the session's home) exists and its text, ends stripped,
    ``equals`` (literal or ``re:``) or ``contains`` the given text."""

    path: str
    equals: str | None = None
    contains: str | None = None

    def verify(self, state: FinalState) -> str | None:
        target = state.home / self.path
        try:
            text = target.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return f"~/{self.path} was not saved"
        if self.equals is not None and not _matches(self.equals, text):
            return f"~/{self.path} holds {text[:80]!r}, not {self.equals!r}"
        if self.contains is not None and self.contains not in text:
            return f"~/{self.path} does not contain {self.contains!r} (it holds {text[:80]!r})"
        return None

    def describe(self) -> str:
        what = f"equal to {self.equals!r}" if self.equals is not None else f"containing {self.contains!r}"
        return f"~/{self.path} saved, {what}"


@dataclass(frozen=True)
class NoWindow(Check):
    """No window whose title matches ``title`` (literal or ``re:``) is shown."""

    title: str

    def verify(self, state: FinalState) -> str | None:
        open_ = [w for w in state.windows if _matches(self.title, w)]
        return f"the window {open_[0]!r} is still open" if open_ else None

    def describe(self) -> str:
        return f"no window {self.title!r}"


def verify_all(checks: tuple[Check, ...], state: FinalState) -> list[str]:
    """What failed, one line per failed check (empty: the task is done)."""
    return [msg for msg in (c.verify(state) for c in checks) if msg is not None]
