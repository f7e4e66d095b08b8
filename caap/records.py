"""What an episode leaves behind, typed: how it ended (``EpisodeStatus``), what became of each
action (``Outcome``, ``ActionRecord``) and everything one step saw and did (``StepRecord``).

The loop emits these records; the trace writer stores them as JSON lines (``to_json``), and the
report, memory, the benchmark, replay and the CLI read them back (``StepRecord.from_json``). One
place therefore says what an outcome means — whether an action ran, was refused, or ended the
episode — and every reader agrees.

Traces written before these records existed spell a dropped plan into the outcome text ("the screen
changed; the 2 action(s) planned after it were dropped"); they are read into ``outcome`` and
``dropped`` alike.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from caap.act.actions import REGISTRY, ActionSpec, PlannedAction
from caap.elements import Element


class EpisodeStatus(StrEnum):
    """Why an episode ended."""

    DONE = "done"  # the model declared the task complete
    FAILED = "failed"  # the model gave up
    FINISHED = "finished"  # the environment reports the task finished (benchmarks)
    MAX_STEPS = "max_steps"
    TIMEOUT = "timeout"
    OVER_BUDGET = "over_budget"
    STOPPED = "stopped"  # the stop hotkey, Ctrl-C or the fail-safe
    INVALID_ANSWERS = "invalid_answers"
    LLM_ERROR = "llm_error"
    SCREEN_ERROR = "screen_error"
    ACT_ERROR = "act_error"
    HARNESS_ERROR = "harness_error"  # the benchmark's browser or display failed around the episode


# The statuses of an episode whose task was done (by the model's word or the environment's).
AGENT_SUCCEEDED = frozenset({EpisodeStatus.DONE, EpisodeStatus.FINISHED})


class Outcome(StrEnum):
    """What became of one planned action. The values of the first three are the words the history
    of the next prompt shows the model."""

    CHANGED = "the screen changed"  # beyond the element acted on: the rest of the plan is stale
    CHANGED_WITHIN = "the screen changed within the element"  # a ticked box, typed text
    NO_CHANGE = "no visible change"
    NOT_DONE = "not done"  # held back: the screen changed where it aimed after it was read
    DENIED = "denied"  # refused by the confirmation gate
    ERROR = "error"  # the OS input backend failed
    DONE = "done"  # the terminal action done
    FAIL = "fail"  # the terminal action fail


EXECUTED = frozenset({Outcome.CHANGED, Outcome.CHANGED_WITHIN, Outcome.NO_CHANGE})
REFUSED = frozenset({Outcome.DENIED, Outcome.ERROR})
TERMINAL = frozenset({Outcome.DONE, Outcome.FAIL})

_DROPPED = re.compile(r"^(?P<outcome>.*?); the (?P<n>\d+) action\(s\) planned after it were dropped$")


def dropped_text(n: int) -> str:
    return f"the {n} action(s) planned after it were dropped"


class ActionRecord(BaseModel):
    """One planned action as the loop left it: what it was (name, arguments, the element it aimed at
    as the model saw it, the point it went to) and what became of it."""

    model_config = ConfigDict(extra="allow")  # a newer or older trace's fields are kept, not refused

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    element: dict[str, Any] | None = None  # Element.to_json() of the target
    point: list[int] | None = None
    outcome: Outcome
    dropped: int = Field(default=0, ge=0, description="actions planned after this one that were dropped")
    number: int | None = None  # its place in the episode's history (executed actions)
    reason: str | None = None  # why it was not done, denied, or failed
    changed_px: int | None = None
    act_ms: float | None = None
    settle_ms: float | None = None
    settle: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _old_outcome_text(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("outcome"), str):
            m = _DROPPED.match(data["outcome"])
            if m:
                data = {**data, "outcome": m["outcome"], "dropped": int(m["n"])}
        return data

    @classmethod
    def of(cls, action: PlannedAction, outcome: Outcome, **fields: Any) -> ActionRecord:
        """The record of a planned action (``PlannedAction.to_json``) with its outcome."""
        return cls(**action.to_json(), outcome=outcome, **fields)

    @property
    def spec(self) -> ActionSpec | None:
        """The registry's definition of the action (None for a name no longer registered)."""
        return REGISTRY.get(self.name)

    def target(self) -> Element | None:
        """The element the action aimed at, as the model saw it."""
        return Element.model_validate(self.element) if self.element else None

    def planned(self) -> PlannedAction:
        """The action again as the loop planned it (to describe it as the history does)."""
        point = (int(self.point[0]), int(self.point[1])) if self.point and len(self.point) == 2 else None
        return PlannedAction(self.name, dict(self.args), self.target(), point)

    @property
    def executed(self) -> bool:
        """Whether the action reached the screen (the OS input ran)."""
        return self.outcome in EXECUTED

    @property
    def refused(self) -> bool:
        """Whether the action was refused or failed: it is no part of what the agent did."""
        return self.outcome in REFUSED

    @property
    def terminal(self) -> bool:
        return self.outcome in TERMINAL

    def outcome_text(self) -> str:
        """The outcome as the history of the next prompt and the report show it."""
        text = self.outcome.value
        return f"{text}; {dropped_text(self.dropped)}" if self.dropped else text

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class PromptRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    text: str
    estimated_tokens: int | None = None
    trims: list[Any] = Field(default_factory=list)
    over_budget: bool = False


class StepRecord(BaseModel):
    """One step of an episode: the screen read, the prompt and the answer, and each action's record.
    ``timings_ms`` holds observe (capture, detect, read), prompt, llm, act and settle."""

    model_config = ConfigDict(extra="allow")

    step: int = Field(ge=1)
    t: float = 0.0  # seconds since the episode started
    elements: list[dict[str, Any]] = Field(default_factory=list)  # Element.to_json() of each
    # The observer's steps on this screen (name, stage, ms, added/changed/removed) and, one per
    # element above, the step that added it and those that changed it (None: carried from before).
    observe_steps: list[dict[str, Any]] = Field(default_factory=list)
    provenance: list[dict[str, Any] | None] = Field(default_factory=list)
    screenshot: str | None = None  # the file name in the trace directory
    cache: str | None = None  # "hit" or "miss" where an action cache is in use
    prompt: PromptRecord | None = None
    response: dict[str, Any] | None = None  # LLMReply.to_json()
    proposals: list[dict[str, Any]] = Field(default_factory=list)
    actions: list[ActionRecord] = Field(default_factory=list)
    errors: list[dict[str, Any]] = Field(default_factory=list)  # ActionError.to_json() of each
    timings_ms: dict[str, float] = Field(default_factory=dict)
    cost_usd: float | None = None
    error: str | None = None  # the LLM call that ended the episode

    @model_validator(mode="before")
    @classmethod
    def _old_timings(cls, data: Any) -> Any:
        # Early traces kept a step's timings under "timings" when its LLM call failed.
        if isinstance(data, dict) and "timings_ms" not in data and isinstance(data.get("timings"), dict):
            data = {**data, "timings_ms": data["timings"]}
        return data

    @classmethod
    def from_json(cls, data: Any) -> StepRecord:
        """A record read back from a trace; ``StepRecordError`` names what is wrong with it."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "record"
            raise StepRecordError(f"{where}: {first['msg']}") from None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)

    @property
    def done_actions(self) -> list[ActionRecord]:
        """The actions that are part of what the agent did (not refused, not failed)."""
        return [a for a in self.actions if not a.refused]


class StepRecordError(ValueError):
    """A step record that cannot be read; the message names the field."""
