"""The DOM oracle: an observer that reads MiniWoB++'s page instead of its pixels.

Benchmarks only. It returns the elements the training labels are made from (same taxonomy, same
boxes, exact text and states), so a run with it measures the planner and the executor with a
perfect perception; the gap to a run with the vision models is what perception costs.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from PIL import Image

from caap.bench.miniwob import MiniWoBEnv
from caap.observe.observation import Observation, Provenance, Typed


class OracleObserver:
    """Elements of ``env``'s current screen from its DOM (and an open native dropdown's window)."""

    def __init__(self, env: MiniWoBEnv) -> None:
        self.env = env

    def observe(self, image: Image.Image, typed: Sequence[Typed] = (), names: Sequence[str] = ()) -> Observation:
        from caap.bench.dom_labels import annotate, popup_rect

        t0 = time.perf_counter()
        elements = annotate(self.env, popup_rect(self.env))
        ms = round((time.perf_counter() - t0) * 1000, 2)
        return Observation(elements, {"detect": ms, "read": 0.0, "total": ms}, [],
                           [Provenance("dom")] * len(elements))
