"""The visual observer: detector boxes, then every element read by the reader in one batch.

Both models are loaded once when the observer is built and reused for every screen. Without a
reader the observer still works, reporting the detector's class as the type and no attributes
(useful to check the detector alone).
"""

from __future__ import annotations

import time
from pathlib import Path

from PIL import Image

from caap.elements import Element
from caap.observe.detector import Detector
from caap.taxonomy import ElementType

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DETECTOR = REPO_ROOT / "models" / "detector" / "caap-yolov8n-miniwob.pt"
DEFAULT_READER = REPO_ROOT / "models" / "reader"


class VisionObserver:
    """Screenshot → elements. ``last_timings_ms`` holds detect/read/total of the latest screen."""

    def __init__(self, detector: Detector, reader: object | None = None) -> None:
        self.detector = detector
        self.reader = reader
        self.last_timings_ms: dict[str, float] = {}

    @classmethod
    def load(cls, detector_weights: str | Path | None = None, reader_checkpoint: str | Path | None = None, *,
             use_reader: bool = True, conf: float = 0.25, device: str = "cpu") -> VisionObserver:
        detector = Detector(detector_weights or DEFAULT_DETECTOR, conf=conf, device=device)
        reader = None
        if use_reader:
            from caap.observe.reader import Reader

            reader = Reader(reader_checkpoint or DEFAULT_READER, device=device)
        return cls(detector, reader)

    def observe(self, image: Image.Image) -> list[Element]:
        t0 = time.perf_counter()
        boxes = self.detector.detect(image)
        t1 = time.perf_counter()
        if self.reader is None or not boxes:
            elements = boxes
        else:
            read = self.reader.read(image, boxes, type_hints=[b.type for b in boxes])  # type: ignore[attr-defined]
            elements = []
            for det, got in zip(boxes, read, strict=True):
                # The reader decides the type; an unreadable generation keeps the detector's guess.
                if got.type == ElementType.UNKNOWN and not got.text:
                    got = got.model_copy(update={"type": det.type})
                elements.append(got.model_copy(update={"score": det.score}))
        t2 = time.perf_counter()
        self.last_timings_ms = {"detect": round((t1 - t0) * 1000, 2), "read": round((t2 - t1) * 1000, 2),
                                "total": round((t2 - t0) * 1000, 2)}
        return elements
