"""A scripted planner: an OpenAI-compatible HTTP server that answers CAAP prompts for MiniWoB++
tasks the way a perfect planner would.

It reads only what the prompt gives a real model — the task text, the element list of the current
screen and the actions so far — never the page. With it, `caap bench miniwob` measures the
perception/execution ceiling: every failure is a perception or execution problem, not planning.

    .venv/bin/python tools/scripted_planner.py [--port 8765]     # prints the base URL, serves until Ctrl-C
    caap bench miniwob --base-url http://127.0.0.1:8765/v1 --model scripted --tasks click-button ...

Answers in tool calls when the request offers tools, else in the text form (Action_N=(...)).
A task it has no policy for gets a `fail` action saying so.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from caap.testing.llm_server import Reply, ScriptedLLMServer

# --- reading the prompt -------------------------------------------------------------------------------


@dataclass
class El:
    """One element line of the prompt's current screen."""

    id: int
    type: str
    x: int
    y: int
    box: tuple[int, int, int, int]
    text: str | None = None
    checked: bool | None = None
    focused: bool | None = None
    highlighted: bool | None = None
    subtype: str | None = None
    visible: bool = True


@dataclass
class Prompt:
    task: str
    elements: list[El]
    history: list[str] = field(default_factory=list)  # "action_2: {name: ..., arg: {...}} -> outcome"

    @property
    def next_number(self) -> int:
        return len(self.history) + 2


_LINE = re.compile(r"^- ID: element_(\d+), data: \{type: (\w+), X: (-?\d+) \[(-?\d+)-(-?\d+)\], "
                   r"Y: (-?\d+) \[(-?\d+)-(-?\d+)\](.*)\}$")
_TEXT = re.compile(r'text: ("(?:[^"\\]|\\.)*")')
_FLAG = re.compile(r"\b(checked|focused|highlighted|visible): (True|False)")
_SUBTYPE = re.compile(r"\bsubtype: (\w+)")


def _section(text: str, title: str) -> str:
    """The body of the *last* ``### title ###`` section (demonstrations come before the current one)."""
    parts = re.split(r"^### (.+?) ###$", text, flags=re.M)
    body = None
    for i in range(1, len(parts) - 1, 2):
        if parts[i].strip() == title:
            body = parts[i + 1]
    return body or ""


def parse_prompt(text: str) -> Prompt:
    elements = []
    for line in _section(text, "Elements On The Current Screen").splitlines():
        m = _LINE.match(line.strip())
        if not m:
            continue
        rest = m.group(9)
        t = _TEXT.search(rest)
        flags = {k: v == "True" for k, v in _FLAG.findall(rest)}
        st = _SUBTYPE.search(rest)
        elements.append(El(
            id=int(m.group(1)), type=m.group(2), x=int(m.group(3)), y=int(m.group(6)),
            box=(int(m.group(4)), int(m.group(7)), int(m.group(5)), int(m.group(8))),
            text=json.loads(t.group(1)) if t else None, checked=flags.get("checked"),
            focused=flags.get("focused"), highlighted=flags.get("highlighted"),
            subtype=st.group(1) if st else None, visible=flags.get("visible", True)))
    history = [ln.strip() for ln in _section(text, "Actions So Far").splitlines()
               if ln.strip().startswith("action_") and "{name: start}" not in ln]
    return Prompt(task=_section(text, "Task").strip(), elements=[e for e in elements if e.visible], history=history)


# --- acting -----------------------------------------------------------------------------------------

Action = tuple[str, dict[str, Any]]


def click(e: El) -> Action:
    return ("click_element", {"element_id": e.id})


def type_text(s: str) -> Action:
    return ("type_text", {"string_to_type": s})


def done(reason: str = "the task is complete") -> Action:
    return ("done", {"reason": reason})


def fail(reason: str) -> Action:
    return ("fail", {"reason": reason})


def norm(s: str | None) -> str:
    return re.sub(r"\s+", " ", (s or "")).strip().lower()


def find(p: Prompt, types: tuple[str, ...] | str, text: str | None = None, *, exact: bool = True) -> El | None:
    """The first element (reading order) of one of ``types`` whose text is ``text`` (case-insensitive)."""
    types = (types,) if isinstance(types, str) else types
    for e in p.elements:
        if e.type in types and (text is None or (norm(e.text) == norm(text) if exact else norm(text) in norm(e.text))):
            return e
    return None


def did(p: Prompt, name: str, text: str | None = None) -> bool:
    """Whether the history holds an action ``name`` (on an element whose text contains ``text``)."""
    return any(f"name: {name}" in line and (text is None or f"text: {json.dumps(text)}" in line)
               for line in p.history)


# --- policies ---------------------------------------------------------------------------------------

Policy = Callable[[Prompt, re.Match[str]], list[Action]]
POLICIES: list[tuple[re.Pattern[str], Policy]] = []


def policy(pattern: str) -> Callable[[Policy], Policy]:
    def register(fn: Policy) -> Policy:
        POLICIES.append((re.compile(pattern, re.S), fn))
        return fn

    return register


@policy(r'^Click on the "(?P<name>.+)" button\.?$')
def click_button(p: Prompt, m: re.Match[str]) -> list[Action]:
    if p.history:
        return [done()]
    target = find(p, "button", m["name"])
    return [click(target)] if target else [fail(f"no button labelled {m['name']!r} on the screen")]


def plan(p: Prompt) -> list[Action]:
    for pattern, fn in POLICIES:
        m = pattern.match(p.task)
        if m:
            return fn(p, m)
    return [fail(f"the scripted planner has no policy for this task: {p.task!r}")]


# --- the server -------------------------------------------------------------------------------------


def _arg(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def respond(body: dict[str, Any]) -> Reply:
    prompt_text = next((m.get("content") or "" for m in reversed(body.get("messages", []))
                        if m.get("role") == "user"), "")
    if isinstance(prompt_text, list):  # content parts
        prompt_text = "".join(part.get("text", "") for part in prompt_text if isinstance(part, dict))
    p = parse_prompt(prompt_text)
    actions = plan(p)
    if body.get("tools"):
        return Reply(text=None, tool_calls=list(actions))
    lines = [f"Action_{p.next_number + i}=(Action: functions.{name}, Argument: "
             f"{{{', '.join(f'{k}: {_arg(v)}' for k, v in args.items())}}})" for i, (name, args) in enumerate(actions)]
    return Reply(text="Plan: scripted.\n" + "\n".join(lines))


def serve(port: int = 0, host: str = "127.0.0.1") -> ScriptedLLMServer:
    """Start the planner server (in a thread); ``.base_url`` says where, ``.stop()`` ends it."""
    return ScriptedLLMServer(responder=respond, models=("scripted",), host=host, port=port,
                             keep_requests=20).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    server = serve(args.port, args.host)
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
