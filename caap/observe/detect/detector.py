"""The UI element detector used by the observer: YOLOv8 weights loaded once, boxes in
captured-image pixels, overlapping duplicates merged, one-line text boxes snapped to the words
they cover and words of their lines and rows of their lists that no box holds added
(``caap.observe.steps.snap``), small figures and icons fitted to their ink (``caap.observe.steps.shape_fit``),
the predicted type kept as a hint for the reader."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from caap.config import ObserveConfig
from caap.elements import Element
from caap.geometry import as_box, clip, iou_matrix
from caap.observe.primitives import rgb_pixels
from caap.observe.steps.cells import fit_cells
from caap.observe.steps.frames import grow_framed_icons
from caap.observe.steps.label_stacks import centred_label_stacks
from caap.observe.steps.separators import split_at_separators
from caap.observe.steps.shape_fit import fit_icons, fit_small_shapes
from caap.observe.steps.snap import SURE_SCORE, add_missed_rows, add_missed_words, snap_text_boxes, split_links
from caap.taxonomy import DETECTOR_CLASSES, ElementType

_OBSERVE = ObserveConfig.model_fields  # the config section is the one place defaults live
STRIDE = 32  # YOLOv8's largest stride: input sizes are multiples of it
RUNTIMES = ("auto", "openvino", "onnx", "torch")


class DetectorError(RuntimeError):
    """Weights that cannot be used; the message names the file."""


class Detector:
    def __init__(self, weights: str | Path, *, conf: float = _OBSERVE["conf"].default, iou: float = 0.6,
                 merge_iou: float = 0.7, imgsz: int | None = None, device: str = _OBSERVE["device"].default,
                 snap: bool = _OBSERVE["snap_text_boxes"].default,
                 max_side: int = _OBSERVE["detector_max_side"].default,
                 runtime: str = _OBSERVE["detector_runtime"].default) -> None:
        """``imgsz``: one input size for every image; None (the observer's way): each image at its
        own resolution (``input_size``), at most ``max_side``. ``runtime``: ``onnx`` runs the
        weights' ONNX graph (exported once, ``caap.observe.detect.onnx_export``) in ONNX Runtime,
        ``openvino`` the same graph in OpenVINO at full float precision
        (``caap.observe.detect.openvino_runtime``), ``torch`` the weights themselves; ``auto``: on the CPU
        OpenVINO where it is installed, else ONNX Runtime, falling back to torch with one warning
        where the export cannot be made."""
        if runtime not in RUNTIMES:
            raise DetectorError(f"detector runtime must be one of {RUNTIMES}, not {runtime!r}")
        os.environ.setdefault("YOLO_OFFLINE", "1")
        path = Path(weights)
        if not path.is_file():
            raise DetectorError(f"{path}: detector weights not found")
        if path.stat().st_size < 1024:
            raise DetectorError(f"{path}: detector weights are truncated ({path.stat().st_size} bytes)")
        try:
            # On its first run ultralytics announces a new settings file on stdout, which would
            # corrupt `caap observe --json`: its chatter goes to stderr.
            with contextlib.redirect_stdout(sys.stderr):
                from ultralytics import YOLO
        except ImportError:
            raise DetectorError("the detector needs ultralytics: pip install 'caap[vision]'") from None
        try:
            with contextlib.redirect_stdout(sys.stderr):
                self.model = YOLO(str(path), task="detect")
            names = dict(self.model.names)
        except Exception as exc:  # torch/pickle/zip errors of every kind for a corrupt file
            raise DetectorError(f"{path}: not loadable YOLO weights ({type(exc).__name__}: {exc})") from None
        # Weights trained before the taxonomy grew know its first classes only (new types are
        # appended, so their indices still mean the same types); any other list is not caap's.
        expected = {i: t.value for i, t in enumerate(DETECTOR_CLASSES[:len(names)])}
        if not names or names != expected:
            raise DetectorError(f"{path}: classes {list(names.values())} are not caap's taxonomy "
                                f"{[t.value for t in DETECTOR_CLASSES]} (or its first classes)")
        self.path = path
        self.runtime = "torch"
        if runtime in ("onnx", "openvino") or (runtime == "auto" and str(device) == "cpu"):
            self._use_graph(path, runtime, names)
        self.conf, self.iou, self.merge_iou, self.device, self.snap = conf, iou, merge_iou, device, snap
        self.imgsz, self.max_side = imgsz, max(max_side, STRIDE)

    def _use_graph(self, path: Path, runtime: str, names: dict[int, str]) -> None:
        """Swap the torch model for its ONNX graph (same classes, same boxes): in OpenVINO or ONNX
        Runtime as ``runtime`` asks (``auto``: OpenVINO where it is installed)."""
        from ultralytics import YOLO

        from caap.observe.detect import openvino_runtime
        from caap.observe.detect.onnx_export import cache_dir, onnx_for

        if runtime == "openvino" and not openvino_runtime.available():
            raise DetectorError("the openvino detector runtime needs OpenVINO: pip install 'caap[vision]'")
        use = "openvino" if runtime == "openvino" or (runtime == "auto" and openvino_runtime.available()) else "onnx"
        model: Any
        try:
            graph = onnx_for(path)
            if use == "openvino":
                model = openvino_runtime.OpenVinoDetector(graph, names, STRIDE, cache_dir() / "openvino")
            else:
                with contextlib.redirect_stdout(sys.stderr):
                    model = YOLO(str(graph), task="detect")
        except Exception as exc:
            if runtime != "auto":
                raise DetectorError(str(exc)) from None
            print(f"caap: running the detector in torch: {exc}", file=sys.stderr)
            return
        self.model, self.runtime = model, use

    def input_size(self, width: int, height: int) -> int:
        """The network's input size for an image: its long side rounded up to the network's stride,
        so elements keep the pixel size they were trained at (a 160x210 MiniWoB screen: 224, as the
        MiniWoB detector trained; a 1080p screen: 1,920; canvas-trained weights: any screen), at
        most ``max_side``."""
        if self.imgsz is not None:
            return self.imgsz
        native = -(-max(width, height) // STRIDE) * STRIDE
        return min(native, self.max_side // STRIDE * STRIDE)

    def detect(self, image: Image.Image) -> list[Element]:
        return self.detect_batch([image])[0]

    def detect_batch(self, images: Sequence[Image.Image]) -> list[list[Element]]:
        """Elements (type hint, box, score) per image; boxes clipped to each image."""
        if not images:
            return []
        import torch

        # ultralytics sets torch to os.cpu_count() - 1 threads when it picks the CPU: on a 2-core
        # machine the reader and everything after the first detection would run on one core.
        threads = torch.get_num_threads()
        try:
            return self._detect_batch(images)
        finally:
            torch.set_num_threads(threads)

    def _detect_batch(self, images: Sequence[Image.Image]) -> list[list[Element]]:

        # One predict call per input size (ultralytics letterboxes a batch to one size).
        sizes = [self.input_size(img.width, img.height) for img in images]
        results: list[Any] = [None] * len(images)
        for size in dict.fromkeys(sizes):
            index = [i for i, s in enumerate(sizes) if s == size]
            arrays = [rgb_pixels(images[i])[:, :, ::-1] for i in index]  # ultralytics takes BGR
            got = self.model.predict(arrays, conf=self.conf, iou=self.iou, imgsz=size, device=self.device,
                                     agnostic_nms=True, verbose=False)
            for i, r in zip(index, got, strict=True):
                results[i] = r
        return [self._elements(r, img) for r, img in zip(results, images, strict=True)]

    def _elements(self, result: Any, image: Image.Image) -> list[Element]:
        boxes = result.boxes
        found: list[Element] = []
        for xyxy, cls, score in zip(boxes.xyxy.tolist(), boxes.cls.tolist(), boxes.conf.tolist(), strict=True):
            x1, y1, x2, y2 = xyxy
            box = clip((int(x1 + 0.5), int(y1 + 0.5), int(x2 + 0.5), int(y2 + 0.5)), image.width, image.height)
            if box is None:
                continue
            found.append(Element(type=DETECTOR_CLASSES[int(cls)], bbox=as_box(box), score=round(float(score), 4)))
        found = drop_spanning_rows(merge_duplicates(found, self.merge_iou))
        # Snapping fits the text boxes to the words on the screen, then finds the words of their lines
        # that no box holds (short inline links the network misses).
        if not self.snap:
            return found
        found = fit_icons(image, grow_framed_icons(image, fit_small_shapes(image, found)))
        found = fit_cells(image, snap_text_boxes(image, found))
        found = add_missed_words(image, split_at_separators(image, split_links(image, found)))
        return centred_label_stacks(image, add_missed_rows(image, merge_overlapping_words(found)))


def merge_duplicates(elements: list[Element], threshold: float = 0.7) -> list[Element]:
    """Keep the most confident of boxes that cover the same thing (whatever class each was given)."""
    ranked = sorted(elements, key=lambda e: -(e.score or 0.0))
    if len(ranked) < 2:
        return ranked
    overlap = iou_matrix([e.bbox for e in ranked])  # every pair at once: a full-size screen has hundreds of boxes
    kept: list[int] = []
    for i in range(len(ranked)):
        if not kept or overlap[i, kept].max() < threshold:
            kept.append(i)
    return [ranked[i] for i in kept]


WORD_TYPES = (ElementType.TEXT, ElementType.HYPERLINK)
MIN_WORD_OVERLAP_PX = 3  # words on a line stand a space apart: boxes overlapping more are one thing
SAME_LINE = 0.7          # share of the lower box's height two boxes must share to lie on one line


def _one_thing(a: Element, b: Element) -> bool:
    """Two sure boxes of one word class on one line that run into each other."""
    if a.type != b.type or a.type not in WORD_TYPES or min(a.score or 0.0, b.score or 0.0) < SURE_SCORE:
        return False
    shared_y = min(a.bbox[3], b.bbox[3]) - max(a.bbox[1], b.bbox[1])
    shared_x = min(a.bbox[2], b.bbox[2]) - max(a.bbox[0], b.bbox[0])
    lower = min(a.bbox[3] - a.bbox[1], b.bbox[3] - b.bbox[1])
    return shared_y >= SAME_LINE * lower and shared_x >= MIN_WORD_OVERLAP_PX


def merge_overlapping_words(elements: list[Element]) -> list[Element]:
    """One box for text or link boxes of one class on one line that overlap: the words of a line
    stand a space apart, so two boxes that run into each other cover one thing the network boxed
    twice, in two parts ("ullamco" and "amcorper" for the link "ullamcorper") or a part inside the
    whole; the reader gets the union and reads it once. The most confident box's score stands."""
    merged = list(elements)
    i = 0
    while i < len(merged):
        a = merged[i]
        j = next((j for j in range(i + 1, len(merged)) if _one_thing(a, merged[j])), None)
        if j is None:
            i += 1
            continue
        b = merged.pop(j)
        box = (min(a.bbox[0], b.bbox[0]), min(a.bbox[1], b.bbox[1]),
               max(a.bbox[2], b.bbox[2]), max(a.bbox[3], b.bbox[3]))
        # The union may reach a third box: look again from the same place.
        merged[i] = (a if (a.score or 0.0) >= (b.score or 0.0) else b).model_copy(update={"bbox": box})
    return merged


ROW_TYPES = (ElementType.TABLED_TEXT,)


def drop_spanning_rows(elements: list[Element]) -> list[Element]:
    """Drop a row box that spans two or more rows the detector also found: the network sometimes
    proposes one box over two neighbouring selected list rows ("Theodora Catherine"), and an agent
    clicking it hits whichever row lies under its middle. A box goes when it holds the middles of
    at least two other boxes of its class, each more confident than it, that share most of its
    width (a sure row never goes for the sake of unsure ones below the confidence threshold)."""
    rows = [e for e in elements if e.type in ROW_TYPES]
    if len(rows) < 3:
        return elements
    drop: set[int] = set()
    for e in rows:
        x1, y1, x2, y2 = e.bbox
        held = [r for r in rows if r is not e and (r.score or 0.0) >= (e.score or 0.0)
                and y1 < (r.bbox[1] + r.bbox[3]) / 2 < y2
                and min(x2, r.bbox[2]) - max(x1, r.bbox[0]) >= 0.5 * min(x2 - x1, r.bbox[2] - r.bbox[0])]
        if len(held) >= 2:
            drop.add(id(e))
    return [e for e in elements if id(e) not in drop]
