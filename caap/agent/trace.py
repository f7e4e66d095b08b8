"""Run traces: one directory per run, written as the run goes so a crash loses at most one step.

Layout::

    runs/20261122-031500-select-eite-and-click-submit/
      run.json          task, start time, redacted config, caap version (written first)
      steps.jsonl       one JSON object per step, appended and flushed to disk after each step
      step_001.png      the screenshot each step decided on (saved before the LLM is asked)
      summary.json      the outcome, totals and stop reason (written last, atomically)

No API key is ever written: the config is recorded redacted, and any text that would be written
is scrubbed of the key as a second line of defence. The run's secrets (``caap.act.secrets``) are
written as their placeholders, and a screenshot is blacked out over the boxes the loop names (where
a secret was typed or shows).
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image

from caap.act.secrets import Secrets, blacked_out
from caap.geometry import Box


def _slug(text: str, limit: int = 40) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "run"


class TraceWriter:
    def __init__(self, root: str | Path, task: str, *, secrets: list[str] | None = None,
                 screenshots: bool = True, name: str | None = None, hidden: Secrets | None = None) -> None:
        """A new trace directory under ``root``: ``name`` if given (the benchmark's ``seed-N``), else
        a time stamp and the task; ``-2``, ``-3``... is appended rather than write into an existing one.
        ``secrets``: strings written as ``***`` (the API key); ``hidden``: the run's secrets, written
        as their placeholders."""
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        base = Path(root) / (name or f"{stamp}-{_slug(task)}")
        path, n = base, 1
        while path.exists():
            n += 1
            path = base.with_name(f"{base.name}-{n}")
        path.mkdir(parents=True)
        self.dir = path
        self.screenshots = screenshots
        self._secrets = [s for s in (secrets or []) if s and len(s) >= 4]
        self._hidden = hidden or Secrets()
        self._steps = open(self.dir / "steps.jsonl", "a", encoding="utf-8")  # noqa: SIM115 - held open

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return self._hidden.redact(text)

    def _dumps(self, obj: Any) -> str:
        return self._scrub(json.dumps(obj, ensure_ascii=False, default=str))

    def _write_atomic(self, name: str, obj: Any) -> None:
        tmp = self.dir / f".{name}.tmp"
        tmp.write_text(self._dumps(obj) + "\n", encoding="utf-8")
        os.replace(tmp, self.dir / name)

    def start(self, info: dict[str, Any]) -> None:
        self._write_atomic("run.json", {"started": time.time(), **info})

    def screenshot(self, step: int, image: Image.Image, masks: list[Box] | tuple[Box, ...] = ()) -> str | None:
        """The step's screenshot, black over ``masks`` (boxes in its pixels, grown by a pixel)."""
        if not self.screenshots:
            return None
        name = f"step_{step:03d}.png"
        blacked_out(image, masks).save(self.dir / name)
        return name

    def save_image(self, name: str, image: Image.Image) -> str:
        image.save(self.dir / name)
        return name

    def step(self, record: dict[str, Any]) -> None:
        self._steps.write(self._dumps(record) + "\n")
        self._steps.flush()
        os.fsync(self._steps.fileno())

    def finish(self, summary: dict[str, Any]) -> None:
        self._write_atomic("summary.json", {"finished": time.time(), **summary})
        self.close()

    def close(self) -> None:
        if not self._steps.closed:
            self._steps.close()


def read_steps(trace_dir: str | Path) -> list[dict[str, Any]]:
    """The step records of a trace; a last line cut off by a crash is skipped."""
    out: list[dict[str, Any]] = []
    with open(Path(trace_dir) / "steps.jsonl", encoding="utf-8") as fh:
        for line in fh:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return out
