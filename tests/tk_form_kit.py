"""``caap run`` on the Tk test form (tests/apps/tk_form.py) under its own Xvfb, with the scripted
planner over HTTP and xdotool: what the desktop end-to-end tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from live_marks import window_shown

REPO = Path(__file__).resolve().parents[1]
FORM = REPO / "tests" / "apps" / "tk_form.py"
# The detector trained on MiniWoB, generated UIs and desktop apps (models/detector/MODEL_CARD.md);
# the MiniWoB one misses Tk's entries.
DETECTOR = REPO / "models" / "detector" / "caap-yolov8n-any.pt"


def run_on_tk_form(tmp_path: Path, task: str, *extra: str, env: dict[str, str] | None = None,
                   app_args: tuple[str, ...] = (), gullible: bool = False, think_s: float = 0.0,
                   on_request: Callable[[], None] | None = None
                   ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any] | None, Any]:
    """``caap run TASK`` on a fresh form (``app_args``: the form's own flags): the finished process,
    the form's saved state (None if it saved nothing) and the planner server (its ``requests``:
    what the model was sent; ``gullible``, ``think_s``: ``caap.testing.planner.server.serve``'s;
    ``on_request``: called as each request arrives, before the model thinks)."""
    pytest.importorskip("transformers", reason="needs the vision extra")
    pytest.importorskip("tkinter", reason="needs python3-tk")
    from caap.bench.display import VirtualDisplay
    from caap.testing.llm_server import ScriptedLLMServer
    from caap.testing.planner.server import respond

    for tool in ("Xvfb", "xdotool"):
        if subprocess.run(["which", tool], capture_output=True).returncode:
            pytest.skip(f"needs {tool} (bash tools/setup.sh --system)")
    state = tmp_path / "state.json"
    def answer(body: dict[str, Any]) -> Any:
        if on_request is not None:
            on_request()
        return respond(body, gullible=gullible, think_s=think_s)

    planner = ScriptedLLMServer(responder=answer, models=("scripted",)).start()
    try:
        with VirtualDisplay(640, 360) as display:
            full = {**os.environ, "DISPLAY": display.name, **(env or {})}
            app = subprocess.Popen([sys.executable, str(FORM), str(state), "--geometry", "480x260+0+0", *app_args],
                                   env=full)
            try:
                assert window_shown(display.name, "caap test form"), "the Tk form never showed"
                time.sleep(0.5)
                run = subprocess.run(
                    [sys.executable, "-m", "caap.cli", "run", task, "--base-url", planner.base_url, "--model",
                     "scripted", "--max-steps", "6", "--backend", "xdotool", "--no-confirm", "--detector",
                     str(DETECTOR), "--json", *extra],
                    env=full, capture_output=True, text=True, timeout=240, cwd=REPO)
                deadline = time.monotonic() + 5
                while run.returncode == 0 and not state.exists() and time.monotonic() < deadline:
                    time.sleep(0.1)
            finally:
                app.kill()
                app.wait(timeout=10)
    finally:
        planner.stop()
    saved = json.loads(state.read_text()) if state.exists() else None
    if state.exists():
        state.unlink()  # not a file the run wrote
    return run, saved, planner
