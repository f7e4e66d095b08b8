"""The answer format: ``action_line`` writes it, the rest of this module reads what a real model
wrote into proposed actions, never raising.

Models write the paper's ``Action_N=(Action: functions.NAME, Argument: {...})`` lines with every
imaginable variation: markdown bold and fences, ``element_5`` for 5, single or no quotes, JSON
arguments, prose around them, missing numbering, the call form ``functions.NAME({...})``, or a JSON
object. Tool calls arrive separately with JSON argument strings that may themselves be sloppy.
Whatever cannot be understood becomes an ``ActionError`` that the next prompt reports.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from caap.act.actions import ActionError, PlannedAction, ScreenState, lookup, plan


def action_line(name: str, args: Mapping[str, Any] | str, number: int | None = None) -> str:
    """One action in the paper's answer format, ``Action_N=(Action: functions.NAME, Argument: {key:
    value, ...})``, values written as JSON (``3``, ``"text"``); ``args`` given as a string (a tool
    call's JSON arguments) is written as it is, and without a number the line is ``Action=(...)``."""
    if isinstance(args, str):
        body = args
    else:
        body = "{" + ", ".join(f"{k}: {json.dumps(v, ensure_ascii=False)}" for k, v in args.items()) + "}"
    return f"Action{'' if number is None else f'_{number}'}=(Action: functions.{name}, Argument: {body})"


@dataclass
class Proposal:
    """An action as the model wrote it, not yet checked against the registry or the screen."""

    name: str
    args: dict[str, Any]
    number: int | None = None
    source: str = "text"  # "text" or "tool_call"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "args": self.args, "number": self.number, "source": self.source}


@dataclass
class ToolCall:
    name: str
    arguments: str
    id: str | None = None


@dataclass
class ParseResult:
    proposals: list[Proposal] = field(default_factory=list)
    errors: list[ActionError] = field(default_factory=list)


# --- a forgiving reader for {key: value} objects -------------------------------------------------
class LooseSyntaxError(ValueError):
    pass


_BARE_STOP = set(",}])\n")
_WORDS = {"true": True, "false": False, "null": None, "none": None}


class _Reader:
    """Reads JSON-ish values: bare or quoted keys, single or double quotes, True/False/None,
    ``=`` or ``:`` between key and value, trailing commas, bare words as strings."""

    def __init__(self, text: str, pos: int = 0) -> None:
        self.text = text
        self.pos = pos

    def _ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def _peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def value(self, depth: int = 0) -> Any:
        if depth > 20:
            raise LooseSyntaxError("nested too deeply")
        self._ws()
        ch = self._peek()
        if ch == "{":
            return self.obj(depth)
        if ch == "[":
            return self.array(depth)
        if ch and ch in "\"'":
            return self.string()
        return self.bare()

    def obj(self, depth: int = 0) -> dict[str, Any]:
        self._ws()
        if self._peek() != "{":
            raise LooseSyntaxError("expected '{'")
        self.pos += 1
        out: dict[str, Any] = {}
        while True:
            self._ws()
            ch = self._peek()
            if ch == "":
                raise LooseSyntaxError("unterminated object")
            if ch == "}":
                self.pos += 1
                return out
            if ch == ",":
                self.pos += 1
                continue
            key = self.string() if ch in ("\"", "'") else self._bare_key()
            self._ws()
            if self._peek() not in (":", "="):
                raise LooseSyntaxError(f"expected ':' after key {key!r}")
            self.pos += 1
            out[key] = self.value(depth + 1)

    def array(self, depth: int = 0) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while True:
            self._ws()
            ch = self._peek()
            if ch == "":
                raise LooseSyntaxError("unterminated list")
            if ch == "]":
                self.pos += 1
                return out
            if ch == ",":
                self.pos += 1
                continue
            out.append(self.value(depth + 1))

    def _bare_key(self) -> str:
        m = re.compile(r"[A-Za-z_][\w.-]*").match(self.text, self.pos)
        if not m:
            raise LooseSyntaxError(f"expected a key at position {self.pos}")
        self.pos = m.end()
        return m.group(0)

    def string(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        buf: list[str] = []
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if ch == "\\" and self.pos + 1 < len(self.text):
                nxt = self.text[self.pos + 1]
                if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", self.text[self.pos + 2 : self.pos + 6]):
                    buf.append(chr(int(self.text[self.pos + 2 : self.pos + 6], 16)))
                    self.pos += 6
                    continue
                buf.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
                self.pos += 2
                continue
            if ch == quote:
                self.pos += 1
                return "".join(buf)
            buf.append(ch)
            self.pos += 1
        raise LooseSyntaxError("unterminated string")

    def bare(self) -> Any:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in _BARE_STOP:
            self.pos += 1
        word = self.text[start : self.pos].strip()
        if not word:
            raise LooseSyntaxError(f"expected a value at position {start}")
        if word.lower() in _WORDS:
            return _WORDS[word.lower()]
        if re.fullmatch(r"[-+]?\d+", word):
            return int(word)
        if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", word):
            return float(word)
        return word


def loads_loose(text: str) -> Any:
    """Parse one JSON-ish value, strict JSON first."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    reader = _Reader(text.strip())
    value = reader.value()
    return value


# --- text answers ------------------------------------------------------------------------------
# Placeholders a model may copy from the format instructions instead of a real action.
_PLACEHOLDERS = {"some_function_name", "function_name", "action_name", "name", "some_action"}

_PAPER_FORM = re.compile(
    r"(?:action[\s_-]*(?P<num>\d+)\s*[=:]\s*)?"
    r"\(?\s*action\s*[:=]\s*(?P<prefix>functions?\.)?(?P<name>[A-Za-z_][\w]*)\s*\)?"
    r"(?P<rest>\s*[,;]?\s*arg(?:ument)?s?\s*[:=]\s*)?",
    re.IGNORECASE,
)
# functions.NAME(...) anywhere; a bare NAME(...) only where a line starts (after a bullet, a
# number or "Action_N="), so prose that mentions an action in passing is not executed.
_CALL_FORM = re.compile(
    r"(?:(?P<lead>^[ \t]*(?:[-*>]|\d+[.)])?[ \t]*)(?:action[\s_-]*(?P<num>\d+)\s*[=:]\s*)?"
    r"|(?<![\w.]))(?P<prefix>functions?\.)?(?P<name>[A-Za-z_]\w*)\s*\(",
    re.IGNORECASE | re.MULTILINE,
)


def _strip_markdown(text: str) -> str:
    text = re.sub(r"```[a-zA-Z]*", "\n", text)
    text = text.replace("**", "").replace("__", "")
    return text.replace("`", "")


def _is_action_name(name: str) -> bool:
    try:
        lookup(name)
    except ActionError:
        return False
    return True


def _read_args(text: str, pos: int) -> tuple[dict[str, Any], int]:
    """Read an argument object starting at ``pos`` (after optional whitespace)."""
    reader = _Reader(text, pos)
    reader._ws()
    if reader._peek() != "{":
        return {}, pos
    value = reader.obj()
    return value, reader.pos


def _kwargs_call(inner: str) -> dict[str, Any]:
    """``element_id=3, direction="down"`` or ``{"element_id": 3}`` or ``3`` → a dict."""
    inner = inner.strip()
    if not inner:
        return {}
    if inner.startswith("{"):
        value = loads_loose(inner)
        if not isinstance(value, dict):
            raise LooseSyntaxError("arguments are not an object")
        return value
    if re.match(r"^[A-Za-z_]\w*\s*[=:]", inner):
        return _Reader("{" + inner + "}").obj()
    return {"__positional__": loads_loose(inner)}


def _matching_paren(text: str, open_pos: int) -> int | None:
    depth, i, quote = 0, open_pos, ""
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        elif ch == "\n" and depth == 1 and i - open_pos > 400:
            return None
        i += 1
    return None


def parse_text(text: str) -> ParseResult:
    """Find every action the text proposes, in order of appearance."""
    result = ParseResult()
    if not text or not text.strip():
        return result
    clean = _strip_markdown(text)
    found: list[tuple[int, Proposal]] = []

    for m in _PAPER_FORM.finditer(clean):
        name = m.group("name")
        if name.lower() in _PLACEHOLDERS:
            continue
        # "the next action: click the box" is prose; the paper's form has a number, the
        # functions. prefix or an Argument part.
        if not (m.group("num") or m.group("prefix") or m.group("rest")):
            continue
        number = int(m.group("num")) if m.group("num") else None
        args: dict[str, Any] = {}
        if m.group("rest"):
            try:
                args, end = _read_args(clean, m.end())
                if end == m.end():  # "Argument:" followed by something that is not an object
                    raw = _Reader(clean, m.end()).value()
                    args = {} if raw in (None, "-", "none", "None", "") else {"__positional__": raw}
            except LooseSyntaxError as exc:
                result.errors.append(ActionError(
                    "bad_argument", f"could not read the arguments of {name}: {exc}", name))
                continue
        found.append((m.start(), Proposal(name, args, number)))

    for m in [] if found else _CALL_FORM.finditer(clean):
        name = m.group("name")
        if not m.group("prefix") and (m.group("lead") is None or not _is_action_name(name)):
            continue
        if name.lower() in _PLACEHOLDERS:
            continue
        close = _matching_paren(clean, m.end() - 1)
        if close is None:
            result.errors.append(ActionError("bad_argument", f"unclosed parenthesis after {name}", name))
            continue
        number = int(m.group("num")) if m.group("num") else None
        try:
            args = _kwargs_call(clean[m.end() : close])
        except (LooseSyntaxError, RecursionError) as exc:
            result.errors.append(ActionError("bad_argument", f"could not read the arguments of {name}: {exc}", name))
            continue
        found.append((m.start(), Proposal(name, args, number)))

    if not found and not result.errors:
        found = [(0, p) for p in _json_proposals(clean)]

    found.sort(key=lambda item: item[0])
    # A numbered action written twice (the plan, then the final list) counts once: the last copy.
    last_index: dict[int, int] = {}
    for i, (_, p) in enumerate(found):
        if p.number is not None:
            last_index[p.number] = i
    for i, (_, p) in enumerate(found):
        if p.number is None or last_index[p.number] == i:
            result.proposals.append(p)
    return result


def _json_proposals(text: str) -> list[Proposal]:
    """``{"action": "click_element", "element_id": 3}`` or ``{"name": ..., "arguments": {...}}``,
    alone or in a list."""
    out: list[Proposal] = []
    for m in re.finditer(r"[\[{]", text):
        try:
            reader = _Reader(text, m.start())
            value = reader.value()
        except (LooseSyntaxError, RecursionError):
            continue
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, dict):
                continue
            name = item.get("action") or item.get("name") or item.get("function")
            if isinstance(name, dict):  # {"function": {"name": ..., "arguments": ...}}
                item, name = name, name.get("name")
            if not isinstance(name, str):
                continue
            args = item.get("arguments", item.get("args", item.get("argument")))
            if isinstance(args, str):
                try:
                    args = loads_loose(args)
                except (LooseSyntaxError, RecursionError):
                    args = None
            if not isinstance(args, dict):
                args = {k: v for k, v in item.items() if k not in ("action", "name", "function")}
            out.append(Proposal(name, args))
        if out:
            return out
    return out


def parse_tool_calls(calls: list[ToolCall]) -> ParseResult:
    result = ParseResult()
    for call in calls:
        raw = (call.arguments or "").strip()
        try:
            args = loads_loose(raw) if raw else {}
        except (LooseSyntaxError, RecursionError) as exc:
            result.errors.append(ActionError(
                "bad_argument", f"the arguments of tool call {call.name} are not valid JSON ({exc})", call.name))
            continue
        if args is None:
            args = {}
        if not isinstance(args, dict):
            args = {"__positional__": args}
        result.proposals.append(Proposal(call.name, args, source="tool_call"))
    return result


def parse_reply(content: str | None, tool_calls: list[ToolCall] | None = None) -> ParseResult:
    """Tool calls win when present; otherwise actions are read from the text."""
    if tool_calls:
        return parse_tool_calls(tool_calls)
    result = parse_text(content or "")
    if not result.proposals and not result.errors:
        result.errors.append(ActionError(
            "no_action",
            "the answer contained no action; end it with lines like "
            "Action_2=(Action: functions.click_element, Argument: {element_id: 1})",
        ))
    return result


def bind(proposal: Proposal, screen: ScreenState) -> PlannedAction:
    """Check one proposal against the registry and the screen (raises ActionError)."""
    spec = lookup(proposal.name)
    args = dict(proposal.args)
    positional = args.pop("__positional__", None)
    if positional is not None:
        required = [p for p in spec.params if p.required] or list(spec.params)
        if len(required) == 1 and required[0].name not in args:
            args[required[0].name] = positional
        elif isinstance(positional, list) and len(positional) == len(required):
            args.update({p.name: v for p, v in zip(required, positional, strict=True)})
        else:
            raise ActionError("bad_argument", f"{spec.name}: name each argument, e.g. {{{required[0].name}: ...}}"
                              if required else f"{spec.name} takes no arguments", spec.name)
    # Common synonyms models use for the paper's argument names.
    for alias, real in (("id", "element_id"), ("element", "element_id"), ("text", "string_to_type"),
                        ("string", "string_to_type"), ("keys", "key")):
        if alias in args and real not in args and any(p.name == real for p in spec.params):
            args[real] = args.pop(alias)
    return plan(spec.name, args, screen)


def bind_all(proposals: list[Proposal], screen: ScreenState) -> tuple[list[PlannedAction], list[ActionError]]:
    """Bind proposals in order, stopping at the first that fails: later actions were planned on the
    assumption that the earlier ones happen, so they are dropped with it."""
    planned: list[PlannedAction] = []
    for proposal in proposals:
        try:
            planned.append(bind(proposal, screen))
        except ActionError as exc:
            return planned, [exc]
        if planned[-1].terminal:
            break
    return planned, []
