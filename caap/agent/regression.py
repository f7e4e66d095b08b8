"""A solved run as a regression test (HxAgent's test-case generation): the demonstration of what
the agent did, with the checks a replay must pass on the way.

``as_test`` turns a run's step records (``caap.records.StepRecord``) into a
``Demonstration`` whose executed actions are its steps. A step gets an ``expect`` list wherever the
screen must show something: the element it acted on as the next screen showed it, when acting
changed that element (a box now ticked, a row now selected, a field now holding the typed text,
a section now expanded). ``caap replay`` checks each expectation after its step
(``expectation_failure``) and stops at the first one that fails, naming it; the desktop benchmark
also scores the replayed episode with the task's own checks on the application (``origin`` says
which task and seed the test was saved from).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caap.decide.demos import Demonstration, DemoStep, save_demo
from caap.elements import Element
from caap.observe.grounding import fold, locate, text_similarity
from caap.records import Outcome, StepRecord
from caap.taxonomy import attributes_of

# The states a test expects of an element, where the recording saw them change (focus is left out:
# it follows the pointer and the keyboard, not the task).
EXPECTED_STATES = ("checked", "highlighted", "expanded")
EXECUTED = frozenset({Outcome.CHANGED, Outcome.CHANGED_WITHIN, Outcome.NO_CHANGE})  # what the agent did
TEXT_SIMILARITY = 0.75  # as replay's grounding reads texts: another read of the same screen may differ a little


def _elements(records: Sequence[dict[str, Any]]) -> list[Element]:
    out = []
    for r in records:
        try:
            e = Element.model_validate(r)
        except ValueError:
            continue
        if e.visible:
            out.append(e)
    return out


def _changed(before: Element, after: Element) -> bool:
    carried = attributes_of(after.type)
    if any(getattr(before, s) != getattr(after, s) and getattr(after, s) is not None
           for s in EXPECTED_STATES if s in carried):
        return True
    return "text" in carried and fold(after.text) != fold(before.text) and bool(fold(after.text))


def _expected(after: Element) -> Element:
    """What a test expects of an element: its type, box, text and the states it shows, no ids or scores."""
    carried = attributes_of(after.type)
    keep = {s: getattr(after, s) for s in (*EXPECTED_STATES, "text") if s in carried and getattr(after, s) is not None}
    return Element(type=after.type, bbox=after.bbox, **keep)


def as_test(task: str, steps: Sequence[StepRecord], *, screen: tuple[int, int] | None = None,
                    origin: dict[str, Any] | None = None, source: str = "agent") -> Demonstration:
    """The demonstration of a run's executed actions, each with the checks its next screen supports."""
    size = {"width": screen[0], "height": screen[1]} if screen else None
    out: list[DemoStep] = []
    for i, record in enumerate(steps):
        before = _elements(record.elements)
        after = _elements(steps[i + 1].elements) if i + 1 < len(steps) else []
        done = [a for a in record.actions if a.outcome in EXECUTED]
        for n, action in enumerate(done):
            target = action.target()
            step = DemoStep(action=action.name, args=dict(action.args), element=target, before=before,
                            after=after or None)
            if target is not None and after and n == len(done) - 1:  # the next screen shows the last action's effect
                found = locate(target, after, screen_size=screen or (4096, 4096))
                if found is not None and _changed(target, found.element):
                    step.expect = [_expected(found.element)]
            out.append(step)
    return Demonstration(task=task, steps=out, source=source, screen=size, origin=origin)


def save_test(task: str, steps: Sequence[StepRecord], path: str | Path, **kwargs: Any) -> Path:
    """``as_test`` written to ``path`` (the demonstration format, with ``expect`` and ``origin``)."""
    return save_demo(as_test(task, steps, **kwargs), path)


def expectation_failure(expected: Element, elements: Sequence[Element], screen_size: tuple[int, int]) -> str | None:
    """None when ``elements`` show ``expected`` (found as replay finds elements, its states as
    expected), else what the screen shows instead."""
    found = locate(expected, elements, screen_size=screen_size, min_text_similarity=TEXT_SIMILARITY)
    what = f"{expected.type.value}" + (f" {expected.text!r}" if fold(expected.text) else f" at {list(expected.centre)}")
    if found is None:
        return f"expected {what} on the screen, and there is none"
    got = found.element
    for state in EXPECTED_STATES:
        want = getattr(expected, state)
        if want is not None and getattr(got, state) != want:
            return f"expected {what} {state}={want}, the screen shows {state}={getattr(got, state)}"
    if fold(expected.text) and text_similarity(expected.text, got.text) < TEXT_SIMILARITY:
        return f"expected {what}, the screen shows {got.text!r}"
    return None
