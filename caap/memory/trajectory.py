"""Comparing an episode with a reference trajectory (HxAgent's exact match and prefix match).

An action is compared by what it did, not by ids: its name, the type and (folded) text of the
element it targeted, and its other arguments (typed text, keys, directions; pixel coordinates are
left out — they differ between instances). ``level="action"`` drops the element text and the
argument values, for references recorded on another seed of the same task, whose values differ.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from caap.act.actions import REGISTRY
from caap.decide.demos import DemoStep
from caap.memory.families import words
from caap.records import ActionRecord

Level = Literal["element", "action"]
_IGNORED_ARGS = {"element_id", "x", "y", "reason", "seconds"}


def signature(name: str, args: Mapping[str, Any] | None, element: Mapping[str, Any] | None,
              level: Level = "element") -> tuple[Any, ...]:
    kind = (element or {}).get("type")
    if level == "action":
        return (name, kind)
    text = " ".join(words((element or {}).get("text") or ""))
    extra = tuple(sorted((k, str(v)) for k, v in (args or {}).items() if k not in _IGNORED_ARGS))
    return (name, kind, text, extra)


def signatures(steps: Sequence[ActionRecord | DemoStep], level: Level = "element") -> list[tuple[Any, ...]]:
    """Signatures of an episode's actions or of a demonstration's steps; actions that send no input
    (done, fail, wait: ``ActionSpec.acts_on_screen``) are not steps of a trajectory, nor are actions
    that were refused or failed."""
    out = []
    for s in steps:
        if isinstance(s, ActionRecord):
            if s.refused:
                continue
            name, element = s.name, s.element
        else:
            name, element = s.action, s.element.to_json() if s.element is not None else None
        spec = REGISTRY.get(name)
        if spec is not None and not spec.acts_on_screen:
            continue
        out.append(signature(name, s.args, element, level))
    return out


def match(episode: Sequence[tuple[Any, ...]], reference: Sequence[tuple[Any, ...]]) -> dict[str, float]:
    """``exact``: 1.0 when the two sequences are equal; ``prefix``: the share of the reference
    that the episode reproduced from the start before its first difference."""
    if not reference:
        return {"exact": float(not episode), "prefix": 1.0}
    n = 0
    for a, b in zip(episode, reference, strict=False):
        if a != b:
            break
        n += 1
    return {"exact": float(list(episode) == list(reference)), "prefix": n / len(reference)}
