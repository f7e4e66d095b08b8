"""Replay a recorded demonstration on the live screen, grounding each step visually; no LLM.

A recorded step names the element it acted on as it looked then (type, text, box). The screen it
is replayed on may differ: a window moved, the page scrolled, the layout reflowed, the reader read
"Subm1t" this time. So, for each step:

1. observe the current screen (screen → observer → elements in reading order, ids 1..N);
2. find the recorded element with ``caap.observe.grounding.locate``; if it is not there, observe
   again until ``max_wait_s`` has passed (the screen may still be loading), then stop with a
   message naming the step, its action and ``describe_miss``;
3. rebind the action to what was found: an ``element_id`` argument becomes the found element's
   id; ``x, y`` arguments of a step that recorded an element (a drag that started on an object)
   move with that element's displacement;
4. execute it through the executor and wait for the screen to settle.

Steps that did not target an element (typing, keys, drag moves at bare points, scroll without an
element) run as recorded, without observing. A saved test's step may ``expect`` elements on the
screen after it (``caap.agent.regression``): the screen is observed until each is there with the
states expected, or ``max_wait_s`` has passed, and the replay stops with status ``check`` naming
the first that is not. Text that names a secret (``{NAME}``, ``caap.act.secrets``) is typed with the
secret's value, which the replay is given; masked text (a password the recorder replaced by ``*``)
is typed with the one secret given. Without it, the replay stops before the step. A dry run
observes the screen once and reports which element each step would use, acting on nothing and
stopping at nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from PIL import Image

from caap.act.actions import ActionError, PlannedAction, ScreenState, execute, lookup, plan
from caap.act.executor import Executor
from caap.act.secrets import Secrets, placeholder, placeholders
from caap.decide.demos import Demonstration, DemoStep
from caap.elements import Element
from caap.observe.capture.screen import Screen
from caap.observe.grounding import Located, describe_miss, locate
from caap.observe.observation import Observer
from caap.observe.order import reading_order

StepStatus = Literal["done", "planned", "missing", "masked", "denied", "error", "stopped", "end", "check"]
Status = Literal["done", "dry_run", "missing", "masked", "denied", "error", "stopped", "check"]
HaltStatus = Literal["missing", "masked", "denied", "error", "stopped", "check"]  # a step that ends the replay
Approve = Callable[[PlannedAction, Sequence[Element]], str | None]


@dataclass(frozen=True)
class ReplayOptions:
    max_wait_s: float = 3.0  # how long a missing element is looked for before giving up
    retry_interval_s: float = 0.25  # pause between observations while looking
    secrets: Secrets = field(default_factory=Secrets)  # for {NAME} in typed text, and the one for masked text
    dry_run: bool = False
    min_text_similarity: float = 0.75  # see grounding.locate
    max_shift: float = 0.25
    row_tolerance_px: int = 5


@dataclass
class ReplayStep:
    """What happened to one recorded step. ``number`` is 1-based, in the file's order."""

    number: int
    action: str
    status: StepStatus
    planned: PlannedAction | None = None
    found: Located | None = None
    displacement: tuple[int, int] | None = None  # how far the recorded element moved (found - recorded)
    observations: int = 0
    waited_s: float = 0.0
    message: str | None = None
    secret: bool = False  # the step types a secret (its text is a placeholder, never the value)

    def to_json(self) -> dict[str, Any]:
        planned = self.planned.to_json() if self.planned else None
        return {
            "step": self.number, "action": self.action, "status": self.status, "planned": planned,
            "text_similarity": round(self.found.text_similarity, 3) if self.found else None,
            "displacement": list(self.displacement) if self.displacement else None,
            "observations": self.observations, "waited_s": round(self.waited_s, 3), "message": self.message,
        }


@dataclass
class ReplayResult:
    status: Status
    message: str
    steps: list[ReplayStep] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status in ("done", "dry_run")


def _same_place(action: PlannedAction, step: DemoStep, found: Element) -> PlannedAction:
    """Aim at the place within the found element where the recording pointed, not at its centre: a
    link inside a line of text, or one end of a wide control, is where the person clicked."""
    if action.point is None or step.point is None or step.element is None:
        return action
    x1, y1, x2, y2 = step.element.bbox
    px, py = step.point
    if not (x1 <= px <= x2 and y1 <= py <= y2):
        return action
    (ox, oy), (nx, ny) = step.element.centre, found.centre
    fx1, fy1, fx2, fy2 = found.bbox
    x = min(max(nx + px - ox, fx1), max(fx1, fx2 - 1))
    y = min(max(ny + py - oy, fy1), max(fy1, fy2 - 1))
    return dataclasses.replace(action, point=(int(x), int(y)))


