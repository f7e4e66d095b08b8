"""The UI element detector: YOLOv8 weights loaded once (run in OpenVINO, ONNX Runtime or torch),
each screen looked at at its own resolution, the network's boxes in captured-image pixels with their
class (a hint for the reader) and score. What the observer does with them next — duplicates merged,
boxes fitted to their words and ink — are the named steps of ``caap.observe.steps``."""

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
from caap.geometry import as_box, clip
from caap.observe.primitives import rgb_pixels
from caap.taxonomy import DETECTOR_CLASSES

_OBSERVE = ObserveConfig.model_fields  # the config section is the one place defaults live
STRIDE = 32  # YOLOv8's largest stride: input sizes are multiples of it
RUNTIMES = ("auto", "openvino", "onnx", "torch")


class DetectorError(RuntimeError):
    """Weights that cannot be used; the message names the file."""


class Detector:
    def __init__(self, weights: str | Path, *, conf: float = _OBSERVE["conf"].default, iou: float = 0.6,
                 imgsz: int | None = None, device: str = _OBSERVE["device"].default,
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
        self.conf, self.iou, self.device = conf, iou, device
        self.imgsz, self.max_side = imgsz, max(max_side, STRIDE)

    def _use_graph(self, path: Path, runtime: str, names: dict[int, str]) -> None:
        """Swap the torch model for its ONNX graph (same classes, same boxes): in OpenVINO or ONNX
        Runtime as ``runtime`` asks (``auto``: OpenVINO where it is installed)."""
        from ultralytics import YOLO

        from caap.files import cache_dir
        from caap.observe.detect import openvino_runtime
        from caap.observe.detect.onnx_export import onnx_for

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
        """The network's boxes after non-maximum suppression, in whole pixels, clipped to the image."""
        boxes = result.boxes
        found: list[Element] = []
        for xyxy, cls, score in zip(boxes.xyxy.tolist(), boxes.cls.tolist(), boxes.conf.tolist(), strict=True):
            x1, y1, x2, y2 = xyxy
            box = clip((int(x1 + 0.5), int(y1 + 0.5), int(x2 + 0.5), int(y2 + 0.5)), image.width, image.height)
            if box is None:
                continue
            found.append(Element(type=DETECTOR_CLASSES[int(cls)], bbox=as_box(box), score=round(float(score), 4)))
        return found
