"""`caap bench miniwob --ray`: the benchmark's episodes as Ray actors, on one machine or a cluster.

Each actor is one worker of the process pool moved onto a Ray node: it holds an
:class:`~caap.bench.harness.EpisodeRunner` (its own Xvfb, Chromium and models, made on that node) and
runs one episode per call. The driver — the process that called ``run_bench`` — hands each actor the
seeds of one (task, seeds) job one at a time (the actor keeps the task's page open between them) and
waits on all calls in flight, so every record reaches ``run_bench``'s ``record`` callback as its episode
ends: ``OUT/episodes.jsonl``, resuming, LLM-failure counting and summaries work as with the pool.

Actors write traces in a scratch directory on their own node and send each episode's trace back with
its record; the driver unpacks it into ``OUT/traces/``, so a cluster run ends with everything in OUT.

Addresses (``BenchSettings.ray``): ``local`` (or empty) starts a Ray instance of our own for this run;
anything else goes to ``ray.init(address=...)``: ``HOST:6379`` (a cluster's head), ``ray://HOST:10001``
(Ray Client) or ``auto`` (the cluster this machine already belongs to).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import shutil
import socket
import tarfile
import tempfile
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from caap.bench.harness import BenchError, BenchSettings, EpisodeRunner, limit_threads

__all__ = ["EpisodeActor", "require_ray", "run_ray"]

RAY_MISSING = "the --ray option needs the ray extra: pip install 'caap[ray]'"
CONNECT_TIMEOUT_S = 5.0  # the reachability check; ray.init itself waits minutes for a GCS that is not there
CLOSE_TIMEOUT_S = 15.0  # closing runners (Chromium, Xvfb) before the actors are killed anyway
WAIT_S = 10.0  # ray.wait's slice: the loop stays responsive to Ctrl-C


def require_ray() -> Any:
    """The ``ray`` module, or the one error that says how to install it."""
    try:
        import ray
    except ImportError:
        raise BenchError(RAY_MISSING) from None
    return ray


def is_local(address: str) -> bool:
    """``local`` (or empty): a Ray instance of this run's own, not a cluster."""
    return address.strip() in ("", "local")


class EpisodeActor:
    """One benchmark worker on a Ray node (wrapped with ``ray.remote`` by :func:`run_ray`).

    A runner that fails to start does not kill the actor: :meth:`ready` reports the error, so the
    driver can say what went wrong instead of Ray's "actor died" message.
    """

    def __init__(self, settings: BenchSettings, cwd: str, threads: int,
                 make_runner: Callable[[BenchSettings], Any] = EpisodeRunner) -> None:
        # Relative paths of the settings and config (demos, memory files, models) mean what they mean
        # for the driver: the same checkout on every node, or absolute paths.
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        limit_threads(threads)  # as the pool's workers: a node's cores shared between its actors
        self.scratch = Path(tempfile.mkdtemp(prefix="caap-ray-"))  # this node's traces until they are sent
        self.runner: Any = None
        self.error: str | None = None
        try:
            self.runner = make_runner(replace(settings, out=self.scratch))
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            shutil.rmtree(self.scratch, ignore_errors=True)  # the driver kills this actor without closing it

    def ready(self) -> str | None:
        """None once the runner is up; else why it could not start (and where)."""
        return None if self.error is None else f"on {socket.gethostname()}: {self.error}"

    def run(self, task: str, seed: int) -> tuple[dict[str, Any], bytes | None]:
        """One episode: its record and its trace directory as a tar archive (None if it wrote none)."""
        record = self.runner.run(task, seed)
        trace = self.scratch / record["trace"]
        data = None
        if trace.is_dir():
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w") as tar:
                tar.add(trace, arcname=record["trace"])
            data = buf.getvalue()
            shutil.rmtree(trace, ignore_errors=True)
        return record, data

    def close(self) -> None:
        if self.runner is not None:
            with contextlib.suppress(Exception):
                self.runner.close()
            self.runner = None
        shutil.rmtree(self.scratch, ignore_errors=True)


