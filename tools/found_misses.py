"""What the observer's boxes miss on labelled screens, and how: per labelled type and app, how near
the nearest box comes (IoU bands) and whether one holds the element's middle. A miss whose middle a
box holds is an element boxed another way (a click still lands on it); one no box comes near is
unseen.

    .venv/bin/python tools/found_misses.py data/desktop-val14 --detector models/detector/caap-yolov8n-any.pt \
        --out results/observer/found-misses.json

The observer runs as ``caap eval reader`` runs it, up to its read stage (the detector, the fitting
and the proposals; the reader is loaded for the proposals that need it, PP-OCR is not), and its
boxes are matched to the labels at IoU 0.5.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image

from caap.data.format import open_dataset
from caap.geometry import contains, iou
from caap.observe.detect.detector import Detector
from caap.observe.pipeline import Parts, Pipeline
from caap.observe.read.inference import Reader
from caap.observe.text_choice import screens_of
from caap.train.eval_detector import match_boxes

BANDS = ((0.3, "IoU 0.3-0.5"), (1e-9, "IoU above 0 and below 0.3"), (0.0, "no overlap"))


def _band(overlap: float) -> str:
    return next(name for low, name in BANDS if overlap >= low)


def misses(data: Path, detector: Path, checkpoint: Path) -> dict[str, Any]:
    parts = Parts(detector=Detector(detector), reader=Reader(checkpoint), ocr=None)
    pipeline = Pipeline()
    ds = open_dataset(data)
    labelled = 0
    by_type: Counter[str] = Counter()
    by_app: Counter[str] = Counter()
    by_band: Counter[str] = Counter()
    middle_held = 0
    for path in ds.label_paths():
        ann = ds.load(path)
        if not ann.elements:
            continue
        parts.screens = screens_of(ann.source.kind)
        with Image.open(ds.image_path(ann)) as im:
            image = im.convert("RGB")
        found = pipeline.run(pipeline.look(image, parts), stop="read")
        matched = {j for j in match_boxes([(e.score or 0.0, e.bbox) for e in found],
                                          [e.bbox for e in ann.elements], 0.5) if j >= 0}
        labelled += len(ann.elements)
        for j, gold in enumerate(ann.elements):
            if j in matched:
                continue
            by_type[gold.type.value] += 1
            by_app[ann.source.task or "?"] += 1
            by_band[_band(max((iou(gold.bbox, e.bbox) for e in found), default=0.0))] += 1
            middle_held += any(contains(e.bbox, *gold.centre) for e in found)
    missed = sum(by_type.values())
    return {"dataset": str(data), "detector": str(detector), "labelled": labelled, "missed": missed,
            "found": round(1 - missed / labelled, 4) if labelled else None,
            "missed_by_type": dict(by_type.most_common()), "missed_by_app": dict(by_app.most_common()),
            "missed_by_nearest_box": dict(by_band.most_common()), "missed_with_middle_in_a_box": middle_held}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--detector", type=Path, required=True)
    ap.add_argument("--checkpoint", type=Path, default=Path("models/reader"))
    ap.add_argument("--out", type=Path, help="also write the counts here (JSON)")
    args = ap.parse_args(argv)
    result = misses(args.data, args.detector, args.checkpoint)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
