"""A scripted planner: an OpenAI-compatible HTTP server that answers CAAP prompts for MiniWoB++
tasks the way a perfect planner would.

It reads only what the prompt gives a real model — the task text, the element list of the current
screen, the actions so far and its own previous answer — never the page. With it, `caap bench
miniwob` measures the perception/execution ceiling: every failure is a perception or execution
problem, not planning.

    python -m caap.testing.planner [--port 8765]     # prints the base URL, serves until Ctrl-C
    caap bench miniwob --base-url http://127.0.0.1:8765/v1 --model scripted --tasks click-button ...

Answers in tool calls when the request offers tools, else in the text form (Action_N=(...)); in both
cases the answer's text lists the numbered actions, so the next prompt's "previous answer" holds the
plan (a drag that the agent cut short after its first move goes on from there).
A task it has no policy for gets a `fail` action saying so.

Policies are stateless functions of (task, current elements, history, previous answer): they decide
from the screen's state (a checkbox's `checked`, a field's `text` and `focused`) and from what the
history says was done, so they recover when an action did not take effect.

The policies live in ``policies/`` (one module per task family), written with the toolkit in
``kit.py``; ``server.py`` serves them; `--list-tasks` prints every task with a policy.

What perception gives for MiniWoB's links is a line of plain text (the links are styled <span>s),
sometimes with words run together; link policies therefore click inside lines of text, at the word's
place estimated from Arial's advance widths, and try the next place when nothing happened.
"""

from caap.testing.planner.server import TASKS, main, plan, render, respond, serve

__all__ = ["TASKS", "main", "plan", "render", "respond", "serve"]
