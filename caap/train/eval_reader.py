"""Evaluate the element reader on a caap dataset, with Tesseract OCR beside it as the peer for text.

Two ways to choose the boxes the reader reads:

* labelled (default): the ground-truth boxes — the reader alone;
* detected (``detector=WEIGHTS``): the detector's boxes, as ``caap observe`` reads them. Each one
  is matched one-to-one to a labelled element (IoU >= 0.5, highest score first) and scored against
  it; unmatched boxes are read (they cost time) but not scored, and missed elements are counted.
  The latency then also covers the whole observation (detect + read) per screen.

Result (``evaluate``)::

    {"dataset", "checkpoint", "device", "boxes", "screens", "elements",
     "type_accuracy", "exact_match",          # exact: type and every attribute the type carries
     "unreadable",                            # generations that did not parse (read as unknown)
     "text": {"elements", "exact_match", "cer"},     # elements whose true type carries a known text
     "attributes": {"checked" | "focused" | "highlighted" | "subtype": {"elements", "accuracy"}},
     "per_type": {type: {"elements", "type_accuracy", "exact_match"}},
     "latency_ms": {"cpu": {...}, "gpu": {...}},     # gpu only with CUDA; one batched read per screen
     "detection": {"detector", "labelled", "matched", "missed", "unmatched_boxes"},   # detected boxes only
     "observe_ms": {"per_screen", "per_screen_up_to_20", ...},  # detect + read per screen; detected only
     "tesseract": {"elements", "exact_match", "cer", "ms_per_element", "ms_per_screen", "version", ...}
                  or {"error": "..."}}

CER is the character error rate: Levenshtein edits over all text elements / their total length. A
predicted type that carries no text counts as the empty text. Attribute accuracies are over the
elements whose true value is known (not null); a missing prediction is wrong.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from PIL import Image

from caap.data.format import Annotation, DatasetError, open_dataset
from caap.elements import Element
from caap.observe.reader import Reader, ReaderError, same_record
from caap.taxonomy import CHECKED, FOCUSED, HIGHLIGHTED, SUBTYPE, TEXT, ElementType, attributes_of
from caap.train.eval_detector import match_boxes

STATE_ATTRIBUTES = (CHECKED, FOCUSED, HIGHLIGHTED, SUBTYPE)
TESSERACT_UPSCALE = 3  # MiniWoB text is ~10 px high; Tesseract wants ~30 px capitals
TESSERACT_PSM = 7      # "treat the image as a single text line"


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions) between two strings."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


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


def evaluate(data: str | Path, checkpoint: str | Path, *, device: str = "cpu", limit: int | None = None,
             tesseract: bool = True, latency_screens: int = 50, threads: int | None = None,
             detector: str | Path | None = None, iou_match: float = 0.5) -> dict[str, Any]:
    """Reader accuracy and latency on every labelled element of ``data`` (``limit``: an even spread
    of that many screens), plus Tesseract's text accuracy on the same elements (module docstring).
    ``detector``: weights whose boxes the reader reads instead of the labelled ones.
    ``latency_screens``: screens timed on the other device (GPU when the main pass ran on the CPU and
    CUDA is present; CPU otherwise); ``threads``: torch CPU threads (process-wide; None: torch's default)."""
    screens = _screens(data, limit)
    if threads:
        import torch

        torch.set_num_threads(threads)
    reader = Reader(checkpoint, device=device)
    det = None
    if detector is not None:
        from caap.observe.detector import Detector, DetectorError

        try:
            det = Detector(detector, device=device)
        except DetectorError as exc:
            raise ReaderError(str(exc)) from None
    detection = {"labelled": 0, "matched": 0, "missed": 0, "unmatched_boxes": 0}
    observe_times: list[tuple[float, int]] = []  # (ms, boxes) per screen
    counts: dict[str, float] = defaultdict(float)
    attr = {name: [0, 0] for name in STATE_ATTRIBUTES}  # right, total
    per_type: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # elements, type right, exact
    times: list[float] = []
    timed_elements = 0
    warmed = False
    for image_path, ann in screens:
        if not ann.elements:
            continue
        image = _load(image_path)
        t_detect = 0.0
        found: list[Element] = []
        if det is None:
            boxes, golds = [e.bbox for e in ann.elements], list(ann.elements)
        else:
            t0 = time.perf_counter()
            found = det.detect(image)
            t_detect = time.perf_counter() - t0
            boxes = [e.bbox for e in found]
            matched = match_boxes([(e.score or 0.0, e.bbox) for e in found], [e.bbox for e in ann.elements],
                                  iou_match)
            golds = [ann.elements[j] if j >= 0 else None for j in matched]
            detection["labelled"] += len(ann.elements)
            detection["matched"] += sum(j >= 0 for j in matched)
            detection["unmatched_boxes"] += sum(j < 0 for j in matched)
            if not boxes:
                continue
        if not warmed:
            reader.read(image, boxes)  # first call pays one-off costs (allocations, kernel selection)
            warmed = True
        t0 = time.perf_counter()
        predicted = reader.read(image, boxes)
        read_s = time.perf_counter() - t0
        times.append(read_s * 1000)
        timed_elements += len(boxes)
        if det is not None:
            observe_times.append(((t_detect + read_s) * 1000, len(boxes)))
        for i, (gold, pred) in enumerate(zip(golds, predicted, strict=True)):
            if gold is not None:
                _score(gold, pred, counts, attr, per_type)
                if det is not None:  # the detector's class as the type, for comparison with the reader's
                    counts["detector_type_right"] += found[i].type == gold.type
    n = int(counts["elements"])
    kind = "cpu" if reader.device == "cpu" else "gpu"
    latency = {kind: _timing(times, timed_elements)} if times else {}
    latency.update(_other_latency(checkpoint, screens, kind, latency_screens))
    extra: dict[str, Any] = {}
    if det is not None:
        detection["missed"] = detection["labelled"] - detection["matched"]
        extra["detection"] = {"detector": str(detector), "iou": iou_match, **detection,
                              "detector_type_accuracy": _ratio(counts["detector_type_right"], n)}
        extra["observe_ms"] = _observe_timing(observe_times)
    return {
        "dataset": str(data),
        "checkpoint": str(checkpoint),
        "device": reader.device,
        "boxes": "labelled" if det is None else "detected",
        "screens": len(screens),
        "elements": n,
        "type_accuracy": _ratio(counts["type_right"], n),
        "exact_match": _ratio(counts["exact"], n),
        "unreadable": int(counts["unknown"]),
        "text": {"elements": int(counts["text_n"]), "exact_match": _ratio(counts["text_exact"], counts["text_n"]),
                 "cer": _ratio(counts["text_edits"], counts["text_chars"])},
        "attributes": {name: {"elements": total, "accuracy": _ratio(right, total)}
                       for name, (right, total) in attr.items()},
        "per_type": {t: {"elements": v[0], "type_accuracy": _ratio(v[1], v[0]), "exact_match": _ratio(v[2], v[0])}
                     for t, v in sorted(per_type.items())},
        "latency_ms": latency,
        "tesseract": tesseract_eval(screens) if tesseract else {"error": "not run (tesseract=False)"},
        **extra,
    }


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


def _score(gold: Element, pred: Element, counts: dict[str, float], attr: dict[str, list[int]],
           per_type: dict[str, list[int]]) -> None:
    counts["elements"] += 1
    type_right = pred.type == gold.type
    exact = same_record(pred, gold)
    counts["type_right"] += type_right
    counts["exact"] += exact
    counts["unknown"] += pred.type is ElementType.UNKNOWN
    row = per_type[gold.type.value]
    row[0] += 1
    row[1] += type_right
    row[2] += exact
    if TEXT in attributes_of(gold.type) and gold.text is not None:
        said = pred.text if pred.text is not None and TEXT in attributes_of(pred.type) else ""
        counts["text_n"] += 1
        counts["text_exact"] += said == gold.text
        counts["text_edits"] += levenshtein(said, gold.text)
        counts["text_chars"] += len(gold.text)
    for name in STATE_ATTRIBUTES:
        truth = getattr(gold, name)
        if truth is not None:
            attr[name][1] += 1
            attr[name][0] += getattr(pred, name) == truth


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
        image, boxes = _load(path), [e.bbox for e in ann.elements]
        if i == 0:
            reader.read(image, boxes)  # warm-up
        t0 = time.perf_counter()
        reader.read(image, boxes)
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
