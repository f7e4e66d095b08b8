"""The agent loop: observe → prompt → LLM → parse → execute, until done or out of budget.

Several actions in one answer run in order; after each, the screen is captured again once it has
settled, and if it changed beyond the element acted on the rest of the batch is dropped (it was
planned for a screen that no longer exists) and the model is asked again; a change within that
element (a ticked box, typed text) keeps the plan. The frame captured after the last action is the one
the next step observes, so no screen is captured twice. A pointer action whose target has changed
since the screen was read (a list that opened a moment later) is not done; the screen is read again.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from PIL import Image

from caap.act.actions import ActionError, PlannedAction, ScreenState, execute, tool_schemas
from caap.act.device import Device
from caap.act.executor import Executor
from caap.act.safety import PopupGuard, label_of
from caap.act.secrets import Secrets, placeholder, placeholders, unmasked
from caap.agent.trace import TraceWriter
from caap.agent.typed import TypedValues
from caap.config import AgentConfig, CaapConfig
from caap.decide.demos import Demonstration
from caap.decide.llm import LLMError, LLMReply
from caap.decide.parser import action_line, bind_all, parse_reply
from caap.decide.prompter import CaapPrompter, HistoryEntry, PromptContext, PromptOptions
from caap.elements import Element, element_at, value_labels
from caap.geometry import Box
from caap.memory.cache import ActionCache, cache_key
from caap.memory.session import Memory
from caap.observe.capture.screen import FrameChange, Screen, ScreenError, appeared_regions, changed_within
from caap.observe.observation import Observation, Observer, task_names
from caap.observe.tracking import IdTracker
from caap.records import ActionRecord, EpisodeStatus, Outcome, PromptRecord, StepRecord


def provenance_of(tracked: Sequence[Element], observation: Observation) -> list[dict[str, Any] | None]:
    """The provenance of each tracked element (reordered, with ids), found by its type, box and
    text among the observation's; None for an element carried from the previous screen."""
    if len(observation.provenance) != len(observation.elements):
        return [None] * len(tracked)
    by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for e, origin in zip(observation.elements, observation.provenance, strict=True):
        by_key.setdefault((e.type, tuple(e.bbox), e.text), []).append(origin.to_json())
    out: list[dict[str, Any] | None] = []
    for e in tracked:
        found = by_key.get((e.type, tuple(e.bbox), e.text)) if e.visible else None
        out.append(found.pop(0) if found else None)
    return out

class Planner(Protocol):
    """What the loop needs from an LLM client."""

    def complete(self, prompt: str, tools: list[dict[str, Any]] | None = None) -> LLMReply: ...


@dataclass
class EpisodeResult:
    status: EpisodeStatus
    reason: str
    steps: int
    actions: list[ActionRecord] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0
    seconds: float = 0.0
    last_step: StepRecord | None = None

    @property
    def done_actions(self) -> list[ActionRecord]:
        """The actions that are part of what the agent did (not refused, not failed)."""
        return [a for a in self.actions if not a.refused]

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status.value,
            "reason": self.reason,
            "steps": self.steps,
            "actions": [a.to_json() for a in self.actions],
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "seconds": round(self.seconds, 3),
        }


