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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.config import ObserveConfig
from caap.elements import Element
from caap.geometry import Box, intersection
from caap.observe import partial
from caap.observe.detect.detector import Detector
from caap.observe.memo import memo_of, pixel_key
from caap.observe.observation import GIVEN, Observation, Provenance, StepRun, Typed
from caap.observe.pipeline import DETECT_STEP, MODELS, Parts, Pipeline, describe, legacy_timings
from caap.observe.primitives import page_colour
from caap.observe.steps import FIT_STEPS, WHOLE_SCREEN_STEPS
from caap.observe.text_choice import SCREENS

REPO_ROOT = Path(__file__).resolve().parents[2]
DRAWN_FOCUS = "read_drawn_focus"  # the step that gives the focus a window draws
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
                 screens: str = DEFAULT_SCREENS, screen_memo: int = _OBSERVE["screen_memo"].default,
                 partial_look: float = _OBSERVE["partial_look"].default) -> None:
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
        if not 0.0 <= partial_look <= 1.0:
            raise ValueError(f"partial_look must lie in 0-1 (a share of the screen), not {partial_look}")
        self.parts = Parts(detector=detector, reader=reader, ocr=ocr, type_source=type_source,
                           text_source=text_source, ocr_threshold=ocr_threshold, screens=screens)
        self.pipeline = Pipeline(disable=disable)
        self.ui_scale = ui_scale
        # Whole observations by the screen's pixels, typed values and names (``screen_memo``).
        self.seen = memo_of(screen_memo)
        # The last look, for a partial look at the next screen (``partial_look``; 0: off).
        self.partial_look = partial_look
        self.last: _LastLook | None = None
        self.looked_at = 1.0  # the share of the last screen that went through the steps (1: whole)
        self._cutting: Pipeline | None = None

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
             screens: str = DEFAULT_SCREENS, screen_memo: int = _OBSERVE["screen_memo"].default,
             partial_look: float = _OBSERVE["partial_look"].default) -> VisionObserver:
        """``memo``: readings of element crops the reader and PP-OCR each remember by their pixels
        (``caap.observe.memo``; 0: every element is read on every screen); ``screen_memo``: whole
        observations remembered by the screen's pixels (0: every screen goes through the steps);
        ``partial_look``: a screen changed since the last look only in regions up to this share of
        it is looked at there alone (0: every screen whole); ``disable``: step names switched off."""
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
                   screen_memo=screen_memo, partial_look=partial_look)

    @classmethod
    def from_config(cls, cfg: ObserveConfig, *, use_reader: bool = True,
                    disable: Iterable[str] = ()) -> VisionObserver:
        """The observer the ``[observe]`` config section describes (``disable``: more steps off)."""
        return cls.load(cfg.detector, cfg.reader, use_reader=use_reader, conf=cfg.conf, device=cfg.device,
                        type_source=cfg.type_source, text_source=cfg.text_source, ocr_threshold=cfg.ocr_threshold,
                        memo=cfg.memo, max_side=cfg.detector_max_side, runtime=cfg.detector_runtime,
                        reader_runtime=cfg.reader_runtime,
                        ui_scale=cfg.ui_scale, disable=[*disabled_steps(cfg), *disable], screens=cfg.screens,
                        screen_memo=cfg.screen_memo, partial_look=cfg.partial_look)

    def steps(self) -> list[dict[str, Any]]:
        """The pipeline's steps in order, each with whether it runs in this observer and why not."""
        return describe(self.pipeline.steps, [m for m in MODELS if self.parts.has(m)], self.pipeline.disabled)

    def forget(self) -> None:
        """Drop the observations and readings remembered: the next screen is read as if new."""
        self.last = None
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
        copy of its elements, with the time the lookup took and no steps run. A screen that changed
        only in part since the last look is looked at only where it changed (``partial_look``)."""
        t0 = time.perf_counter()
        pixels = np.asarray(image)  # its own array: the caller may go on drawing on the image
        settings = self._settings()
        key = None
        if self.seen is not None:
            key = pixel_key(pixels, image.mode, tuple(typed), tuple(names), settings)
            hit = self.seen.get(key)
            if hit is not None:
                self.looked_at = 0.0
                self.last = _LastLook(pixels, image.mode, tuple(names), tuple(typed), settings, *hit)
                ms = round((time.perf_counter() - t0) * 1000, 2)
                return _copied(hit[0], {**{k: 0.0 for k in hit[0].timings_ms}, "total": ms}, steps=False,
                               look="again")
        seen, detected = self._look(image, pixels, typed, names, settings, t0)
        kept = _copied(seen, seen.timings_ms)  # the caller may change the elements it is handed
        if self.seen is not None and key is not None:
            self.seen.put(key, (kept, detected))
        self.last = _LastLook(pixels, image.mode, tuple(names), tuple(typed), settings, kept, detected)
        return seen

    def _look(self, image: Image.Image, pixels: np.ndarray, typed: Sequence[Typed], names: Sequence[str],
              settings: tuple[Any, ...], t0: float) -> tuple[Observation, list[Element] | None]:
        """The whole screen through the steps, or only where it changed since the last look; and the
        detector's boxes on the whole screen (None: not known, no detector or another UI scale)."""
        self.looked_at = 1.0
        if self.partial_look == 0 or self.ui_scale != 1.0 or self.parts.detector is None:
            return self._observe(image, typed, names), None
        last = self.last
        if last is not None and not last.fits(pixels, image.mode, tuple(names), settings):
            last = None
        changed: list[Box] = []
        if last is not None:
            changed = partial.changed_boxes(last.pixels, pixels)
            # A field the agent typed into since (or a value taken back) is read again with the values now.
            changed += [t.box for t in set(last.typed) ^ set(typed)]
            if not changed:  # the screen memo is off, or forgot it: nothing to look at
                self.looked_at = 0.0
                timings = {**{k: 0.0 for k in last.observation.timings_ms},
                           "total": round((time.perf_counter() - t0) * 1000, 2)}
                return _copied(last.observation, timings, steps=False, look="again"), last.detected
        # The detector looks at the whole screen, in a partial look too: on a cut-out alone it sees
        # less round an element and finds other boxes (a spinner's arrows missed, a glyph's box cut).
        t1 = time.perf_counter()
        detected = self.parts.detector.detect(image)
        runs = [StepRun(DETECT_STEP, "detect", round((time.perf_counter() - t1) * 1000, 2), len(detected), 0, 0)]
        if last is not None:
            # What the detector sees otherwise where no pixel changed (a label's box cut by a menu
            # that has closed since) is a change too: the elements it touches are looked at again.
            changed += partial.detector_changes(last.detected or [], detected)
            todo = partial.plan(changed, last.observation.elements, image.size, detected)
            share = partial.area_share(todo.cutouts, image.width, image.height)
            if share <= self.partial_look:
                self.looked_at = share
                return self._partial(image, todo, last.observation, detected, runs, typed, names, t0), detected
        whole = self.pipeline.observe(image, self.parts, typed, names, detected=detected)
        return self._timed(whole.elements, runs + whole.steps, whole.provenance, "whole", t0), detected

    def _partial(self, image: Image.Image, todo: partial.Plan, last: Observation, detected: list[Element],
                 runs: list[StepRun], typed: Sequence[Typed], names: Sequence[str], t0: float) -> Observation:
        """The last look's elements outside the changed regions, and each region's cut-out through
        the steps after the detector (``detected``: its boxes on the whole screen) as a screen of
        its own (``caap.observe.partial``)."""
        kept = [last.elements[i].model_copy(deep=True) for i in todo.kept]
        origins = len(last.provenance) == len(last.elements)
        provenance = [last.provenance[i] for i in todo.kept] if origins else []
        if origins:  # a focus the last look's rule gave is weighed again by it, on this screen
            kept = [e.model_copy(update={"focused": False}) if e.focused and DRAWN_FOCUS in origin.changed_by else e
                    for e, origin in zip(kept, provenance, strict=True)]
        found: list[Element] = []
        cutting = self._cutout_pipeline()
        page = page_colour(image)  # ink on a cut-out is what differs from the screen's page, not the cut-out's
        for cut, region in zip(todo.cutouts, todo.regions, strict=True):
            x0, y0, x1, y1 = cut
            inside = [Typed((max(0, b[0] - x0), max(0, b[1] - y0), min(x1, b[2]) - x0, min(y1, b[3]) - y0), t.text)
                      for t in typed if intersection(b := t.box, cut) > 0]
            boxes = [partial.cut_to(e, cut) for e in detected if intersection(e.bbox, cut) > 0]
            sub = cutting.observe(image.crop(cut), self.parts, inside, names, detected=boxes, page=page)
            new = partial.new_in_region(sub.elements, cut, region, kept)
            found += [partial.shifted(sub.elements[i], x0, y0) for i in new]
            origins = origins and len(sub.provenance) == len(sub.elements)
            provenance += [sub.provenance[i] for i in new] if origins else []
            runs += sub.steps
        elements = kept + found
        # The steps that weigh an element against the rest of the screen, once, over all of it.
        whole = self.pipeline.look(image, self.parts)
        whole.provenance = provenance if origins else [GIVEN] * len(elements)
        elements = self.pipeline.run(whole, elements, only=WHOLE_SCREEN_STEPS)
        return self._timed(elements, runs + whole.steps, whole.provenance if origins else [], "part", t0)

    def _cutout_pipeline(self) -> Pipeline:
        """The pipeline a partial look runs on its cut-outs: this one less the whole-screen steps."""
        off = self.pipeline.disabled | set(WHOLE_SCREEN_STEPS)
        if self._cutting is None or self._cutting.disabled != off:
            self._cutting = Pipeline(self.pipeline.steps, disable=off)
        return self._cutting

    def _timed(self, elements: list[Element], runs: list[StepRun], provenance: list[Provenance], look: str,
               t0: float) -> Observation:
        """An observation of steps run in parts (the detector on the whole screen, the rest on cut-outs)."""
        steps = summed_runs(runs)
        timings = legacy_timings(steps, ocr=self.parts.ocr is not None)
        timings["total"] = round((time.perf_counter() - t0) * 1000, 2)
        return Observation(elements, timings, steps, provenance, look=look)

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


