"""Evaluate the detector on a caap dataset: precision and recall at IoU 0.5 over all labelled
elements (class-agnostic: the reader decides the type) and per class, COCO-style AP50 and AP50-95
per class, and latency per image on CPU (and GPU when one is present)."""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.data.format import Dataset, open_dataset
from caap.geometry import iou
from caap.observe.detect.detector import Detector
from caap.observe.steps import FIT_STEPS
from caap.observe.vision import VisionObserver
from caap.taxonomy import DETECTOR_CLASSES

IOU_THRESHOLDS = [round(0.5 + 0.05 * i, 2) for i in range(10)]


def match_boxes(preds: list[tuple[float, tuple[int, int, int, int]]], gts: list[tuple[int, int, int, int]],
                threshold: float, *, centres: bool = False) -> list[int]:
    """Greedy one-to-one matching, highest score first: for each prediction (in the given order) the
    index of its ground-truth box (IoU >= ``threshold``, the best free one), or -1. ``centres``: a
    pair matches instead when each box's centre lies inside the other (a click at the predicted
    centre lands on the element, and the box is not a whole panel round it), best IoU first."""
    used = [False] * len(gts)
    matched = [-1] * len(preds)
    for i in sorted(range(len(preds)), key=lambda k: -preds[k][0]):
        best, best_j = (-1.0 if centres else threshold), -1
        for j, g in enumerate(gts):
            if used[j] or (centres and not (_centre_in(preds[i][1], g) and _centre_in(g, preds[i][1]))):
                continue
            o = iou(preds[i][1], g)
            if o >= best:
                best, best_j = o, j
        if best_j >= 0:
            used[best_j] = True
            matched[i] = best_j
    return matched


