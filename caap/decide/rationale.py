"""Rationales for demonstration steps, written by an LLM from the screens around each action.

The CAAP paper (appendix A) found that demonstrations help more when every action carries a short
"why", and that an LLM can write that "why" after the fact from the element lists before and after
the action; a person never has to explain their clicks. This module is the logic behind
``caap rationalize``:

- ``build_prompt``: one prompt per step (``RATIONALE_PROMPT``): the task, the steps before it (with
  the rationales that are kept), the action, and the element lists before and after it, rendered
  exactly as the agent's own prompt renders them (``caap.elements``).
- ``cap_rationale``: whitespace folded to single spaces, then cut to a length limit at a sentence
  boundary, so a talkative model cannot bloat every later prompt that shows the demonstration.
- ``RationaleCache``: answers stored under the hash of model + prompt text; asking again for the
  same prompt costs nothing.
- ``rationalize``: runs the calls on a thread pool with a concurrency limit. Retries are the LLM
  client's (``caap.decide.llm`` already retries timeouts, 429 and 5xx with backoff), so nothing is
  retried twice here.

Prompts do not depend on the order in which calls finish: a step's prompt shows the rationales of
earlier steps only when they are *kept* (already in the file and not being rewritten in this run),
never ones produced in the same run. That is what lets the steps of one file run in parallel, and
it keeps the cache key stable: rerunning with ``--force`` asks the same prompts and hits the cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from caap.decide.demos import Demonstration, DemoStep
from caap.decide.llm import LLMError, LLMReply
from caap.elements import COORDINATE_NOTE, Element, quote, render_element_list

# The prompt for one step. Placeholders: {task}, {history} (the steps before, one per line),
# {number} (the step's action number; action_1 is the start, as in the agent's prompt), {action}
# (``DemoStep.describe()``), {masked_note}, {before} and {after} (element lists), {coordinate_note}.
# The answer is asked to be self-contained (elements described, not referred to by id) because the
# agent reading the demonstration later sees a different screen where those ids mean nothing.
RATIONALE_PROMPT = """\
A person operated a computer to complete a task, one action at a time, and we kept a record of \
what the screen showed around each action. The record will be used as an example for an assistant \
that cannot see the screen and only gets lists of UI elements, so every action needs a short note \
saying why it was the right thing to do at that moment.

### Task ###
{task}

### Actions Up To This Point ###
{history}

### The Action To Explain ###
action_{number}: {{{action}}}{masked_note}

### Screen Before action_{number} ###
{coordinate_note}
{before}

### Screen After action_{number} ###
{after}

### What To Write ###
In 2 to 4 sentences of plain prose, explain how someone looking at the screen before action_{number} \
would have decided on this action and this target (or these arguments), given the task and what \
had been done already, and then say what the action changed on the screen. Whenever you mention a \
screen element, name it by its type and its text or position (for example "the Submit button near \
the bottom"), never by its element id. Give only the explanation: no heading, no list, no quotes."""

NOT_RECORDED = "(not recorded)"
MASKED_NOTE = "\n(The typed text was hidden in the record because it went into a password-like field.)"


def render_history(steps: Sequence[DemoStep], kept: Sequence[bool]) -> str:
    """``action_1: {name: start}`` then one line per earlier step, with its rationale when kept."""
    lines = ["action_1: {name: start}"]
    for n, (step, keep) in enumerate(zip(steps, kept, strict=True), start=2):
        body = step.describe()
        if keep and step.rationale:
            body += f", reason: {quote(step.rationale)}"
        lines.append(f"action_{n}: {{{body}}}")
    return "\n".join(lines)


def _screen(elements: list[Element] | None) -> str:
    return NOT_RECORDED if elements is None else render_element_list(elements)


def build_prompt(demo: Demonstration, index: int, kept: Sequence[bool] | None = None) -> str:
    """The prompt for ``demo.steps[index]``. ``kept[i]`` says whether step i's current rationale
    stays (shown to later steps); default: every rationale already in the file is kept."""
    if kept is None:
        kept = [s.rationale is not None for s in demo.steps]
    step = demo.steps[index]
    return RATIONALE_PROMPT.format(
        task=demo.task.strip(),
        history=render_history(demo.steps[:index], kept[:index]),
        number=index + 2,
        action=step.describe(),
        masked_note=MASKED_NOTE if step.masked else "",
        coordinate_note=COORDINATE_NOTE,
        before=_screen(step.before),
        after=_screen(step.after),
    )


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)")


def cap_rationale(text: str, max_chars: int) -> str:
    """Whitespace folded, wrapping quotes dropped, then at most ``max_chars`` characters: cut after
    the last whole sentence that fits, or (when even the first sentence is too long) at the last
    word that fits, marked with an ellipsis."""
    text = " ".join(text.split())
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if len(text) <= max_chars:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text + " ") if m.end() <= max_chars]
    if ends:
        return text[: ends[-1]].rstrip()
    cut = text[: max_chars - 1]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:") + "…"


def cache_key(model: str, prompt: str) -> str:
    return hashlib.sha256(f"{model}\n{prompt}".encode()).hexdigest()


class RationaleCache:
    """Raw answers (before capping, so a new ``--max-chars`` needs no new call), one small JSON file
    per key under ``root/ab/abcdef....json``. Writes are atomic; concurrent writers of the same key
    write the same answer, so the last rename wins harmlessly."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> str | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent or damaged: ask again
        answer = data.get("answer") if isinstance(data, dict) else None
        return answer if isinstance(answer, str) and answer.strip() else None

    def put(self, key: str, model: str, answer: str) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps({"model": model, "answer": answer}, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)


