"""The device an agent works on: the screen it captures (and waits on until it settles) and the OS
input that acts on it, paired so that every point the executor gets is mapped through that screen's
capture (``caap.geometry.ScreenMapping``: region origin and HiDPI scale).

``Device.live`` builds it from the ``[screen]`` and ``[executor]`` config sections; ``Device.image``
is a screenshot file with input recorded, not sent (a dry run). Commands, the benchmark and the tools
get their screen and input here, in one way.
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image

from caap.act.executor import Executor, RecordingExecutor
from caap.config import ExecutorConfig, ScreenConfig
from caap.observe.capture.live import CaptureTarget, LiveScreen, SettleOptions
from caap.observe.capture.screen import ImageScreen, Screen


@dataclass
class Device:
    screen: Screen
    executor: Executor

    @classmethod
    def live(cls, screen: ScreenConfig, executor: ExecutorConfig, *, target: CaptureTarget | None = None,
             display: str | None = None, backend: str | None = None, dry_run: bool = False) -> Device:
        """The live screen of the ``[screen]`` config (or ``target``: a benchmark's task region) with
        the ``[executor]`` config's input on it (``backend`` overrides it; a display other than
        ``$DISPLAY`` needs xdotool; ``dry_run``: input recorded, not sent). The screen is captured once
        here, so that a missing display is one clear ``ScreenError`` now; a backend that cannot start
        is an ``ExecutorError``."""
        from caap.act.backends import make_executor

        live = LiveScreen(target or CaptureTarget.parse(monitor=screen.monitor, region=screen.region,
                                                        window=screen.window),
                          display=display, settle=SettleOptions.from_config(screen))
        live.capture()
        if dry_run:
            return cls(live, RecordingExecutor())
        kind = backend or executor.backend
        return cls(live, make_executor(kind, lambda: live.mapping, display=display, failsafe=executor.failsafe))

    @classmethod
    def image(cls, image: Image.Image) -> Device:
        """A screenshot standing in for the screen; input is recorded (``executor.calls``), not sent."""
        return cls(ImageScreen(image), RecordingExecutor())

    def close(self) -> None:
        self.screen.close()
