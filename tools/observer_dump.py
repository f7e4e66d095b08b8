"""The whole observer's output on every labelled screen of a dataset, kept per screen with the labels
and the match, and two such dumps compared: how a change to the observer moves found and texts, and
which texts it puts right or wrong.

    .venv/bin/python tools/observer_dump.py dump data/desktop-val18 runs/val18-after.jsonl
    .venv/bin/python tools/observer_dump.py compare runs/val18-before.jsonl runs/val18-after.jsonl \\
        --out results/observer/stop67-val-desktop-val18.json

``dump`` runs the observer as ``caap eval reader --detector`` runs it (the shipped detector and
reader, PP-OCR, the screen kind from the dataset, and the names of the screen's task as the agent's
loop gives them, unless ``--no-task``), one JSON line per screen: its image, app, the
observed elements, the labelled ones and, per observed element, the labelled one it matches (IoU ≥
0.5, ``caap eval reader``'s matching) or -1. A dump made with another checkout's observer (``git
worktree add``, then ``PYTHONPATH=<worktree>``) is the before. ``compare`` scores both dumps on the
screens they share: labelled elements found, the default text's exact match over the found ones that
have a known text, per app, the texts right in one only, and each state per toolkit as
``tools/state_ab.py`` scores its ``head+drawn`` variant (the whole observer). ``errors`` lists the
labelled elements whose state one dump reads wrong, counted by toolkit, missed or extra, label type
and observed type:

    .venv/bin/python tools/observer_dump.py errors runs/val21-after.jsonl highlighted --apps gtk4
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image


def dump(data: Path, out: Path, detector: Path, checkpoint: Path, apps: str, task: bool = True,
         text_source: str = "auto", ocr_threshold: float | None = None) -> None:
    from caap.data.format import open_dataset
    from caap.observe.detect.detector import Detector
    from caap.observe.observation import task_names
    from caap.observe.ocr.ppocr import PPOCR
    from caap.observe.pipeline import Parts, Pipeline
    from caap.observe.read.inference import Reader
    from caap.observe.text_choice import screens_of

    parts = Parts(detector=Detector(detector), reader=Reader(checkpoint),
                  ocr=PPOCR() if text_source != "reader" else None, text_source=text_source,
                  ocr_threshold=ocr_threshold)
    pipeline = Pipeline()
    ds = open_dataset(data)
    prefixes = tuple(a for a in apps.split(",") if a)
    with out.open("w", encoding="utf-8") as f:
        for path in ds.label_paths():
            ann = ds.load(path)
            if not ann.elements or (prefixes and not (ann.source.task or "").startswith(prefixes)):
                continue
            parts.screens = screens_of(ann.source.kind)
            with Image.open(ds.image_path(ann)) as im:
                image = im.convert("RGB")
            start = time.perf_counter()
            look = pipeline.look(image, parts)
            look.names = task_names(ann.source.utterance or "") if task else ()
            found = pipeline.run(look)
            ms = (time.perf_counter() - start) * 1000
            f.write(screen_record(ds.image_path(ann), ann.source.task, found, ann.elements, ms) + "\n")
            f.flush()


def screen_record(image: Path, app: str | None, found: list[Any], gold: list[Any], ms: float | None = None) -> str:
    """One screen's dump line: its image, app, the observed and labelled elements, per observed
    element the labelled one it matches (IoU ≥ 0.5, ``caap eval reader``'s matching) or -1, and
    the look's milliseconds where timed."""
    from caap.train.eval_detector import match_boxes

    match = match_boxes([(e.score or 0.0, e.bbox) for e in found], [e.bbox for e in gold], 0.5)
    return json.dumps({"image": str(image), "app": app, "found": [e.model_dump(mode="json") for e in found],
                       "gold": [e.model_dump(mode="json") for e in gold], "match": list(match),
                       **({"ms": round(ms, 1)} if ms is not None else {})}, ensure_ascii=False)


def _load(path: Path) -> dict[str, dict[str, Any]]:
    screens = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            screens[Path(record["image"]).name] = record
    return screens


def _texts(record: dict[str, Any]) -> dict[int, str]:
    """Per labelled element with a match, the text observed for it."""
    return {j: record["found"][i].get("text") or "" for i, j in enumerate(record["match"]) if j >= 0}


def _score(screens: dict[str, dict[str, Any]], names: list[str]) -> dict[str, Any]:
    labelled = found = known = right = 0
    per_app: dict[str, Counter[str]] = {}
    for name in names:
        record = screens[name]
        app = per_app.setdefault(record["app"], Counter())
        texts = _texts(record)
        labelled += len(record["gold"])
        found += len(texts)
        app["labelled"] += len(record["gold"])
        app["found"] += len(texts)
        for j, text in texts.items():
            gold = record["gold"][j].get("text")
            if gold is not None:
                known += 1
                right += text == gold
                app["known"] += 1
                app["right"] += text == gold
    return {"labelled": labelled, "found": round(found / max(labelled, 1), 4), "texts_known": known,
            "text_exact": round(right / max(known, 1), 4), "texts_right": right,
            "per_app": {a: {"found": round(c["found"] / max(c["labelled"], 1), 4),
                            "text_exact": round(c["right"] / max(c["known"], 1), 4), "texts": c["known"]}
                        for a, c in sorted(per_app.items())}}


def _states(screens: dict[str, dict[str, Any]], names: list[str]) -> dict[str, Any]:
    from state_ab import StateTally  # tools/ is the script's own folder, first on sys.path

    from caap.elements import Element
    from caap.taxonomy import ATTRIBUTES, attributes_of
    from caap.train.eval_reader import toolkit_of

    def element(fields: dict[str, Any]) -> Element:
        # Another checkout's dump may hold a state its element type no longer carries: dropped.
        allowed = attributes_of(fields["type"])
        return Element.model_validate({k: v for k, v in fields.items() if k not in ATTRIBUTES or k in allowed})

    tally = StateTally()
    for name in names:
        record = screens[name]
        tally.add([element(e) for e in record["found"]], [element(e) for e in record["gold"]],
                  toolkit_of(record["app"] or ""))
    return tally.report()


def compare(before: Path, after: Path) -> dict[str, Any]:
    a, b = _load(before), _load(after)
    names = sorted(set(a) & set(b))
    changed = []
    for name in names:
        ta, tb = _texts(a[name]), _texts(b[name])
        for j, gold in enumerate(a[name]["gold"]):
            text = gold.get("text")
            if text is None or (ta.get(j) == text) == (tb.get(j) == text):
                continue
            changed.append({"app": a[name]["app"], "screen": name, "label": text, "before": ta.get(j),
                            "after": tb.get(j), "right_after": tb.get(j) == text})
    return {"before": str(before), "after": str(after), "screens": len(names),
            "scores": {"before": _score(a, names), "after": _score(b, names)},
            "states": {"before": _states(a, names), "after": _states(b, names)},
            "texts_put_right": sum(c["right_after"] for c in changed),
            "texts_put_wrong": sum(not c["right_after"] for c in changed), "changed": changed}


def errors(path: Path, state: str, apps: str = "") -> list[dict[str, Any]]:
    """The matched labelled elements whose ``state`` the observer reads wrong (``pressed``: a
    labelled button's ``checked``, as ``tools/state_ab.py`` scores it; a state not read counts as
    false), each with its screen, toolkit, label type, observed type, box and text."""
    from caap.train.eval_reader import toolkit_of

    attr = "checked" if state == "pressed" else state
    prefixes = tuple(a for a in apps.split(",") if a)
    out = []
    for name, record in sorted(_load(path).items()):
        if prefixes and not (record["app"] or "").startswith(prefixes):
            continue
        for i, j in enumerate(record["match"]):
            if j < 0:
                continue
            gold, found = record["gold"][j], record["found"][i]
            if gold.get(attr) is None or (state == "checked" and gold["type"] == "button") \
                    or (state == "pressed" and gold["type"] != "button"):
                continue
            if bool(gold[attr]) != bool(found.get(attr)):
                out.append({"screen": name, "toolkit": toolkit_of(record["app"] or ""),
                            "error": "missed" if gold[attr] else "extra", "label_type": gold["type"],
                            "observed_type": found["type"], "bbox": gold["bbox"], "text": gold.get("text")})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump", help="run the observer on every labelled screen")
    d.add_argument("data", type=Path)
    d.add_argument("out", type=Path)
    d.add_argument("--detector", type=Path, default=Path("models/detector/caap-yolov8n-any.pt"))
    d.add_argument("--checkpoint", type=Path, default=Path("models/reader"))
    d.add_argument("--apps", default="", help="comma-separated app name prefixes (default: every app)")
    d.add_argument("--no-task", action="store_true",
                   help="observe without the names of the screen's task (the loop gives them)")
    d.add_argument("--text-source", choices=("auto", "reader", "ocr"), default="auto",
                   help="[observe] text_source (reader: no PP-OCR step runs)")
    d.add_argument("--ocr-threshold", type=float, default=None,
                   help="[observe] ocr_threshold (default: the kind of screen's own)")
    c = sub.add_parser("compare", help="score two dumps on the screens they share")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--out", type=Path)
    e = sub.add_parser("errors", help="list the labelled elements whose state a dump reads wrong")
    e.add_argument("dump", type=Path)
    e.add_argument("state", help="checked, pressed, focused, highlighted, expanded, indeterminate or enabled")
    e.add_argument("--apps", default="", help="comma-separated app name prefixes (default: every app)")
    args = parser.parse_args()
    if args.command == "errors":
        if not args.dump.is_file():
            raise SystemExit(f"{args.dump}: no such dump")
        try:
            wrong = errors(args.dump, args.state, args.apps)
        except (json.JSONDecodeError, KeyError) as exc:
            raise SystemExit(f"not an observer dump: {exc}") from None
        kinds = Counter((w["toolkit"], w["error"], w["label_type"], w["observed_type"]) for w in wrong)
        for (kit, error, label, observed), n in kinds.most_common():
            print(f"{n:>4}  {kit:<7}{error:<7}labelled {label}, observed {observed}")
        for w in wrong:
            print(f"{w['screen']}  {w['error']:<7}{w['label_type']:<12}{w['observed_type']:<12}"
                  f"{w['bbox']}  {w['text']!r}")
        return
    if args.command == "dump":
        for path in (args.data, args.detector, args.checkpoint):
            if not path.exists():
                raise SystemExit(f"{path}: no such file or directory")
        dump(args.data, args.out, args.detector, args.checkpoint, args.apps, task=not args.no_task,
             text_source=args.text_source, ocr_threshold=args.ocr_threshold)
        return
    for path in (args.before, args.after):
        if not path.is_file():
            raise SystemExit(f"{path}: no such dump")
    try:
        result = compare(args.before, args.after)
    except (json.JSONDecodeError, KeyError) as exc:
        raise SystemExit(f"not an observer dump: {exc}") from None
    for side in ("before", "after"):
        s = result["scores"][side]
        print(f"{side:6s} {result['screens']} screens: found {s['found']:.4f} of {s['labelled']}, "
              f"text exact {s['text_exact']:.4f} of {s['texts_known']}")
    print(f"texts put right {result['texts_put_right']}, put wrong {result['texts_put_wrong']}")
    for state, kits in result["states"]["after"].items():
        for kit, after in kits.items():
            before = result["states"]["before"][state].get(kit)
            if before is not None:
                print(f"{state:<14}{kit:<6}{after['elements']:>6}  accuracy {before['accuracy']:.4f} -> "
                      f"{after['accuracy']:.4f}  recall/precision {before['recall_true'] or 0:.2f}/"
                      f"{before['precision_true'] or 0:.2f} -> {after['recall_true'] or 0:.2f}/"
                      f"{after['precision_true'] or 0:.2f}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
