"""Evaluate the element reader on a caap dataset, beside PP-OCR and Tesseract on the same elements.

Two ways to choose the boxes the reader reads:

* labelled (default): the ground-truth boxes, with their true types as the hints a detector would
  give (a text area is read line by line) — the reader alone;
* detected (``detector=WEIGHTS``): the detector's boxes, as ``caap observe`` reads them. Each one
  is matched one-to-one to a labelled element (IoU >= 0.5, highest score first) and scored against
  it; unmatched boxes are read (they cost time) but not scored, and missed elements are counted.
  The latency then covers the whole observation (detect + read + the OCR the text source calls).

Texts are scored for every source on the same elements (those whose true type carries a known
text): the reader's CTC text, PP-OCR's (``caap.observe.ocr.ppocr``) and ``auto`` — the reader's unless its
confidence is below a threshold, then PP-OCR's — at several thresholds; ``default`` is what the
observer's configured ``text_source`` gives. Tesseract reads the labelled text boxes as a second peer.

Result (``evaluate``), abridged::

    {"dataset", "checkpoint", "boxes": "labelled"|"detected", "screens", "elements",
     "type": {"reader", "detector", "observer"},        # accuracy of each source of the type
     "record_exact",                                    # the observer's element: type + every attribute
     "text": {"elements", "reader": {"exact_match", "cer"}, "ocr": {...},
              "auto": {"0.5": {"exact_match", "cer", "to_ocr"}, ...},
              "auto_chooser": {...}  (the same texts to PP-OCR, the reader's text chooser deciding),
              "default": {"source", ...},
              "default_drawn_whole": {"elements", ...}},  # the texts a label can show whole in its box
     "attributes": {"checked" | "pressed" (a button's checked) | "focused" | "highlighted" | "expanded"
                    | "indeterminate" | "enabled" | "value" | "subtype": {"elements", "accuracy",
                    "majority": {"value", "accuracy"},  # always answering the commonest true value
                    "true": {"elements", "recall", "precision"}}},  # of "yes" (booleans only)
     "per_type": {type: {"elements", "type_accuracy", "text_elements", "text_reader", "text_default"}},
     "per_task": {task: {"text_elements", "text_reader", "text_default"(, "labelled", "found": with a detector),
                         "attributes": {name: {"elements", "accuracy"}}}},
     "per_toolkit": {toolkit: the same, summed over its tasks (desktop apps by toolkit; MiniWoB: web)},
     "latency_ms": {"read": {...}, "ocr": {...}},
     "observe_ms": {"per_screen", "per_screen_up_to_20", ...},    # detected boxes only
     "detection": {...}, "tesseract": {...}}

CER is the character error rate: Levenshtein edits over all text elements / their total length. A
predicted type that carries no text counts as the empty text. Attribute accuracies are over the
elements whose true value is known (not null); a missing prediction is wrong. A ``value`` (a
slider's or progress bar's place in its range) is right within ``VALUE_TOLERANCE``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from caap.bench.desktop.labels import SCROLLED_TEXT_TYPES, drawn_whole
from caap.data.format import Annotation, DatasetError, open_dataset
from caap.elements import Element
from caap.files import write_atomic
from caap.observe.observation import task_names as names_of
from caap.observe.pipeline import Parts, Pipeline, PipelineError
from caap.observe.read.configuration import ReaderError
from caap.observe.read.inference import Reader
from caap.observe.read.target import decode_target, same_record
from caap.observe.steps import FIT_STEPS
from caap.observe.steps.texts import chosen_text, ocr_limit, reads_nothing
from caap.observe.text_choice import levenshtein, screens_of
from caap.observe.vision import DEFAULT_OCR_THRESHOLD, DEFAULT_TEXT_SOURCE, DEFAULT_TYPE_SOURCE
from caap.taxonomy import (
    BOOLEAN_ATTRIBUTES,
    CHECKED,
    ENABLED,
    EXPANDED,
    FOCUSED,
    HIGHLIGHTED,
    INDETERMINATE,
    SUBTYPE,
    TEXT,
    VALUE,
    ElementType,
    attributes_of,
)
from caap.train.eval_detector import match_boxes

STATE_ATTRIBUTES = (CHECKED, FOCUSED, HIGHLIGHTED, EXPANDED, INDETERMINATE, ENABLED, VALUE, SUBTYPE)
# A labelled button's ``checked`` (held down) is scored apart as "pressed": nearly every button is a
# push button, never down, and counting them under "checked" would hide how check boxes are read.
PRESSED = "pressed"
SCORED = (*STATE_ATTRIBUTES, PRESSED)
VALUE_TOLERANCE = 0.05  # a slider's or bar's value read within this of the truth counts as right
TESSERACT_UPSCALE = 3  # MiniWoB text is ~10 px high; Tesseract wants ~30 px capitals
TESSERACT_PSM = 7      # "treat the image as a single text line"
AUTO_THRESHOLDS = (0.3, 0.5, 0.7, 0.8, 0.9, 0.95)
# Labelled boxes are read as they are: the steps that clean a detected field or narrow a detected
# row's reading box stay off (the reader alone is measured there).
LABELLED_OFF = ("erase_foreign_ink", "narrow_reading_boxes")


def scored_as(name: str, gold_type: ElementType) -> str:
    """The score an attribute of a labelled element counts under (``PRESSED`` for a button's checked)."""
    return PRESSED if name == CHECKED and gold_type is ElementType.BUTTON else name


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def agrees(name: str, said: Any, truth: Any) -> bool:
    """Whether a read attribute counts as right: equal, or for a value within ``VALUE_TOLERANCE``."""
    if name == VALUE:
        return said is not None and abs(float(said) - float(truth)) <= VALUE_TOLERANCE + 1e-9
    return bool(said == truth)


def _majority(truths: Counter[str], name: str = "") -> dict[str, Any] | None:
    """The score of always answering the commonest true value: what an attribute's accuracy must beat
    (for a value: the one constant that lands within the tolerance of most truths)."""
    if not truths:
        return None
    if name == VALUE:
        values = [float(json.loads(v)) for v in truths.elements()]
        grid = [k / 100 for k in range(101)]
        best = max(grid, key=lambda c: sum(agrees(VALUE, c, v) for v in values))
        return {"value": best, "accuracy": _ratio(sum(agrees(VALUE, best, v) for v in values), len(values))}
    value, count = truths.most_common(1)[0]
    return {"value": json.loads(value), "accuracy": _ratio(count, sum(truths.values()))}


def _attribute_scores(counts: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
    return {name: {"elements": total, "accuracy": _ratio(right, total)}
            for name, (right, total) in counts.items() if total}


def toolkit_of(task: str) -> str:
    """The toolkit a screen's source was drawn by: a desktop app's, else the web (MiniWoB, generated UIs)."""
    from caap.bench.desktop.apps import APPS

    app = APPS.get(task)
    return app.toolkit if app is not None else "web"


def _per_toolkit(per_task: dict[str, list[int]], found: dict[str, list[int]] | None,
                 task_attr: dict[str, dict[str, list[int]]]) -> dict[str, dict[str, Any]]:
    """The per-task counts summed by toolkit."""
    groups: dict[str, dict[str, Any]] = {}
    for task in sorted(set(per_task) | set(found or {}) | set(task_attr)):
        g = groups.setdefault(toolkit_of(task), {"text": [0, 0, 0], "found": [0, 0],
                                                 "attributes": {name: [0, 0] for name in SCORED}})
        for i, v in enumerate(per_task.get(task, [0, 0, 0])):
            g["text"][i] += v
        if found is not None:
            for i, v in enumerate(found.get(task, [0, 0])):
                g["found"][i] += v
        for name, (right, total) in task_attr.get(task, {}).items():
            g["attributes"][name][0] += right
            g["attributes"][name][1] += total
    return {kit: {"text_elements": g["text"][0], "text_reader": _ratio(g["text"][1], g["text"][0]),
                  "text_default": _ratio(g["text"][2], g["text"][0]),
                  **({"labelled": g["found"][0], "found": _ratio(g["found"][1], g["found"][0])}
                     if found is not None else {}),
                  "attributes": _attribute_scores(g["attributes"])}
            for kit, g in groups.items()}


def _timing(times_ms: list[float], elements: int) -> dict[str, Any]:
    ordered = sorted(times_ms)
    return {"screens": len(ordered), "elements": elements,
            "per_screen": {"mean": round(statistics.fmean(ordered), 2), "p50": round(ordered[len(ordered) // 2], 2),
                           "p90": round(ordered[int(len(ordered) * 0.9)], 2)},
            "per_element": round(sum(ordered) / max(elements, 1), 2)}


def _load(path: Path) -> Image.Image:
    try:
        with Image.open(path) as im:
            return im.convert("RGB")
    except OSError as exc:
        raise ReaderError(f"{path}: not a readable image ({exc})") from None


def _screens(data: str | Path, limit: int | None) -> list[tuple[Path, Annotation]]:
    try:
        ds = open_dataset(data)
        paths = ds.label_paths()
        if limit and limit < len(paths):  # an even spread, so every task (group) is represented
            step = len(paths) / limit
            paths = [paths[int(i * step)] for i in range(limit)]
        screens = [(ds.image_path(ann), ann) for ann in (ds.load(p) for p in paths)]
    except DatasetError as exc:
        raise ReaderError(str(exc)) from None
    if not screens:
        raise ReaderError(f"{data}: the dataset holds no annotations (labels/*/*.json)")
    return screens


class _TextScore:
    """Exact matches and character edits of one text source over the scored elements."""

    def __init__(self) -> None:
        self.n = self.exact = self.edits = self.chars = self.to_ocr = 0

    def add(self, said: str, gold: str, *, to_ocr: bool = False) -> bool:
        said, gold = " ".join(said.split()), " ".join(gold.split())
        self.n += 1
        self.exact += said == gold
        self.edits += levenshtein(said, gold)
        self.chars += len(gold)
        self.to_ocr += to_ocr
        return said == gold

    def result(self, *, share: bool = False) -> dict[str, Any]:
        out = {"exact_match": _ratio(self.exact, self.n), "cer": _ratio(self.edits, self.chars)}
        if share:
            out["to_ocr"] = _ratio(self.to_ocr, self.n)
        return out


def _text_of(element: Element) -> str:
    return element.text if element.text is not None and TEXT in attributes_of(element.type) else ""


def evaluate(data: str | Path, checkpoint: str | Path, *, device: str = "cpu", limit: int | None = None,
             tesseract: bool = True, ocr: bool = True, latency_screens: int = 50, threads: int | None = None,
             detector: str | Path | None = None, iou_match: float = 0.5, type_source: str = DEFAULT_TYPE_SOURCE,
             text_source: str = DEFAULT_TEXT_SOURCE, ocr_threshold: float | None = DEFAULT_OCR_THRESHOLD,
             errors: str | Path | None = None, snap: bool = True, disable: Sequence[str] = (),
             task_names: bool = False) -> dict[str, Any]:
    """Reader accuracy and latency on every labelled element of ``data`` (``limit``: an even spread
    of that many screens), with PP-OCR and Tesseract on the same elements (module docstring).
    ``detector``: weights whose boxes are read instead of the labelled ones (``snap``: with their
    text boxes snapped to their words, as the observer does by default); ``type_source``,
    ``text_source`` and ``ocr_threshold``: the observer's settings to score as ``default``;
    ``threads``: torch and onnxruntime CPU threads (process-wide; None: their defaults); ``errors``: a
    JSON Lines file that gets one row per text the reader, PP-OCR or the default source got wrong
    (``attribute`` "text"; every other text all of them read right) and one per state the observer
    got wrong (``attribute`` checked/focused/highlighted/subtype, with the decoder's record);
    ``disable``: the observer's steps switched off by name (``caap observe --list-steps``), for A/B
    runs; ``snap`` False switches off the fit stage; ``task_names``: the observer is given the names
    of each screen's task (its ``source.utterance``), as the agent's loop gives them."""
    screens = _screens(data, limit)
    misread: list[dict[str, Any]] = []  # the rows for ``errors``, written once the pass is through
    if errors is not None and not Path(errors).parent.is_dir():
        raise ReaderError(f"{errors}: its directory does not exist (nothing evaluated)")
    if threads:
        import torch

        torch.set_num_threads(threads)
    if text_source != "reader" and not ocr:
        raise ReaderError(f"text_source {text_source!r} needs PP-OCR: do not turn the OCR peer off")
    reader = Reader(checkpoint, device=device)
    engine, ocr_error = None, None
    if ocr:
        try:
            from caap.observe.ocr.ppocr import PPOCR

            engine = PPOCR(threads=threads)
        except Exception as exc:  # OcrError or a missing package: the comparison is reported, not fatal
            ocr_error = f"{type(exc).__name__}: {exc}"
            if text_source != "reader":
                raise ReaderError(f"text_source {text_source!r} needs PP-OCR, which cannot run ({ocr_error})") from None
    det = None
    if detector is not None:
        from caap.observe.detect.detector import Detector, DetectorError

        try:
            det = Detector(detector, device=device)
        except DetectorError as exc:
            raise ReaderError(str(exc)) from None
    # The observer's own pipeline of steps. With a detector: every step, from the screen. Without
    # one: from the read stage on, on the labelled boxes as they are (no field's stray ink painted
    # over, no narrowed reading box) with the reader's own type — the reader alone.
    off = [*disable, *(() if snap else FIT_STEPS), *(() if det is not None else LABELLED_OFF)]
    try:
        pipeline = Pipeline(disable=dict.fromkeys(off))
    except PipelineError as exc:
        raise ReaderError(str(exc)) from None
    parts = Parts(detector=det, reader=reader, ocr=engine if text_source != "reader" else None,
                  type_source=type_source if det is not None else "reader", text_source=text_source,
                  ocr_threshold=ocr_threshold)
    chooser = parts.chooser
    # As the observer reads: with the detector's class as the type, the decoder writes that class's
    # record (the reader's own type is then not measured: score it on labelled boxes).
    follow = det is not None and type_source == "detector"
    # matched_centres: one to one, each box's centre inside the other's (a click on the found box lands
    # on the element), beside the IoU match: toolkits box one element differently (a tree row's text
    # or its whole row), which IoU counts as missed.
    detection = {"labelled": 0, "matched": 0, "missed": 0, "unmatched_boxes": 0, "matched_centres": 0}
    observe_times: list[tuple[float, int]] = []  # (ms, boxes) per screen
    read_times: list[float] = []
    ocr_times: list[float] = []
    ocr_elements = read_elements = 0
    counts: dict[str, float] = defaultdict(float)
    attr = {name: [0, 0] for name in SCORED}  # right, total
    truths: dict[str, Counter[str]] = {name: Counter() for name in SCORED}  # for the majority baseline
    said_yes = {name: [0, 0, 0] for name in SCORED}  # both true, truly true, read true
    task_attr: dict[str, dict[str, list[int]]] = defaultdict(lambda: {name: [0, 0] for name in SCORED})
    texts = {"reader": _TextScore(), "ocr": _TextScore(), "default": _TextScore(), "drawn": _TextScore()}
    auto = {th: _TextScore() for th in sorted({*AUTO_THRESHOLDS, *([] if ocr_threshold is None else [ocr_threshold])})}
    auto_choice = {th: _TextScore() for th in auto}  # the same texts to PP-OCR, the chooser deciding
    per_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # n, type ok, text n, reader, default
    per_task: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # text n, reader, default
    found_in_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])  # labelled, matched (detected boxes)
    warmed = False
    for image_path, ann in screens:
        if not ann.elements:
            continue
        parts.screens = screens_of(ann.source.kind)  # as caap run (desktop) and caap bench miniwob (web) set it
        look = pipeline.look(_load(image_path), parts)
        look.names = names_of(ann.source.utterance or "") if task_names else ()
        t_detect = 0.0
        if det is None:
            found = list(ann.elements)  # the true types stand in for a detector that is always right
            golds: list[Element | None] = list(ann.elements)
        else:
            t0 = time.perf_counter()
            found = pipeline.run(look, stop="read")  # the detector's boxes, fitted, and the proposals
            t_detect = time.perf_counter() - t0
            matched = match_boxes([(e.score or 0.0, e.bbox) for e in found], [e.bbox for e in ann.elements], iou_match)
            golds = [ann.elements[j] if j >= 0 else None for j in matched]
            detection["labelled"] += len(ann.elements)
            detection["matched"] += sum(j >= 0 for j in matched)
            detection["unmatched_boxes"] += sum(j < 0 for j in matched)
            detection["matched_centres"] += sum(j >= 0 for j in match_boxes(
                [(e.score or 0.0, e.bbox) for e in found], [e.bbox for e in ann.elements], 0.0, centres=True))
            found_in_task[ann.source.task or "?"][0] += len(ann.elements)
            found_in_task[ann.source.task or "?"][1] += sum(j >= 0 for j in matched)
            if not found:
                continue
        boxes, hints = [e.bbox for e in found], [e.type for e in found]
        if not warmed:
            reader.read(look.image, boxes, hints, follow_hints=follow)  # the first call pays one-off costs
            if engine is not None:
                engine.read(look.image, boxes[:1], [hints[0].value])
            warmed = True
        t0 = time.perf_counter()
        merged = pipeline.run(look, found, start="read", stop="reread_doubtful_texts")
        t_read = time.perf_counter() - t0
        readings = look.readings
        assert readings is not None  # the read stage ran
        read_times.append(t_read * 1000)
        read_elements += len(boxes)
        records = [decode_target(r.record, b) for r, b in zip(readings.readings, boxes, strict=True)]
        texty = [i for i, e in enumerate(merged) if TEXT in attributes_of(e.type)]
        ocr_text: dict[int, str] = {}
        ocr_confidence: dict[int, float] = {}
        if engine is not None and texty:
            t0 = time.perf_counter()
            got = engine.read(look.image, [boxes[i] for i in texty], [merged[i].type.value for i in texty])
            ocr_times.append((time.perf_counter() - t0) * 1000)
            ocr_elements += len(texty)
            ocr_text = {i: g.text for i, g in zip(texty, got, strict=True)}
            ocr_confidence = {i: round(float(g.confidence), 4) for i, g in zip(texty, got, strict=True)}
        # The observer's own output under the configured text source: the rest of the pipeline,
        # timed as it runs (only the doubtful texts go to PP-OCR under auto).
        t0 = time.perf_counter()
        default = pipeline.run(look, merged, start="reread_doubtful_texts")
        t_ocr = time.perf_counter() - t0
        if det is not None:
            observe_times.append(((t_detect + t_read + t_ocr) * 1000, len(boxes)))
        task = ann.source.task or "-"
        for i, gold in enumerate(golds):
            if gold is None:
                continue
            pred = default[i]
            counts["elements"] += 1
            counts["reader_type"] += records[i].type == gold.type
            counts["observer_type"] += pred.type == gold.type
            counts["detector_type"] += det is not None and found[i].type == gold.type
            counts["record_exact"] += same_record(pred, gold)
            row = per_type[gold.type.value]
            row[0] += 1
            row[1] += pred.type == gold.type
            for name in STATE_ATTRIBUTES:
                truth = getattr(gold, name)
                if truth is not None:
                    key = scored_as(name, gold.type)
                    attr[key][1] += 1
                    attr[key][0] += agrees(name, getattr(pred, name), truth)
                    truths[key][json.dumps(truth)] += 1
                    if name in BOOLEAN_ATTRIBUTES and (truth is True or getattr(pred, name) is True):
                        # recall and precision of "yes"
                        said_yes[key][0] += truth is True and getattr(pred, name) is True
                        said_yes[key][1] += truth is True
                        said_yes[key][2] += getattr(pred, name) is True
                    task_attr[task][key][1] += 1
                    task_attr[task][key][0] += agrees(name, getattr(pred, name), truth)
                    if errors is not None and not agrees(name, getattr(pred, name), truth):
                        misread.append({"screen": image_path.name, "task": ann.source.task, "type": gold.type.value,
                                        "bbox": list(boxes[i]), "attribute": key, "gold": truth,
                                        "read": getattr(pred, name), "record": readings.readings[i].record})
            if TEXT not in attributes_of(gold.type) or gold.text is None:
                continue
            said = _text_of(merged[i])
            right = texts["reader"].add(said, gold.text)
            right_ocr = texts["ocr"].add(ocr_text.get(i, ""), gold.text)
            right_default = texts["default"].add(_text_of(pred), gold.text)
            if gold.type.value in SCROLLED_TEXT_TYPES or drawn_whole(gold.text, gold.bbox):
                texts["drawn"].add(_text_of(pred), gold.text)
            confidence = merged[i].text_confidence
            # The chooser's verdict does not depend on the threshold: weighed once per text.
            chosen = (chosen_text(parts, readings, merged[i], ocr_text[i], ocr_confidence[i], i)
                      if chooser is not None and i in ocr_text else None)
            blank = parts.ocr is not None and reads_nothing(merged[i])  # asked whatever the threshold
            for th, score in auto.items():
                doubtful = i in ocr_text and (confidence is None or confidence < th or th >= 1.0 or blank)
                score.add(ocr_text[i] if doubtful else said, gold.text, to_ocr=doubtful)
                if chooser is not None:
                    doubtful = i in ocr_text and (confidence is None or blank
                                                  or confidence < ocr_limit(parts, merged[i], th)
                                                  or ocr_limit(parts, merged[i], th) >= 1.0)
                    auto_choice[th].add(chosen if doubtful and chosen is not None else said, gold.text,
                                        to_ocr=doubtful)
            row[2] += 1
            row[3] += right
            row[4] += right_default
            if errors is not None and not (right and right_default and (right_ocr or i not in ocr_text)):
                misread.append({
                    "screen": image_path.name, "task": ann.source.task, "type": gold.type.value,
                    "bbox": list(boxes[i]), "attribute": "text", "gold": gold.text, "reader": said,
                    "confidence": confidence, "ocr": ocr_text.get(i), "ocr_confidence": ocr_confidence.get(i),
                    "default": _text_of(pred)})
            task_row = per_task[task]
            task_row[0] += 1
            task_row[1] += right
            task_row[2] += right_default
    if errors is not None:
        write_atomic(errors, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in misread))
    n = int(counts["elements"])
    result: dict[str, Any] = {
        "dataset": str(data), "checkpoint": str(checkpoint), "device": reader.device,
        "boxes": "labelled" if det is None else "detected", "screens": len(screens), "elements": n,
        "settings": {"type_source": type_source, "text_source": text_source, "ocr_threshold": ocr_threshold,
                     **({"snap_text_boxes": snap} if detector is not None else {}),
                     "disabled_steps": sorted(pipeline.disabled)},
        "type": {"reader": None if follow else _ratio(counts["reader_type"], n),
                 "observer": _ratio(counts["observer_type"], n),
                 **({"detector": _ratio(counts["detector_type"], n)} if det is not None else {})},
        "record_exact": _ratio(counts["record_exact"], n),
        "text": {"elements": texts["reader"].n, "reader": texts["reader"].result(),
                 **({"ocr": texts["ocr"].result()} if engine is not None else {"ocr": {"error": ocr_error}}),
                 **({"auto": {str(th): s.result(share=True) for th, s in auto.items()}} if engine is not None else {}),
                 **({"auto_chooser": {str(th): s.result(share=True) for th, s in auto_choice.items()}}
                    if chooser is not None else {}),
                 "default": {"source": text_source, **texts["default"].result()},
                 # Without the labels no box can show whole (elided, cut by a column, never drawn):
                 # datasets labelled before the labeller left those out (bench.desktop.labels.drawn_whole).
                 "default_drawn_whole": {"elements": texts["drawn"].n, **texts["drawn"].result()}},
        "attributes": {name: {"elements": total, "accuracy": _ratio(right, total),
                              "majority": _majority(truths[name], name),
                              **({"true": {"elements": said_yes[name][1], "recall": _ratio(*said_yes[name][:2]),
                                           "precision": _ratio(said_yes[name][0], said_yes[name][2])}}
                                 if name in (*BOOLEAN_ATTRIBUTES, PRESSED) else {}),
                              **({"tolerance": VALUE_TOLERANCE} if name == VALUE else {})}
                       for name, (right, total) in attr.items()},
        "per_type": {t: {"elements": v[0], "type_accuracy": _ratio(v[1], v[0]), "text_elements": v[2],
                         "text_reader": _ratio(v[3], v[2]), "text_default": _ratio(v[4], v[2])}
                     for t, v in sorted(per_type.items())},
        "per_task": {t: {"text_elements": v[0], "text_reader": _ratio(v[1], v[0]), "text_default": _ratio(v[2], v[0]),
                         **({"labelled": found_in_task[t][0], "found": _ratio(found_in_task[t][1], found_in_task[t][0])}
                            if det is not None else {}),
                         "attributes": _attribute_scores(task_attr[t])}
                     for t, v in ((t, per_task[t]) for t in sorted(set(per_task) | set(found_in_task)))},
        "per_toolkit": _per_toolkit(per_task, found_in_task if det is not None else None, task_attr),
        "latency_ms": {"read": _timing(read_times, read_elements) if read_times else None,
                       "ocr_all_texts": _timing(ocr_times, ocr_elements) if ocr_times else None},
    }
    result["latency_ms"].update(_other_latency(checkpoint, screens, "cpu" if reader.device == "cpu" else "gpu",
                                               latency_screens))
    if det is not None:
        detection["missed"] = detection["labelled"] - detection["matched"]
        labelled = max(detection["labelled"], 1)
        result["detection"] = {"detector": str(detector), "iou": iou_match, **detection,
                               "found": round(detection["matched"] / labelled, 4),
                               "found_centres": round(detection["matched_centres"] / labelled, 4)}
        result["observe_ms"] = _observe_timing(observe_times)
    result["tesseract"] = tesseract_eval(screens) if tesseract else {"error": "not run (tesseract=False)"}
    return result


def _observe_timing(times: list[tuple[float, int]]) -> dict[str, Any]:
    """Detect + read per screen, over all screens and over those with at most 20 boxes (the target)."""
    def stats(ms: list[float]) -> dict[str, Any] | None:
        if not ms:
            return None
        ordered = sorted(ms)
        return {"screens": len(ordered), "mean": round(statistics.fmean(ordered), 2),
                "p50": round(ordered[len(ordered) // 2], 2), "p90": round(ordered[int(len(ordered) * 0.9)], 2),
                "max": round(ordered[-1], 2)}

    return {"per_screen": stats([t for t, _ in times]), "per_screen_up_to_20": stats([t for t, n in times if n <= 20]),
            "boxes_per_screen_max": max((n for _, n in times), default=0)}


def _other_latency(checkpoint: str | Path, screens: list[tuple[Path, Annotation]], done: str,
                   count: int) -> dict[str, Any]:
    """CPU latency when the main pass ran on the GPU, and GPU latency when it ran on the CPU (if CUDA)."""
    import torch

    todo = "gpu" if done == "cpu" else "cpu"
    if count < 1 or (todo == "gpu" and not torch.cuda.is_available()):
        return {}
    reader = Reader(checkpoint, device="cuda" if todo == "gpu" else "cpu")
    sample = [(p, a) for p, a in screens if a.elements][:count]
    times: list[float] = []
    elements = 0
    for i, (path, ann) in enumerate(sample):
        image, boxes, hints = _load(path), [e.bbox for e in ann.elements], [e.type for e in ann.elements]
        if i == 0:
            reader.read(image, boxes, hints)  # warm-up
        t0 = time.perf_counter()
        reader.read(image, boxes, hints)
        times.append((time.perf_counter() - t0) * 1000)
        elements += len(boxes)
    return {todo: _timing(times, elements)} if times else {}


# --- Tesseract ------------------------------------------------------------------------------------


def tesseract_eval(screens: list[tuple[Path, Annotation]]) -> dict[str, Any]:
    """Tesseract on the crop of every text-carrying element (upscaled, single-line mode), one
    ``tesseract`` process per screen reading all of its crops; an ``error`` entry if it cannot run."""
    binary = shutil.which("tesseract")
    if binary is None:
        return {"error": "tesseract not found on PATH (Debian/Ubuntu: apt-get install tesseract-ocr)"}
    try:
        version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
        version_line = (version.stdout or version.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return {"error": f"tesseract --version failed ({exc})"}
    n = exact = edits = chars = 0
    screen_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="caap-tess-") as tmp:
        for image_path, ann in screens:
            targets = [e for e in ann.elements if TEXT in attributes_of(e.type) and e.text is not None]
            if not targets:
                continue
            image = _load(image_path)
            crops = []
            for i, e in enumerate(targets):
                crop = image.crop(e.bbox)
                crop = crop.resize((crop.width * TESSERACT_UPSCALE, crop.height * TESSERACT_UPSCALE),
                                   Image.Resampling.BICUBIC)
                path = Path(tmp) / f"{i}.png"
                crop.save(path)
                crops.append(path)
            t0 = time.perf_counter()
            try:
                texts = _tesseract_batch(binary, crops, Path(tmp))
            except RuntimeError as exc:
                return {"error": str(exc), "version": version_line}
            screen_ms.append((time.perf_counter() - t0) * 1000)
            for e, said in zip(targets, texts, strict=True):
                n += 1
                exact += said == e.text
                edits += levenshtein(said, e.text or "")
                chars += len(e.text or "")
    return {"version": version_line, "elements": n, "exact_match": _ratio(exact, n), "cer": _ratio(edits, chars),
            "ms_per_element": round(sum(screen_ms) / max(n, 1), 2),
            "ms_per_screen": round(statistics.fmean(screen_ms), 2) if screen_ms else None,
            "upscale": TESSERACT_UPSCALE, "psm": TESSERACT_PSM,
            "note": "element crops without semi-masking; one tesseract process per screen, single-threaded"}


def _tesseract_batch(binary: str, crops: list[Path], tmp: Path) -> list[str]:
    """Texts of several images from one tesseract run (a list file; pages end with a form feed)."""
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}  # one core: a fair, reproducible timing on a busy machine

    def run(args: list[str]) -> str:
        try:
            done = subprocess.run([binary, *args, "stdout", "--psm", str(TESSERACT_PSM)], capture_output=True,
                                  text=True, timeout=120, env=env)
        except (OSError, subprocess.SubprocessError) as exc:
            raise RuntimeError(f"tesseract failed to run ({exc})") from None
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"tesseract exited with {done.returncode}: {first}")
        return done.stdout

    listing = tmp / "list.txt"
    listing.write_text("".join(f"{p}\n" for p in crops), encoding="utf-8")
    pages = run([str(listing)]).split("\f")
    if len(pages) == len(crops) + 1 and not pages[-1].strip():
        pages = pages[:-1]
    if len(pages) != len(crops):  # an image that produced no page: read them one by one instead
        pages = [run([str(p)]) for p in crops]
    return [" ".join(p.split()) for p in pages]