class Agent:
    def __init__(
        self,
        *,
        screen: Screen,
        observer: Observer,
        executor: Executor,
        planner: Planner,
        prompter: CaapPrompter,
        config: AgentConfig | None = None,
        trace: TraceWriter | None = None,
        demonstrations: list[Demonstration] | None = None,
        stop: threading.Event | None = None,
        is_finished: Callable[[], bool] | None = None,
        on_step: Callable[[StepRecord], None] | None = None,
        approve: Callable[[PlannedAction, list[Element]], str | None] | None = None,
        cache: ActionCache | None = None,
        experience: list[str] | None = None,
        family: str | None = None,
        secrets: Secrets | None = None,
        popups: str = "mark",
        popup_guard: PopupGuard | None = None,
    ) -> None:
        self.screen = screen
        self.observer = observer
        self.executor = executor
        self.planner = planner
        self.prompter = prompter
        self.config = config or AgentConfig()
        self.trace = trace
        self.demonstrations = demonstrations or []
        self.stop = stop or threading.Event()
        self.is_finished = is_finished
        self.on_step = on_step
        self.approve = approve  # the confirmation gate: returns why an action is refused, or None
        self.last_frame: Image.Image | None = None  # the frame the latest step decided on
        self.cache = cache  # the action cache: a hit skips the LLM call (caap.memory.cache)
        self.experience = experience or []  # prompt lines from caap.memory.experience
        self.family = family
        self.secrets = secrets or Secrets()  # typed by the executor alone; never in a prompt or a file
        # What appears by itself while the model decides ([safety] popups): off, mark (shown to the
        # model as such) or confirm (popup_guard asks before acting on it).
        self.popups = popups
        self.popup_guard = popup_guard
        self._appeared: list[Box] = []  # regions drawn by themselves since the last look
        self._popup_ids: set[int] = set()  # ids of the elements in them, while they stay on the screen
        self.steps: list[StepRecord] = []  # this episode's step records (auto-context reads them)
        self._button_held = False  # a drag was started and not yet released
        self._moved_on_before = False  # the last batch stopped because its target changed before it ran
        self._typed = TypedValues()  # what the episode typed into which field, for the observer to read back
        self._task = ""

    @classmethod
    def from_config(cls, cfg: CaapConfig, device: Device, *, observer: Observer | None = None,
                    planner: Planner | None = None, prompt: PromptOptions | None = None,
                    memory: Memory | None = None, **parts: Any) -> Agent:
        """The agent a config describes, on ``device``: the ``[agent]`` limits, a prompter of the
        ``[prompt]`` section (``prompt``: other options, an ablation's), the LLM client of ``[llm]``
        and the vision observer of ``[observe]`` unless given (a benchmark worker loads its models
        once for many episodes), and ``memory``'s action cache. ``parts``: the rest of ``Agent``'s
        keywords (trace, demonstrations, experience, family, stop, is_finished, on_step, approve, secrets,
        popup_guard)."""
        if observer is None:
            from caap.observe.vision import VisionObserver

            observer = VisionObserver.from_config(cfg.observe)
        if planner is None:
            from caap.decide.llm import LLMClient

            planner = LLMClient(cfg.llm)
        if memory is not None:
            parts.setdefault("cache", memory.cache)
        parts.setdefault("popups", cfg.safety.popups)
        return cls(screen=device.screen, observer=observer, executor=device.executor, planner=planner,
                   prompter=CaapPrompter(prompt or PromptOptions.from_config(cfg)), config=cfg.agent, **parts)

    def _tools(self) -> list[dict[str, Any]] | None:
        o = self.prompter.options
        return tool_schemas(o.actions) if o.mode == "tools" else None

    def run(self, task: str) -> EpisodeResult:
        """Run one episode; never raises for what the screen, the executor or the model do: the
        outcome says how it ended. Ctrl-C ends it as stopped, with the trace closed properly. A task
        that needs a secret the agent was not given is a ``SecretError`` before anything runs."""
        self.secrets.check(task)
        started = time.monotonic()
        self.steps = []
        result = EpisodeResult(status=EpisodeStatus.MAX_STEPS,
                               reason=f"reached the step limit ({self.config.max_steps})", steps=0)
        self._cost_known = True
        self._button_held = False
        self._moved_on_before = False
        try:
            self._episode(task, result, started)
        except KeyboardInterrupt:
            result.status, result.reason = EpisodeStatus.STOPPED, "interrupted (Ctrl-C)"
        except ScreenError as exc:
            result.status, result.reason = EpisodeStatus.SCREEN_ERROR, str(exc)
        finally:
            self._let_go()
        result.seconds = time.monotonic() - started
        if not self._cost_known:
            result.cost_usd = None
        if self.trace:
            self.trace.finish(result.to_json())
        return result

    def _let_go(self) -> None:
        """Release a drag the episode left held (it ended between the press and the release)."""
        if self._button_held:
            self._button_held = False
            with contextlib.suppress(Exception):  # the backend may be what failed; the outcome says so
                self.executor.mouse_up()

    def _episode(self, task: str, result: EpisodeResult, started: float) -> None:
        cfg = self.config
        tracker = IdTracker(cfg.row_tolerance_px)
        history: list[HistoryEntry] = []
        last_response: str | None = None
        errors: list[ActionError] = []
        invalid_streak = 0
        tools = self._tools()

        self._typed = TypedValues()
        self._appeared, self._popup_ids = [], set()
        names = task_names(task)  # what the observer checks its readings of names against
        self._task = task
        frame = self.screen.capture()
        for step in range(1, cfg.max_steps + 1):
            elapsed = time.monotonic() - started
            stop_reason = self._should_stop(elapsed, result, self._cost_known)
            if stop_reason:
                result.status, result.reason = stop_reason
                break
            result.steps = step
            record = StepRecord(step=step, t=round(elapsed, 3))
            timings: dict[str, float] = {}

            self.last_frame = frame
            grab_ms = getattr(self.screen, "last_capture_ms", None)  # the grab of the frame observed now
            t0 = time.perf_counter()
            observation = self.observer.observe(frame, typed=self._typed.typed(), names=names)
            shown = self.secrets.hide_in(observation.elements)
            elements = tracker.update(observation.elements)
            self._mark_popups(elements)
            timings["observe"] = time.perf_counter() - t0
            # The breakdown the benchmark reports, where the screen and observer measure it.
            if isinstance(grab_ms, int | float):
                timings["capture"] = grab_ms / 1000
            for part in ("detect", "read"):
                if isinstance(observation.timings_ms.get(part), int | float):
                    timings[part] = observation.timings_ms[part] / 1000
            record.elements = [e.to_json() for e in elements]
            record.observe_steps = [run.to_json() for run in observation.steps]
            record.provenance = provenance_of(elements, observation)
            if self.trace:
                record.screenshot = self.trace.screenshot(step, frame, self._secret_boxes(elements, shown))

            t0 = time.perf_counter()
            key, cached = None, None
            if self.cache is not None:
                key = cache_key(task, elements, result.done_actions)
                cached = self.cache.lookup(key, elements, frame.width, frame.height)
                record.cache = "hit" if cached else "miss"
            reply = None
            if cached:
                # A solved screen: the cached actions, found again on this screen, without the LLM.
                planned, errors = cached, []
                last_response = "(actions reused from the action cache)"
                timings["prompt"] = time.perf_counter() - t0
            else:
                ctx = PromptContext(task, elements, history, last_response, errors, self.demonstrations,
                                    self.experience, appeared=sorted(self._popup_ids))
                prompt = self.prompter.build(ctx)
                timings["prompt"] = time.perf_counter() - t0
                record.prompt = PromptRecord(text=prompt.text, estimated_tokens=prompt.tokens, trims=prompt.trims,
                                             over_budget=prompt.over_budget)

                t0 = time.perf_counter()
                try:
                    reply = self.planner.complete(prompt.text, tools)
                except LLMError as exc:
                    timings["llm"] = time.perf_counter() - t0
                    record.timings_ms, record.error = _ms(timings), str(exc)
                    self._emit(record)
                    result.status, result.reason = EpisodeStatus.LLM_ERROR, str(exc)
                    break
                timings["llm"] = time.perf_counter() - t0
                record.response = reply.to_json()
                result.prompt_tokens += reply.usage.prompt_tokens
                result.completion_tokens += reply.usage.completion_tokens
                if reply.cost_usd is None:
                    self._cost_known = False
                else:
                    result.cost_usd = (result.cost_usd or 0.0) + reply.cost_usd
                last_response = reply.content or _tool_calls_text(reply)

                parsed = parse_reply(reply.content, reply.tool_calls)
                screen_state = ScreenState(elements, frame.width, frame.height)
                planned, bind_errors = bind_all(parsed.proposals, screen_state)
                errors = parsed.errors + bind_errors
                record.proposals = [p.to_json() for p in parsed.proposals]

            if planned:
                invalid_streak = 0
            else:
                invalid_streak += 1

            executed, frame, terminal, act_timings, failure = self._execute_batch(
                planned, history, frame, elements, errors)
            timings.update(act_timings)
            if self.cache is not None and key is not None and not cached:
                ran = [a for a, e in zip(planned, executed, strict=False) if not e.refused]
                self.cache.note(key, task, ran, self.family)
            record.actions = executed
            record.errors = [e.to_json() for e in errors]
            result.actions.extend(executed)
            record.timings_ms = _ms(timings)
            record.cost_usd = reply.cost_usd if reply is not None else 0.0
            self._emit(record)
            result.last_step = record

            if failure is not None:
                result.status, result.reason = failure
                break
            if terminal is not None:
                reason = str(terminal.args.get("reason") or ("the model declared the task complete"
                                                             if terminal.name == "done" else "the model gave up"))
                result.status = EpisodeStatus.DONE if terminal.name == "done" else EpisodeStatus.FAILED
                result.reason = reason
                break
            if self.stop.is_set():
                result.status, result.reason = EpisodeStatus.STOPPED, "stopped on request"
                break
            if self.is_finished is not None and self.is_finished():
                result.status, result.reason = EpisodeStatus.FINISHED, "the environment reports the task finished"
                break
            if invalid_streak >= cfg.max_invalid_answers:
                result.status = EpisodeStatus.INVALID_ANSWERS
                result.reason = f"{invalid_streak} answers in a row had no usable action"
                break
            if not planned:
                # Nothing ran, but the screen may still have moved on by itself.
                frame = self.screen.capture()

    def _should_stop(self, elapsed: float, result: EpisodeResult,
                     cost_known: bool) -> tuple[EpisodeStatus, str] | None:
        cfg = self.config
        if self.stop.is_set():
            return EpisodeStatus.STOPPED, "stopped on request"
        if elapsed >= cfg.max_seconds:
            return EpisodeStatus.TIMEOUT, f"ran out of time ({cfg.max_seconds:g}s)"
        if cfg.max_cost_usd is not None and cost_known and (result.cost_usd or 0.0) >= cfg.max_cost_usd:
            return EpisodeStatus.OVER_BUDGET, f"spent the cost budget (${cfg.max_cost_usd:g})"
        return None

    def _execute_batch(
        self, planned: list[PlannedAction], history: list[HistoryEntry], frame: Image.Image,
        elements: list[Element], errors: list[ActionError],
    ) -> tuple[list[ActionRecord], Image.Image, PlannedAction | None, dict[str, float],
               tuple[EpisodeStatus, str] | None]:
        """Run the batch in order; ``errors`` (reported in the next prompt) gains any refusal. The
        last item is (status, reason) when the executor failed and the episode must end."""
        executed: list[ActionRecord] = []
        timings = {"act": 0.0, "settle": 0.0}
        first = next((a for a in planned if not a.terminal), None)
        fresh: Image.Image | None = None  # the screen just before the first action, where it was looked at
        if first is not None and self.popups != "off" and not self._moved_on_before and not self._button_held:
            # What was drawn while the model decided came by itself (a pop-up, a notification) or
            # late from the last action (a suggestion list): the plan is for a screen without it,
            # and the model is shown what it is before anything is done.
            looked = time.perf_counter()
            fresh = self.screen.capture()
            self._appeared = appeared_regions(frame, fresh)
            timings["act"] += time.perf_counter() - looked
            if self._appeared:
                self._hold_back(first, "something appeared on the screen while you were deciding; the screen has "
                                "been read again and what appeared is marked", errors, executed)
                return executed, self.screen.settle(fresh), None, timings, None
        for index, action in enumerate(planned):
            if action.terminal:
                end = Outcome.DONE if action.spec.terminal == "done" else Outcome.FAIL
                executed.append(ActionRecord.of(action, end))
                return executed, frame, action, timings, None
            if self.stop.is_set():  # halt before the next OS event
                break
            denial = self.approve(action, elements) if self.approve else None
            if not denial and self.popup_guard is not None and self.popups == "confirm":
                denial = self.popup_guard(action, elements, self._popup_ids)
            if not denial:
                denial = self._secret_refusal(action, elements)
            if denial:
                errors.append(ActionError("denied", denial, action.name))
                executed.append(ActionRecord.of(action, Outcome.DENIED, reason=denial))
                break
            looked = time.perf_counter()
            moved_on = self._target_moved_on(action, frame, fresh if action is first else None)
            timings["act"] += time.perf_counter() - looked  # the look before acting is part of acting
            if moved_on:
                # Something drawn after the screen was read (a suggestion list that opens a moment after
                # typing) now lies where the action aims: read the screen again instead of acting blind.
                self._hold_back(action, "the screen changed where it was aimed after it was read; it has been "
                                "read again", errors, executed)
                return executed, self.screen.settle(frame), None, timings, None
            self._moved_on_before = False
            number = (history[-1].number if history else 1) + 1
            t0 = time.perf_counter()
            try:
                execute(action, self.executor, self.secrets)
                if action.spec.button is not None:
                    self._button_held = action.spec.button == "pressed"
            except Exception as exc:  # the OS input backend failed: nothing after this can be trusted
                failure = _act_failure(exc)
                executed.append(ActionRecord.of(action, Outcome.ERROR, reason=failure[1]))
                return executed, frame, None, timings, failure
            self._typed.after(action, elements)
            t1 = time.perf_counter()
            after = self.screen.settle(frame)
            t2 = time.perf_counter()
            timings["act"] += t1 - t0
            timings["settle"] += t2 - t1
            change = FrameChange(frame, after)  # counted in all, then outside the elements acted on
            changed = change.total()
            screen_changed = changed > self.config.change_threshold_px
            elsewhere = screen_changed and self._changed_elsewhere(action, history, change, elements)
            outcome = Outcome.NO_CHANGE
            if screen_changed:
                outcome = Outcome.CHANGED if elsewhere else Outcome.CHANGED_WITHIN
            remaining = len(planned) - index - 1
            drop = bool(elsewhere and remaining and not planned[index + 1].terminal)
            done = ActionRecord.of(action, outcome, dropped=remaining if drop else 0, number=number, changed_px=changed,
                                   act_ms=round((t1 - t0) * 1000, 2), settle_ms=round((t2 - t1) * 1000, 2),
                                   settle=dict(self.screen.last_settle))
            history.append(HistoryEntry(number, action, done.outcome_text()))
            executed.append(done)
            frame = after
            if drop:
                break
        return executed, frame, None, timings, None

    def _hold_back(self, action: PlannedAction, why: str, errors: list[ActionError],
                   executed: list[ActionRecord]) -> None:
        """Record an action not done because the screen moved on (``why``), for the model to read; the
        next batch is not held back again, so a screen that keeps changing cannot stall the episode."""
        message = f"{action.name} was not done: {why}"
        errors.append(ActionError("screen_moved_on", message, action.name))
        executed.append(ActionRecord.of(action, Outcome.NOT_DONE, reason=message))
        self._moved_on_before = True

    def _secret_refusal(self, action: PlannedAction, elements: list[Element]) -> str | None:
        """Why a secret may not be typed here, or None: only into a field, never into something
        that appeared by itself, and only into a field the task names for it (its label or text
        holds a word the task writes just before ``{NAME}``)."""
        text = action.args.get("string_to_type")
        if not isinstance(text, str) or not self.secrets.in_text(text):
            return None
        field = self._typed.receiving(elements)
        if field is None:
            return "a secret is typed only into a field: click the field the task names for it first"
        if field.id in self._popup_ids:
            return "a secret is never typed into something that appeared by itself; close it"
        label = f"{field.text or ''} {label_of(field, elements) or ''}"
        for name in placeholders(text):
            if name in self.secrets.values and not self.secrets.named_for(self._task, name, label):
                return (f"{placeholder(name)} is typed only into the field the task names for it, and this one "
                        f"({field.label} {label.strip()!r}) is not it")
        return None

    def _mark_popups(self, elements: list[Element]) -> None:
        """The ids of the elements that appeared by themselves: those centred in a region drawn
        while the model decided, kept while they stay on the screen."""
        present = {e.id for e in elements if e.visible and e.id is not None}
        self._popup_ids &= present
        for e in elements:
            x, y = (e.bbox[0] + e.bbox[2]) // 2, (e.bbox[1] + e.bbox[3]) // 2
            if e.visible and e.id is not None and any(b[0] <= x < b[2] and b[1] <= y < b[3] for b in self._appeared):
                self._popup_ids.add(e.id)
        self._appeared = []

    def _secret_boxes(self, elements: list[Element], shown: list[Box]) -> list[Box]:
        """Where a saved screenshot must be blacked out: wherever a value showed, and the fields a
        secret was typed into unless the field masks it itself (it reads as bullets)."""
        return shown + unmasked((t.box for t in self._typed.typed() if self.secrets.in_text(t.text)), elements)

    def _target_moved_on(self, action: PlannedAction, frame: Image.Image, now: Image.Image | None = None) -> bool:
        """Whether the screen has changed, since ``frame`` was read, where a pointer action aims
        (its element's box, or a few pixels around its point). Drags are not checked (what is held
        moves with the pointer), and an action held back once is not held back again in the next
        step, so a region that keeps moving (an animation) cannot stall the episode."""
        if self._moved_on_before or self._button_held or action.spec.button is not None:
            return False
        if action.element is not None:
            box = action.element.bbox
        elif action.point is not None:
            x, y = action.point
            box = (x - 3, y - 3, x + 4, y + 4)
        else:
            return False
        return changed_within(frame, now or self.screen.capture(), box) > self.config.change_threshold_px

    def _changed_elsewhere(self, action: PlannedAction, history: list[HistoryEntry], change: FrameChange,
                           elements: list[Element]) -> bool:
        """Whether an action changed the screen beyond the elements it touched. Ticking a checkbox
        or typing into a field changes that element (keys go to the element acted on last), and the
        hover or focus mark leaves the element acted on before; then the rest of the plan still
        fits the screen. A menu, a dialog or a new page changes elsewhere and the plan is stale."""
        held = self._button_held or action.spec.button is not None  # in a drag, a point is where it drops
        under = [] if held else elements
        targets = [t] if (t := _target(action, under)) is not None else []
        last = next((t for h in reversed(history) if (t := _target(h.action, under)) is not None), None)
        if last is not None:
            targets.append(last)
        if not targets:
            return True
        boxes = [b for t in targets for b in (t.bbox, *(v.bbox for v in value_labels(t, elements)))]
        return change.outside(boxes) > self.config.change_threshold_px

    def _emit(self, record: StepRecord) -> None:
        self.steps.append(record)
        if self.trace:
            self.trace.step(record.to_json())
        if self.on_step:
            self.on_step(record)


def _target(action: PlannedAction, elements: list[Element]) -> Element | None:
    """The element an action acted on: its own, or for a click at a point the smallest element
    the point lies in (a field clicked near its left end to place the caret), else None."""
    if action.element is not None:
        return action.element
    return element_at(elements, action.point) if action.point is not None else None


def _act_failure(exc: Exception) -> tuple[EpisodeStatus, str]:
    if type(exc).__name__ == "FailSafeException":  # pyautogui's corner fail-safe: the user's emergency stop
        return EpisodeStatus.STOPPED, "stopped by the fail-safe: the mouse pointer was moved into a screen corner"
    return EpisodeStatus.ACT_ERROR, f"the executor failed: {exc}"


def _ms(timings: dict[str, float]) -> dict[str, float]:
    return {k: round(v * 1000, 2) for k, v in timings.items()}


def _tool_calls_text(reply: LLMReply) -> str:
    """A tool-calling answer with no prose is remembered as its calls, in the paper's text form."""
    return "\n".join(action_line(c.name, c.arguments) for c in reply.tool_calls)