def run_ray(settings: BenchSettings, jobs: list[tuple[str, list[int]]], workers: int,
            record: Callable[[dict[str, Any]], None], *,
            make_runner: Callable[[BenchSettings], Any] = EpisodeRunner) -> None:
    """Run ``jobs`` on ``workers`` Ray actors, passing each episode's record to ``record`` as it ends.

    Connects to ``settings.ray`` (see the module's doc) and disconnects at the end, unless this process
    was already connected. ``make_runner`` builds each actor's runner (tests give a stand-in).
    """
    ray = require_ray()
    address = settings.ray or ""
    local = is_local(address)
    # A local instance shares this machine's cores as the pool does; on a cluster each actor takes one CPU.
    cpus = max(1, (os.cpu_count() or 1) // workers) if local else 1
    connected_here = not ray.is_initialized()
    try:
        if connected_here:
            _connect(ray, address, local, num_cpus=max(os.cpu_count() or 1, workers * cpus))
        have = ray.cluster_resources().get("CPU", 0)
        if have < cpus:
            raise BenchError(f"the Ray cluster at {address or 'local'} has {have:g} CPUs; an actor needs {cpus}")
        actor_class = ray.remote(num_cpus=cpus, max_restarts=0, max_task_retries=0)(EpisodeActor)
        _drive(ray, settings, jobs, record,
               [actor_class.remote(settings, os.getcwd(), cpus, make_runner) for _ in range(workers)])
    except ray.exceptions.RayError as exc:  # the cluster itself failed (the head lost, ...): not an episode's error
        raise BenchError(f"the Ray cluster at {address or 'local'} failed: {_reason(exc)}; finished episodes are "
                         f"kept in {settings.out / 'episodes.jsonl'} — rerun to resume") from None
    finally:
        if connected_here:
            with contextlib.suppress(Exception):
                ray.shutdown()


def _connect(ray: Any, address: str, local: bool, *, num_cpus: int) -> None:
    # Actors' output would break the progress bar; what goes wrong comes back as errors (and Ray's logs keep it).
    common = {"log_to_driver": False, "logging_level": logging.WARNING}
    try:
        if local:
            ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, **common)
        else:
            _check_reachable(address)
            ray.init(address=address, **common)
    except BenchError:
        raise
    except Exception as exc:  # ConnectionError, a version mismatch, ...
        # Recent Ray clusters may require a token, which a driver given an address never sends unasked.
        hint = "" if local else ("; a cluster with token authentication also needs RAY_AUTH_MODE=token and its "
                                 "token here (~/.ray/auth_token)")
        raise BenchError(f"cannot connect to the Ray cluster at {address or 'local'}: {_reason(exc)}{hint}") from None


def _check_reachable(address: str) -> None:
    """Fail fast on a HOST:PORT nobody listens on: ``ray.init`` would wait minutes for the GCS."""
    m = re.fullmatch(r"(?:ray://)?\[?([^\[\]/]+?)\]?:(\d+)", address.strip())
    if not m:
        return  # "auto" and other forms: Ray's own check
    host, port = m.group(1), int(m.group(2))
    try:
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise BenchError(f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}): start one with "
                         "`ray start --head` and give its address (HEAD:6379, or ray://HEAD:10001), "
                         "or use --ray local") from None


