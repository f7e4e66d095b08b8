"""Re-take ``tests/fixtures/observer-golden.jsonl``: the shipped observer's elements on every
fixture screen, as ``tests/observe/test_pipeline.py`` compares them.

    .venv/bin/python tools/retake_observer_golden.py

Only when a shipped model (or a new attribute of the element contract) changes what is read: a
refactoring of the observer must leave the file as it is. Say in the commit what moved and why.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"


def main() -> int:
    from caap.config import ObserveConfig
    from caap.observe.vision import DEFAULT_DETECTOR, VisionObserver

    os.environ.setdefault("CAAP_CACHE_DIR", tempfile.mkdtemp(prefix="caap-golden-"))
    observer = VisionObserver.from_config(ObserveConfig(detector=DEFAULT_DETECTOR))
    lines = []
    for path in sorted((FIXTURES / "screens").iterdir()):
        image = Image.open(path).convert("RGB")
        elements = [e.to_json() for e in observer.observe(image).numbered().elements]
        record = {"image": path.relative_to(FIXTURES).as_posix(), "elements": elements}
        lines.append(json.dumps(record, sort_keys=True))
        print(f"{path.name}: {len(elements)} elements")
    (FIXTURES / "observer-golden.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
