"""Run MiniWoB++ data generation across worker processes, each with its own display and browser."""

from __future__ import annotations

import multiprocessing as mp
import queue
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from caap.data.miniwob.generate import AgentDriver, GenerationStats, generate


def pick_seeds(seeds: Sequence[int], per_task: int | None) -> list[int]:
    """``per_task`` seeds spread evenly over ``seeds`` (all of them when None)."""
    seeds = list(seeds)
    if per_task is None or per_task >= len(seeds):
        return seeds
    step = len(seeds) / per_task
    return [seeds[int(i * step)] for i in range(per_task)]


def _worker(out: str, tasks: list[str], seeds: list[int], steps: tuple[int, int], events: Any,
            info: dict[str, Any], driver: AgentDriver | None) -> GenerationStats:
    return generate(out, tasks, seeds, steps=steps, generator_info=info, driver=driver,
                    on_episode=lambda task, seed, kept: events.put((task, seed, kept)))


def generate_parallel(out: str | Path, tasks: Sequence[str], seeds: Sequence[int], *, workers: int = 1,
                      steps: tuple[int, int] = (1, 4), info: dict[str, Any] | None = None,
                      on_episode: Callable[[str, int, int], None] | None = None,
                      driver: AgentDriver | None = None) -> GenerationStats:
    """Tasks are dealt round-robin to ``workers`` processes; each owns an Xvfb and a Chromium."""
    from caap.data.format import Dataset

    Dataset.create(out, "miniwob", info or {})
    shards = [list(tasks[i::workers]) for i in range(workers) if tasks[i::workers]]
    ctx = mp.get_context("spawn")  # no inherited X connections or threads
    with ctx.Manager() as manager, ProcessPoolExecutor(len(shards), mp_context=ctx) as pool:
        events = manager.Queue()
        futures = [pool.submit(_worker, str(out), shard, list(seeds), steps, events, info or {}, driver)
                   for shard in shards]
        while not all(f.done() for f in futures):
            try:
                event = events.get(timeout=0.5)
            except queue.Empty:
                continue
            if on_episode:
                on_episode(*event)
        while True:
            try:
                event = events.get_nowait()
            except queue.Empty:
                break
            if on_episode:
                on_episode(*event)
        total = GenerationStats()
        for f in futures:
            s = f.result()  # re-raises a worker's error here
            total.episodes += s.episodes
            total.screenshots += s.screenshots
            total.duplicates += s.duplicates
            total.ended_by_interaction += s.ended_by_interaction
            total.elements += s.elements
            total.seconds = max(total.seconds, s.seconds)
            total.per_task.update(s.per_task)
    return total
