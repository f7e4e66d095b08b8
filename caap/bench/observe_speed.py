"""How long the observer takes per screen: a screen seen for the first time (every element read)
and the same screen again (the reading memo answers for unchanged elements, as on most steps of
an episode), per stage and per named step of the pipeline; and the same beside another version of
caap (a checkout or a git revision), both measured in one run (``compare``)."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from caap.observe.vision import VisionObserver


@dataclass
class ObserveTiming:
    """One screen's timings in ms: ``first`` (nothing remembered) and the median of ``repeat``
    observations of it right after; each holds detect, read, ocr (where used) and total. The
    ``*_steps`` hold the same per named step."""

    width: int
    height: int
    elements: int
    first: dict[str, float]
    again: dict[str, float] = field(default_factory=dict)
    first_steps: dict[str, float] = field(default_factory=dict)
    again_steps: dict[str, float] = field(default_factory=dict)


def _median(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r.get(k, 0.0) for r in runs), 1) for k in runs[0]} if runs else {}


def warm_up(observer: VisionObserver, image: Image.Image) -> None:
    """One observation of a corner of ``image``, then nothing remembered: lazily built sessions and
    kernels are ready and the timed observation reads every element itself."""
    observer.observe(image.crop((0, 0, min(image.width, 320), min(image.height, 240))))
    observer.forget()


def time_screen(observer: VisionObserver, image: Image.Image, repeat: int = 3) -> ObserveTiming:
    """``image`` observed once with nothing remembered, then ``repeat`` more times."""
    observer.forget()
    seen = observer.observe(image)
    again = [observer.observe(image) for _ in range(repeat)]
    return ObserveTiming(image.width, image.height, len(seen.elements), dict(seen.timings_ms),
                         _median([o.timings_ms for o in again]), seen.steps_ms, _median([o.steps_ms for o in again]))


def step_medians(timings: Sequence[ObserveTiming]) -> dict[str, tuple[float, float]]:
    """Per step, over the screens: the median ms at first sight and again (steps in the order met)."""
    names = list(dict.fromkeys(n for t in timings for n in t.first_steps))
    return {n: (round(statistics.median(t.first_steps.get(n, 0.0) for t in timings), 1),
                round(statistics.median(t.again_steps.get(n, 0.0) for t in timings), 1)) for n in names}


# --- against another version, in the same run --------------------------------------------------


class AgainstError(RuntimeError):
    """The version to compare with cannot be checked out or its observer cannot run."""


@contextlib.contextmanager
def checkout_of(against: str, repo: Path) -> Iterator[Path]:
    """The code to compare with: ``against`` is a caap checkout (a folder holding ``caap/``) or a
    git revision of ``repo`` (a tag, a commit), checked out into a temporary worktree removed after."""
    folder = Path(against).expanduser()
    if (folder / "caap" / "__init__.py").is_file():
        yield folder.resolve()
        return
    with tempfile.TemporaryDirectory(prefix="caap-against-") as tmp:
        tree = Path(tmp) / "tree"
        done = subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-f", str(tree), against],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise AgainstError(f"{against!r} is neither a caap checkout nor a git revision of {repo} "
                               f"({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'git failed'})")
        try:
            yield tree
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)],
                           capture_output=True, check=False)


def bench_checkout(checkout: Path, images: Sequence[Path], repeat: int, threads: int,
                   options: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """One ``caap bench observe --json`` over ``images`` with ``checkout``'s code (this Python, the
    checkout first on ``PYTHONPATH``, in an empty folder so no caap.toml applies): per image its record."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": str(threads)}
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "caap.cli", "bench", "observe", *map(str, images),
                               "--repeat", str(repeat), "--json", *options], capture_output=True, text=True,
                              env=env, cwd=tmp, check=False)
    if done.returncode != 0:
        raise AgainstError(f"{checkout}: caap bench observe failed:\n{done.stderr[-2000:]}")
    return {json.loads(line)["image"]: json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")}


@dataclass
class Comparison:
    """Per screen (its path), the median over rounds of each version's first look and same screen
    again (ms)."""

    screen: str
    base_first: float
    new_first: float
    base_again: float
    new_again: float

    @property
    def first_ratio(self) -> float:
        return round(self.new_first / max(self.base_first, 1e-9), 3)

    @property
    def again_ratio(self) -> float:
        return round(self.new_again / max(self.base_again, 1e-9), 3)


def compare(new: Path, base: Path, images: Sequence[Path], *, rounds: int = 3, repeat: int = 3, threads: int = 2,
            options: Sequence[str] = (), progress: Any = None) -> tuple[list[Comparison], dict[str, list[Any]]]:
    """The two checkouts' ``caap bench observe`` on the same screens, alternating ``rounds`` times
    (base first, then new first, ...) so a busy machine slows both alike: one ``Comparison`` per
    screen, and every run's records."""
    runs: dict[str, list[dict[str, dict[str, Any]]]] = {"base": [], "new": []}
    order = (("base", base), ("new", new))
    for n in range(rounds):
        for name, checkout in order if n % 2 == 0 else order[::-1]:
            runs[name].append(bench_checkout(checkout, images, repeat, threads, options))
            if progress is not None:
                progress(f"round {n + 1}/{rounds}: {name} done")
    rows = []
    for path in images:
        key = str(path)
        med = {(name, look): statistics.median(r[key][look]["total"] for r in runs[name])
               for name in runs for look in ("first", "again")}
        rows.append(Comparison(key, round(med["base", "first"], 1), round(med["new", "first"], 1),
                               round(med["base", "again"], 1), round(med["new", "again"], 1)))
    return rows, dict(runs)
