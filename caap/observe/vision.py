"""The visual observer: the detector, the reader and PP-OCR loaded once, and every screen taken
through the pipeline of named steps (``caap.observe.pipeline``, the table in
``caap.observe.steps``) into an ``Observation``.

Without a reader the observer is the detector alone: its boxes, cleaned up and fitted to the
pixels, typed by the detector's class, with no text or states (useful to check the detector, and
what ``caap eval detector`` measures). Texts come from ``text_source`` (``caap.observe.steps.texts``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.config import ObserveConfig
from caap.geometry import Box
from caap.observe.detect.detector import Detector
from caap.observe.memo import memo_of, pixel_key
from caap.observe.observation import Observation, Typed
from caap.observe.pipeline import MODELS, Parts, Pipeline, describe
from caap.observe.steps import FIT_STEPS
from caap.observe.text_choice import SCREENS

REPO_ROOT = Path(__file__).resolve().parents[2]
# The detector for any application (desktop toolkits, web pages, every screen size) is the default;
# the MiniWoB++ benchmark keeps the detector fine-tuned on MiniWoB alone, as the paper's agent did:
# on the 67 tasks it reads a few screens better (133 vs 129 of 134 episodes, models/detector/MODEL_CARD.md).
DEFAULT_DETECTOR = REPO_ROOT / "models" / "detector" / "caap-yolov8n-any.pt"
MINIWOB_DETECTOR = REPO_ROOT / "models" / "detector" / "caap-yolov8n-miniwob.pt"
DEFAULT_READER = REPO_ROOT / "models" / "reader"


def miniwob_observe(cfg: ObserveConfig) -> ObserveConfig:
    """The ``[observe]`` section as the MiniWoB++ benchmark uses it: the MiniWoB detector and web
    pages' text chooser, unless the section names others."""
    update: dict[str, Any] = {}
    if cfg.detector is None:
        update["detector"] = MINIWOB_DETECTOR
    if "screens" not in cfg.model_fields_set:
        update["screens"] = "web"
    return cfg.model_copy(update=update) if update else cfg


TYPE_SOURCES = ("reader", "detector")
TEXT_SOURCES = ("reader", "ocr", "auto")
# The config is the one place defaults live.
_OBSERVE = ObserveConfig.model_fields
DEFAULT_TYPE_SOURCE: str = _OBSERVE["type_source"].default
DEFAULT_TEXT_SOURCE: str = _OBSERVE["text_source"].default
DEFAULT_OCR_THRESHOLD: float | None = _OBSERVE["ocr_threshold"].default
DEFAULT_MEMO: int = _OBSERVE["memo"].default
DEFAULT_SCREENS: str = _OBSERVE["screens"].default


def disabled_steps(cfg: ObserveConfig) -> tuple[str, ...]:
    """The steps the ``[observe]`` section switches off: ``disable``, and the fit stage where
    ``snap_text_boxes`` is false."""
    return tuple(dict.fromkeys([*cfg.disable, *(() if cfg.snap_text_boxes else FIT_STEPS)]))


def check_device(device: str) -> str:
    """``device`` (``cpu``, ``cuda``, ``cuda:N``, ``N``, ``auto``) resolved as the reader resolves it
    (``caap.observe.read.configuration.resolve_device``), and one this machine has: a GPU asked for
    where torch sees none is one clear error before any model loads."""
    from caap.observe.read.configuration import resolve_device

    resolved = resolve_device(device)
    if resolved == "cpu":
        return resolved
    if not resolved.startswith("cuda"):
        raise ValueError(f"device must be cpu, cuda, cuda:N or N, not {device!r}")
    import torch

    if not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: torch sees no CUDA device here (an NVIDIA GPU, its driver and "
                         "torch's CUDA build are needed); use device = \"cpu\"")
    return resolved


def scaled_box(box: Box, scale: float, width: int, height: int) -> Box:
    """A box found on a screen shrunk by ``scale``, in the full screen's pixels: grown outwards to
    whole pixels, clipped to the screen."""
    x1, y1, x2, y2 = box
    return (max(0, math.floor(x1 * scale)), max(0, math.floor(y1 * scale)),
            min(width, math.ceil(x2 * scale)), min(height, math.ceil(y2 * scale)))


