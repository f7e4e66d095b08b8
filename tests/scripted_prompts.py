"""Test helpers for the scripted planner (caap.testing.planner and its policy modules): elements,
history entries, prompts built by the real prompter, and what the planner answers to them."""

from __future__ import annotations

from typing import Any

import caap.testing.planner.kit as kit
from caap.act.actions import PlannedAction
from caap.decide.prompter import CaapPrompter, HistoryEntry, PromptContext, PromptOptions
from caap.elements import Element
from caap.testing.planner import server as sp

CHANGED = "the screen changed"
SAME = "no visible change"
Actions = list[tuple[str, dict[str, Any]]]
History = list[tuple[PlannedAction, str]]


def el(id: int, type: str, box: tuple[int, int, int, int], **attrs: Any) -> Element:
    return Element(id=id, type=type, bbox=list(box), **attrs)


def act(name: str, element: Element | None = None, **args: Any) -> PlannedAction:
    if element is not None:
        args = {"element_id": element.id, **args}
    return PlannedAction(name, args, element)


def prompt_text(task: str, elements: list[Element], history: History = (), last_response: str | None = None,
                mode: str = "text") -> str:
    entries = [HistoryEntry(n, a, outcome) for n, (a, outcome) in enumerate(history, start=2)]
    return CaapPrompter(PromptOptions(mode=mode)).build(PromptContext(task, elements, entries, last_response)).text


def plan(task: str, elements: list[Element], history: History = (), last_response: str | None = None) -> Actions:
    """The scripted planner's actions for the prompt of this screen and history."""
    return sp.plan(kit.parse_prompt(prompt_text(task, elements, history, last_response)))


def policy_for(task: str) -> Any:
    """The policy function the planner picks for ``task`` (the first pattern that matches), or None."""
    return next((fn for pattern, fn in kit.POLICIES if pattern.match(task)), None)