DEFAULT_CACHE_DIR = Path("~/.cache/caap/rationales")


class Completer(Protocol):
    def complete(self, prompt: str, tools: list[dict[str, Any]] | None = None) -> LLMReply: ...


Status = Literal["written", "cached", "skipped", "failed"]


@dataclass
class StepResult:
    """What happened to one step. ``step`` is 1-based (the order of the file's ``steps``)."""

    demo: int  # index into the list of demonstrations given to ``rationalize``
    step: int
    status: Status
    rationale: str | None = None
    error: str | None = None
    tokens: int = 0
    cost_usd: float | None = None


@dataclass
class RationaleReport:
    results: list[StepResult] = field(default_factory=list)

    def count(self, demo: int | None = None, status: Status | None = None) -> int:
        return sum(1 for r in self.results
                   if (demo is None or r.demo == demo) and (status is None or r.status == status))

    def tokens(self, demo: int | None = None) -> int:
        return sum(r.tokens for r in self.results if demo is None or r.demo == demo)

    @property
    def failed(self) -> list[StepResult]:
        return [r for r in self.results if r.status == "failed"]


@dataclass(frozen=True)
class RationaleOptions:
    concurrency: int = 4
    max_chars: int = 400
    force: bool = False


@dataclass
class _Job:
    demo: int
    index: int
    prompt: str
    key: str


def plan_jobs(demos: Sequence[Demonstration], model: str, force: bool) -> tuple[list[_Job], list[StepResult]]:
    """The calls to make, and the steps skipped because they already have a rationale."""
    jobs: list[_Job] = []
    skipped: list[StepResult] = []
    for d, demo in enumerate(demos):
        kept = [s.rationale is not None and not force for s in demo.steps]
        for i, step in enumerate(demo.steps):
            if kept[i]:
                skipped.append(StepResult(d, i + 1, "skipped", rationale=step.rationale))
                continue
            prompt = build_prompt(demo, i, kept)
            jobs.append(_Job(d, i, prompt, cache_key(model, prompt)))
    return jobs, skipped


def rationalize(
    demos: Sequence[Demonstration],
    client: Completer,
    *,
    model: str,
    options: RationaleOptions = RationaleOptions(),
    cache: RationaleCache | None = None,
    on_result: Callable[[StepResult], None] | None = None,
) -> RationaleReport:
    """Write a rationale into every step that needs one (in place, on the given objects) and
    report each step. A failed call leaves its step as it was. An error that no retry can fix (a
    rejected key, an unknown model) stops the calls not yet started: they fail with the same
    message instead of each asking the endpoint again. The caller saves the files."""
    jobs, skipped = plan_jobs(demos, model, options.force)
    report = RationaleReport(list(skipped))
    fatal: list[str] = []  # set once by a worker; read by the others before they call

    def work(job: _Job) -> StepResult:
        step_no = job.index + 1
        if cache is not None:
            hit = cache.get(job.key)
            if hit is not None:
                return StepResult(job.demo, step_no, "cached", rationale=cap_rationale(hit, options.max_chars))
        if fatal:
            return StepResult(job.demo, step_no, "failed", error=f"not attempted: {fatal[0]}")
        try:
            reply = client.complete(job.prompt)
        except LLMError as exc:
            if not exc.retryable:
                fatal.append(str(exc))
            return StepResult(job.demo, step_no, "failed", error=str(exc))
        tokens = reply.usage.total_tokens
        text = cap_rationale(reply.content, options.max_chars)
        if not text:
            return StepResult(job.demo, step_no, "failed", error="the model answered with no text", tokens=tokens,
                              cost_usd=reply.cost_usd)
        if cache is not None:
            with contextlib.suppress(OSError):  # an unwritable cache costs a call next time, nothing more
                cache.put(job.key, model, reply.content)
        return StepResult(job.demo, step_no, "written", rationale=text, tokens=tokens, cost_usd=reply.cost_usd)

    def finish(result: StepResult) -> None:
        # Results are applied here, on the caller's thread: the demonstrations are never touched
        # by two threads at once.
        if result.rationale is not None and result.status in ("written", "cached"):
            demos[result.demo].steps[result.step - 1].rationale = result.rationale
        report.results.append(result)
        if on_result:
            on_result(result)

    for result in skipped:
        if on_result:
            on_result(result)
    pool = ThreadPoolExecutor(max_workers=max(1, options.concurrency), thread_name_prefix="rationale")
    pending: set[Future[StepResult]] = set()
    try:
        pending = {pool.submit(work, job) for job in jobs}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                finish(future.result())
    finally:
        # On Ctrl-C: drop the calls not started; what finished is already in the demonstrations.
        pool.shutdown(wait=True, cancel_futures=True)
    report.results.sort(key=lambda r: (r.demo, r.step))
    return report
