"""A partial look against a whole one on labelled screen pairs: speed and what each reads.

An episode's consecutive screens (``<app>-<seed>-<step>.png`` in a dataset, of one size) are a
screen the agent looked at and the next one. For each pair the observer looks at the first screen,
then at the second twice, each time after looking at the first anew: once whole (``partial_look``
0: the observer before partial looks, its crop memos warm from the first screen) and once only where
it changed. Both looks at every second screen go to a dump in ``tools/observer_dump.py``'s format,
so the two are scored against the labels with its ``compare``:

    .venv/bin/python tools/partial_look_ab.py data/desktop-val --out runs/partial-desktop
    .venv/bin/python tools/observer_dump.py compare runs/partial-desktop/whole.jsonl \\
        runs/partial-desktop/partial.jsonl --out results/observer/partial-desktop-val.json

``timings.json`` holds each pair's milliseconds (whole, partial, a first look at the second screen
with nothing remembered) and the share of the screen the partial look looked at again.

``--over SCREEN --dialog PANEL`` times unlabelled pairs instead: SCREEN, then SCREEN with PANEL (a
window, a part of another screen) pasted at its centre, as when a dialog opens over it, then SCREEN
again as when it closes (``--rounds`` alternating rounds, medians):

    .venv/bin/python tools/partial_look_ab.py --over results/any-application/screens/desktop-1080p.png \
        --dialog results/any-application/screens/web-form-1080p.png --out runs/partial-1080p
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image


def pairs(data: Path, detector: Path | None) -> list[tuple[Any, Any]]:
    """Consecutive labelled screens of one episode and one size, in order."""
    from caap.data.format import open_dataset

    ds = open_dataset(data)
    episodes: dict[str, list[tuple[int, Any]]] = defaultdict(list)
    for path in ds.label_paths():
        ann = ds.load(path)
        image = ds.image_path(ann)
        m = re.match(r"(.*)-(\d+)$", image.stem)
        if m and ann.elements:
            episodes[m.group(1)].append((int(m.group(2)), (ann, image)))
    out = []
    for steps in episodes.values():
        steps.sort(key=lambda s: s[0])
        for (_, a), (_, b) in itertools.pairwise(steps):
            with Image.open(a[1]) as ia, Image.open(b[1]) as ib:
                if ia.size == ib.size:
                    out.append((a, b))
    return out


def over(screen_path: Path, dialog_path: Path, out: Path, rounds: int) -> None:
    """A dialog opening over a screen and closing again, looked at whole and in part."""
    import torch

    from caap.config import ObserveConfig
    from caap.observe.vision import VisionObserver

    torch.set_num_threads(2)
    screen = Image.open(screen_path).convert("RGB")
    panel = Image.open(dialog_path).convert("RGB")
    w, h = min(640, panel.width), min(400, panel.height)
    left, top = (panel.width - w) // 2, (panel.height - h) // 2
    dialog = screen.copy()
    dialog.paste(panel.crop((left, top, left + w, top + h)), ((screen.width - w) // 2, (screen.height - h) // 2))
    observer = VisionObserver.from_config(ObserveConfig(screen_memo=0))
    observer.observe(screen)  # lazily built sessions ready
    times: dict[str, list[float]] = defaultdict(list)
    looks: dict[str, str] = {}
    for _ in range(rounds):
        for kind, share in (("whole", 0.0), ("partial", ObserveConfig().partial_look)):
            observer.forget()
            observer.partial_look = share
            observer.observe(screen)
            for event, image in (("opens", dialog), ("closes", screen)):
                t0 = time.perf_counter()
                seen = observer.observe(image)
                times[f"{event} {kind}"].append((time.perf_counter() - t0) * 1000)
                looks[f"{event} {kind}"] = f"{seen.look} {observer.looked_at:.2f}"
        observer.forget()
        t0 = time.perf_counter()
        observer.observe(dialog)
        times["first look"].append((time.perf_counter() - t0) * 1000)
    summary = {k: {"ms": round(statistics.median(v), 1), "look": looks.get(k)} for k, v in times.items()}
    out.mkdir(parents=True, exist_ok=True)
    (out / "timings.json").write_text(json.dumps({"screen": str(screen_path), "dialog": str(dialog_path),
                                                  "dialog_size": [w, h], "rounds": rounds, "summary": summary,
                                                  "runs": times}, indent=1) + "\n")
    for k, v in summary.items():
        print(f"{k:<16} {v['ms']:>8} ms  {v['look'] or ''}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="?", help="a labelled dataset (its episodes' consecutive screens)")
    parser.add_argument("--out", type=Path, required=True, help="folder for whole.jsonl, partial.jsonl, timings.json")
    parser.add_argument("--detector", type=Path, default=None, help="detector weights (default: the shipped one)")
    parser.add_argument("--limit", type=int, default=0, help="pairs at most (0: all)")
    parser.add_argument("--over", type=Path, help="a screen to open a dialog over (instead of a dataset)")
    parser.add_argument("--dialog", type=Path, help="with --over: the image whose centre (at most 640×400) "
                                                   "is the dialog")
    parser.add_argument("--rounds", type=int, default=3, help="with --over: alternating rounds")
    args = parser.parse_args()
    if args.over is not None:
        if args.dialog is None or not args.over.is_file() or not args.dialog.is_file():
            raise SystemExit("--over needs a screen and --dialog an image, both existing files")
        over(args.over, args.dialog, args.out, args.rounds)
        return
    if args.data is None or not args.data.is_dir():
        raise SystemExit(f"{args.data}: no such dataset")

    import torch
    from observer_dump import screen_record  # tools/ is the script's own folder, first on sys.path

    from caap.config import ObserveConfig
    from caap.observe.observation import task_names
    from caap.observe.text_choice import screens_of
    from caap.observe.vision import VisionObserver

    torch.set_num_threads(2)
    observer = VisionObserver.from_config(ObserveConfig(detector=args.detector, screen_memo=0))
    todo = pairs(args.data, args.detector)
    if args.limit:
        todo = todo[:args.limit]
    args.out.mkdir(parents=True, exist_ok=True)
    dumps = {kind: (args.out / f"{kind}.jsonl").open("w", encoding="utf-8") for kind in ("whole", "partial")}
    rows = []
    for (_, path_a), (ann_b, path_b) in todo:
        observer.parts.screens = screens_of(ann_b.source.kind)
        names = task_names(ann_b.source.utterance or "")
        first, second = Image.open(path_a).convert("RGB"), Image.open(path_b).convert("RGB")
        row: dict[str, Any] = {"first": path_a.name, "second": path_b.name, "app": ann_b.source.task}
        for kind, share in (("whole", 0.0), ("partial", ObserveConfig().partial_look)):
            observer.forget()
            observer.partial_look = share
            observer.observe(first, names=names)
            t0 = time.perf_counter()
            seen = observer.observe(second, names=names)
            row[kind] = round((time.perf_counter() - t0) * 1000, 1)
            row[f"{kind}_look"] = seen.look
            if kind == "partial":
                row["share"] = round(observer.looked_at, 4)
            dumps[kind].write(screen_record(path_b, ann_b.source.task, seen.elements, ann_b.elements) + "\n")
        observer.forget()
        t0 = time.perf_counter()
        observer.observe(second, names=names)
        row["first_look"] = round((time.perf_counter() - t0) * 1000, 1)
        a, b = np.asarray(first), np.asarray(second)
        row["changed_pixels"] = round(float((a != b).any(axis=2).mean()), 4)
        rows.append(row)
        print(f"{row['second']:<48} whole {row['whole']:>7} ms  partial {row['partial']:>7} ms ({row['partial_look']}, "
              f"{row.get('share', 0):.2f} of the screen)"
              f"  first look {row['first_look']:>7} ms", flush=True)
    for f in dumps.values():
        f.close()
    summary = {k: round(statistics.median(r[k] for r in rows), 1) for k in ("whole", "partial", "first_look")} \
        if rows else {}
    summary["pairs"] = len(rows)
    summary["looked_at_part"] = sum(r["partial_look"] == "part" for r in rows)
    (args.out / "timings.json").write_text(json.dumps({"summary": summary, "pairs": rows}, indent=1) + "\n")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