def _drive(ray: Any, settings: BenchSettings, jobs: list[tuple[str, list[int]]],
           record: Callable[[dict[str, Any]], None], actors: list[Any]) -> None:
    """Hand out seeds to ready actors and collect records until the jobs are done or something fails."""
    todo = deque(jobs)
    seeds: list[deque[tuple[str, int]]] = [deque() for _ in actors]  # the rest of each actor's current job
    starting = {actor.ready.remote(): i for i, actor in enumerate(actors)}
    running: dict[Any, tuple[int, str, int]] = {}  # call -> (actor, task, seed)
    live: set[int] = set()
    errors: list[str] = []
    stopping = False  # after an actor died: no new episodes, the ones running finish

    def dispatch(i: int) -> None:
        if stopping:
            return
        if not seeds[i] and todo:
            task, chunk = todo.popleft()
            seeds[i].extend((task, s) for s in chunk)
        if seeds[i]:
            task, seed = seeds[i].popleft()
            running[actors[i].run.remote(task, seed)] = (i, task, seed)

    try:
        # Actors still waiting for room on the cluster are not waited for once no work is left for them.
        while running or (starting and not stopping and (todo or any(seeds))):
            done, _ = ray.wait([*starting, *running], num_returns=1, timeout=WAIT_S)
            for ref in done:
                if ref in starting:
                    i = starting.pop(ref)
                    try:
                        problem = ray.get(ref)
                    except Exception as exc:  # the actor process itself could not start
                        problem = f": {_reason(exc)}"
                    if problem:
                        errors.append(f"a Ray actor could not start its runner {problem}")
                        with contextlib.suppress(Exception):
                            ray.kill(actors[i])
                    else:
                        live.add(i)
                        dispatch(i)
                    continue
                i, task, seed = running.pop(ref)
                try:
                    rec, trace = ray.get(ref)
                except Exception as exc:  # the actor died (node lost, a crash) or the call raised
                    stopping = True  # (an actor still alive is closed at the end as the others are)
                    errors.append(f"the Ray actor running {task} seed {seed} failed: {_reason(exc)}")
                    continue
                if trace is not None:
                    _unpack(settings.out, rec["trace"], trace)
                record(rec)
                dispatch(i)
    finally:
        _shut_down(ray, actors, live)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BenchError(f"{errors[0]}{more}; finished episodes are kept in {settings.out / 'episodes.jsonl'} "
                         "— rerun to resume")
    if todo or any(seeds):  # cannot happen while an actor lives; never end a run silently short
        raise BenchError("no Ray actor was left to run the remaining episodes; rerun to resume")


def _shut_down(ray: Any, actors: list[Any], live: set[int]) -> None:
    """Close the runners (their Chromium and Xvfb) where the actors still answer, then kill every actor."""
    closing = []
    for i in live:
        with contextlib.suppress(Exception):
            closing.append(actors[i].close.remote())
    if closing:
        # A busy actor closes after its episode; one that does not answer in time is killed (its
        # Xvfb and Chromium die with it: they are started with a parent-death signal).
        with contextlib.suppress(Exception):
            ray.wait(closing, num_returns=len(closing), timeout=CLOSE_TIMEOUT_S)
    for actor in actors:
        with contextlib.suppress(Exception):
            ray.kill(actor)


def _unpack(out: Path, rel: str, data: bytes) -> None:
    """An episode's trace, sent back by its actor, into OUT (replacing one an interrupted run left)."""
    root = PurePosixPath(rel)
    if root.is_absolute() or ".." in root.parts:
        raise BenchError(f"a Ray actor sent a trace with a bad path: {rel!r}")
    target = out / rel
    if target.exists():
        shutil.rmtree(target)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        for member in tar.getmembers():
            name = PurePosixPath(member.name)
            if not (member.isfile() or member.isdir()) or ".." in name.parts or name.parts[:len(root.parts)] \
                    != root.parts:
                raise BenchError(f"a Ray actor sent a trace with an unexpected entry: {member.name!r}")
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4
            tar.extractall(out, filter="data")
        else:
            tar.extractall(out)  # every member was checked above


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0].rstrip(".")[:300] if lines else type(exc).__name__


def _reason(exc: BaseException) -> str:
    """A Ray error in one line: the exception a call raised (a RayTaskError's cause), or why its actor died."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException) and not isinstance(cause, type(exc)):
        exc = cause
    return f"{type(exc).__name__}: {_first_line(exc)}"
