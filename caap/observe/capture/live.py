"""Live screen capture with mss: a monitor, an explicit rectangle, or a window found by its title.

One mss instance is created per screen and reused for every frame; frames are returned to the
caller and never kept here beyond the one needed to detect that the screen has settled.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Literal

from PIL import Image

from caap.config import ScreenConfig
from caap.geometry import ScreenMapping
from caap.observe.capture.screen import Screen, ScreenError


@dataclass(frozen=True)
class CaptureTarget:
    """What to capture. ``monitor`` counts from 1 as mss does (0 is all monitors together)."""

    kind: Literal["monitor", "region", "window"] = "monitor"
    monitor: int = 1
    region: tuple[int, int, int, int] | None = None  # left, top, width, height in OS units
    window: str | None = None  # a regular expression matched against window titles

    @classmethod
    def parse(
        cls, *, monitor: int | None = None, region: str | None = None, window: str | None = None
    ) -> CaptureTarget:
        given = [x is not None for x in (monitor, region, window)]
        if sum(given) > 1:
            raise ScreenError("choose one capture target: a monitor, a region or a window")
        if region is not None:
            parts = re.split(r"[,\sx]+", region.strip())
            try:
                left, top, width, height = (int(p) for p in parts)
            except ValueError:
                raise ScreenError(f"region must be LEFT,TOP,WIDTH,HEIGHT in pixels, got {region!r}") from None
            if width <= 0 or height <= 0:
                raise ScreenError(f"region {region!r} has no area")
            return cls(kind="region", region=(left, top, width, height))
        if window is not None:
            return cls(kind="window", window=window)
        return cls(kind="monitor", monitor=1 if monitor is None else monitor)


_SCREEN = ScreenConfig.model_fields  # the config section is the one place defaults live


@dataclass(frozen=True)
class SettleOptions:
    """After an action, capture every ``poll_s`` until the screen has not changed for ``interval_s``
    since it last changed; a screen that has not changed at all ``min_wait_s + interval_s`` after
    the action is taken as unchanged; give up at ``timeout_s``."""

    min_wait_s: float = _SCREEN["settle_min_s"].default  # how long an app may take to start reacting
    interval_s: float = _SCREEN["settle_interval_s"].default
    timeout_s: float = _SCREEN["settle_timeout_s"].default
    poll_s: float = _SCREEN["settle_poll_s"].default

    @classmethod
    def from_config(cls, screen: ScreenConfig) -> SettleOptions:
        return cls(screen.settle_min_s, screen.settle_interval_s, screen.settle_timeout_s, screen.settle_poll_s)


def find_window(title_pattern: str, display: str | None = None) -> tuple[int, int, int, int]:
    """(left, top, width, height) of the first visible window whose title matches, via xdotool."""
    if not sys.platform.startswith("linux"):
        raise ScreenError("capturing a window by title works on Linux (X11, through xdotool); elsewhere give a region")
    if shutil.which("xdotool") is None:
        raise ScreenError("capturing a window by its title needs xdotool: install the Debian package xdotool")
    env = dict(os.environ, **({"DISPLAY": display} if display else {}))
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title_pattern],
                           capture_output=True, text=True, env=env, timeout=10)
    ids = found.stdout.split()
    if not ids:
        raise ScreenError(f"no visible window has a title matching {title_pattern!r}")
    geo = subprocess.run(["xdotool", "getwindowgeometry", "--shell", ids[0]],
                         capture_output=True, text=True, env=env, timeout=10)
    values = dict(line.split("=", 1) for line in geo.stdout.split() if "=" in line)
    try:
        return int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"])
    except (KeyError, ValueError):
        raise ScreenError(f"could not read the geometry of window {ids[0]}: {geo.stderr.strip()}") from None


class LiveScreen(Screen):
    """The real screen (or part of it), captured with mss."""

    def __init__(self, target: CaptureTarget | None = None, *, display: str | None = None,
                 settle: SettleOptions | None = None) -> None:
        self.target = target or CaptureTarget()
        self.display = display
        self.settle_options = settle or SettleOptions()
        self.mapping = ScreenMapping(0, 0, 1.0)
        self.last_settle: dict[str, Any] = {}
        self.last_capture_ms: float | None = None  # the latest single grab (settling takes several)
        self._sct: Any = None

    def _mss(self) -> Any:
        if self._sct is None:
            if sys.platform.startswith("linux") and not (self.display or os.environ.get("DISPLAY")):
                raise ScreenError("no display: $DISPLAY is not set (start an X server, or run under Xvfb)")
            try:
                import mss
            except ImportError:
                raise ScreenError("screen capture needs mss: pip install 'caap[screen]'") from None
            try:
                factory = getattr(mss, "MSS", None) or mss.mss  # mss >= 10 renamed the entry point
                self._sct = factory(display=self.display) if self.display else factory()
            except Exception as exc:  # mss raises its own ScreenShotError and ctypes errors
                where = self.display or os.environ.get("DISPLAY", "the default display")
                raise ScreenError(f"cannot open display {where} for capture: {exc}") from None
        return self._sct

    def bounds(self) -> tuple[int, int, int, int]:
        """The captured area as (left, top, width, height) in OS units."""
        t = self.target
        if t.kind == "region":
            assert t.region is not None
            return t.region
        if t.kind == "window":
            assert t.window is not None
            return find_window(t.window, self.display)
        monitors = self._mss().monitors
        if not 0 <= t.monitor < len(monitors):
            raise ScreenError(f"monitor {t.monitor} does not exist (this screen has {len(monitors) - 1})")
        m = monitors[t.monitor]
        return m["left"], m["top"], m["width"], m["height"]

    def capture(self) -> Image.Image:
        start = time.perf_counter()
        left, top, width, height = self.bounds()
        try:
            shot = self._mss().grab({"left": left, "top": top, "width": width, "height": height})
        except ScreenError:
            raise
        except Exception as exc:
            raise ScreenError(f"screen capture of {width}x{height}+{left}+{top} failed: {exc}") from None
        image = Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")
        # HiDPI: the grab has more pixels than the area has OS units.
        self.mapping = ScreenMapping(left, top, image.width / width)
        self.last_capture_ms = round((time.perf_counter() - start) * 1000, 2)
        return image

    def settle(self, previous: Image.Image) -> Image.Image:
        """The screen once it has stopped changing after an action (``SettleOptions``). Most apps
        redraw within a few milliseconds of the input (MiniWoB++ in Chromium and the desktop
        benchmark's GTK, Qt and Tk windows: a median 6-9 ms), so the wait is counted from the last
        change seen, not from the action. ``previous``: the frame before the action."""
        o = self.settle_options
        start = time.perf_counter()
        last, changed_at, frames = previous.tobytes(), None, 0
        while True:
            # No faster than the grabs themselves take: polling must leave the app the CPU to draw.
            time.sleep(max(o.poll_s, (self.last_capture_ms or 0.0) / 1000))
            frame = self.capture()
            frames += 1
            now = time.perf_counter() - start
            pixels = frame.tobytes()
            if pixels != last:
                last, changed_at = pixels, now
            quiet = now - changed_at >= o.interval_s if changed_at is not None else now >= o.min_wait_s + o.interval_s
            if quiet or now >= o.timeout_s:
                self.last_settle = {"frames": frames, "ms": round(now * 1000, 1), "timed_out": not quiet,
                                    "changed": changed_at is not None}
                return frame

    def close(self) -> None:
        if self._sct is not None:
            self._sct.close()
            self._sct = None
