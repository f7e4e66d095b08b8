"""Measure the live-screen path on MiniWoB++: episode reset, per-action time including settle,
calibration error, for both executor backends.

    .venv/bin/python tools/bench_screen.py [--episodes 30]

Starts its own Xvfb and Chromium. The DOM is read here only to know which button to click (an
oracle standing in for the vision models); every click goes through caap's executor and capture.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time

from caap.act.actions import ScreenState, execute, plan
from caap.act.backends import make_executor
from caap.act.calibrate import calibrate
from caap.bench.display import VirtualDisplay
from caap.bench.miniwob import MiniWoBEnv
from caap.elements import Element
from caap.observe.capture.live import CaptureTarget, LiveScreen


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def target(env: MiniWoBEnv) -> Element:
    name = re.fullmatch(r'Click on the "(.+)" button\.', env.utterance()).group(1)
    x1, y1, x2, y2 = env.browser.evaluate(
        "(() => { const b = [...document.querySelectorAll('#area button')].find(b => b.textContent === "
        f"{json.dumps(name)}); const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }})()")
    return Element(id=1, type="button", bbox=[round(x1), round(y1), round(x2), round(y2)], text=name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=30)
    args = parser.parse_args()
    results: dict[str, object] = {}
    with VirtualDisplay(1024, 768) as display:
        os.environ["DISPLAY"] = display.name  # pyautogui binds to $DISPLAY on import
        t0 = time.perf_counter()
        env = MiniWoBEnv(display=display.name)
        env.open("click-button")
        results["browser_start_and_open_s"] = round(time.perf_counter() - t0, 3)
        with env:
            r = env.region
            screen = LiveScreen(CaptureTarget(kind="region", region=(r.left, r.top, r.width, r.height)))
            screen.capture()
            resets = []
            for seed in range(args.episodes):
                t = time.perf_counter()
                env.reset(seed)
                resets.append(time.perf_counter() - t)
            results["reset_ms"] = {"median": round(statistics.median(resets) * 1000, 1),
                                   "p90": round(pct(resets, 0.9) * 1000, 1)}
            capture = []
            for _ in range(50):
                t = time.perf_counter()
                screen.capture()
                capture.append(time.perf_counter() - t)
            results["capture_ms_160x210"] = round(statistics.median(capture) * 1000, 2)
            for backend in ("xdotool", "pyautogui"):
                executor = make_executor(backend, lambda: screen.mapping, failsafe=False)
                act, settle, total, wins = [], [], [], 0
                for seed in range(args.episodes):
                    env.reset(1000 + seed)
                    frame = screen.capture()
                    action = plan("click_element", {"element_id": 1}, ScreenState([target(env)], 160, 210))
                    t = time.perf_counter()
                    execute(action, executor)
                    t1 = time.perf_counter()
                    screen.settle(frame)
                    t2 = time.perf_counter()
                    act.append(t1 - t)
                    settle.append(t2 - t1)
                    total.append(t2 - t)
                    wins += env.done() and env.reward() > 0
                results[backend] = {
                    "click_act_ms_median": round(statistics.median(act) * 1000, 1),
                    "settle_ms_median": round(statistics.median(settle) * 1000, 1),
                    "action_total_ms_median": round(statistics.median(total) * 1000, 1),
                    "action_total_ms_p90": round(pct(total, 0.9) * 1000, 1),
                    "click_button_success": f"{wins}/{args.episodes}",
                }
                del executor  # pynput's controller must let go of the display before it closes
            screen.close()
        full = LiveScreen()
        full.capture()
        for backend in ("xdotool", "pyautogui"):
            cal = calibrate(full, make_executor(backend, lambda: full.mapping, failsafe=False), grid=4)
            results[backend]["calibration_max_error_px"] = cal.max_error
            results[backend]["calibration_points"] = len(cal.points)
        full.close()
        import gc

        gc.collect()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
