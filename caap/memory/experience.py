"""Experience per task family (after HxAgent): the latest successful and failed attempts, and short
rules an LLM derived from the failures. The prompter shows the rules and one successful attempt.

One JSON file per family under a directory, rewritten atomically; bounded in size: the newest
``max_successes`` and ``max_failures`` attempts, at most ``max_rules`` rules of at most
``rule_chars`` characters (the oldest rules go first).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field, ValidationError

from caap.memory.families import slug
from caap.memory.files import locked, write_atomic
from caap.observe.grounding import fold

EXPERIENCE_VERSION = 1


class ExperienceError(RuntimeError):
    """An experience file cannot be read or written; the message names it."""


class Attempt(BaseModel):
    task: str
    status: str
    reason: str = ""
    actions: list[str] = Field(default_factory=list)  # PlannedAction.describe() of each action
    at: float = Field(default_factory=time.time)


class FamilyExperience(BaseModel):
    version: int = EXPERIENCE_VERSION
    family: str
    successes: list[Attempt] = Field(default_factory=list)
    failures: list[Attempt] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)


class _Planner(Protocol):
    def complete(self, prompt: str, tools: list[dict[str, Any]] | None = None) -> Any: ...


RULES_PROMPT = """\
A computer-using agent works from a list of screen elements (read by OCR) and chooses mouse and \
keyboard actions. It failed at the task below. Study what it did and why it ended.

Task: {task}
How it ended: {status} — {reason}
Its actions, in order:
{actions}
{earlier}
Write at most {n} short rules (one line each, starting with "- ") that would have avoided this \
failure on any task of this kind. Keep them general: the names, numbers and words that change \
from one instance of the task to the next must not appear. Write nothing else."""


class ExperienceStore:
    def __init__(self, root: str | Path, *, max_successes: int = 3, max_failures: int = 5,
                 max_rules: int = 8, rule_chars: int = 200) -> None:
        self.root = Path(root)
        self.max_successes, self.max_failures = max_successes, max_failures
        self.max_rules, self.rule_chars = max_rules, rule_chars

    def _path(self, family: str) -> Path:
        return self.root / f"{slug(family)}.json"

    def get(self, family: str) -> FamilyExperience:
        path = self._path(family)
        if not path.exists():
            return FamilyExperience(family=family)
        try:
            return FamilyExperience.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValidationError) as exc:
            first = str(exc).splitlines()[0]
            raise ExperienceError(f"{path}: unreadable experience file ({first}); delete it to start afresh") from None

    def _update(self, family: str, change: Callable[[FamilyExperience], Any]) -> Any:
        """Read, change and write one family's file under a lock (benchmark workers share it)."""
        path = self._path(family)
        try:
            with locked(path):
                exp = self.get(family)
                out = change(exp)
                exp.successes = exp.successes[-self.max_successes:]
                exp.failures = exp.failures[-self.max_failures:]
                exp.rules = exp.rules[-self.max_rules:]
                write_atomic(path, exp.model_dump_json(indent=1))
        except OSError as exc:
            raise ExperienceError(f"{path}: cannot write experience ({exc})") from None
        return out

    def record(self, family: str, attempt: Attempt, success: bool) -> None:
        self._update(family, lambda exp: (exp.successes if success else exp.failures).append(attempt))

    def add_rules(self, family: str, rules: list[str]) -> list[str]:
        """Add new rules (capped, without duplicates); returns the ones actually added."""
        def change(exp: FamilyExperience) -> list[str]:
            known = {fold(r) for r in exp.rules}
            added = []
            for rule in rules:
                rule = cap(rule, self.rule_chars)
                if rule and fold(rule) not in known:
                    exp.rules.append(rule)
                    known.add(fold(rule))
                    added.append(rule)
            return added

        return self._update(family, change)

    def derive_rules(self, planner: _Planner, family: str, failure: Attempt, *, n: int = 3) -> list[str]:
        """One LLM call: rules from a failed attempt, added to the family's experience. An LLM
        error propagates (the caller decides whether a run goes on without new rules)."""
        exp = self.get(family)
        earlier = ("Rules already known (do not repeat them):\n" + "\n".join(f"- {r}" for r in exp.rules) + "\n"
                   if exp.rules else "")
        prompt = RULES_PROMPT.format(task=failure.task, status=failure.status, reason=failure.reason or "-",
                                     actions="\n".join(f"{i}. {a}" for i, a in enumerate(failure.actions, 1))
                                     or "(none)", earlier=earlier, n=n)
        reply = planner.complete(prompt, None)
        return self.add_rules(family, parse_rules(getattr(reply, "content", "") or "")[:n])

    def prompt_lines(self, family: str) -> list[str]:
        """What the prompter shows: the rules, then the latest successful attempt's actions."""
        exp = self.get(family)
        lines = [f"- {r}" for r in exp.rules]
        if exp.successes:
            best = exp.successes[-1]
            lines.append(f"A successful earlier attempt ({best.task!r}):")
            lines.extend(f"  {i}. {a}" for i, a in enumerate(best.actions, 1))
        return lines


_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.*\S)\s*$")


def parse_rules(text: str) -> list[str]:
    """Bullet or numbered lines of an answer; anything else (preamble, blank lines) is ignored."""
    return [m.group(1) for line in text.splitlines() if (m := _BULLET.match(line))]


def cap(text: str, limit: int) -> str:
    """White space folded; cut at the last sentence end (else word) before ``limit``."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end >= limit // 2:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0].rstrip(",;:") + "…"
