"""Calibration: prove that a pixel seen in a capture is where a click lands.

A window with small magenta markers is opened; the screen is captured, the markers are found in
the captured image, and each is clicked through the executor using the same image → OS mapping the
agent uses. The window records where each click really arrived (in root-window coordinates) and
the distance to the marker's true centre is the error.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from caap.act.executor import Executor
from caap.observe.capture.live import LiveScreen

MARKER_RGB = (255, 0, 255)


class CalibrationError(RuntimeError):
    pass


@dataclass
class CalibrationResult:
    points: list[dict[str, Any]] = field(default_factory=list)

    @property
    def max_error(self) -> float:
        return max((p["error_px"] for p in self.points), default=math.inf)

    @property
    def mean_error(self) -> float:
        return sum(p["error_px"] for p in self.points) / len(self.points) if self.points else math.inf


def find_markers(image: Image.Image, colour: tuple[int, int, int] = MARKER_RGB) -> list[tuple[float, float]]:
    """Centres of the blobs of exactly ``colour`` in the image, top to bottom, left to right."""
    arr = np.asarray(image.convert("RGB"))
    mask = np.all(arr == np.array(colour, dtype=arr.dtype), axis=2)
    seen = np.zeros_like(mask)
    centres: list[tuple[float, float]] = []
    for y, x in zip(*np.nonzero(mask), strict=True):
        if seen[y, x]:
            continue
        stack, xs, ys = [(y, x)], [], []
        seen[y, x] = True
        while stack:
            cy, cx = stack.pop()
            xs.append(cx)
            ys.append(cy)
            for ny, nx in ((cy + 1, cx), (cy - 1, cx), (cy, cx + 1), (cy, cx - 1)):
                if 0 <= ny < mask.shape[0] and 0 <= nx < mask.shape[1] and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        centres.append((float(np.mean(xs)), float(np.mean(ys))))
    return sorted(centres, key=lambda c: (round(c[1]), c[0]))


def calibrate(screen: LiveScreen, executor: Executor, *, display: str | None = None, grid: int = 3,
              window_pos: tuple[int, int] = (120, 90), window_size: tuple[int, int] = (420, 300),
              timeout_s: float = 3.0, scale: float = 1.0) -> CalibrationResult:
    """Open the marker window on ``display``, click every marker, return the per-marker errors.

    ``scale``: draw the window as an application at that device scale factor would (HiDPI: 1.25-2;
    window, spacing and markers all grown by it), so the check covers the screens ``ui_scale`` is for.
    """
    if not 0.5 <= scale <= 4.0:
        raise CalibrationError(f"scale {scale}: must lie in 0.5-4")
    try:
        import tkinter
    except ImportError:
        raise CalibrationError("calibration needs tkinter (Debian: python3-tk)") from None
    try:
        root = tkinter.Tk(screenName=display) if display else tkinter.Tk()
    except tkinter.TclError as exc:
        raise CalibrationError(f"cannot open the calibration window: {exc}") from None
    clicks: list[tuple[int, int]] = []
    try:
        root.title("caap calibrate")
        root.overrideredirect(True)  # no window-manager frame: the canvas is the whole window
        w, h = round(window_size[0] * scale), round(window_size[1] * scale)
        half = max(2, round(2.5 * scale))  # a 5 px marker at factor 1
        margin = round(20 * scale)
        root.geometry(f"{w}x{h}+{window_pos[0]}+{window_pos[1]}")
        canvas = tkinter.Canvas(root, width=w, height=h, background="white", highlightthickness=0)
        canvas.pack()
        marks = []
        for row in range(grid):
            for col in range(grid):
                mx = round(margin + col * (w - 2 * margin) / max(1, grid - 1))
                my = round(margin + row * (h - 2 * margin) / max(1, grid - 1))
                canvas.create_rectangle(mx - half, my - half, mx + half + 1, my + half + 1, fill="#ff00ff",
                                        outline="")
                marks.append((mx, my))
        canvas.bind("<ButtonPress-1>", lambda e: clicks.append((e.x_root, e.y_root)))
        root.lift()
        root.attributes("-topmost", True)
        root.update()
        deadline = time.monotonic() + timeout_s
        while not root.winfo_viewable() and time.monotonic() < deadline:
            root.update()
            time.sleep(0.02)
        time.sleep(0.2)
        root.update()
        origin = (root.winfo_rootx() + canvas.winfo_x(), root.winfo_rooty() + canvas.winfo_y())

        image = screen.capture()
        found = find_markers(image)
        if len(found) != len(marks):
            raise CalibrationError(
                f"found {len(found)} of {len(marks)} markers on the captured screen: is the calibration "
                "window covered, or is another display being captured?"
            )
        result = CalibrationResult()
        for (mx, my), (ix, iy) in zip(marks, found, strict=True):
            before = len(clicks)
            executor.click(round(ix), round(iy))
            end = time.monotonic() + timeout_s
            while len(clicks) == before and time.monotonic() < end:
                root.update()
                time.sleep(0.01)
            if len(clicks) == before:
                raise CalibrationError(f"the click aimed at the marker at image ({ix:.0f}, {iy:.0f}) never arrived")
            true_x, true_y = origin[0] + mx, origin[1] + my
            got_x, got_y = clicks[-1]
            result.points.append({
                "image": [round(ix, 1), round(iy, 1)], "expected_os": [true_x, true_y], "landed_os": [got_x, got_y],
                "error_px": round(math.hypot(got_x - true_x, got_y - true_y), 3),
            })
        return result
    finally:
        root.destroy()
