"""How long the observer takes per screen: a screen seen for the first time (every element read)
and the same screen again (the reading memo answers for unchanged elements, as on most steps of
an episode), per stage and per named step of the pipeline."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

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
