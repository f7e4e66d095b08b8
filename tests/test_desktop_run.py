"""caap run on a real desktop application from pixels alone: a Tk form under Xvfb, the shipped
vision models for eyes, the scripted planner over HTTP for the LLM, xdotool for hands. The app's
own state (written by its Save button) says whether the task was done."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORM = REPO / "tests" / "apps" / "tk_form.py"
# The detector trained on MiniWoB, generated UIs and desktop apps (models/detector/MODEL_CARD.md);
# the MiniWoB one misses Tk's entries.
DETECTOR = REPO / "models" / "detector" / "caap-yolov8n-any.pt"
TASK = 'Fill in the form: Name "Ada Lovelace", City "London"; tick "Subscribe"; then press "Save".'


def _window_shown(display: str, title: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], capture_output=True,
                               text=True, env={**os.environ, "DISPLAY": display})
        if found.stdout.strip():
            return True
        time.sleep(0.1)
    return False


def test_caap_run_fills_a_tk_form_from_pixels(tmp_path: Path) -> None:
    pytest.importorskip("transformers", reason="needs the vision extra")
    pytest.importorskip("tkinter", reason="needs python3-tk")
    from caap.bench.display import VirtualDisplay
    from caap.testing.planner.server import serve

    for tool in ("Xvfb", "xdotool"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            pytest.skip(f"needs {tool} (bash tools/setup.sh --system)")
    state = tmp_path / "state.json"
    planner = serve()
    try:
        with VirtualDisplay(640, 360) as display:
            env = {**os.environ, "DISPLAY": display.name}
            app = subprocess.Popen([sys.executable, str(FORM), str(state), "--geometry", "480x260+0+0"], env=env)
            try:
                assert _window_shown(display.name, "caap test form"), "the Tk form never showed"
                time.sleep(0.5)
                run = subprocess.run(
                    [sys.executable, "-m", "caap.cli", "run", TASK, "--base-url", planner.base_url, "--model",
                     "scripted", "--max-steps", "6", "--backend", "xdotool", "--no-confirm", "--detector",
                     str(DETECTOR), "--trace-dir", str(tmp_path / "traces"), "--json"],
                    env=env, capture_output=True, text=True, timeout=240, cwd=REPO)
                assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
                deadline = time.monotonic() + 5
                while not state.exists() and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert state.exists(), "Save was never pressed: " + run.stdout[-3000:]
                assert json.loads(state.read_text()) == {"name": "Ada Lovelace", "city": "London",
                                                         "subscribe": True, "saved": True}
                result = json.loads(run.stdout)
                assert result["status"] == "done"
            finally:
                app.kill()
                app.wait(timeout=10)
    finally:
        planner.stop()
