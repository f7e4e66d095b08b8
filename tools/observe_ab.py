"""The observer's speed in two checkouts, measured in one run on the same screens: to show that a
change to the observer costs no time (or what it gains).

    .venv/bin/python tools/observe_ab.py --base /work/base results/any-application/screens data/miniwob-test --limit 20

``--base`` is another checkout of caap (``git worktree add /work/base <commit>``); both run as
``caap bench observe --against`` runs them (``caap.bench.observe_speed.compare``: each checkout's
``caap bench observe --json`` in a process of its own, alternating ``--rounds`` times); this script
adds sets of screens (datasets, an even spread of ``--limit`` of each). Per screen the median over
the rounds of the first look (every element read) and of the same screen again is kept; the table
gives, per set of screens, the median of those over its screens and the ratio new / base.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from caap.bench.observe_speed import compare

HERE = Path(__file__).resolve().parents[1]
SUFFIXES = (".png", ".jpg", ".jpeg")


def screens(root: Path, limit: int) -> list[Path]:
    """The images of a dataset (``images/``) or a folder, an even spread of ``limit`` of them (0: all)."""
    folder = root / "images" if (root / "images").is_dir() else root
    found = sorted(p.resolve() for p in folder.rglob("*") if p.suffix.lower() in SUFFIXES)
    if limit and limit < len(found):
        step = len(found) / limit
        found = [found[int(i * step)] for i in range(limit)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+", type=Path, help="datasets or folders of screenshots (one set each)")
    parser.add_argument("--base", type=Path, required=True, help="the other checkout (the code before the change)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many screens per set (an even spread)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3, help="observations of each screen after the first")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, help="also write every measurement here (JSON)")
    args = parser.parse_args(argv)
    sets = {root.name: screens(root, args.limit) for root in args.data}
    images = [p for paths in sets.values() for p in paths]
    per_screen, runs = compare(HERE, args.base.resolve(), images, rounds=args.rounds, repeat=args.repeat,
                               threads=args.threads, progress=lambda line: print(line, file=sys.stderr))
    by_path = {c.screen: c for c in per_screen}
    rows = []
    for set_name, paths in sets.items():
        mine = [by_path[str(p)] for p in paths]
        row: dict[str, object] = {"set": set_name, "screens": len(paths)}
        for look in ("first", "again"):
            for name in ("base", "new"):
                row[f"{name}_{look}_ms"] = round(statistics.median(getattr(c, f"{name}_{look}") for c in mine), 1)
            row[f"{look}_ratio"] = round(float(row[f"new_{look}_ms"]) / max(float(row[f"base_{look}_ms"]), 1e-9), 3)
        rows.append(row)
    print(f"{'set':<24}{'screens':>8}{'base first':>12}{'new first':>11}{'ratio':>7}"
          f"{'base again':>12}{'new again':>11}{'ratio':>7}")
    for r in rows:
        print(f"{r['set']:<24}{r['screens']:>8}{r['base_first_ms']:>12}{r['new_first_ms']:>11}{r['first_ratio']:>7}"
              f"{r['base_again_ms']:>12}{r['new_again_ms']:>11}{r['again_ratio']:>7}")
    if args.out:
        # Per run and screen the totals and stages, not every step's timing (tens of thousands of lines).
        fields = ("elements", "first", "again")
        kept = {name: [{img: {k: rec[k] for k in fields if k in rec} for img, rec in run.items()} for run in per_run]
                for name, per_run in runs.items()}
        args.out.write_text(json.dumps({"rows": rows, "runs": kept}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