def _centre_in(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    x, y = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    return b[0] <= x <= b[2] and b[1] <= y <= b[3]


def _match(preds: list[tuple[float, tuple[int, int, int, int]]], gts: list[tuple[int, int, int, int]],
           threshold: float, *, centres: bool = False) -> list[bool]:
    """Is each prediction, in score order, a true positive?"""
    ordered = sorted(preds, key=lambda p: -p[0])
    return [j >= 0 for j in match_boxes(ordered, gts, threshold, centres=centres)]


def _ap(scores: list[float], hits: list[bool], n_gt: int) -> float:
    """COCO 101-point interpolated average precision."""
    if n_gt == 0:
        return float("nan")
    if not scores:
        return 0.0
    order = np.argsort(-np.asarray(scores))
    tp = np.cumsum(np.asarray(hits)[order])
    fp = np.cumsum(~np.asarray(hits)[order])
    recall = tp / n_gt
    precision = tp / np.maximum(tp + fp, 1e-9)
    precision = np.maximum.accumulate(precision[::-1])[::-1]
    points = np.linspace(0, 1, 101)
    idx = np.searchsorted(recall, points, side="left")
    return float(np.mean([precision[i] if i < len(precision) else 0.0 for i in idx]))


def detector_observer(weights: str | Path, *, conf: float, device: str, snap: bool = True,
                      disable: Sequence[str] = ()) -> VisionObserver:
    """The detector with the observer's steps that follow it (detect and fit stages: without a
    reader no proposal or reading step runs). ``snap`` False: the fit stage off; ``disable``: more
    steps off by name."""
    steps = dict.fromkeys([*disable, *(() if snap else FIT_STEPS)])
    return VisionObserver(Detector(weights, conf=conf, device=device), None, disable=steps)


def evaluate(dataset_root: str | Path, weights: str | Path, *, conf: float = 0.25, iou_match: float = 0.5,
             device: str = "cpu", latency_images: int = 200, snap: bool = True,
             disable: Sequence[str] = ()) -> dict[str, Any]:
    open_dataset(dataset_root)
    items = list(Dataset(dataset_root))
    # Low threshold for AP; `conf` applies to P/R. The detector's boxes go through the observer's
    # steps for them (``snap`` False: the fit stage off; ``disable``: steps off by name).
    detector = detector_observer(weights, conf=0.001, device=device, snap=snap, disable=disable)
    ds = Dataset(dataset_root)
    tp = fp = fn = centred = 0
    # Per task (a MiniWoB task, a desktop app): labelled, found at IoU 0.5, found by centres.
    per_task: dict[str, dict[str, int]] = defaultdict(lambda: {"labelled": 0, "found": 0, "centres": 0})
    # Per labelled type, found by any box (class-agnostic, as "found" above): what the agent misses.
    per_type: dict[str, dict[str, int]] = defaultdict(lambda: {"labelled": 0, "found": 0, "centres": 0})
    per_class: dict[str, dict[str, int]] = defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "gt": 0})
    ap_pool: dict[str, dict[float, tuple[list[float], list[bool]]]] = defaultdict(
        lambda: {t: ([], []) for t in IOU_THRESHOLDS})
    gt_count: dict[str, int] = defaultdict(int)
    for _, ann in items:
        with Image.open(ds.image_path(ann)) as im:
            image = im.convert("RGB")
        found = detector.observe(image).elements
        kept = [e for e in found if (e.score or 0) >= conf]
        gts = [e.bbox for e in ann.elements]
        scored = [(e.score or 0, e.bbox) for e in kept]
        ordered = sorted(scored, key=lambda p: -p[0])
        hit_gts = {j for j in match_boxes(ordered, gts, iou_match) if j >= 0}
        centre_gts = {j for j in match_boxes(ordered, gts, iou_match, centres=True) if j >= 0}
        tp += len(hit_gts)
        fp += len(scored) - len(hit_gts)
        fn += len(gts) - len(hit_gts)
        centred += len(centre_gts)
        task = per_task[ann.source.task or "?"]
        task["labelled"] += len(gts)
        task["found"] += len(hit_gts)
        task["centres"] += len(centre_gts)
        for j, e in enumerate(ann.elements):
            kind = per_type[e.type.value]
            kind["labelled"] += 1
            kind["found"] += j in hit_gts
            kind["centres"] += j in centre_gts
        for t in DETECTOR_CLASSES:
            name = t.value
            g = [e.bbox for e in ann.elements if e.type == t]
            gt_count[name] += len(g)
            k = [(e.score or 0, e.bbox) for e in kept if e.type == t]
            h = _match(k, g, iou_match)
            c = per_class[name]
            c["gt"] += len(g)
            c["tp"] += sum(h)
            c["fp"] += len(h) - sum(h)
            c["fn"] += len(g) - sum(h)
            everything = sorted([(e.score or 0, e.bbox) for e in found if e.type == t], key=lambda p: -p[0])
            for thr in IOU_THRESHOLDS:
                scores, flags = ap_pool[name][thr]
                scores.extend(s for s, _ in everything)
                flags.extend(_match(everything, g, thr))
    classes: dict[str, Any] = {}
    for t in DETECTOR_CLASSES:
        name = t.value
        c = per_class[name]
        aps = [_ap(*ap_pool[name][thr], gt_count[name]) for thr in IOU_THRESHOLDS]
        classes[name] = {
            "gt": c["gt"],
            "precision": _ratio(c["tp"], c["tp"] + c["fp"]),
            "recall": _ratio(c["tp"], c["tp"] + c["fn"]),
            "ap50": round(aps[0], 4) if gt_count[name] else None,
            "ap50_95": round(float(np.mean(aps)), 4) if gt_count[name] else None,
        }
    present = [v for v in classes.values() if v["ap50"] is not None]
    return {
        "dataset": str(dataset_root),
        "weights": str(weights), "snap_text_boxes": snap, "disabled_steps": sorted(detector.pipeline.disabled),
        "images": len(items),
        "elements": tp + fn,
        "conf": conf,
        "iou": iou_match,
        "overall": {"precision": _ratio(tp, tp + fp), "recall": _ratio(tp, tp + fn), "tp": tp, "fp": fp, "fn": fn,
                    # Labelled elements a prediction covers centre to centre (see match_boxes): how
                    # many are clickable where the IoU rule counts a box drawn another way as missed.
                    "recall_by_centres": _ratio(centred, tp + fn)},
        "per_task": _shares(per_task),
        "per_type": _shares(per_type),
        "map50": round(float(np.mean([v["ap50"] for v in present])), 4) if present else None,
        "map50_95": round(float(np.mean([v["ap50_95"] for v in present])), 4) if present else None,
        "per_class": classes,
        "latency_ms": latency(weights, [ds.image_path(a) for _, a in items[:latency_images]], conf=conf, snap=snap,
                              disable=disable),
    }


def _shares(counts: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    return {name: {**c, "found_share": _ratio(c["found"], c["labelled"]),
                   "centres_share": _ratio(c["centres"], c["labelled"])} for name, c in sorted(counts.items())}


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def latency(weights: str | Path, paths: list[Path], *, conf: float = 0.25, snap: bool = True,
            disable: Sequence[str] = ()) -> dict[str, Any]:
    """Per-image detect() time (model loaded, one screen at a time, as the observer calls it)."""
    out: dict[str, Any] = {}
    devices = ["cpu"]
    try:
        import torch

        if torch.cuda.is_available():
            devices.append("0")
    except ImportError:
        pass
    images = []
    for p in paths:
        with Image.open(p) as im:
            images.append(im.convert("RGB"))
    for device in devices:
        det = detector_observer(weights, conf=conf, device=device, snap=snap, disable=disable)
        for img in images[:5]:
            det.observe(img)  # warm-up
        times = []
        for img in images:
            t = time.perf_counter()
            det.observe(img)
            times.append((time.perf_counter() - t) * 1000)
        if times:
            times.sort()
            out["cpu" if device == "cpu" else "gpu"] = {
                "mean": round(statistics.fmean(times), 2), "p50": round(times[len(times) // 2], 2),
                "p90": round(times[int(len(times) * 0.9)], 2), "images": len(times)}
    return out
