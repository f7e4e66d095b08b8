"""Step overhead beside the LLM, from a benchmark run's traces: median and p90 per step and per action.

A step's overhead is everything it spent besides waiting for the model: capture, detection, reading,
prompt building, the OS input and the settle after each action. With several actions per answer a
step holds several act + settle pairs, so the per-action figure is printed too.

    .venv/bin/python tools/step_overhead.py runs/bench/vision67-v5 [runs/bench/oracle67-v5 ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def overheads(run: Path) -> tuple[list[float], list[float]]:
    per_step, per_action = [], []
    for steps in sorted(run.glob("traces/*/seed-*/steps.jsonl")):
        for line in steps.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            t = record.get("timings_ms") or {}
            acted = [a for a in record.get("actions", []) if "act_ms" in a]
            if not t or not acted:
                continue
            # observe holds capture, detection, reading and PP-OCR; older traces have only the parts
            seen = t["observe"] if "observe" in t else sum(t.get(k, 0.0) for k in ("capture", "detect", "read"))
            besides = seen + sum(t.get(k, 0.0) for k in ("prompt", "act", "settle"))
            per_step.append(besides)
            per_action.append(besides / len(acted))
    return per_step, per_action


def _p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    for run in parser.parse_args().runs:
        steps, actions = overheads(run)
        if not steps:
            print(f"{run}: no steps with timings")
            continue
        print(f"{run}: {len(steps)} steps; overhead beside the LLM per step median {statistics.median(steps):.0f} ms, "
              f"p90 {_p(steps, 0.9):.0f} ms; per action median {statistics.median(actions):.0f} ms, "
              f"p90 {_p(actions, 0.9):.0f} ms")


if __name__ == "__main__":
    main()