def _copied(seen: Observation, timings: dict[str, float], *, steps: bool = True,
            look: str | None = None) -> Observation:
    """An observation's own copy (its elements may be changed by whoever holds it)."""
    return Observation([e.model_copy(deep=True) for e in seen.elements], dict(timings),
                       list(seen.steps) if steps else [], list(seen.provenance), look or seen.look)


@dataclass(frozen=True)
class _LastLook:
    """The observer's last look: the screen's pixels, what the look was given, its observation and
    the detector's boxes on the whole screen (None: not known)."""

    pixels: np.ndarray
    mode: str
    names: tuple[str, ...]
    typed: tuple[Typed, ...]
    settings: tuple[Any, ...]
    observation: Observation
    detected: list[Element] | None

    def fits(self, pixels: np.ndarray, mode: str, names: tuple[str, ...], settings: tuple[Any, ...]) -> bool:
        """Whether a screen may be looked at as this one changed in part: the detector's boxes
        known, and the same size, mode, task names and settings."""
        return (self.detected is not None and self.pixels.shape == pixels.shape and self.mode == mode
                and self.names == names and self.settings == settings)


def summed_runs(runs: Sequence[StepRun]) -> list[StepRun]:
    """The runs of each step over several cut-outs as one run per step, in the order steps ran."""
    out: dict[str, StepRun] = {}
    for r in runs:
        s = out.get(r.name)
        out[r.name] = r if s is None else StepRun(r.name, r.stage, round(s.ms + r.ms, 2), s.added + r.added,
                                                  s.changed + r.changed, s.removed + r.removed)
    return list(out.values())
