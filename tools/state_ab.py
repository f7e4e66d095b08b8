"""The candidates for reading states, side by side on the same detected boxes of labelled screens.

    .venv/bin/python tools/state_ab.py data/desktop-val --detector models/detector/caap-yolov8n-any.pt
    .venv/bin/python tools/state_ab.py data/miniwob-val --detector models/detector/caap-yolov8n-miniwob.pt

Each screen is observed once with the whole observer up to its ``read_states`` step (detector,
fitting, proposals, reader, PP-OCR); the rest of the pipeline then runs four ways on that same list:

- ``reader``: the reader's record alone (the state head and the pixel rules off);
- ``reader+rules``: the record with the pixel rules (check marks, focus rings, and on desktop windows
  disclosure triangles and drawn focus);
- ``head``: the state head alone (the rules stand down where it has read; the desktop ones off);
- ``head+drawn``: the observer with every step on: the head, then on desktop windows the disclosure
  triangles, the drawn focus where the head read none, the faces of selected rows and held-down
  buttons and tool-bar icons, and the current tabs (accent bars, linked rows).

Every variant's elements are matched to the labelled ones (IoU ≥ 0.5, as ``caap eval reader``) and
each state is scored where the label knows it: accuracy (a state not read counts as false, and as
enabled and not indeterminate for those two, as the prompt reads them), the majority baseline,
recall and precision of "true", and the accuracy over the elements whose observed type carries the
state (``accuracy_where_read``), per toolkit. A labelled button's ``checked`` (held down) is scored as
``pressed``. The reader directory's state head is the one measured (``--checkpoint``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from PIL import Image

from caap.data.format import open_dataset
from caap.elements import Element
from caap.observe.detect.detector import Detector
from caap.observe.ocr.ppocr import PPOCR
from caap.observe.pipeline import Parts, Pipeline
from caap.observe.read.inference import Reader
from caap.taxonomy import BOOLEAN_ATTRIBUTES, prompt_default
from caap.train.eval_detector import match_boxes
from caap.train.eval_reader import PRESSED, scored_as, toolkit_of

SCORED = (*BOOLEAN_ATTRIBUTES, PRESSED)  # a labelled button's checked is scored apart, as caap eval reader does

RULES = ("read_control_marks", "read_focus_rings")
DRAWN = ("read_shaded_buttons", "read_disclosure_triangles", "read_drawn_focus", "read_selection_faces",
         "read_current_tabs", "read_dithered_faces", "read_pressed_faces")
# what desktop windows draw, read over the head
VARIANTS: dict[str, tuple[str, ...]] = {
    "reader": ("read_states", *RULES, *DRAWN),
    "reader+rules": ("read_states",),
    "head": DRAWN,
    "head+drawn": (),
}


class StateTally:
    """Each state's scores over matched elements, per toolkit and over all."""

    def __init__(self) -> None:
        # counts[state][toolkit] = [right, total, true, said true, both, read, right where read]
        self.counts: dict[str, dict[str, list[int]]] = {s: defaultdict(lambda: [0] * 7) for s in SCORED}

    def add(self, got: list[Element], gold: list[Element], kit: str) -> None:
        matched = match_boxes([(e.score or 0.0, e.bbox) for e in got], [e.bbox for e in gold], 0.5)
        for e, j in zip(got, matched, strict=True):
            if j < 0:
                continue
            for s in BOOLEAN_ATTRIBUTES:
                truth, said = getattr(gold[j], s), getattr(e, s)
                if truth is None:
                    continue
                # Unread: the usual value, as the prompt takes it (enabled, not indeterminate, not down).
                usual = prompt_default(e.type, s)
                said_as = usual if said is None and usual is not None else bool(said)
                for key in (kit, "all"):
                    row = self.counts[scored_as(s, gold[j].type)][key]
                    row[0] += said_as == truth
                    row[1] += 1
                    row[2] += truth
                    row[3] += said_as
                    row[4] += said_as and truth
                    row[5] += said is not None
                    row[6] += said is not None and said == truth

    def report(self) -> dict[str, dict[str, dict[str, Any]]]:
        return {s: {kit: {"elements": r[1], "accuracy": round(r[0] / r[1], 4),
                          "majority": round(max(r[2], r[1] - r[2]) / r[1], 4),
                          "recall_true": round(r[4] / r[2], 3) if r[2] else None,
                          "precision_true": round(r[4] / r[3], 3) if r[3] else None,
                          "read": r[5], "accuracy_where_read": round(r[6] / r[5], 4) if r[5] else None}
                    for kit, r in sorted(kits.items()) if r[1]}
                for s, kits in self.counts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--detector", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, default=Path("models/reader"))
    parser.add_argument("--limit", type=int, default=0, help="an even spread of this many screens (0: all)")
    parser.add_argument("--out", type=Path, help="also write the scores here (JSON)")
    args = parser.parse_args(argv)
    reader = Reader(args.checkpoint)
    if reader.state_head is None:
        print(f"{args.checkpoint}: no state head to measure", file=sys.stderr)
        return 2
    parts = Parts(detector=Detector(args.detector), reader=reader, ocr=PPOCR())
    first = Pipeline()
    rest = {name: Pipeline(disable=off) for name, off in VARIANTS.items()}
    ds = open_dataset(args.data)
    paths = ds.label_paths()
    if args.limit and args.limit < len(paths):
        paths = [paths[int(i * len(paths) / args.limit)] for i in range(args.limit)]
    tallies = {v: StateTally() for v in VARIANTS}
    for n, path in enumerate(paths):
        ann = ds.load(path)
        if not ann.elements:
            continue
        with Image.open(ds.image_path(ann)) as im:
            image = im.convert("RGB")
        look = first.look(image, parts)
        before = first.run(look, stop="read_states")
        kit = toolkit_of(ann.source.task or "")
        for variant, pipeline in rest.items():
            got = pipeline.run(look, before, start="read_states")
            tallies[variant].add(got, ann.elements, kit)
        print(f"\r{n + 1}/{len(paths)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    report = {v: t.report() for v, t in tallies.items()}
    print(f"{'state':<12}{'toolkit':<8}{'n':>6}{'majority':>10}" + "".join(f"{v:>18}" for v in VARIANTS)
          + "   (accuracy; recall/precision of true)")
    for s in SCORED:
        for kit in report["reader"][s]:
            row = report["reader"][s][kit]
            cells = []
            for v in VARIANTS:
                r = report[v][s][kit]
                cells.append(f"{r['accuracy']:>7.4f} {r['recall_true'] or 0:.2f}/{r['precision_true'] or 0:.2f}")
            print(f"{s:<12}{kit:<8}{row['elements']:>6}{row['majority']:>10.4f}" + "".join(f"{c:>18}" for c in cells))
    if args.out:
        args.out.write_text(json.dumps({"data": str(args.data), "screens": len(paths), "scores": report}, indent=2)
                            + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
