"""Generate annotated MiniWoB++ screenshots the way the agent sees them.

For each task and seed: start the episode, capture the 160×210 task region with mss from the X
display (not the browser's screenshot API, so fonts and rendering match what the agent gets), label
it from the DOM, then make a few random but valid interactions through caap's own OS executor —
tick boxes, type into fields, open dropdowns and menus, expand sections, scroll lists, select
text — capturing and labelling after each, so states the agent meets while solving tasks appear in
the data. An interaction that ends the episode (a submit) is not recorded. Near-duplicate screens
of a task are dropped.

Random interactions rarely reach the screens deep inside a task (an email's reply form with the
message typed, a search's results, a submenu). With a ``planner`` (an OpenAI-compatible endpoint)
an episode is instead driven by caap's agent with the DOM oracle for eyes, and every screen it
observes on its way is labelled: the states an agent actually meets. Those screens are named
``TASK-SEED-aSTEP``, so both kinds live in one dataset and each resumes on its own.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from caap.act.backends import MappingSource, XdotoolExecutor
from caap.bench.dom_labels import annotate, popup_rect
from caap.bench.miniwob import MiniWoBEnv
from caap.config import LLMConfig
from caap.data.dedup import dhash, near_duplicate
from caap.data.format import Annotation, Dataset, Source
from caap.elements import Element
from caap.observe.capture.live import CaptureTarget, LiveScreen, SettleOptions
from caap.observe.observation import Observation, Typed

# Clicking these usually ends the episode; the explorer leaves them alone except by accident.
ENDING_WORDS = ("submit", "ok", "login", "log in", "search", "cancel", "yes", "no", "done", "next", "previous")
WORDS = ("tula", "Rosa", "EiTE", "holt", "1991", "abc", "Mauris", "kd", "x7", "neque", "hello world", "42", "Ida")


# --- exploring ---------------------------------------------------------------------------------
@dataclass
class Explorer:
    """Random but valid interactions, chosen from the current labels, performed with OS input."""

    env: MiniWoBEnv
    executor: XdotoolExecutor
    rng: random.Random
    popup_open: bool = False

    def options(self, elements: list[Element]) -> list[tuple[str, Callable[[], None]]]:
        ex, rng = self.executor, self.rng
        opts: list[tuple[str, Callable[[], None]]] = []

        def centre(e: Element) -> tuple[int, int]:
            return e.centre

        # Each action is made by a function so that it keeps its own element (and word): a lambda
        # written in the loop would see the loop's last one.
        def click(e: Element) -> Callable[[], None]:
            return lambda: ex.click(*centre(e))

        def type_into(e: Element, w: str) -> Callable[[], None]:
            def do() -> None:
                ex.click(*centre(e))
                ex.type_text(w)
            return do

        def hover(e: Element) -> Callable[[], None]:
            return lambda: ex.move(*centre(e))

        def scroll(e: Element) -> Callable[[], None]:
            return lambda: ex.scroll(*centre(e), dy=rng.choice((2, 3, 5)))

        def select(e: Element) -> Callable[[], None]:
            return lambda: self._select(e)

        for e in elements:
            text = (e.text or "").lower()
            if e.type in ("checkbox", "radio"):
                opts.append((f"toggle {e.text}", click(e)))
            elif e.type in ("input_field", "text_area"):
                word = rng.choice(WORDS)
                opts.append((f"type {word!r}", type_into(e, word)))
                if e.type == "input_field":
                    opts.append(("focus field", click(e)))
            elif e.type == "dropdown":
                opts.append(("open dropdown", click(e)))
            elif e.type == "hyperlink" or (e.type == "button" and not text.startswith(ENDING_WORDS)):
                opts.append((f"click {e.type} {e.text}", click(e)))
            elif e.type == "tabled_text":
                opts.append((f"hover row {e.text}", hover(e)))
                opts.append((f"click row {e.text}", click(e)))
            elif e.type == "icon":
                opts.append((f"click icon {e.subtype}", click(e)))
            elif e.type == "scrollbar":
                opts.append(("scroll", scroll(e)))
            elif e.type in ("draggable_text", "text") and len(e.text or "") > 8:
                opts.append((f"select text {(e.text or '')[:12]}", select(e)))
        return opts

    def _select(self, e: Element) -> None:
        x1, y1, x2, y2 = e.bbox
        y = (y1 + y2) // 2
        start = x1 + 1
        end = self.rng.randint(min(x2 - 1, start + 10), x2 - 1)
        self.executor.mouse_down(start, y)
        self.executor.move((start + end) // 2, y)
        self.executor.move(end, y)
        self.executor.mouse_up()

    def step(self, elements: list[Element]) -> str | None:
        if self.popup_open:
            # Leave the dropdown popup: pick another option or dismiss it.
            if self.rng.random() < 0.6:
                self.executor.press_keys(["down"])
                self.executor.press_keys(["enter"])
                what = "choose next option"
            else:
                self.executor.press_keys(["escape"])
                what = "close dropdown"
            self.popup_open = False
            return what
        opts = self.options(elements)
        if not opts:
            return None
        what, do = self.rng.choice(opts)
        do()
        self.popup_open = what == "open dropdown"
        return what


# --- the generation loop -----------------------------------------------------------------------
@dataclass
class GenerationStats:
    episodes: int = 0
    screenshots: int = 0
    duplicates: int = 0
    ended_by_interaction: int = 0
    elements: int = 0
    seconds: float = 0.0
    per_task: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AgentDriver:
    """Drive episodes with caap's agent: the DOM oracle for eyes, ``llm`` to decide."""

    llm: LLMConfig
    max_steps: int = 10