class VisionObserver:
    """Screenshot → ``Observation``: the models, their settings and the pipeline, loaded once."""

    def __init__(self, detector: Detector | None, reader: Any | None = None, *,
                 type_source: str = DEFAULT_TYPE_SOURCE, text_source: str = DEFAULT_TEXT_SOURCE,
                 ocr: Any | None = None, ocr_threshold: float | None = DEFAULT_OCR_THRESHOLD,
                 ui_scale: float = _OBSERVE["ui_scale"].default, disable: Iterable[str] = (),
                 screens: str = DEFAULT_SCREENS, screen_memo: int = _OBSERVE["screen_memo"].default) -> None:
        if not 0.5 <= ui_scale <= 4.0:
            raise ValueError(f"ui_scale must lie in 0.5-4, not {ui_scale}")
        if type_source not in TYPE_SOURCES:
            raise ValueError(f"type_source must be one of {TYPE_SOURCES}, not {type_source!r}")
        if text_source not in TEXT_SOURCES:
            raise ValueError(f"text_source must be one of {TEXT_SOURCES}, not {text_source!r}")
        if text_source != "reader" and reader is not None and ocr is None:
            raise ValueError(f"text_source {text_source!r} needs an OCR engine (caap.observe.ocr.ppocr.PPOCR)")
        if screens not in SCREENS:
            raise ValueError(f"screens must be one of {SCREENS}, not {screens!r}")
        self.parts = Parts(detector=detector, reader=reader, ocr=ocr, type_source=type_source,
                           text_source=text_source, ocr_threshold=ocr_threshold, screens=screens)
        self.pipeline = Pipeline(disable=disable)
        self.ui_scale = ui_scale
        # Whole observations by the screen's pixels, typed values and names (``screen_memo``).
        self.seen = memo_of(screen_memo)

    @property
    def detector(self) -> Detector | None:
        return self.parts.detector

    @property
    def reader(self) -> Any | None:
        return self.parts.reader

    @property
    def ocr(self) -> Any | None:
        return self.parts.ocr

    @classmethod
    def load(cls, detector_weights: str | Path | None = None, reader_checkpoint: str | Path | None = None, *,
             use_reader: bool = True, conf: float = _OBSERVE["conf"].default, device: str = _OBSERVE["device"].default,
             type_source: str = DEFAULT_TYPE_SOURCE, text_source: str = DEFAULT_TEXT_SOURCE,
             ocr_threshold: float | None = DEFAULT_OCR_THRESHOLD, memo: int = DEFAULT_MEMO,
             max_side: int = _OBSERVE["detector_max_side"].default,
             runtime: str = _OBSERVE["detector_runtime"].default,
             reader_runtime: str = _OBSERVE["reader_runtime"].default,
             ui_scale: float = _OBSERVE["ui_scale"].default, disable: Iterable[str] = (),
             screens: str = DEFAULT_SCREENS, screen_memo: int = _OBSERVE["screen_memo"].default) -> VisionObserver:
        """``memo``: readings of element crops the reader and PP-OCR each remember by their pixels
        (``caap.observe.memo``; 0: every element is read on every screen); ``screen_memo``: whole
        observations remembered by the screen's pixels (0: every screen goes through the steps);
        ``disable``: step names switched off."""
        pipeline = Pipeline(disable=disable)  # an unknown step name fails before any model loads
        resolved = check_device(device)
        detector = Detector(detector_weights or DEFAULT_DETECTOR, conf=conf, device=device, max_side=max_side,
                            runtime=runtime)
        reader = ocr = None
        if use_reader:
            from caap.observe.read.inference import Reader

            reader = Reader(reader_checkpoint or DEFAULT_READER, device=device, memo=memo, runtime=reader_runtime)
            if text_source != "reader":
                from caap.observe.ocr.ppocr import PPOCR

                ocr = PPOCR(memo=memo, device=resolved)
        return cls(detector, reader, type_source=type_source, text_source=text_source, ocr=ocr,
                   ocr_threshold=ocr_threshold, ui_scale=ui_scale, disable=pipeline.disabled, screens=screens,
                   screen_memo=screen_memo)

    @classmethod
    def from_config(cls, cfg: ObserveConfig, *, use_reader: bool = True,
                    disable: Iterable[str] = ()) -> VisionObserver:
        """The observer the ``[observe]`` config section describes (``disable``: more steps off)."""
        return cls.load(cfg.detector, cfg.reader, use_reader=use_reader, conf=cfg.conf, device=cfg.device,
                        type_source=cfg.type_source, text_source=cfg.text_source, ocr_threshold=cfg.ocr_threshold,
                        memo=cfg.memo, max_side=cfg.detector_max_side, runtime=cfg.detector_runtime,
                        reader_runtime=cfg.reader_runtime,
                        ui_scale=cfg.ui_scale, disable=[*disabled_steps(cfg), *disable], screens=cfg.screens,
                        screen_memo=cfg.screen_memo)

    def steps(self) -> list[dict[str, Any]]:
        """The pipeline's steps in order, each with whether it runs in this observer and why not."""
        return describe(self.pipeline.steps, [m for m in MODELS if self.parts.has(m)], self.pipeline.disabled)

    def forget(self) -> None:
        """Drop the observations and readings remembered: the next screen is read as if new."""
        if self.seen is not None:
            self.seen.clear()
        for part in (self.parts.reader, self.parts.ocr):
            memo = getattr(part, "memo", None)
            if memo is not None:
                memo.clear()

    def observe(self, image: Image.Image, typed: Sequence[Typed] = (), names: Sequence[str] = ()) -> Observation:
        """The observation of a screenshot, boxes in its pixels. At a UI scale other than 1 the
        models look at the screen shrunk to the size they were trained at, and the boxes grow back.
        ``typed``: the values the agent typed into fields, read back (``Typed``); ``names``: the
        names the task speaks of, looked for in what is read (``read_task_names``). A screen seen
        in a recent look, with the same values and names, is answered from it (``screen_memo``): a
        copy of its elements, with the time the lookup took and no steps run."""
        if self.seen is None:
            return self._observe(image, typed, names)
        t0 = time.perf_counter()
        key = pixel_key(np.asarray(image), image.mode, tuple(typed), tuple(names), self._settings())
        hit = self.seen.get(key)
        if hit is None:
            seen = self._observe(image, typed, names)
            self.seen.put(key, _copied(seen, seen.timings_ms))
            return seen
        ms = round((time.perf_counter() - t0) * 1000, 2)
        return _copied(hit, {**{k: 0.0 for k in hit.timings_ms}, "total": ms}, steps=False)

    def _settings(self) -> tuple[Any, ...]:
        """What else an observation depends on, as the screen memo's key holds it: the settings, and
        which models are loaded (a model swapped in is another object; ``forget`` after changing one
        in place)."""
        p, reader = self.parts, self.parts.reader
        return (p.type_source, p.text_source, p.ocr_threshold, p.screens, sorted(self.pipeline.disabled),
                self.ui_scale, id(p.detector), id(reader), id(p.ocr),
                *(id(getattr(reader, part, None)) for part in ("choosers", "lm", "state_head", "glyphs")))

    def _observe(self, image: Image.Image, typed: Sequence[Typed], names: Sequence[str]) -> Observation:
        if self.ui_scale == 1.0:
            return self.pipeline.observe(image, self.parts, typed, names)
        t0 = time.perf_counter()
        small = image.resize((max(1, round(image.width / self.ui_scale)), max(1, round(image.height / self.ui_scale))),
                             Image.Resampling.BOX if self.ui_scale > 1 else Image.Resampling.BICUBIC)
        shrunk = [Typed(scaled_box(t.box, 1 / self.ui_scale, small.width, small.height), t.text) for t in typed]
        seen = self.pipeline.observe(small, self.parts, shrunk, names)
        grown = seen.with_elements([e.model_copy(update={"bbox": scaled_box(e.bbox, self.ui_scale, image.width,
                                                                             image.height)})
                                    for e in seen.elements])
        grown.timings_ms["total"] = round((time.perf_counter() - t0) * 1000, 2)
        return grown


def _copied(seen: Observation, timings: dict[str, float], *, steps: bool = True) -> Observation:
    """An observation's own copy (its elements may be changed by whoever holds it)."""
    return Observation([e.model_copy(deep=True) for e in seen.elements], dict(timings),
                       list(seen.steps) if steps else [], list(seen.provenance))
