"""caap run on a real desktop application from pixels alone: a Tk form under Xvfb, the shipped
vision models for eyes, the scripted planner over HTTP for the LLM, xdotool for hands. The app's
own state (written by its Save button) says whether the task was done."""

from __future__ import annotations

import json
from pathlib import Path

from tk_form_kit import run_on_tk_form

TASK = 'Fill in the form: Name "Ada Lovelace", City "London"; tick "Subscribe"; then press "Save".'


def test_caap_run_fills_a_tk_form_from_pixels(tmp_path: Path) -> None:
    run, saved, _ = run_on_tk_form(tmp_path, TASK, "--trace-dir", str(tmp_path / "traces"))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert saved is not None, "Save was never pressed: " + run.stdout[-3000:]
    assert saved == {"name": "Ada Lovelace", "city": "London", "subscribe": True, "saved": True}
    assert json.loads(run.stdout)["status"] == "done"
