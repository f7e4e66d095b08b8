"""The memory around one episode: what goes into the prompt before it, what is kept after it.

Before: demonstrations retrieved for the task (``DemoStore``) and the family's experience lines.
During: the action cache (the agent loop consults it at every step).
After: the attempt recorded as experience (and, for a failure, rules derived by one LLM call),
a success saved as an auto-context demonstration, the cache's held-back actions stored or dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from caap.config import CaapConfig, MemoryConfig, PromptConfig
from caap.decide.demos import Demonstration, load_demos
from caap.decide.llm import LLMError
from caap.memory.autocontext import demo_from_steps, save_auto_demo
from caap.memory.cache import ActionCache
from caap.memory.experience import Attempt, ExperienceStore
from caap.memory.families import family_of
from caap.memory.retrieval import DemoStore
from caap.records import StepRecord


@dataclass
class MemoryOptions:
    """Where memory lives and how much the prompt takes of it; the defaults are the ``[memory]``
    and ``[prompt]`` config sections'."""

    demos: list[Path] = field(default_factory=list)  # files (always shown) or directories (retrieved from)
    max_demonstrations: int = PromptConfig.model_fields["max_demonstrations"].default
    experience: Path | None = None  # directory of per-family experience files
    derive_rules: bool = MemoryConfig.model_fields["derive_rules"].default  # one LLM call after a failure
    auto_context: Path | None = None  # directory that successful runs are saved to as demonstrations
    cache: Path | None = None  # action cache file
    exclude_same_task: bool = False  # never retrieve a demonstration of exactly this task text

    @classmethod
    def from_config(cls, cfg: CaapConfig, **overrides: Any) -> MemoryOptions:
        """The options of a config's ``[memory]`` section (``overrides``: a command's own flags)."""
        m = cfg.memory
        return cls(**{"demos": list(m.demos), "max_demonstrations": cfg.prompt.max_demonstrations,
                      "experience": m.experience, "derive_rules": m.derive_rules, "auto_context": m.auto_context,
                      "cache": m.cache, **overrides})


class Memory:
    def __init__(self, options: MemoryOptions, planner: Any | None = None) -> None:
        self.options = options
        self.planner = planner  # for rule derivation
        # A file named explicitly is always shown; directories are searched by similarity.
        self.pinned = load_demos([p for p in options.demos if not Path(p).is_dir()])
        dirs = [p for p in options.demos if Path(p).is_dir()]
        if options.auto_context and options.auto_context.is_dir():
            dirs.append(options.auto_context)
        self.store = DemoStore.load(dirs) if dirs else DemoStore([])
        self.experience = ExperienceStore(options.experience) if options.experience else None
        self.cache = ActionCache(options.cache) if options.cache else None

    def demonstrations(self, task: str, family: str | None = None) -> list[Demonstration]:
        k = max(self.options.max_demonstrations - len(self.pinned), 0)
        return self.pinned + self.store.top_k(task, k, family=family, exclude_task=self.options.exclude_same_task)

    def experience_lines(self, task: str, family: str | None = None) -> list[str]:
        return self.experience.prompt_lines(family_of(task, family)) if self.experience else []

    def finish(self, task: str, *, success: bool, status: str, reason: str, steps: Sequence[StepRecord],
               family: str | None = None, screen: tuple[int, int] | None = None) -> dict[str, Any]:
        """Keep what the episode taught; returns what was done, for the trace and the summary."""
        fam = family_of(task, family)
        out: dict[str, Any] = {"family": fam}
        if self.cache is not None:
            self.cache.end_episode(success)
        if self.experience is not None:
            # What was tried, refusals included (the attempt says what the agent chose to do).
            attempt = Attempt(task=task, status=status, reason=reason,
                              actions=[a.planned().describe() for s in steps for a in s.actions if not a.terminal])
            self.experience.record(fam, attempt, success)
            if not success and self.options.derive_rules and self.planner is not None:
                try:
                    out["rules_added"] = self.experience.derive_rules(self.planner, fam, attempt)
                except LLMError as exc:
                    out["rules_error"] = str(exc)
        if success and self.options.auto_context is not None:
            demo = demo_from_steps(task, steps, family=family, screen=screen)
            saved = save_auto_demo(self.options.auto_context, demo)
            out["auto_context"] = str(saved) if saved else None
        return out
