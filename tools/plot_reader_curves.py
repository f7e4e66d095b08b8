"""Plot the learning curves of reader training runs side by side (for the model card's A/B).

    .venv/bin/python tools/plot_reader_curves.py runs/ab/p16-rec runs/ab/p32-rec --out models/reader/ab-curves.png

Reads each run's ``metrics.jsonl`` (one line per evaluation) and draws validation text exact match
and record exact match against wall-clock minutes and against training samples, plus a Markdown
table of the last evaluation of every run on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load(run: Path) -> list[dict]:
    path = run / "metrics.jsonl"
    if not path.is_file():
        sys.exit(f"{path}: not found (is {run} a reader run directory?)")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="PNG to write")
    parser.add_argument("--title", default="Reader A/B (equal wall-clock)")
    args = parser.parse_args()

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves = {run.name: load(run) for run in args.runs}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for name, rows in curves.items():
        minutes = [r["minutes"] for r in rows]
        axes[0].plot(minutes, [r["text_exact"] for r in rows], marker="o", label=name)
        axes[1].plot([r["samples"] / 1000 for r in rows], [r["text_exact"] for r in rows], marker="o", label=name)
        axes[2].plot(minutes, [r["record_exact"] for r in rows], marker="o", label=name)
    for ax, (xlabel, ylabel) in zip(axes, (("minutes", "val text exact match"),
                                           ("training samples (thousands)", "val text exact match"),
                                           ("minutes", "val record exact match (type + states + text)")),
                                    strict=True):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(args.title)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print("| run | minutes | samples | samples/s | text exact | CTC text exact | record exact | type |")
    print("|---|---|---|---|---|---|---|---|")
    for name, rows in curves.items():
        r = rows[-1]
        print(f"| {name} | {r['minutes']:.1f} | {r['samples']} | {r['samples_per_s']:.1f} | {r['text_exact']:.4f} | "
              f"{r.get('ctc_text_exact', float('nan')):.4f} | {r['record_exact']:.4f} | {r['type_accuracy']:.4f} |")


if __name__ == "__main__":
    main()
