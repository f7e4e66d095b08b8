"""``tools/observer_dump.py errors``: the state errors of an observer dump, listed for a developer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _element(kind: str, box: list[int], **states: object) -> dict[str, object]:
    return {"type": kind, "bbox": box, "text": "x", **states}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "tools" / "observer_dump.py"), "errors", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_errors_lists_each_misread_state_with_its_screen(tmp_path):
    gold = [_element("tab", [0, 0, 50, 20], highlighted=True), _element("tab", [60, 0, 110, 20], highlighted=False),
            _element("button", [0, 40, 50, 60], checked=True), _element("checkbox", [0, 80, 20, 100], checked=False)]
    found = [_element("tab", [0, 0, 50, 20], highlighted=False), _element("tab", [60, 0, 110, 20], highlighted=False),
             _element("button", [0, 40, 50, 60], checked=False), _element("checkbox", [0, 80, 20, 100], checked=True)]
    dump = tmp_path / "dump.jsonl"
    record = {"image": "/data/images/gtk4-demo/gtk4-demo-1.png", "app": "gtk4-demo", "found": found, "gold": gold,
              "match": [0, 1, 2, 3]}
    dump.write_text(json.dumps(record) + "\n" + json.dumps({**record, "image": "/x/qt5-a-1.png", "app": "qt5-a"}) + "\n")
    done = _run(str(dump), "highlighted", "--apps", "gtk4")
    assert done.returncode == 0, done.stderr
    assert "1  gtk4   missed labelled tab, observed tab" in done.stdout
    assert "gtk4-demo-1.png" in done.stdout and "qt5-a-1.png" not in done.stdout
    # A button's checked is scored as pressed, apart from the check boxes'.
    pressed, checked = _run(str(dump), "pressed").stdout, _run(str(dump), "checked").stdout
    assert "1  gtk4   missed labelled button, observed button" in pressed and "checkbox" not in pressed
    assert "extra  labelled checkbox" in checked and "button" not in checked
    missing = _run(str(tmp_path / "none.jsonl"), "focused")
    assert missing.returncode != 0 and "no such dump" in missing.stderr
