"""The observer's speed in two checkouts, measured in one run on the same screens: to show that a
change to the observer costs no time (or what it gains).

    .venv/bin/python tools/observe_ab.py --base /work/base results/any-application/screens data/miniwob-test --limit 20

``--base`` is another checkout of caap (``git worktree add /work/base <commit>``); both run with
this checkout's virtual environment, each as ``caap bench observe --json`` in a process of its own
(``PYTHONPATH`` pointing at the checkout), the two alternating ``--rounds`` times so that a busy
machine slows both alike. Per screen the median over the rounds of the first look (every element
read) and of the same screen again (the reading memo answering) is kept; the table gives, per set
of screens, the median of those over its screens and the ratio new / base.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

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


def bench(checkout: Path, images: list[Path], repeat: int, threads: int) -> dict[str, dict]:
    """One ``caap bench observe --json`` over ``images`` with ``checkout``'s code: per image its record."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": str(threads)}
    with tempfile.TemporaryDirectory() as tmp:  # no caap.toml of the caller's directory applies
        done = subprocess.run([sys.executable, "-m", "caap.cli", "bench", "observe", *map(str, images),
                               "--repeat", str(repeat), "--json"], capture_output=True, text=True, env=env, cwd=tmp,
                              check=False)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: caap bench observe failed:\n{done.stderr[-2000:]}")
    return {json.loads(line)["image"]: json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")}


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
    runs: dict[str, list[dict[str, dict]]] = {"base": [], "new": []}
    order = (("base", args.base), ("new", HERE))
    for n in range(args.rounds):
        for name, checkout in order if n % 2 == 0 else order[::-1]:
            runs[name].append(bench(checkout, images, args.repeat, args.threads))
            print(f"round {n + 1}/{args.rounds}: {name} done", file=sys.stderr)
    rows = []
    for set_name, paths in sets.items():
        row: dict[str, object] = {"set": set_name, "screens": len(paths)}
        for name in ("base", "new"):
            for look in ("first", "again"):
                per_screen = [statistics.median(r[str(p)][look]["total"] for r in runs[name]) for p in paths]
                row[f"{name}_{look}_ms"] = round(statistics.median(per_screen), 1)
        for look in ("first", "again"):
            row[f"{look}_ratio"] = round(float(row[f"new_{look}_ms"]) / max(float(row[f"base_{look}_ms"]), 1e-9), 3)
        rows.append(row)
    print(f"{'set':<24}{'screens':>8}{'base first':>12}{'new first':>11}{'ratio':>7}"
          f"{'base again':>12}{'new again':>11}{'ratio':>7}")
    for r in rows:
        print(f"{r['set']:<24}{r['screens']:>8}{r['base_first_ms']:>12}{r['new_first_ms']:>11}{r['first_ratio']:>7}"
              f"{r['base_again_ms']:>12}{r['new_again_ms']:>11}{r['again_ratio']:>7}")
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "runs": runs}, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
