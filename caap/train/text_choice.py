"""Fit the reader's text chooser (``caap.observe.text_choice``) on validation screens.

``fit`` observes the validation screens of the datasets the reader was trained on (their seeds
never trained it) as ``caap observe`` does — the detector's boxes, the reader with its character
model, and PP-OCR on *every* text so each disagreement can be learned from (its look-alike glyphs
settled by the reader's frames, as the observer settles them) — matches each box to
its labelled element, and fits the logistic regression on the disagreements whose right text is
one of the two. Before the final fit on all of them, a two-fold cross-validation (screens split by
task or app and seed, hashed) scores what the chooser would do at each ``ocr_threshold`` beside the plain
confidence rule, so the report says what the file is worth on screens it was not fitted on. The
chooser is fitted for one kind of screen (``SCREENS``: desktop windows or web pages) and written
into the choosers file beside the reader's weights (``CHOICE_FILE``), where ``Reader`` picks it
up; the file's chooser for the other kind is kept.
"""

from __future__ import annotations

import contextlib
import time
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from caap.observe.read.configuration import ReaderError
from caap.observe.read.ctc import normalise
from caap.observe.read.inference import Reader
from caap.observe.text_choice import (
    CHOICE_FILE,
    SCREENS,
    TextChoiceError,
    TextChooser,
    TextChoosers,
    features,
    resolve_lookalikes,
)
from caap.taxonomy import TEXT, ElementType, attributes_of

THRESHOLDS = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 1.01)
# Text areas' limit is chosen from a finer grid: a reader's line-by-line confidence on them spreads
# over 0.5-0.9, where THRESHOLDS has only 0.5 and 0.8 (a fine-tuned reader at 0.62-0.76 went to PP-OCR).
AREA_THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98, 0.99, 1.01)


def _fold(ann: Any) -> int:
    """The cross-validation half of a screen: by its task or app and seed, hashed. (A desktop
    validation set has one or two seeds per app, so seed parity alone would put it all in one half.)"""
    return zlib.crc32(f"{ann.source.task}:{ann.source.seed}".encode()) % 2


