"""The visual observer: detector boxes, then every element read by the reader in one batch.

Both models are loaded once when the observer is built and reused for every screen. Without a
reader the observer still works, reporting the detector's class as the type and no attributes
(useful to check the detector alone).
"""

from __future__ import annotations

import time
from pathlib import Path

from PIL import Image

from caap.config import ObserveConfig
from caap.elements import Element
from caap.observe.detector import Detector
from caap.taxonomy import SUBTYPE, ElementType, attributes_of

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DETECTOR = REPO_ROOT / "models" / "detector" / "caap-yolov8n-miniwob.pt"
DEFAULT_READER = REPO_ROOT / "models" / "reader"


TYPE_SOURCES = ("reader", "detector")
DEFAULT_TYPE_SOURCE: str = ObserveConfig.model_fields["type_source"].default  # the config is the one place


def merge_reading(detected: Element, read: Element, type_source: str = DEFAULT_TYPE_SOURCE) -> Element:
    """One element from the detector's box and class and the reader's record of it.

    ``reader`` (the paper): the reader's type and attributes; an unreadable generation keeps the
    detector's class. ``detector``: the detector's class wins a disagreement, and the reader's
    attributes are kept where that class carries them too (text, checked, focused, highlighted;
    the subtype only when both agree on the type) — for a reader whose type accuracy is below the
    detector's.
    """
    if read.type == ElementType.UNKNOWN and not read.text:
        read = read.model_copy(update={"type": detected.type})
    if type_source == "reader" or read.type == detected.type or detected.type == ElementType.UNKNOWN:
        return read.model_copy(update={"score": detected.score})
    carried = set(attributes_of(detected.type)) & set(attributes_of(read.type)) - {SUBTYPE}
    values = {name: getattr(read, name) for name in carried if getattr(read, name) is not None}
    return Element(type=detected.type, bbox=read.bbox, score=detected.score, id=read.id, **values)


class VisionObserver:
    """Screenshot → elements. ``last_timings_ms`` holds detect/read/total of the latest screen."""

    def __init__(self, detector: Detector, reader: object | None = None, *,
                 type_source: str = DEFAULT_TYPE_SOURCE) -> None:
        if type_source not in TYPE_SOURCES:
            raise ValueError(f"type_source must be one of {TYPE_SOURCES}, not {type_source!r}")
        self.detector = detector
        self.reader = reader
        self.type_source = type_source
        self.last_timings_ms: dict[str, float] = {}

    @classmethod
    def load(cls, detector_weights: str | Path | None = None, reader_checkpoint: str | Path | None = None, *,
             use_reader: bool = True, conf: float = 0.25, device: str = "cpu",
             type_source: str = DEFAULT_TYPE_SOURCE) -> VisionObserver:
        detector = Detector(detector_weights or DEFAULT_DETECTOR, conf=conf, device=device)
        reader = None
        if use_reader:
            from caap.observe.reader import Reader

            reader = Reader(reader_checkpoint or DEFAULT_READER, device=device)
        return cls(detector, reader, type_source=type_source)

    @classmethod
    def from_config(cls, cfg: ObserveConfig, *, use_reader: bool = True) -> VisionObserver:
        """The observer the ``[observe]`` config section describes."""
        return cls.load(cfg.detector, cfg.reader, use_reader=use_reader, conf=cfg.conf, device=cfg.device,
                        type_source=cfg.type_source)

    def observe(self, image: Image.Image) -> list[Element]:
        t0 = time.perf_counter()
        boxes = self.detector.detect(image)
        t1 = time.perf_counter()
        if self.reader is None or not boxes:
            elements = boxes
        else:
            read = self.reader.read(image, boxes, type_hints=[b.type for b in boxes])  # type: ignore[attr-defined]
            elements = [merge_reading(det, got, self.type_source) for det, got in zip(boxes, read, strict=True)]
        t2 = time.perf_counter()
        self.last_timings_ms = {"detect": round((t1 - t0) * 1000, 2), "read": round((t2 - t1) * 1000, 2),
                                "total": round((t2 - t0) * 1000, 2)}
        return elements
