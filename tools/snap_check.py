"""How well the detector's one-line text boxes, snapped to their words, fit the labelled boxes.

For every labelled text-like element (``caap.observe.steps.snap.SNAPPED_TYPES``) of a dataset split,
the detector's box matched to it (IoU >= 0.5, as ``caap eval reader`` matches) is compared with
the label, unsnapped and snapped, by the ink it holds: the inked pixel columns of the label's rows
that lie inside the box must be exactly those inside the labelled box — the reader then sees the
element's glyphs, all of them and no others (blank margins, and a column at the label's
side, do not count).
The detector runs once per screen and its raw boxes are cached (``--cache``), so snapping rules can
be compared in seconds.

    python tools/snap_check.py --data data/miniwob-train --split 2800-2999
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

import numpy as np
from PIL import Image

from caap.data.format import open_dataset
from caap.elements import Element
from caap.observe.primitives import background_colour
from caap.observe.steps.snap import INK_DIFFERENCE, SNAPPED_TYPES, snap_text_boxes
from caap.train.eval_detector import detector_observer, match_boxes


def same_ink(pixels: np.ndarray, box: tuple[int, ...], gold: tuple[int, ...]) -> bool:
    """Do ``box`` and ``gold`` hold the same inked columns of ``gold``'s rows?"""
    band = pixels[gold[1]:gold[3]]
    diff = np.abs(band.astype(np.int32) - background_colour(band).astype(np.int32)).sum(axis=2)
    inked = np.flatnonzero((diff > INK_DIFFERENCE).any(axis=0))
    inside = lambda b: {int(x) for x in inked if b[0] <= x < b[2]}  # noqa: E731
    # A faint column right at the label's side (anti-aliasing) changes no reading.
    return all(x in (gold[0] - 1, gold[0], gold[2] - 1, gold[2]) for x in inside(box) ^ inside(gold))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--split", default="2800-2999", help="seeds lo-hi (inclusive)")
    ap.add_argument("--detector", default="models/detector/caap-yolov8n-miniwob.pt")
    ap.add_argument("--cache", default="runs/snap-check-cache.json", help="the detector's raw boxes per screen")
    ap.add_argument("--show", type=int, default=0, help="print this many snapped boxes still off")
    args = ap.parse_args()
    lo, hi = (int(v) for v in args.split.split("-"))
    ds = open_dataset(args.data)
    anns = [a for a in map(ds.load, ds.label_paths()) if a.source.seed is not None and lo <= a.source.seed <= hi]
    cache_path = Path(args.cache)
    cache = json.loads(cache_path.read_text()) if cache_path.is_file() else {}
    det = None
    counts: Counter[str] = Counter()
    shown = 0
    for ann in anns:
        path = ds.image_path(ann)
        image = Image.open(path).convert("RGB")
        if str(path) not in cache:
            # the detector's boxes without the fit stage, whose snapping this script measures
            det = det or detector_observer(args.detector, conf=0.25, device="cpu", snap=False)
            cache[str(path)] = [e.model_dump(mode="json") for e in det.observe(image).elements]
        raw = [Element.model_validate(e) for e in cache[str(path)]]
        pixels = np.asarray(image)
        snapped = snap_text_boxes(image, raw)
        gold = [e for e in ann.elements if e.type in SNAPPED_TYPES]
        gts = [tuple(e.bbox) for e in gold]
        for name, found in (("raw", raw), ("snap", snapped)):
            preds = [(e.score or 0.0, tuple(e.bbox)) for e in found if e.type in SNAPPED_TYPES]
            order = sorted(range(len(preds)), key=lambda k: -preds[k][0])
            matched = match_boxes([preds[k] for k in order], gts, 0.5)
            counts[f"{name} matched"] += sum(j >= 0 for j in matched)
            for k, j in zip(order, matched, strict=True):
                if j < 0:
                    continue
                box, g = preds[k][1], gts[j]
                fit = same_ink(pixels, box, g)
                counts[f"{name} fit"] += fit
                if name == "snap" and not fit and shown < args.show:
                    shown += 1
                    print(f"{path.name} {gold[j].type.value} gold {list(g)} {gold[j].text!r} snapped {list(box)}")
        counts["labelled"] += len(gts)
    cache_path.parent.mkdir(parents=True, exist_ok=True)
    cache_path.write_text(json.dumps(cache))
    n = counts["labelled"]
    print(f"{len(anns)} screens, {n} labelled text boxes")
    for name in ("raw", "snap"):
        m = counts[f"{name} matched"]
        print(f"{name:5s} matched {m / n:.4f}  same ink {counts[f'{name} fit'] / n:.4f} "
              f"(of matched {counts[f'{name} fit'] / max(m, 1):.4f})")


if __name__ == "__main__":
    main()
