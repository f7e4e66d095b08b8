"""Replay recorded MiniWoB++ demonstrations with `caap replay` on the task they were recorded on.

For each ``DIR/TASK/seed-N.json``: the task page at seed N on its own Xvfb, `caap replay` on the
task's region (vision observer, xdotool input, no LLM), then the page's reward. Prints one line
per demonstration and the share that earned a reward.

    .venv/bin/python tools/replay_demos.py demos/miniwob [--tasks click-test,enter-text]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from caap.bench.miniwob import MiniWoBEnv


def _secret(path: Path) -> list[str]:
    """``--secret`` for a demonstration whose typed password the recorder masked: the person
    replaying knows it, and a MiniWoB++ task states it (``... the password "Ieh" ...``)."""
    demo = json.loads(path.read_text(encoding="utf-8"))
    if not any(step.get("masked") for step in demo.get("steps", [])):
        return []
    found = re.search(r'password "([^"]*)"', demo.get("task", ""), re.IGNORECASE)
    return ["--secret", found.group(1)] if found else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--tasks", default=None, help="comma-separated subset")
    args = parser.parse_args()
    wanted = set(args.tasks.split(",")) if args.tasks else None
    files = [f for f in sorted(args.root.glob("*/seed-*.json")) if wanted is None or f.parent.name in wanted]
    if not files:
        parser.error(f"no DIR/TASK/seed-N.json under {args.root}")
    ok = 0
    rows = []
    with MiniWoBEnv() as env:
        for path in files:
            task, seed = path.parent.name, int(re.search(r"seed-(\d+)", path.name).group(1))
            env.open(task)
            env.reset(seed)
            r = env.region
            t0 = time.monotonic()
            proc = subprocess.run(
                [sys.executable, "-c", "from caap.cli import main; main()", "replay", str(path), "--region",
                 f"{r.left},{r.top},{r.width},{r.height}", "--backend", "xdotool", "--no-confirm", "--json",
                 *_secret(path)],
                env={**os.environ, "DISPLAY": env.display}, capture_output=True, text=True, timeout=300)
            time.sleep(0.3)
            reward = env.reward() if env.done() else 0.0
            ok += reward > 0
            why = ""
            if proc.returncode:
                try:
                    why = json.loads(proc.stdout.strip().splitlines()[-1]).get("reason", "")
                except (ValueError, IndexError, AttributeError):
                    why = (proc.stderr.strip().splitlines() or [""])[-1]
            rows.append((task, seed, proc.returncode, reward, time.monotonic() - t0, why))
            print(f"{task} seed {seed}: exit {proc.returncode}, reward {reward:.2f} "
                  f"({time.monotonic() - t0:.1f}s){' — ' + why if why else ''}", flush=True)
    print(f"replayed with a reward: {ok}/{len(files)} ({ok / len(files):.2f})")


if __name__ == "__main__":
    main()
