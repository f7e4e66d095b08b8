"""The desktop oracle observer: the element list built from the application's accessibility tree
(Tk: from Tk's own introspection), with the taxonomy, boxes and text that ``caap dataset desktop``
gives the same widgets (``caap.bench.desktop.labels``) — what the DOM oracle is for MiniWoB++: the
planner's ceiling with perfect perception, never the agent's own eyes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from PIL import Image

from caap.bench.desktop import atspi, tk
from caap.bench.desktop.labels import finish
from caap.observe.observation import Observation, Provenance, Typed

if TYPE_CHECKING:
    from caap.bench.desktop.env import DesktopEnv


class AccessibilityOracle:
    """``observe(image)``: the widgets of ``env``'s running application that show on ``image`` (the
    captured region), in its pixels; ids are the agent loop's tracker's, as for every observer."""

    def __init__(self, env: DesktopEnv) -> None:
        self.env = env

    def observe(self, image: Image.Image, typed: Sequence[Typed] = (), names: Sequence[str] = ()) -> Observation:
        t0 = time.perf_counter()
        session, pid = self.env.session, self.env.pid
        windows = session.windows()
        elements = []
        if pid is not None:
            if self.env.tk is not None:
                candidates = tk.candidates(self.env.tk.ask({"cmd": "dump"}), windows)
            else:
                candidates = atspi.candidates(session.walk(pid), windows)
            region = self.env.region
            capture = (region.left, region.top, region.left + region.width, region.top + region.height)
            elements = [e for e, _ in finish(candidates, windows, capture, image)]
        ms = round((time.perf_counter() - t0) * 1000, 2)
        return Observation(elements, {"detect": ms, "read": 0.0, "total": ms}, [],
                           [Provenance("accessibility")] * len(elements))