def _uses_point(step: DemoStep) -> bool:
    """Whether the step's action aims at a place on the screen that its recorded element decides."""
    spec = lookup(step.action)
    names = {p.name for p in spec.params}
    return step.element is not None and (any(p.element for p in spec.params) or {"x", "y"} <= names)


class _Halt(Exception):
    """A step that cannot go on: its status and the message a person reads."""

    def __init__(self, status: HaltStatus, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class _Run:
    """What a replay carries from step to step."""

    frame: Image.Image
    elements: list[Element] = field(default_factory=list)
    dry_elements: list[Element] | None = None  # a dry run observes once: nothing changes the screen
    button_held: bool = False  # a drag was started and not yet released


class Replayer:
    """One replay of one demonstration; ``run`` does it. Screen, observer and executor are injected
    (live ones from the CLI, file-based and recording ones in tests)."""

    def __init__(
        self,
        screen: Screen,
        observer: Observer,
        executor: Executor,
        options: ReplayOptions = ReplayOptions(),
        *,
        on_step: Callable[[ReplayStep], None] | None = None,
        stop: threading.Event | None = None,
        approve: Approve | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.screen = screen
        self.observer = observer
        self.executor = executor
        self.options = options
        self.on_step = on_step
        self.stop = stop or threading.Event()
        self.approve = approve
        self._sleep = sleep
        self._clock = clock

    def _observe(self, frame: Image.Image) -> list[Element]:
        # Fresh ids per screen: the id only has to mean something to ``plan`` for this one action.
        ordered = reading_order(self.observer.observe(frame).elements, self.options.row_tolerance_px)
        return [e.model_copy(update={"id": n, "visible": True}) for n, e in enumerate(ordered, start=1)]

    def _find(self, target: Element, frame: Image.Image, report: ReplayStep
              ) -> tuple[Image.Image, list[Element], Located | None]:
        """Observe until the target is found or the wait is over; returns the last frame and list."""
        start = self._clock()
        while True:
            elements = self._observe(frame)
            report.observations += 1
            found = locate(target, elements, screen_size=frame.size,
                           min_text_similarity=self.options.min_text_similarity, max_shift=self.options.max_shift)
            report.waited_s = self._clock() - start
            if found is not None or self.options.dry_run or report.waited_s >= self.options.max_wait_s:
                return frame, elements, found
            self._sleep(self.options.retry_interval_s)
            frame = self.screen.capture()

    def _emit(self, report: ReplayStep, steps: list[ReplayStep]) -> None:
        steps.append(report)
        if self.on_step:
            self.on_step(report)

    def run(self, demo: Demonstration) -> ReplayResult:
        steps: list[ReplayStep] = []
        state = _Run(frame=self.screen.capture())
        try:
            return self._steps(demo, steps, state)
        finally:
            if state.button_held:  # a replay that stopped mid-drag lets go of the button
                with contextlib.suppress(Exception):
                    self.executor.mouse_up()

    def _steps(self, demo: Demonstration, steps: list[ReplayStep], state: _Run) -> ReplayResult:
        o = self.options
        for number, step in enumerate(demo.steps, start=1):
            report = ReplayStep(number, step.action, "done")
            try:
                if self.stop.is_set():
                    raise _Halt("stopped", f"stopped before step {number} ({step.action})")
                ended = self._step(number, step, report, state)
            except _Halt as halt:
                report.status, report.message = halt.status, halt.message
                self._emit(report, steps)
                if o.dry_run and halt.status != "stopped":
                    continue  # a dry run lists every step that could not be planned
                return ReplayResult(halt.status, halt.message, steps)
            self._emit(report, steps)
            if ended:
                break
        if o.dry_run:
            problems = [s for s in steps if s.status in ("missing", "masked", "error")]
            note = f"; {len(problems)} step(s) could not be planned on this screen" if problems else ""
            return ReplayResult("dry_run", f"planned {len(steps)} step(s), executed none{note}", steps)
        return ReplayResult("done", f"replayed {sum(s.status == 'done' for s in steps)} step(s)", steps)

    def _step(self, number: int, step: DemoStep, report: ReplayStep, state: _Run) -> bool:
        """Replay one step (or plan it, in a dry run); True when the demonstration ends here. A step
        that cannot go on raises _Halt."""
        o = self.options
        try:
            spec = lookup(step.action)
        except ActionError as exc:
            raise _Halt("error", f"step {number}: {exc.message}") from None
        if spec.terminal is not None:
            report.status, report.message = "end", f"the demonstration ends with {step.action}"
            return True

        raw = dict(step.args)
        typed = raw.get("string_to_type")
        if step.masked and isinstance(typed, str):
            if len(o.secrets.names) != 1:
                given = "was given none" if not o.secrets else f"was given {len(o.secrets.names)}"
                raise _Halt("masked", f"step {number} ({step.action}) types text the recording hid (a "
                                      f"password-like field); the replay {given}: give the one it typed with "
                                      "--secret NAME=VALUE to replay it")
            raw["string_to_type"] = typed = placeholder(o.secrets.names[0])
        if isinstance(typed, str) and placeholders(typed):
            missing = [n for n in placeholders(typed) if n not in o.secrets.values]
            if missing:
                raise _Halt("masked", f"step {number} ({step.action}) types the secret {placeholder(missing[0])}; "
                                      f"give it with --secret {missing[0]}=VALUE to replay it")
            report.secret = True

        element_param = next((p for p in spec.params if p.element), None)
        if step.element is None and element_param is not None:
            if element_param.required:
                raise _Halt("error", f"step {number} ({step.action}): the recording did not keep the element "
                                     "it acted on, so there is nothing to look for")
            raw.pop(element_param.name, None)  # an id of the recorded screen means nothing here

        if _uses_point(step):
            assert step.element is not None
            if o.dry_run and state.dry_elements is not None:
                found = locate(step.element, state.dry_elements, screen_size=state.frame.size,
                               min_text_similarity=o.min_text_similarity, max_shift=o.max_shift)
                report.observations = 0
                state.elements = state.dry_elements
            else:
                state.frame, state.elements, found = self._find(step.element, state.frame, report)
                if o.dry_run:
                    state.dry_elements = state.elements
            if found is None:
                waited = "" if o.dry_run else f" after {report.waited_s:.1f}s"
                raise _Halt("missing", f"step {number} ({step.action}): the recorded element is not on the "
                                       f"screen{waited}: {describe_miss(step.element, state.elements)}")
            report.found = found
            (ox, oy), (nx, ny) = step.element.centre, found.element.centre
            report.displacement = (nx - ox, ny - oy)
            if element_param is not None:
                raw[element_param.name] = found.element.id
            if "x" in raw and "y" in raw:
                raw["x"], raw["y"] = int(raw["x"]) + nx - ox, int(raw["y"]) + ny - oy

        try:
            action = plan(step.action, raw, ScreenState(state.elements, state.frame.width, state.frame.height))
        except ActionError as exc:
            raise _Halt("error", f"step {number} ({step.action}): {exc.message}") from None
        if report.found is not None and element_param is not None:
            action = _same_place(action, step, report.found.element)
        report.planned = action
        if o.dry_run:
            report.status = "planned"
            return False

        if self.approve is not None and not report.secret:
            denial = self.approve(action, state.elements)
            if denial:
                raise _Halt("denied", f"step {number} ({step.action}): {denial.split('; do not retry')[0]}")
        try:
            execute(action, self.executor, o.secrets)
        except Exception as exc:  # the OS input backend failed: nothing after this can be trusted
            raise _Halt("error", f"step {number} ({step.action}): the executor failed: {exc}") from None
        if spec.button is not None:
            state.button_held = spec.button == "pressed"
        state.frame = self.screen.settle(state.frame)
        if step.expect:
            self._check(number, step, report, state)
        return False

    def _check(self, number: int, step: DemoStep, report: ReplayStep, state: _Run) -> None:
        """The step's expectations on the screen after it, looked for until ``max_wait_s``."""
        from caap.agent.regression import expectation_failure

        start = self._clock()
        while True:
            state.elements = self._observe(state.frame)
            report.observations += 1
            failures = [f for e in step.expect or () if (f := expectation_failure(e, state.elements,
                                                                                  state.frame.size))]
            if not failures:
                return
            if self._clock() - start >= self.options.max_wait_s:
                raise _Halt("check", f"step {number} ({step.action}): {failures[0]}")
            self._sleep(self.options.retry_interval_s)
            state.frame = self.screen.capture()


def replay(demo: Demonstration, screen: Screen, observer: Observer, executor: Executor,
           options: ReplayOptions = ReplayOptions(), **kwargs: Any) -> ReplayResult:
    """``Replayer(screen, observer, executor, options, **kwargs).run(demo)``."""
    return Replayer(screen, observer, executor, options, **kwargs).run(demo)
