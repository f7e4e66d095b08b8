"""The observer as one ordered pipeline of named steps, and the runner that executes it.

A screen goes through five stages, each a run of steps (the table is ``caap.observe.steps.STEPS``)::

    detect   the detector's boxes and the clean-up of its output
    fit      the detector's boxes fitted to the pixels (text to its words, icons to their ink, ...)
    propose  boxes the detector misses, found from the pixels (glyphs, bars, scrollbars, lines, ...)
    read     the reader's record of every box, PP-OCR where the reader is unsure, the text chooser
    settle   corrections on the pixels around what was read (figures, control kinds, grips, ...)

A step is one function ``(look, elements) -> elements``: ``look`` is the screen being observed (its
pixels, computed once and shared, the observer's models and settings, and what earlier steps left
for later ones, such as the reader's readings); a step returns a new list and never changes an
element in place (it makes a changed copy). The runner times every step and works out what it did
by comparing the lists before and after: an element kept as the same object is unchanged, one with
the same box or overlapping a vanished one by half (IoU) is that element changed, anything else is
new; what is left of the old list was removed. So every element carries its ``Provenance``.

Steps are switched off by name (``[observe] disable``, ``caap observe --disable-step``), and a step
whose model is missing (no reader: the detector alone; no PP-OCR: ``text_source = "reader"``) does
not run. ``caap eval reader`` and ``caap eval detector`` run this same table, whole or in parts
(``Pipeline.run``'s ``start`` and ``stop``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import iou_between
from caap.observe.observation import GIVEN, Observation, Provenance, StepRun, Typed
from caap.observe.primitives import one_screen, page_difference, page_ink

if TYPE_CHECKING:
    from caap.observe.detect.detector import Detector
    from caap.observe.glyphs import Found
    from caap.observe.ocr.ppocr import PPOCR
    from caap.observe.read.inference import Reader, Readings
    from caap.observe.text_choice import TextChooser

STAGES = ("detect", "fit", "propose", "read", "settle")
MODELS = ("detector", "reader", "ocr")
DETECT_STEP = "detect_elements"  # the step that runs the detector (caap.observe.steps)
SAME_ELEMENT_IOU = 0.5  # a new box overlapping a vanished one this much is that element, moved or refitted


class PipelineError(ValueError):
    """A pipeline that cannot be built or run as asked; the message names the step."""


@dataclass(frozen=True)
class Step:
    """One named step: its ``stage``, a one-line ``purpose``, the function, and the models it needs
    (it does not run where one is missing)."""

    name: str
    stage: str
    purpose: str
    run: Callable[[Look, list[Element]], list[Element]]
    needs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise PipelineError(f"step {self.name}: stage {self.stage!r} is not one of {STAGES}")
        unknown = set(self.needs) - set(MODELS)
        if unknown:
            raise PipelineError(f"step {self.name}: needs unknown models {sorted(unknown)} (known: {MODELS})")


@dataclass
class Parts:
    """The observer's models and the settings its steps read. ``reader`` None: the detector alone
    (no proposals, no reading); ``ocr`` None: no PP-OCR step runs."""

    detector: Detector | None = None
    reader: Reader | None = None
    ocr: PPOCR | None = None
    type_source: str = "detector"
    text_source: str = "auto"
    ocr_threshold: float | None = None  # None: the kind of screen's own (steps.texts.SCREENS_OCR_THRESHOLD)
    screens: str = "desktop"  # what is observed: desktop windows or web pages (text_choice.SCREENS)

    @property
    def chooser(self) -> TextChooser | None:
        """The reader's text chooser for these ``screens``, where the text source is ``auto`` and
        the reader has choosers."""
        if self.text_source != "auto" or self.reader is None or self.reader.choosers is None:
            return None
        return self.reader.choosers.for_screens(self.screens)

    def has(self, model: str) -> bool:
        return getattr(self, model) is not None


@dataclass
class Look:
    """One screen being observed. ``image`` is what the steps see (a step may replace it, e.g. with
    a field's stray ink painted over, through ``replace_image``); the screen-wide arrays below are
    computed once for it. ``readings``: the reader's readings of the current elements, in their
    order (the read step sets them; later steps use its CTC texts and frames)."""

    image: Image.Image
    parts: Parts
    readings: Readings | None = None
    reading_boxes: list[Element] | None = None  # the boxes the readers read in, where a step narrowed them
    states_read: bool = False  # the state head has read the states (the pixel rules for them stand down)
    glyphs: list[Found] | None = None  # the reader's bank's glyphs drawn on the screen, once looked for
    typed: tuple[Typed, ...] = ()  # the values the agent typed into fields (``Typed``), to read back
    names: tuple[str, ...] = ()  # the names the task speaks of (``steps.task_names``), to look for
    page: np.ndarray | None = None  # the page's colour where the image is a cut-out of a screen (its screen's)
    states_ahead: bool = False  # the state head's step will run: the reader need not write what it reads
    steps: list[StepRun] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)
    _arrays: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    screen: Image.Image = field(init=False)  # the screen as taken, whatever ``replace_image`` does to ``image``

    def __post_init__(self) -> None:
        self.screen = self.image

    def replace_image(self, image: Image.Image) -> None:
        if image is not self.image:
            self.image = image
            self._arrays.clear()

    @property
    def page_difference(self) -> np.ndarray:
        """How far each pixel lies from the page's background colour (``primitives.page_difference``)."""
        if "difference" not in self._arrays:
            self._arrays["difference"] = page_difference(self.image, self.page)
        return self._arrays["difference"]

    @property
    def page_ink(self) -> np.ndarray:
        """Where the page is drawn on (``primitives.page_ink`` of ``page_difference``)."""
        if "ink" not in self._arrays:
            self._arrays["ink"] = page_ink(self.image, difference=self.page_difference)
        return self._arrays["ink"]


def _same_or_new(before: Sequence[Element], after: Sequence[Element], origins: Sequence[Provenance],
                 step: str) -> tuple[list[Provenance], int, int, int]:
    """Each element of ``after`` with its provenance, and how many were added, changed, removed.

    The same object is the same element, unchanged. Then, among the elements left on both sides:
    one with an equal box is that element (changed where any field differs), and one overlapping a
    left-over old element by ``SAME_ELEMENT_IOU`` is that element changed (moved, fitted); the rest
    are new, and the old elements matched by nothing were removed."""
    if len(after) == len(before) and all(a is b for a, b in zip(after, before, strict=True)):
        return list(origins), 0, 0, 0  # most steps leave most screens as they are
    where = {id(e): i for i, e in enumerate(before)}
    used = [False] * len(before)
    out: list[Provenance | None] = [None] * len(after)
    pending: list[int] = []
    for j, e in enumerate(after):
        i = where.get(id(e))
        if i is not None and not used[i]:
            used[i] = True
            out[j] = origins[i]
        else:
            pending.append(j)
    added = changed = 0
    if pending:
        by_box: dict[tuple[int, ...], list[int]] = {}
        for i, e in enumerate(before):
            if not used[i]:
                by_box.setdefault(tuple(e.bbox), []).append(i)
        unmatched: list[int] = []
        for j in pending:
            same = [i for i in by_box.get(tuple(after[j].bbox), []) if not used[i]]
            if same:
                i = same[0]
                used[i] = True
                if before[i].__dict__ == after[j].__dict__:  # the fields alike: rebuilt, not changed
                    out[j] = origins[i]
                else:
                    out[j], changed = origins[i].changed(step), changed + 1
            else:
                unmatched.append(j)
        free = [i for i in range(len(before)) if not used[i]]
        if unmatched and free:
            overlap = iou_between([after[j].bbox for j in unmatched], [before[i].bbox for i in free])
        for row, j in enumerate(unmatched):
            col = int(np.argmax(overlap[row])) if free else -1
            if col >= 0 and overlap[row, col] >= SAME_ELEMENT_IOU:
                used[free[col]] = True
                overlap[:, col] = -1.0  # an old element is one new element at most
                out[j], changed = origins[free[col]].changed(step), changed + 1
            else:
                out[j], added = Provenance(step), added + 1
    removed = used.count(False)
    return [o if o is not None else Provenance(step) for o in out], added, changed, removed


class Pipeline:
    """The ordered steps of observation (``caap.observe.steps.STEPS`` unless given), less the ones
    ``disable`` names. Unknown names in ``disable`` are an error that lists the known ones."""

    def __init__(self, steps: Sequence[Step] | None = None, disable: Iterable[str] = ()) -> None:
        if steps is None:
            from caap.observe.steps import STEPS

            steps = STEPS
        names = [s.name for s in steps]
        if len(set(names)) != len(names):
            raise PipelineError(f"step names repeat: {sorted({n for n in names if names.count(n) > 1})}")
        order = [STAGES.index(s.stage) for s in steps]
        if order != sorted(order):
            raise PipelineError("steps must come stage by stage: " + ", ".join(f"{s.name} ({s.stage})" for s in steps))
        self.disabled = frozenset(disable)
        unknown = self.disabled - set(names)
        if unknown:
            raise PipelineError(f"no step named {', '.join(sorted(unknown))}; the steps are: {', '.join(names)}")
        self.steps = tuple(steps)

    def enabled(self, parts: Parts) -> list[Step]:
        """The steps that run with these parts: not switched off, every model they need present."""
        return [s for s in self.steps if s.name not in self.disabled and all(parts.has(m) for m in s.needs)]

    def _index(self, name: str | None, default: int) -> int:
        if name is None:
            return default
        for i, s in enumerate(self.steps):
            if s.name == name or s.stage == name:
                return i
        raise PipelineError(f"no step or stage named {name!r}")

    def look(self, image: Image.Image, parts: Parts) -> Look:
        """A new look at ``image`` for ``run``."""
        look = Look(image, parts)
        look.states_ahead = "read_states" not in self.disabled and parts.has("reader")
        return look

    def run(self, look: Look, elements: Sequence[Element] | None = None, *, start: str | None = None,
            stop: str | None = None, only: Iterable[str] | None = None) -> list[Element]:
        """Run the enabled steps from ``start`` up to (not including) ``stop`` — step or stage
        names; None: the first step, the end — on ``elements`` (None: the look's latest elements,
        or none). Each step's timing and effect are appended to ``look.steps`` and each element's
        provenance kept in ``look.provenance``. Elements handed in from outside the pipeline (labelled
        boxes) count as ``given``. ``only``: of those steps, the ones of these names alone."""
        first, last = self._index(start, 0), self._index(stop, len(self.steps))
        current = list(elements) if elements is not None else []
        if len(look.provenance) != len(current):
            look.provenance = [GIVEN] * len(current)
        wanted = {s.name for s in self.enabled(look.parts)}
        if only is not None:
            wanted &= set(only)
        with one_screen():  # each image's RGB array made once for every step below
            for s in self.steps[first:last]:
                if s.name not in wanted:
                    continue
                t0 = time.perf_counter()
                after = s.run(look, current)
                ms = round((time.perf_counter() - t0) * 1000, 2)
                look.provenance, added, changed, removed = _same_or_new(current, after, look.provenance, s.name)
                look.steps.append(StepRun(s.name, s.stage, ms, added, changed, removed))
                current = after
        return current

    def observe(self, image: Image.Image, parts: Parts, typed: Sequence[Typed] = (),
                names: Sequence[str] = (), detected: Sequence[Element] | None = None,
                page: np.ndarray | None = None) -> Observation:
        """Every enabled step on ``image`` (``typed``: the values the agent typed into fields, read
        back; ``names``: the names the task speaks of): the observation with its timings and
        provenance. ``detected``: the detector's boxes on ``image``, found already (a partial look
        detects on the whole screen and observes a cut-out of it): the steps after it run on them;
        ``page``: the page's colour, where ``image`` is a cut-out (the screen's, not the cut-out's)."""
        look = self.look(image, parts)
        look.typed = tuple(typed)
        look.names = tuple(names)
        look.page = page
        if detected is None:
            elements = self.run(look)
        else:
            after = [s.name for s in self.steps].index(DETECT_STEP) + 1
            look.provenance = [Provenance(DETECT_STEP)] * len(detected)
            elements = self.run(look, detected, start=self.steps[after].name if after < len(self.steps) else None)
        return Observation(elements, legacy_timings(look.steps, ocr=parts.ocr is not None), look.steps,
                           look.provenance)


def legacy_timings(steps: Sequence[StepRun], *, ocr: bool) -> dict[str, float]:
    """The observe contract's ``timings_ms`` (DESIGN §7): ``detect`` (the stages up to reading),
    ``read`` (the reader's steps), ``ocr`` (PP-OCR's reading steps, where an engine is loaded) and
    ``total`` (every step)."""
    from caap.observe.steps import OCR_READ_STEPS

    detect = sum(r.ms for r in steps if r.stage in ("detect", "fit", "propose"))
    on_ocr = sum(r.ms for r in steps if r.name in OCR_READ_STEPS)
    read = sum(r.ms for r in steps if r.stage == "read") - on_ocr
    out = {"detect": round(detect, 2), "read": round(read, 2)}
    if ocr:
        out["ocr"] = round(on_ocr, 2)
    out["total"] = round(sum(r.ms for r in steps), 2)
    return out


def describe(steps: Sequence[Step], available: Iterable[str] | None = None,
             disabled: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The steps as rows for ``caap observe --list-steps``: order, name, stage, purpose, needs, and
    (where the models ``available`` are said) whether each runs and why not."""
    off = set(disabled)
    have = None if available is None else set(available)
    rows = []
    for i, s in enumerate(steps, 1):
        row: dict[str, Any] = {"order": i, "name": s.name, "stage": s.stage, "purpose": s.purpose,
                               "needs": list(s.needs)}
        if have is not None:
            missing = [m for m in s.needs if m not in have]
            row["runs"] = s.name not in off and not missing
            row["why_not"] = "disabled" if s.name in off else (f"no {', '.join(missing)}" if missing else None)
        rows.append(row)
    return rows
