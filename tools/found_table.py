"""Issue 16's table from `caap eval reader --detector ...` results: per task (or app) the share of
labelled elements the detector found (IoU >= 0.5) and the share of found texts read exactly, for
one or more result files side by side (e.g. the shipped detector beside a new one). Results of
`caap eval detector` (the detector alone) give found and found by centres, per task or app, or per
labelled type with `--by type`.

    .venv/bin/python tools/found_table.py before.json after.json [--names shipped,any]
    .venv/bin/python tools/found_table.py detector-a.json detector-b.json --by type
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--names", help="comma-separated column names (default: the file names)")
    parser.add_argument("--by", choices=("task", "type"), default="task",
                        help="rows: tasks or apps, or labelled types (detector results only)")
    args = parser.parse_args()
    names = args.names.split(",") if args.names else [p.stem for p in args.results]
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in args.results]
    if all("overall" in run for run in runs):
        detector_table(runs, names, "per_type" if args.by == "type" else "per_task")
        return
    for run, path in zip(runs, args.results, strict=True):
        if "detection" not in run:
            raise SystemExit(f"{path}: no detection results (run caap eval reader with --detector)")
    tasks = sorted({t for run in runs for t in run["per_task"]})
    head = " | ".join(f"{n} found | {n} text exact" for n in names)
    print(f"| task | labelled | {head} |")
    print("|---|---|" + "---|---|" * len(names))

    for task in tasks:
        rows = [run["per_task"].get(task, {}) for run in runs]
        labelled = next((r.get("labelled") for r in rows if r.get("labelled")), 0)
        cells = " | ".join(f"{cell(r.get('found'))} | {cell(r.get('text_default'))}" for r in rows)
        print(f"| {task} | {labelled} | {cells} |")
    total = " | ".join(
        f"**{run['detection']['matched'] / max(1, run['detection']['labelled']):.3f}** | "
        f"**{run['text']['default']['exact_match']:.3f}**" for run in runs)
    print(f"| **all** | {runs[0]['detection']['labelled']} | {total} |")


def cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def detector_table(runs: list[dict], names: list[str], key: str) -> None:
    """Found and found by centres per row of ``key`` for `caap eval detector` results."""
    head = " | ".join(f"{n} found | {n} by centres" for n in names)
    print(f"| {'type' if key == 'per_type' else 'task'} | labelled | {head} |")
    print("|---|---|" + "---|---|" * len(names))
    for row in sorted({r for run in runs for r in run[key]}):
        rows = [run[key].get(row, {}) for run in runs]
        labelled = next((r.get("labelled") for r in rows if r.get("labelled")), 0)
        cells = " | ".join(f"{cell(r.get('found_share'))} | {cell(r.get('centres_share'))}" for r in rows)
        print(f"| {row} | {labelled} | {cells} |")
    total = " | ".join(f"**{run['overall']['recall']:.3f}** | **{run['overall']['recall_by_centres']:.3f}**"
                       for run in runs)
    print(f"| **all** | {runs[0]['elements']} | {total} |")


if __name__ == "__main__":
    main()
