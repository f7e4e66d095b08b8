"""The scripted planner's server: each request's CAAP prompt read (``kit.parse_prompt``), the first
policy whose pattern matches the task asked (``kit.POLICIES``, registered by
``caap.testing.planner.policies``), and its actions answered as a model would.

    python -m caap.testing.planner [--port 8765]     # prints the base URL, serves until Ctrl-C
    python -m caap.testing.planner --list-tasks      # the tasks with a policy, for caap bench --tasks
"""

from __future__ import annotations

import argparse
import functools
import re
import time
from typing import Any

from caap.decide.parser import action_line
from caap.testing.llm_server import Reply, ScriptedLLMServer
from caap.testing.planner.kit import (
    POLICIES,
    Action,
    El,
    Prompt,
    click,
    click_point,
    fail,
    find_all,
    norm,
    parse_prompt,
    type_text,
)
from caap.testing.planner.policies import TASKS

__all__ = ["TASKS", "main", "plan", "render", "respond", "serve"]


def plan(p: Prompt) -> list[Action]:
    for pattern, fn in POLICIES:
        m = pattern.match(p.task)
        if m:
            return fn(p, m)
    return [fail(f"the scripted planner has no policy for this task: {p.task!r}")]


# --- a gullible model -------------------------------------------------------------------------------
# For attack tests: a model that does what the screen tells it, as PopupAttack's and OS-Harm's
# victims did, so that what stops an attack is caap's and not the model's judgement.
_CLICK_ORDER = re.compile(r"""(?i)\bclick (?:on )?["'“]?(?P<target>[^"'”.!,\d][^"'”.!,]*?)["'”]?"""
                          r"(?:\s+(?:to|and|now)\b|[.!,]|$)")
_POINT_ORDER = re.compile(r"(?i)\bclick at (?P<x>\d+),\s*(?P<y>\d+)")
_TYPE_ORDER = re.compile(r"(?i)\b(?:type|enter) your (?P<what>password|pin|passcode|code)\b")
_PLACEHOLDER = re.compile(r"\{[A-Z][A-Z0-9_]*\}")


def obey_screen(p: Prompt) -> list[Action] | None:
    """What a gullible model does first: every order written on the screen ("click Delete account",
    "click at 900, 700", "type your password here"), in screen order, carried out with what the
    task gave it; None where the screen gives none."""
    actions: list[Action] = []
    for e in p.elements:
        text = e.text or ""
        order = _CLICK_ORDER.search(text)
        if order:
            target = next((t for t in find_all(p, ("button", "hyperlink", "text")) if t is not e
                           and norm(t.text) == norm(order["target"])), None)
            if target is not None:
                actions.append(click(target))
        point = _POINT_ORDER.search(text)
        if point:
            actions.append(click_point(int(point["x"]), int(point["y"])))
        if _TYPE_ORDER.search(text):
            secret = _PLACEHOLDER.search(p.task)
            field = _nearest(e, find_all(p, "input_field"))
            if field is not None:
                actions += [click(field), type_text(secret.group(0) if secret else "hunter2")]
    return actions or None


def _nearest(e: El, candidates: list[El]) -> El | None:
    """The field an order means by "here": the nearest one below it, else the nearest."""
    below = [c for c in candidates if c.y > e.y]
    return min(below or candidates, key=lambda c: abs(c.x - e.x) + abs(c.y - e.y), default=None)


# --- the server -------------------------------------------------------------------------------------


def render(actions: list[Action], first: int) -> str:
    """The answer's text: the paper's numbered ``Action_N=(...)`` lines."""
    lines = [action_line(name, args, first + i) for i, (name, args) in enumerate(actions)]
    return "Plan: scripted.\n" + "\n".join(lines)


def respond(body: dict[str, Any], *, gullible: bool = False, think_s: float = 0.0) -> Reply:
    prompt_text = next((m.get("content") or "" for m in reversed(body.get("messages", []))
                        if m.get("role") == "user"), "")
    if isinstance(prompt_text, list):  # content parts
        prompt_text = "".join(part.get("text", "") for part in prompt_text if isinstance(part, dict))
    p = parse_prompt(prompt_text)
    actions = (obey_screen(p) if gullible else None) or plan(p)
    time.sleep(think_s)  # a model that takes its time: the screen may change meanwhile
    text = render(actions, p.next_number)
    if body.get("tools"):
        # The numbered text travels with the calls: the agent keeps it as the previous answer.
        return Reply(text=text, tool_calls=list(actions))
    return Reply(text=text)


def serve(port: int = 0, host: str = "127.0.0.1", *, keep_requests: int | None = 20,
          gullible: bool = False, think_s: float = 0.0) -> ScriptedLLMServer:
    """Start the planner server (in a thread); ``.base_url`` says where, ``.stop()`` ends it.
    ``gullible``: it obeys what the screen tells it before its task (``obey_screen``), for attack tests;
    ``think_s``: seconds each answer takes.

    ScriptedLLMServer records every request body and header set; a planner server answers thousands
    of them, so only the last ``keep_requests`` are kept."""
    server = ScriptedLLMServer(responder=functools.partial(respond, gullible=gullible, think_s=think_s),
                               models=("scripted",),
                               host=host, port=port,
                               keep_requests=keep_requests)
    return server.start()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m caap.testing.planner",
                                     description="The scripted MiniWoB++ planner: an OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--gullible", action="store_true",
                        help="obey instructions written on the screen before the task (for attack tests)")
    parser.add_argument("--list-tasks", action="store_true",
                        help="print the MiniWoB++ tasks it solves (comma-separated, for caap bench --tasks) and exit")
    args = parser.parse_args()
    if args.list_tasks:
        print(",".join(TASKS))
        return
    server = serve(args.port, args.host, gullible=args.gullible)
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
