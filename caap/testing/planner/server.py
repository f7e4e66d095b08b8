"""The scripted planner's server: each request's CAAP prompt read (``kit.parse_prompt``), the first
policy whose pattern matches the task asked (``kit.POLICIES``, registered by
``caap.testing.planner.policies``), and its actions answered as a model would.

    python -m caap.testing.planner [--port 8765]     # prints the base URL, serves until Ctrl-C
    python -m caap.testing.planner --list-tasks      # the tasks with a policy, for caap bench --tasks
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from caap.decide.parser import action_line
from caap.testing.llm_server import Reply, ScriptedLLMServer
from caap.testing.planner.kit import POLICIES, Action, Prompt, fail, parse_prompt
from caap.testing.planner.policies import TASKS

__all__ = ["TASKS", "main", "plan", "render", "respond", "serve"]


def plan(p: Prompt) -> list[Action]:
    for pattern, fn in POLICIES:
        m = pattern.match(p.task)
        if m:
            return fn(p, m)
    return [fail(f"the scripted planner has no policy for this task: {p.task!r}")]


# --- the server -------------------------------------------------------------------------------------


def render(actions: list[Action], first: int) -> str:
    """The answer's text: the paper's numbered ``Action_N=(...)`` lines."""
    lines = [action_line(name, args, first + i) for i, (name, args) in enumerate(actions)]
    return "Plan: scripted.\n" + "\n".join(lines)


def respond(body: dict[str, Any]) -> Reply:
    prompt_text = next((m.get("content") or "" for m in reversed(body.get("messages", []))
                        if m.get("role") == "user"), "")
    if isinstance(prompt_text, list):  # content parts
        prompt_text = "".join(part.get("text", "") for part in prompt_text if isinstance(part, dict))
    p = parse_prompt(prompt_text)
    actions = plan(p)
    text = render(actions, p.next_number)
    if body.get("tools"):
        # The numbered text travels with the calls: the agent keeps it as the previous answer.
        return Reply(text=text, tool_calls=list(actions))
    return Reply(text=text)


def serve(port: int = 0, host: str = "127.0.0.1", *, keep_requests: int | None = 20) -> ScriptedLLMServer:
    """Start the planner server (in a thread); ``.base_url`` says where, ``.stop()`` ends it.

    ScriptedLLMServer records every request body and header set; a planner server answers thousands
    of them, so only the last ``keep_requests`` are kept."""
    server = ScriptedLLMServer(responder=respond, models=("scripted",), host=host, port=port,
                               keep_requests=keep_requests)
    return server.start()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m caap.testing.planner",
                                     description="The scripted MiniWoB++ planner: an OpenAI-compatible server.")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--list-tasks", action="store_true",
                        help="print the MiniWoB++ tasks it solves (comma-separated, for caap bench --tasks) and exit")
    args = parser.parse_args()
    if args.list_tasks:
        print(",".join(TASKS))
        return
    server = serve(args.port, args.host)
    print(server.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
