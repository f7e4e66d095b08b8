"""Cut detector canvases in parallel on a many-core training machine (a lent GPU's host).

``caap train detector`` cuts the canvases of all its datasets in one process, which on a GPU
machine leaves the card idle for minutes. This cuts them in parts, one process each
(``caap.data.canvas.export_canvas_parts``), and writes one ``data.yaml`` for a recipe without
``canvas`` (training/detector-any-gpu.yaml):

    python tools/gpu_canvases.py runs/canvases --size 480 --max-tiles 2 \\
        --part a=data/miniwob-train,data/miniwob-train,data/desktop-train \\
        --part b=data/synth-ui-train-tiles --val-data data/synth-ui-val-tiles
    caap train detector --data runs/canvases/data.yaml --config training/detector-any-gpu.yaml

A dataset named twice in a part is packed twice, anew. The first part takes the ``--val-data`` sets.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from caap.data.canvas import export_canvas_parts
from caap.data.export import SplitRule


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--part", action="append", required=True, help="NAME=DATASET[,DATASET...]")
    ap.add_argument("--val-data", action="append", default=[])
    ap.add_argument("--split", default="val:2800-2999")
    ap.add_argument("--size", type=int, default=480)
    ap.add_argument("--max-tiles", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    parts = {}
    for spec in a.part:
        name, _, roots = spec.partition("=")
        if not name or not roots or name in parts:
            ap.error(f"--part {spec!r}: expected NAME=DATASET[,DATASET...] with a new NAME")
        parts[name] = roots.split(",")
    t = time.time()
    got = export_canvas_parts(parts, a.out, split=SplitRule.parse(a.split), size=a.size, max_tiles=a.max_tiles,
                              seed=a.seed, val_datasets=a.val_data)
    (a.out / "parts.json").write_text(json.dumps(got, indent=2) + "\n", encoding="utf-8")
    for name, r in got["parts"].items():
        print(f"{name}: {r['canvases']} canvases from {r['screens']} screens")
    print(f"{got['data_yaml']} ({time.time() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