AGENT_STEP_PREFIX = "a"  # screens of agent-driven episodes: TASK-SEED-aSTEP


def _mapping_of(screen: LiveScreen) -> MappingSource:
    """The mapping ``screen`` last captured with, asked at each action (it changes with the capture)."""
    return lambda: screen.mapping


def generate(
    out: str | Path,
    tasks: Iterable[str],
    seeds: Iterable[int],
    *,
    steps: tuple[int, int] = (1, 4),
    near_duplicate_bits: int = 2,
    display: str | None = None,
    on_episode: Callable[[str, int, int], None] | None = None,
    generator_info: dict[str, Any] | None = None,
    driver: AgentDriver | None = None,
) -> GenerationStats:
    """Episodes for every (task, seed); ``steps`` is the range of random interactions per episode,
    or ``driver`` drives them with the agent. Seeds already present in ``out`` (for the same kind
    of episode) are skipped, so an interrupted run resumes."""
    dataset = Dataset.create(out, "miniwob", generator_info or {})
    stats = GenerationStats()
    started = time.perf_counter()
    seeds = list(seeds)
    with MiniWoBEnv(display=display) as env:
        for task in tasks:
            env.open(task)
            r = env.region
            screen = LiveScreen(CaptureTarget(kind="region", region=(r.left, r.top, r.width, r.height)),
                                display=env.display, settle=SettleOptions(0.05, 0.04, 2.0))
            executor = XdotoolExecutor(_mapping_of(screen), display=env.display)
            existing = sorted((dataset.root / "images" / task).glob("*.png"))
            hashes = [dhash(Image.open(p).convert("RGB")) for p in existing]
            done_seeds = {int(seed) for seed, step in (p.stem.rsplit("-", 2)[-2:] for p in
                                                      (dataset.root / "labels" / task).glob("*.json"))
                          if step.startswith(AGENT_STEP_PREFIX) == (driver is not None)}
            for seed in seeds:
                if seed in done_seeds:
                    continue
                if driver is not None:
                    kept = _agent_episode(env, task, seed, screen, executor, dataset, hashes, near_duplicate_bits,
                                          stats, driver)
                else:
                    kept = _episode(env, task, seed, screen, executor, dataset, hashes, steps, near_duplicate_bits,
                                    stats)
                stats.episodes += 1
                stats.per_task[task] = stats.per_task.get(task, 0) + kept
                if on_episode:
                    on_episode(task, seed, kept)
            screen.close()
    stats.seconds = time.perf_counter() - started
    return stats