def observed_texts(datasets: Sequence[str | Path], reader: Reader, ocr: Any, detector: Any, *,
                   split: str, holdout: Sequence[str | Path] = (),
                   progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """One row per matched, labelled text of the validation screens: both texts, both confidences,
    the features where they differ (text areas, read line by line, have none). The screens are
    the ``split``'s validation seeds of ``datasets`` (as the reader's training split them: generated
    screens always trained) and every screen of the ``holdout`` datasets (validation sets of their
    own: desktop apps' held-back seeds, generated UIs of seeds no training used)."""
    from caap.data.export import SplitRule, load_items, split_of
    from caap.data.format import DatasetError
    from caap.train.eval_detector import match_boxes
    from caap.train.reader_data import SYNTH_KIND

    try:
        rule = SplitRule.parse(split)
        items = [item for data in datasets for item in load_items(data)
                 if item.ann.source.kind != SYNTH_KIND and split_of(item.ann, rule) == "val" and item.ann.elements]
        items += [item for data in holdout for item in load_items(data) if item.ann.elements]
    except DatasetError as exc:
        raise ReaderError(str(exc)) from None
    if not items:
        raise ReaderError(f"{', '.join(map(str, [*datasets, *holdout]))}: split '{split}' leaves no labelled "
                          "validation screens")
    rows: list[dict[str, Any]] = []
    for n, item in enumerate(items):
        with Image.open(item.image_path) as im:
            image = im.convert("RGB")
        found = detector.observe(image).elements if detector is not None else list(item.ann.elements)
        if not found:
            continue
        golds = item.ann.elements
        matched = (match_boxes([(e.score or 0.0, e.bbox) for e in found], [e.bbox for e in golds], 0.5)
                   if detector is not None else list(range(len(golds))))
        readings = reader.read(image, [e.bbox for e in found], [e.type for e in found],
                               follow_hints=detector is not None, log_probs=True)
        read, log_probs = readings.elements, readings.log_probs
        texty = [i for i, e in enumerate(read) if TEXT in attributes_of(e.type)]
        got = ocr.read(image, [read[i].bbox for i in texty], [read[i].type.value for i in texty]) if texty else []
        for i, o in zip(texty, got, strict=True):
            gold = golds[matched[i]] if matched[i] >= 0 else None
            if gold is None or gold.text is None or TEXT not in attributes_of(gold.type):
                continue
            element = read[i]
            mine, theirs = normalise(element.text or ""), normalise(o.text)
            if mine != theirs and element.type != ElementType.TEXT_AREA:  # as the observer does
                theirs = resolve_lookalikes(theirs, log_probs[i], reader.alphabet, reader.lm)
            row: dict[str, Any] = {
                "seed": item.ann.source.seed or 0, "fold": _fold(item.ann), "kind": item.ann.source.kind,
                "type": element.type.value,
                "gold": normalise(gold.text),
                "reader": mine, "reader_conf": float(element.text_confidence or 0.0), "ocr": theirs,
                "ocr_conf": float(o.confidence), "features": None}
            if mine != theirs and element.type != ElementType.TEXT_AREA:
                row["features"] = features(mine, row["reader_conf"], theirs, row["ocr_conf"], log_probs[i],
                                           reader.alphabet, reader.lm, element.type.value)
            rows.append(row)
        if progress is not None:
            progress(n + 1, len(items))
    return rows


def _fit(rows: Sequence[dict[str, Any]]) -> TextChooser:
    learn = [r for r in rows if r["features"] is not None and r["gold"] in (r["reader"], r["ocr"])]
    if len({r["ocr"] == r["gold"] for r in learn}) < 2:
        raise ReaderError(f"{len(learn)} disagreements with one right side, all won by the same source: "
                          "nothing to learn a choice from (more validation screens?)")
    return TextChooser.fit([r["features"] for r in learn], [r["ocr"] == r["gold"] for r in learn])


def _text_area_limit(rows: Sequence[dict[str, Any]]) -> float:
    """The confidence below which PP-OCR's reading of a text area beats the reader's line-by-line
    one most often on ``rows`` (ties: the lowest, fewest PP-OCR calls; no text areas: 0.9)."""
    areas = [r for r in rows if r["type"] == ElementType.TEXT_AREA.value]
    if not areas:
        return 0.9
    hits = {th: sum((r["ocr"] if r["reader_conf"] < th else r["reader"]) == r["gold"] for r in areas)
            for th in AREA_THRESHOLDS}
    return max(hits, key=lambda th: (hits[th], -th))


def _policy_scores(rows: Sequence[dict[str, Any]], verdict: Callable[[dict[str, Any]], bool] | None,
                   text_area_below: float = 1.01) -> dict[str, dict[str, float]]:
    """Exact match over ``rows`` at every threshold: PP-OCR's text for texts below it — always
    (``verdict`` None: the confidence rule) or where the chooser's ``verdict`` says so (text areas:
    below ``text_area_below`` too)."""
    out = {}
    for th in THRESHOLDS:
        hits = sent = 0
        for r in rows:
            area = r["type"] == ElementType.TEXT_AREA.value
            doubtful = r["reader_conf"] < (min(th, text_area_below) if verdict is not None and area else th)
            take_ocr = doubtful if verdict is None or r["features"] is None else doubtful and verdict(r)
            hits += (r["ocr"] if take_ocr else r["reader"]) == r["gold"]
            sent += doubtful
        out[str(th)] = {"exact_match": round(hits / max(len(rows), 1), 4),
                        "to_ocr": round(sent / max(len(rows), 1), 4)}
    return out


def _previous_scores(chooser: TextChooser, rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    return _policy_scores(rows, lambda r: chooser.prob_ocr(r["features"]) > 0.5, chooser.text_area_below)


def fit(datasets: Sequence[str | Path], checkpoint: str | Path, *, detector: str | Path | None,
        split: str = "val:2800-2999", holdout: Sequence[str | Path] = (), snap: bool = True,
        disable: Sequence[str] = (), threads: int | None = None, out: str | Path | None = None,
        screens: str = "desktop", progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Observe, cross-validate, fit ``screens``'s chooser, write the choosers (``out``: there, not
    into the checkpoint); returns the report (``module docstring``)."""
    t0 = time.perf_counter()
    if screens not in SCREENS:
        raise ReaderError(f"screens must be one of {SCREENS}, not {screens!r}")
    if not datasets and not holdout:
        raise ReaderError("no validation screens: name datasets (--data) or whole validation sets (--holdout)")
    if threads:
        import torch

        torch.set_num_threads(threads)
    from caap.observe.ocr.ppocr import PPOCR, OcrError

    reader = Reader(checkpoint, chooser=False)  # the file being replaced never steers the observing
    kept = previous = None  # ... but is scored on the same texts, beside the new one (an unreadable one is not)
    if (Path(checkpoint) / CHOICE_FILE).is_file():
        with contextlib.suppress(TextChoiceError):
            kept = TextChoosers.load(Path(checkpoint) / CHOICE_FILE)
            previous = kept.for_screens(screens)
    try:
        ocr = PPOCR(threads=threads)
    except OcrError as exc:
        raise ReaderError(str(exc)) from None
    det = None
    if detector is not None:
        from caap.observe.detect.detector import Detector, DetectorError
        from caap.observe.steps import FIT_STEPS
        from caap.observe.vision import VisionObserver

        try:  # the detector and its fitting steps, as the observer runs them (no reader: no proposals)
            det = VisionObserver(Detector(detector), None,
                                 disable=dict.fromkeys([*disable, *(() if snap else FIT_STEPS)]))
        except DetectorError as exc:
            raise ReaderError(str(exc)) from None
    rows = observed_texts(datasets, reader, ocr, det, split=split, holdout=holdout, progress=progress)
    # Cross-validation: one half of the episodes fits, the other scores, and the other way round.
    # (A fold with nothing to learn from — few screens — falls back to the confidence rule.)
    verdicts: dict[int, bool] = {}
    for fold in (0, 1):
        try:
            chooser: TextChooser | None = _fit([r for r in rows if r["fold"] != fold])
        except ReaderError:
            chooser = None
        for k, r in enumerate(rows):
            if r["fold"] == fold and r["features"] is not None:
                verdicts[k] = chooser.prob_ocr(r["features"]) > 0.5 if chooser is not None else True
    index = {id(r): k for k, r in enumerate(rows)}
    area_limit = _text_area_limit(rows)
    disagree = [r for r in rows if r["reader"] != r["ocr"]]
    report = {
        "texts": len(rows), "disagreements": len(disagree),
        "learned_from": sum(r["features"] is not None and r["gold"] in (r["reader"], r["ocr"]) for r in rows),
        "reader": round(sum(r["reader"] == r["gold"] for r in rows) / len(rows), 4),
        "ocr": round(sum(r["ocr"] == r["gold"] for r in rows) / len(rows), 4),
        "better_of_two": round(sum(r["gold"] in (r["reader"], r["ocr"]) for r in rows) / len(rows), 4),
        "rule": _policy_scores(rows, None),
        "chooser_cross_validated": _policy_scores(rows, lambda r: verdicts[index[id(r)]], area_limit),
        "text_area_below": area_limit,
        # The same per kind of screen: a choice fitted on all of them must not cost one kind.
        "per_kind": {kind: {"texts": len(mine), "rule": _policy_scores(mine, None),
                            "chooser_cross_validated": _policy_scores(mine, lambda r: verdicts[index[id(r)]],
                                                                      area_limit),
                            **({"previous_chooser": _previous_scores(previous, mine)} if previous else {})}
                     for kind in sorted({r["kind"] for r in rows})
                     for mine in [[r for r in rows if r["kind"] == kind]]},
    }
    if previous is not None:  # the file being replaced, on the same texts (it may have been fitted on some)
        report["previous_chooser"] = _previous_scores(previous, rows)
    chooser = _fit(rows)
    chooser.text_area_below = area_limit
    chooser.fitted = {"screens": screens, "datasets": [str(d) for d in datasets], "split": split,
                      "holdout": [str(d) for d in holdout],
                      "boxes": str(detector or "labelled"),
                      **{k: report[k] for k in ("texts", "disagreements", "learned_from", "reader", "ocr",
                                                "better_of_two")},
                      "cross_validated": report["chooser_cross_validated"], "rule": report["rule"]}
    target = Path(out) if out else Path(checkpoint) / CHOICE_FILE
    (kept.with_chooser(screens, chooser) if kept is not None else TextChoosers({screens: chooser})).save(target)
    report.update(screens=screens, written=str(target), seconds=round(time.perf_counter() - t0, 1))
    return report
