"""The detector's ONNX graph run by OpenVINO, in full float precision.

On this project's 2-core CPU OpenVINO runs the YOLOv8n graph on a 1080p screen (1920x1088) in about
four fifths of ONNX Runtime's time (``caap bench observe`` gives the end-to-end numbers). Left to
itself OpenVINO computes in bfloat16 on CPUs that have it (AMX, AVX-512 BF16): three times as fast
here, but the boxes move by a few pixels and the observer found 5 fewer of 3,624 labelled elements
on the reserved MiniWoB++ screens, so the graph is compiled for f32 and gives ONNX Runtime's boxes.

ultralytics' own OpenVINO backend leaves the precision to OpenVINO, so the steps around the
network are done here with ultralytics' functions: its letterbox (grey padding to the stride),
its non-maximum suppression and its box rescaling, as its predictor calls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAX_DET = 300  # ultralytics' predictor default


@dataclass
class Boxes:
    """One image's detections in the shape ``caap.observe.detect.detector`` reads from ultralytics' Results."""

    xyxy: Any
    cls: Any
    conf: Any


@dataclass
class Result:
    boxes: Boxes


def available() -> bool:
    """Whether OpenVINO is installed (the vision extra brings it)."""
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


class OpenVinoDetector:
    """A YOLO detection graph compiled once for the CPU; ``predict`` answers as ``YOLO.predict``
    does for the arguments the detector passes."""

    def __init__(self, graph: Path, names: dict[int, str], stride: int = 32, cache: Path | None = None) -> None:
        import openvino as ov

        core = ov.Core()
        if cache is not None:  # compiled kernels kept between runs: later loads take a fraction of the time
            cache.mkdir(parents=True, exist_ok=True)
            core.set_property({"CACHE_DIR": str(cache)})
        self.compiled = core.compile_model(core.read_model(str(graph)), "CPU",
                                           {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"})
        self.names, self.stride = dict(names), stride

    def predict(self, images: Sequence[np.ndarray], *, conf: float, iou: float, imgsz: int,
                agnostic_nms: bool = True, **_: Any) -> list[Result]:
        """Detections for BGR uint8 images (H × W × 3), each letterboxed to ``imgsz``: to the
        smallest stride multiple round it where all images share one shape, as ultralytics does."""
        import torch
        from ultralytics.data.augment import LetterBox
        from ultralytics.utils import nms, ops

        if not images:
            return []
        same = len({im.shape for im in images}) == 1
        letterbox = LetterBox((imgsz, imgsz), auto=same, stride=self.stride)
        boxed = np.stack([np.asarray(letterbox(image=np.ascontiguousarray(im))) for im in images])
        batch = np.ascontiguousarray(boxed[..., ::-1].transpose(0, 3, 1, 2), dtype=np.float32) / 255.0
        raw = torch.from_numpy(self.compiled(batch)[0])
        found = nms.non_max_suppression(raw, conf, iou, None, agnostic_nms, max_det=MAX_DET)
        results = []
        for det, image in zip(found, images, strict=True):
            det[:, :4] = ops.scale_boxes((batch.shape[2], batch.shape[3]), det[:, :4], image.shape)
            results.append(Result(Boxes(xyxy=det[:, :4], cls=det[:, 5], conf=det[:, 4])))
        return results