def _episode(env: MiniWoBEnv, task: str, seed: int, screen: LiveScreen, executor: XdotoolExecutor,
             dataset: Dataset, hashes: list[int], steps: tuple[int, int], near_bits: int,
             stats: GenerationStats) -> int:
    rng = random.Random(f"{task}:{seed}")
    env.reset(seed)
    utterance = env.utterance()
    explorer = Explorer(env, executor, rng)
    frame = screen.capture()
    frame = screen.settle(frame)
    kept = 0
    n_steps = rng.randint(*steps)
    for step in range(n_steps + 1):
        popup = popup_rect(env) if explorer.popup_open else None
        elements = annotate(env, popup)
        h = dhash(frame)
        if near_duplicate(h, hashes, near_bits):
            stats.duplicates += 1
        else:
            hashes.append(h)
            ann = Annotation(image="", width=frame.width, height=frame.height, elements=elements,
                             source=Source(kind="miniwob", task=task, seed=seed, step=step, utterance=utterance))
            dataset.add(task, f"{task}-{seed}-{step}", frame, ann)
            kept += 1
            stats.screenshots += 1
            stats.elements += len(elements)
        if step == n_steps:
            break
        what = explorer.step(elements)
        if what is None:
            break
        frame = screen.settle(frame)
        if env.done():
            stats.ended_by_interaction += 1
            break
    if explorer.popup_open:
        executor.press_keys(["escape"])
    return kept


class _LabellingObserver:
    """The DOM oracle, keeping every screen it is asked about (and its labels) in the dataset."""

    def __init__(self, env: MiniWoBEnv, task: str, seed: int, utterance: str, dataset: Dataset,
                 hashes: list[int], near_bits: int, stats: GenerationStats) -> None:
        from caap.bench.oracle import OracleObserver

        self.oracle = OracleObserver(env)
        self.task, self.seed, self.utterance = task, seed, utterance
        self.dataset, self.hashes, self.near_bits, self.stats = dataset, hashes, near_bits, stats
        self.step = self.kept = 0

    def observe(self, image: Image.Image, typed: Sequence[Typed] = (), names: Sequence[str] = ()) -> Observation:
        observation = self.oracle.observe(image)
        elements = observation.elements
        h = dhash(image)
        if near_duplicate(h, self.hashes, self.near_bits):
            self.stats.duplicates += 1
        else:
            self.hashes.append(h)
            ann = Annotation(image="", width=image.width, height=image.height, elements=elements,
                             source=Source(kind="miniwob", task=self.task, seed=self.seed, step=self.step,
                                           utterance=self.utterance))
            self.dataset.add(self.task, f"{self.task}-{self.seed}-{AGENT_STEP_PREFIX}{self.step}", image, ann)
            self.kept += 1
            self.stats.screenshots += 1
            self.stats.elements += len(elements)
        self.step += 1
        return observation


def _agent_episode(env: MiniWoBEnv, task: str, seed: int, screen: LiveScreen, executor: XdotoolExecutor,
                   dataset: Dataset, hashes: list[int], near_bits: int, stats: GenerationStats,
                   driver: AgentDriver) -> int:
    """One episode solved by the agent; the screens it observed are kept whether it won or not
    (labels come from the DOM either way). An LLM that cannot be reached stops the generation."""
    from caap.act.device import Device
    from caap.agent.loop import Agent
    from caap.config import AgentConfig, CaapConfig, PromptConfig
    from caap.records import EpisodeStatus

    env.reset(seed)
    utterance = env.utterance()
    observer = _LabellingObserver(env, task, seed, utterance, dataset, hashes, near_bits, stats)
    cfg = CaapConfig(llm=driver.llm, agent=AgentConfig(max_steps=driver.max_steps),
                     prompt=PromptConfig(demonstrations=False))
    agent = Agent.from_config(cfg, Device(screen, executor), observer=observer, is_finished=env.done)
    result = agent.run(utterance)
    if result.status == EpisodeStatus.LLM_ERROR:
        raise RuntimeError(f"{task} seed {seed}: the planner failed: {result.reason}")
    if env.done():
        stats.ended_by_interaction += 1
    return observer.kept
