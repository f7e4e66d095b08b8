"""`caap bench miniwob`: the whole agent on MiniWoB++ episodes, scored the way the CAAP paper scores.

One episode per (task, seed): reset the task with the seed, give the agent the task's instruction,
let it observe the virtual screen (vision models, or the DOM oracle), plan with the LLM and act
with OS input until it says done, MiniWoB reports the episode over, or a limit is hit. Success is
MiniWoB reward > 0. The environment's DOM is read only to reset, to learn the instruction and to
score — never by the agent (except through the oracle observer, which exists to measure perception).

Output directory::

    episodes.jsonl      one line per finished episode (appended as they finish: a run resumes)
    summary.json        per-task and overall results (rewritten after every task chunk)
    report.html         the same, beside the paper's numbers
    traces/TASK/seed-N/ the agent's trace of each episode (report.html in it for failures)

Each worker is a process with its own Xvfb, Chromium and models, or with ``BenchSettings.ray`` a Ray actor
(``caap.bench.ray_pool``) that owns the same on its node.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing as mp
import os
import queue
import shutil
import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from PIL import Image

from caap import __version__
from caap.act.safety import PopupGuard
from caap.act.secrets import Secrets
from caap.decide.ablations import ABLATIONS
from caap.memory.cache import CacheError
from caap.memory.experience import ExperienceError
from caap.memory.trajectory import match, signatures
from caap.records import EpisodeStatus, StepRecord
from caap.seeds import format_seed_ranges

DATA_DIR = Path(__file__).with_name("data")
PAPER_RESULTS = DATA_DIR / "caap-paper-results.tsv"
CAAP67 = DATA_DIR / "tasks-caap67.txt"
TIMING_KEYS = ("capture", "detect", "read", "prompt", "llm", "act", "settle")
MAX_LLM_FAILURES = 3  # episodes in a row whose LLM calls failed before the run stops
CHUNK = 10  # seeds per job: a worker keeps one task open for a while, and work still spreads over workers
START_COVER_SHARE = 0.6  # of the task region near black: MiniWoB's START cover, not a task's screen


def shows_start_cover(frame: Image.Image) -> bool:
    """Whether a frame of the task region is MiniWoB's START cover (dark all over; every task
    draws on white under a yellow query bar)."""
    small = np.asarray(frame.convert("RGB").reduce(4), dtype=np.int16)
    return float((small.max(axis=2) < 48).mean()) >= START_COVER_SHARE


class BenchError(RuntimeError):
    """Bad benchmark input (tasks, seeds, paths); the message says which."""


def caap67() -> list[str]:
    """The 67 MiniWoB++ tasks the CAAP paper reports."""
    return [t.strip() for t in CAAP67.read_text(encoding="utf-8").splitlines() if t.strip()]


def parse_tasks(spec: str) -> list[str]:
    """``click-button,enter-text``, a file with one task per line (``#`` comments), ``caap67``, or
    ``outside67`` (every installed task outside the 67: reserved for evaluation, never trained on);
    every name must be a task of the installed miniwob package."""
    from caap.bench.miniwob import list_tasks

    path = Path(spec)
    if spec == "caap67":
        names = caap67()
    elif spec == "outside67":
        names = [t for t in list_tasks() if t not in set(caap67())]
    elif "," not in spec and _is_file(path):
        lines = path.read_text(encoding="utf-8").splitlines()
        names = [ln.split("#", 1)[0].strip() for ln in lines]
        names = [n for n in names if n]
    else:
        names = [t.strip() for t in spec.split(",") if t.strip()]
    if not names:
        raise BenchError(f"tasks {spec!r}: no task names")
    known = set(list_tasks())
    unknown = [n for n in names if n not in known]
    if unknown:
        raise BenchError(f"tasks: unknown MiniWoB++ task(s) {', '.join(unknown)} "
                         f"(the installed miniwob package has {len(known)}; e.g. click-button, enter-text)")
    return list(dict.fromkeys(names))


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # e.g. a name too long to be a file: it is a task list
        return False


BENCHMARKS = ("miniwob", "desktop")


@dataclass
class BenchSettings:
    tasks: list[str]
    seeds: list[int]
    out: Path
    benchmark: str = "miniwob"  # miniwob | desktop (caap.bench.desktop)
    workers: int = 1
    ablation: str = "none"
    max_steps: int = 10
    observer: str = "vision"  # vision | oracle
    demos: str | None = None
    screenshots: bool = True
    experience: str | None = None  # memory (caap.memory): per-task experience directory
    auto_context: str | None = None  # where successful episodes are saved as demonstrations
    cache: str | None = None  # action cache file
    reference: str | None = None  # reference trajectories: DIR/TASK/*.json (the first one is used)
    config: dict[str, Any] = field(default_factory=dict)  # the CaapConfig as JSON (llm, prompt, agent, screen)
    # Workers as Ray actors (caap.bench.ray_pool) instead of local processes. None: the process pool;
    # "local": a Ray instance of this run's own; else ray.init's address (HOST:6379, ray://HOST:10001, auto).
    ray: str | None = None
    save_tests: str | None = None  # solved episodes saved as replayable tests here (DIR/TASK/seed-N.json)
    replay: str | None = None  # the tests saved there replayed (no LLM) instead of the agent
    # --secret NAME=VALUE (caap.act.secrets): the summary names them, never their values.
    secrets: dict[str, str] = field(default_factory=dict, repr=False)

    def check(self) -> None:
        if self.benchmark not in BENCHMARKS:
            raise BenchError(f"the benchmark must be one of {', '.join(BENCHMARKS)}, not {self.benchmark!r}")
        if self.ablation not in ABLATIONS:
            raise BenchError(f"the ablation must be one of {', '.join(ABLATIONS)}, not {self.ablation!r}")
        if self.observer not in ("vision", "oracle"):
            raise BenchError(f"the observer must be vision or oracle, not {self.observer!r}")
        if self.workers < 1:
            raise BenchError("workers must be at least 1")
        if not self.seeds:
            raise BenchError("seeds: no seeds")
        if self.ray is not None:  # before anything is written
            from caap.bench.ray_pool import require_ray

            require_ray()
        for flag, value in (("--demos", self.demos), ("--reference", self.reference)):
            if value and not Path(value).is_dir():
                raise BenchError(f"{flag} {value}: not a directory")
        from caap.config import CaapConfig
        from caap.decide.demos import DemoFileError
        from caap.memory.session import Memory

        try:  # a broken memory file stops the run here, not in every worker
            Memory(self.memory_options(CaapConfig.model_validate(self.config)))
        except (CacheError, ExperienceError, DemoFileError) as exc:
            raise BenchError(str(exc)) from None

    def memory_options(self, cfg: Any) -> Any:
        """The episode memory: these settings' flags, else the ``[memory]`` config section."""
        from caap.memory.session import MemoryOptions

        def path(flag: str | None, configured: Path | None) -> Path | None:
            return Path(flag) if flag else configured

        m = cfg.memory
        return MemoryOptions.from_config(cfg, demos=[], exclude_same_task=True,
                                         experience=path(self.experience, m.experience),
                                         auto_context=path(self.auto_context, m.auto_context),
                                         cache=path(self.cache, m.cache))


# --- one worker -----------------------------------------------------------------------------------


def demos_for(directory: str | None, task: str) -> list[Any]:
    """Demonstrations of one task: ``DIR/TASK/*.json`` and ``DIR/TASK.json``."""
    if not directory:
        return []
    from caap.decide.demos import load_demos

    root = Path(directory)
    paths = sorted((root / task).glob("*.json")) if (root / task).is_dir() else []
    if (root / f"{task}.json").is_file():
        paths.append(root / f"{task}.json")
    return load_demos(paths) if paths else []


class EpisodeRunner:
    """A display, the benchmark's environment (a browser, or a private desktop) and the agent's parts,
    reused for many episodes."""

    def __init__(self, settings: BenchSettings, *, display: str | None = None) -> None:
        from caap.config import CaapConfig
        from caap.decide.llm import LLMClient
        from caap.decide.prompter import PromptOptions

        self.settings = settings
        self._hidden = Secrets.of(settings.secrets)  # the episode's secrets: the run's and its task's
        cfg = CaapConfig.model_validate(settings.config)
        # max_steps 0 (desktop tasks): each task's own limit, set per episode.
        self.cfg = cfg.model_copy(update={"agent": cfg.agent.model_copy(
            update={"max_steps": settings.max_steps or cfg.agent.max_steps})})
        # popups = "confirm": nobody is at a benchmark's terminal, so acting on a pop-up is refused.
        self._popup_guard = PopupGuard(lambda question: False) if self.cfg.safety.popups == "confirm" else None
        ablation = ABLATIONS[settings.ablation]
        self.prompt = PromptOptions.from_config(self.cfg, demonstrations=ablation.demonstrations,
                                                rationales=ablation.rationales, cot=ablation.cot)
        # A replay of saved tests asks no LLM (and needs no endpoint).
        self.planner: Any = None if settings.replay else LLMClient(self.cfg.llm)
        self.desktop = settings.benchmark == "desktop"
        self.env: Any
        if self.desktop:
            from caap.bench.desktop.env import DesktopEnv

            self.env = DesktopEnv(display=display)
        else:
            from caap.bench.miniwob import MiniWoBEnv

            self.env = MiniWoBEnv(display=display)
        self.observer: Any = None
        if settings.observer == "vision":
            from caap.observe.vision import VisionObserver, miniwob_observe

            # MiniWoB keeps the detector fine-tuned on it, as the paper's agent did; desktops get the default.
            observe = self.cfg.observe if self.desktop else miniwob_observe(self.cfg.observe)
            self.observer = VisionObserver.from_config(observe)
        elif self.desktop:
            from caap.bench.desktop.oracle import AccessibilityOracle

            self.observer = AccessibilityOracle(self.env)
        else:
            from caap.bench.oracle import OracleObserver

            self.observer = OracleObserver(self.env)
        self._device: Any = None
        self._device_display: str | None = None
        self._demos: dict[str, list[Any]] = {}
        self._references: dict[str, list[Any] | None] = {}
        from caap.memory.session import Memory

        # Demonstrations come from --demos (by task directory); memory adds auto-context ones, the
        # task's experience and the cache. The family of a MiniWoB episode is its task name.
        self.memory = Memory(settings.memory_options(self.cfg), self.planner)

    def _open(self, task: str) -> None:
        from caap.act.device import Device
        from caap.observe.capture.live import CaptureTarget

        if self.desktop:
            self.env.open(task)  # the desktop and its device stay; the application starts at reset
            if self._device is not None and self._device_display == self.env.display:
                return
        elif self.env.task == task and self.env.browser is not None and self.env.browser.alive:
            return
        else:
            self.env.open(task)
        if self._device is not None:
            self._device.close()
        self._device_display = self.env.display
        r = self.env.region
        # The task's region of this worker's display; xdotool names the display on every call, so
        # workers on different displays never mix input.
        self._device = Device.live(self.cfg.screen, self.cfg.executor, backend="xdotool", display=self.env.display,
                                   target=CaptureTarget(kind="region", region=(r.left, r.top, r.width, r.height)))
        if self.desktop:  # no window manager on the private desktop: the environment focuses a clicked window
            self._device.executor = self.env.executor(self._device.executor)

    def _wait_for_cover_to_go(self, timeout_s: float = 2.0) -> None:
        """Wait until the screen no longer shows MiniWoB's dark START cover. The page has hidden it
        and painted when ``reset`` returns, but on a busy CPU the X server can still hold the old
        frame for a moment, and an agent whose first look is the cover finds nothing to act on
        (3 of 1,340 vision episodes). After ``timeout_s`` the episode goes ahead as it is."""
        deadline = time.monotonic() + timeout_s
        while shows_start_cover(self._device.screen.capture()) and time.monotonic() < deadline:
            time.sleep(0.03)

    def run(self, task: str, seed: int) -> dict[str, Any]:
        """One episode; returns its record (never raises for what happens inside the episode), with
        every secret value in it written as its placeholder."""
        self._hidden = Secrets.of(self.settings.secrets)
        record = self._episode(task, seed)
        return cast(dict[str, Any], json.loads(self._hidden.redact(json.dumps(record, ensure_ascii=False))))

    def _episode(self, task: str, seed: int) -> dict[str, Any]:
        from caap.agent.loop import Agent
        from caap.agent.trace import TraceWriter

        s = self.settings
        trace_dir = s.out / "traces" / task / f"seed-{seed}"
        if trace_dir.exists():  # left by an interrupted run: this episode starts over
            shutil.rmtree(trace_dir)
        record: dict[str, Any] = {"task": task, "seed": seed, "trace": str(trace_dir.relative_to(s.out))}
        started = time.monotonic()
        steps: list[StepRecord] = []
        try:
            self._open(task)
            self.env.reset(seed)
            if not self.desktop:
                self._wait_for_cover_to_go()
            # The task's own secrets (a password it gives) and the run's: the agent reads {NAME}.
            self._hidden = Secrets.of({**s.secrets, **self.env.secrets()})
            utterance = self._hidden.redact(self.env.utterance())
            if s.replay:
                return self._replay(task, seed, record, started)
            if task not in self._demos:
                self._demos[task] = demos_for(s.demos, task)
            demos = (self._demos[task] + self.memory.demonstrations(utterance, task))[
                : self.cfg.prompt.max_demonstrations]
            lookups, hits = (self.memory.cache.lookups, self.memory.cache.hits) if self.memory.cache else (0, 0)
            trace = TraceWriter(trace_dir.parent, utterance, name=trace_dir.name, screenshots=s.screenshots,
                                secrets=self._secrets(), hidden=self._hidden)
            trace.start({"task": utterance, f"{s.benchmark}_task": task, "seed": seed, "caap_version": __version__,
                         "observer": s.observer, "ablation": s.ablation, "config": self.cfg.redacted()})
            cfg = self.cfg
            if self.desktop and not s.max_steps:
                cfg = cfg.model_copy(update={"agent": cfg.agent.model_copy(
                    update={"max_steps": self.env.current.max_steps})})
            agent = Agent.from_config(cfg, self._device, observer=self.observer, planner=self.planner,
                                      prompt=self.prompt, memory=self.memory, trace=trace, demonstrations=demos,
                                      is_finished=self._finished, on_step=steps.append,
                                      experience=self.memory.experience_lines(utterance, task), family=task,
                                      secrets=self._hidden, popup_guard=self._popup_guard)
            result = agent.run(utterance)
            # A desktop task is scored on the application's final state however the episode ended.
            reward = self.env.reward() if self.desktop or self.env.done() else 0.0
            if self.desktop:
                record["checks_failed"] = list(self.env.failures)
            if s.save_tests and reward > 0:
                record["test"] = str(self._save_test(task, seed, utterance, agent.steps))
            try:
                kept = self.memory.finish(utterance, success=reward > 0, status=result.status, reason=result.reason,
                                          steps=agent.steps, family=task, screen=(self.env.region.width,
                                                                                  self.env.region.height))
            except (CacheError, ExperienceError, OSError) as exc:  # the episode's score stands
                kept = {}
                record["memory_error"] = str(exc)
            if self.memory.cache is not None:
                record["cache"] = {"lookups": self.memory.cache.lookups - lookups,
                                   "hits": self.memory.cache.hits - hits}
            if kept.get("auto_context"):
                record["auto_context"] = kept["auto_context"]
            reference = self._reference(task)
            if reference is not None:
                record["reference"] = match(signatures(result.actions, "action"),
                                            signatures(reference.steps, "action"))
            record.update(utterance=utterance, status=result.status.value, reason=result.reason, steps=result.steps,
                          reward=reward, success=reward > 0, prompt_tokens=result.prompt_tokens,
                          completion_tokens=result.completion_tokens, cost_usd=result.cost_usd,
                          seconds=round(result.seconds, 3))
        except Exception as exc:  # a dead browser, a broken display: this episode failed, the run goes on
            record.update(status=EpisodeStatus.HARNESS_ERROR.value, reason=f"{type(exc).__name__}: {exc}",
                          steps=len(steps),
                          reward=0.0, success=False, prompt_tokens=0, completion_tokens=0, cost_usd=None)
            with contextlib.suppress(Exception):
                self.env.restart()
        record.setdefault("seconds", round(time.monotonic() - started, 3))  # the agent's time, without the reset
        record["timings_ms"] = _sum_timings(steps)
        if not record["success"] and trace_dir.is_dir():
            _write_trace_report(trace_dir)
        return record

    def _test_path(self, task: str, seed: int) -> Path:
        assert self.settings.save_tests or self.settings.replay
        return Path(self.settings.replay or self.settings.save_tests or "") / task / f"seed-{seed}.json"

    def _save_test(self, task: str, seed: int, utterance: str, steps: list[Any]) -> Path:
        """A solved episode as a regression test (``caap.agent.regression``), with its origin."""
        from caap.agent.regression import save_test

        region = self.env.region
        return save_test(utterance, steps, self._test_path(task, seed), source="caap bench",
                         screen=(region.width, region.height),
                         origin={"benchmark": self.settings.benchmark, "task": task, "seed": seed})

    def _replay(self, task: str, seed: int, record: dict[str, Any], started: float) -> dict[str, Any]:
        """The episode's saved test replayed on the freshly reset task (no LLM), then scored by the task's
        own checks: success is a replay that passed every expectation and a reward > 0."""
        from caap.agent.replay import Replayer, ReplayOptions
        from caap.decide.demos import DemoFileError, load_demo

        path = self._test_path(task, seed)
        try:
            demo = load_demo(path)
        except DemoFileError as exc:
            record.update(status="no_test", reason=str(exc), steps=0, reward=0.0, success=False, prompt_tokens=0,
                          completion_tokens=0, cost_usd=0.0)
            return record
        result = Replayer(self._device.screen, self.observer, self._device.executor,
                          ReplayOptions(max_wait_s=5.0, secrets=self._hidden)).run(demo)
        reward = self.env.reward() if self.desktop or self.env.done() else 0.0
        if self.desktop:
            record["checks_failed"] = list(self.env.failures)
        record.update(utterance=demo.task, status=f"replay_{result.status}", reason=result.message,
                      steps=len(result.steps), reward=reward, success=result.ok and reward > 0, prompt_tokens=0,
                      completion_tokens=0, cost_usd=0.0, seconds=round(time.monotonic() - started, 3),
                      timings_ms={"steps": 0}, replay=[s.to_json() for s in result.steps])
        return record

    def _reference(self, task: str) -> Any:
        """The reference trajectory of a task (the first of ``--reference DIR/TASK``), if any."""
        if task not in self._references:
            found = demos_for(self.settings.reference, task) if self.settings.reference else []
            self._references[task] = found[0] if found else None
        return self._references[task]

    def _finished(self) -> bool:
        try:
            return self.env.done()
        except Exception:  # a dead page is not "finished"; the next step will fail clearly
            return False

    def _secrets(self) -> list[str]:
        key = self.cfg.llm.api_key
        return [key.get_secret_value()] if key else []

    def close(self) -> None:
        if self._device is not None:
            self._device.close()
        self.env.close()


def _sum_timings(steps: list[StepRecord]) -> dict[str, Any]:
    """Per-episode totals of each timing part, and the number of steps they cover."""
    totals: dict[str, float] = defaultdict(float)
    for record in steps:
        for key, value in record.timings_ms.items():
            if key in TIMING_KEYS:
                totals[key] += value
    return {"steps": len(steps), **{k: round(v, 2) for k, v in totals.items()}}


def _write_trace_report(trace_dir: Path) -> None:
    try:
        from caap.report.trace import write_trace_report
    except ImportError:
        return
    with contextlib.suppress(Exception):  # a report is a convenience: never lose the episode over it
        write_trace_report(trace_dir)


# --- the run --------------------------------------------------------------------------------------


def load_episodes(out: Path) -> list[dict[str, Any]]:
    """Finished episodes of a run directory (a line cut off by a crash is ignored)."""
    path = out / "episodes.jsonl"
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            records.append(json.loads(line))
    return records


def limit_threads(threads: int) -> None:
    """Give this worker's models ``threads`` CPU threads: the workers on one machine share its cores
    (oversubscribed torch threads run several times slower)."""
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    with contextlib.suppress(ImportError):
        import torch

        torch.set_num_threads(threads)


def _worker(settings: BenchSettings, jobs: Any, results: Any, threads: int) -> None:
    """A worker process: its own display, browser and models; takes (task, seeds) jobs until None."""
    limit_threads(threads)
    runner = None
    try:
        runner = EpisodeRunner(settings)
        results.put(("ready", None))
        while True:
            job = jobs.get()
            if job is None:
                break
            task, seeds = job
            for seed in seeds:
                results.put(("episode", runner.run(task, seed)))
    except Exception as exc:  # reported to the parent, which ends the run cleanly
        results.put(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        if runner is not None:
            with contextlib.suppress(Exception):
                runner.close()
        results.put(("exit", None))


def run_bench(settings: BenchSettings, *, on_episode: Callable[[dict[str, Any], int, int], None] | None = None,
              ) -> dict[str, Any]:
    """Run every (task, seed) not already in ``out/episodes.jsonl``; returns the summary."""
    settings.check()
    out = settings.out
    out.mkdir(parents=True, exist_ok=True)
    _check_same_run(settings)
    _drop_partial_line(out / "episodes.jsonl")
    done = {(r["task"], r["seed"]) for r in load_episodes(out)}
    todo = [(t, s) for t in settings.tasks for s in settings.seeds if (t, s) not in done]
    total = len(settings.tasks) * len(settings.seeds)
    started = time.time()
    summary = write_summary(settings, started=started, finished=None)
    if todo:
        jobs_list: list[tuple[str, list[int]]] = []
        for task in settings.tasks:
            seeds = [s for t, s in todo if t == task]
            jobs_list += [(task, seeds[i:i + CHUNK]) for i in range(0, len(seeds), CHUNK)]
        count = total - len(todo)
        workers = min(settings.workers, len(jobs_list))

        llm_failures: list[str] = []
        since_summary = 0

        def record(rec: dict[str, Any]) -> None:
            nonlocal count, since_summary
            if rec.get("status") == "llm_error":
                # The service failed, not the agent: not a result. Left out of episodes.jsonl so a
                # rerun retries it; a service that keeps failing ends the run.
                llm_failures.append(str(rec.get("reason")))
                if len(llm_failures) >= MAX_LLM_FAILURES:
                    raise BenchError(f"the LLM endpoint failed {len(llm_failures)} episodes in a row "
                                     f"(last: {llm_failures[-1]}); finished episodes are kept — rerun to resume")
                return
            llm_failures.clear()
            with (out / "episodes.jsonl").open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            count += 1
            since_summary += 1
            if since_summary >= CHUNK:  # a partial summary (and report) while the run goes on
                write_summary(settings, finished=None)
                since_summary = 0
            if on_episode:
                on_episode(rec, count, total)

        if settings.ray is not None:
            from caap.bench.ray_pool import run_ray

            run_ray(settings, jobs_list, workers, record)
        elif workers == 1:
            _run_inline(settings, jobs_list, record)
        else:
            _run_pool(settings, jobs_list, workers, record)
    return write_summary(settings, started=summary.get("started", started), finished=time.time())


def _drop_partial_line(path: Path) -> None:
    """A crash mid-write leaves a last line without its newline: cut it, so appends start clean."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


def _run_inline(settings: BenchSettings, jobs: list[tuple[str, list[int]]],
                record: Callable[[dict[str, Any]], None]) -> None:
    runner = EpisodeRunner(settings)
    try:
        for task, seeds in jobs:
            for seed in seeds:
                record(runner.run(task, seed))
    finally:
        runner.close()


def _run_pool(settings: BenchSettings, jobs: list[tuple[str, list[int]]], workers: int,
              record: Callable[[dict[str, Any]], None]) -> None:
    ctx = mp.get_context("spawn")  # a fresh interpreter: no inherited torch threads, X connections or locks
    job_q, result_q = ctx.Queue(), ctx.Queue()
    for job in jobs:
        job_q.put(job)
    for _ in range(workers):
        job_q.put(None)
    threads = max(1, (os.cpu_count() or 1) // workers)
    procs = [ctx.Process(target=_worker, args=(settings, job_q, result_q, threads), daemon=True)
             for _ in range(workers)]
    for p in procs:
        p.start()
    alive, errors = workers, []
    try:
        while alive:
            try:
                kind, payload = result_q.get(timeout=5)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    break
                continue
            if kind == "episode":
                record(payload)
            elif kind == "error":
                errors.append(payload)
            elif kind == "exit":
                alive -= 1
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
    if errors:
        raise BenchError(f"{len(errors)} worker(s) failed: {errors[0]}")


def _check_same_run(settings: BenchSettings) -> None:
    """Resuming into a directory of a different benchmark would mix results: refuse."""
    path = settings.out / "summary.json"
    if not path.exists():
        return
    try:
        old = json.loads(path.read_text(encoding="utf-8")).get("config", {})
    except (OSError, ValueError):
        return
    for key in ("benchmark", "ablation", "observer", "max_steps"):
        if key in old and old[key] != getattr(settings, key):
            raise BenchError(f"{settings.out} holds a run with {key}={old[key]!r}, not {getattr(settings, key)!r}: "
                             "choose another --out to compare settings")


# --- summary --------------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 4) if values else None


def _latency(episodes: list[dict[str, Any]]) -> dict[str, float]:
    steps = sum(e.get("timings_ms", {}).get("steps", 0) for e in episodes)
    if not steps:
        return {}
    return {k: round(sum(e.get("timings_ms", {}).get(k, 0.0) for e in episodes) / steps, 2) for k in TIMING_KEYS
            if any(k in e.get("timings_ms", {}) for e in episodes)}


def _group(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(episodes)
    steps = sum(e.get("steps", 0) for e in episodes)
    costs = [e.get("cost_usd") for e in episodes]
    return {
        "episodes": n,
        "successes": sum(bool(e.get("success")) for e in episodes),
        "success_rate": round(sum(bool(e.get("success")) for e in episodes) / n, 4) if n else None,
        "mean_reward": _mean([float(e.get("reward", 0.0)) for e in episodes]),
        "mean_steps": _mean([float(e.get("steps", 0)) for e in episodes]),
        "mean_seconds_per_step": round(sum(e.get("seconds", 0.0) for e in episodes) / steps, 3) if steps else None,
        "statuses": dict(Counter(e.get("status", "?") for e in episodes).most_common()),
        "latency_ms": _latency(episodes),
        "tokens_per_episode": {"prompt": _mean([e.get("prompt_tokens", 0) for e in episodes]),
                               "completion": _mean([e.get("completion_tokens", 0) for e in episodes])},
        "cost_per_episode_usd": None if any(c is None for c in costs) or not costs
        else round(sum(c for c in costs if c is not None) / n, 6),
        **_memory_metrics(episodes),
    }


def _memory_metrics(episodes: list[dict[str, Any]]) -> dict[str, Any]:
    """Cache hit rate over the steps that looked it up; reference-trajectory matches (HxAgent)."""
    out: dict[str, Any] = {}
    lookups = sum(e.get("cache", {}).get("lookups", 0) for e in episodes)
    if lookups:
        out["cache"] = {"lookups": lookups, "hits": sum(e["cache"]["hits"] for e in episodes if "cache" in e),
                        "hit_rate": round(sum(e["cache"]["hits"] for e in episodes if "cache" in e) / lookups, 4)}
    refs = [e["reference"] for e in episodes if e.get("reference")]
    if refs:
        out["reference_match"] = {"episodes": len(refs), "exact": _mean([r["exact"] for r in refs]),
                                  "prefix": _mean([r["prefix"] for r in refs])}
    return out


def summarize(settings: BenchSettings, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    wanted, seeds = set(settings.tasks), set(settings.seeds)
    # One record per (task, seed), the last written: two processes resuming the same directory at once
    # may both finish an episode, and counting it twice would weigh that seed double.
    latest = {(e.get("task"), e.get("seed")): e for e in episodes
              if e.get("task") in wanted and e.get("seed") in seeds}
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (task, _), e in latest.items():
        by_task[str(task)].append(e)
    tasks = {}
    for task in settings.tasks:
        if by_task.get(task):
            eps = sorted(by_task[task], key=lambda e: e["seed"])
            tasks[task] = {**_group(eps), "failures": [
                {"seed": e["seed"], "status": e.get("status"), "reason": e.get("reason"), "trace": e.get("trace")}
                for e in eps if not e.get("success")]}
    rates = [t["success_rate"] for t in tasks.values()]
    everything = [e for eps in by_task.values() for e in eps]
    overall = {
        **_group(everything),
        "covered_tasks": len(tasks),
        "mean_success_covered": _mean(rates),
        "tasks_at_least_0.8": sum(r >= 0.8 for r in rates),
        "tasks_at_least_0.9": sum(r >= 0.9 for r in rates),
    }
    if settings.replay:
        # The saved tests' own pass rate: an episode that was not solved has no test to replay.
        tested = [e for e in everything if e.get("status") != "no_test"]
        passed = sum(bool(e.get("success")) for e in tested)
        overall["replayed"] = {"tests": len(tested), "passed": passed,
                               "pass_rate": round(passed / len(tested), 4) if tested else None,
                               "no_test": len(everything) - len(tested)}
    if settings.benchmark == "desktop":
        from caap.bench.desktop.tasks import TASKS

        for key, of in (("by_split", lambda t: TASKS[t].split), ("by_toolkit", lambda t: TASKS[t].toolkit)):
            groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for task, eps in by_task.items():
                if task in TASKS:
                    groups[of(task)] += eps
            overall[key] = {name: {k: v for k, v in _group(eps).items() if k in ("episodes", "successes",
                                                                                   "success_rate")}
                            for name, eps in sorted(groups.items())}
        for task, row in tasks.items():
            row.update(app=TASKS[task].app, toolkit=TASKS[task].toolkit, split=TASKS[task].split)
            for failure, e in zip(row["failures"], [e for e in sorted(by_task[task], key=lambda e: e["seed"])
                                                    if not e.get("success")], strict=True):
                failure["checks_failed"] = e.get("checks_failed", [])
    else:
        all67 = caap67()
        overall["mean_success_all_67"] = round(sum(tasks[t]["success_rate"] for t in all67 if t in tasks)
                                               / len(all67), 4)
    return {"tasks": tasks, "overall": overall}


def write_summary(settings: BenchSettings, *, started: float | None = None,
                  finished: float | None) -> dict[str, Any]:
    """Recompute ``summary.json`` (and ``report.html`` when the report module is there) from the episodes."""
    out = settings.out
    path = out / "summary.json"
    if started is None and path.exists():
        with contextlib.suppress(OSError, ValueError):
            started = json.loads(path.read_text(encoding="utf-8")).get("started")
    llm = settings.config.get("llm", {})
    summary = {
        "caap_version": __version__,
        "started": started or time.time(),
        "finished": finished,
        "config": {**{k: v for k, v in asdict(settings).items() if k not in ("config", "out", "seeds", "secrets")},
                   "secrets": sorted(settings.secrets),
                   "seeds": _ranges(settings.seeds), "model": llm.get("model"), "base_url": llm.get("base_url"),
                   "mode": llm.get("mode")},
        **summarize(settings, load_episodes(out)),
    }
    if settings.benchmark == "miniwob":
        summary["paper"] = {"tsv": str(PAPER_RESULTS), "column": ABLATIONS[settings.ablation].paper_column}
    tmp = out / ".summary.json.tmp"
    tmp.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    with contextlib.suppress(ImportError):
        from caap.report.bench import write_bench_report

        with contextlib.suppress(Exception):
            write_bench_report(out)
    return summary


def _ranges(seeds: list[int]) -> str:
    return format_seed_ranges(set(seeds))
