"""What an observer returns for one screen: the elements, how long each stage and step took, and
which step made each element what it is.

``Observation.to_json`` is the ``caap observe --json`` record: DESIGN §7's ``elements`` and
``timings_ms`` (``detect``, ``read``, ``ocr`` where PP-OCR ran, ``total``) as they always were, plus
``stages_ms`` and ``steps_ms``; with ``explain``, each element's ``provenance``: the step that
added it and the steps that changed it after.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from PIL import Image

from caap.elements import Element


@dataclass(frozen=True)
class Provenance:
    """Where an element came from: the step that added it and, in order, the steps that changed it
    (its box, type or attributes). ``given``: it was handed to the pipeline (a file, labels)."""

    added_by: str
    changed_by: tuple[str, ...] = ()

    def changed(self, step: str) -> Provenance:
        return Provenance(self.added_by, (*self.changed_by, step))

    def to_json(self) -> dict[str, Any]:
        return {"added_by": self.added_by, "changed_by": list(self.changed_by)}


GIVEN = Provenance("given")


@dataclass(frozen=True)
class StepRun:
    """What one step did to one screen's element list."""

    name: str
    stage: str
    ms: float
    added: int
    changed: int
    removed: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "stage": self.stage, "ms": self.ms, "added": self.added,
                "changed": self.changed, "removed": self.removed}


@dataclass
class Observation:
    """One screen observed: ``elements`` (boxes in the screenshot's pixels), ``timings_ms`` (the
    observe contract's detect / read / ocr / total), the steps that ran in order, and one
    ``Provenance`` per element (same order as ``elements``; empty where the observer keeps none).
    ``look``: how the screen was looked at — ``whole`` (every step on the whole screen), ``part``
    (only where it changed since the last look, ``caap.observe.partial``) or ``again`` (a screen
    seen before, answered from memory)."""

    elements: list[Element]
    timings_ms: dict[str, float] = field(default_factory=dict)
    steps: list[StepRun] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)
    look: str = "whole"

    @property
    def stages_ms(self) -> dict[str, float]:
        """Milliseconds per stage, in the order the stages ran."""
        out: dict[str, float] = {}
        for run in self.steps:
            out[run.stage] = round(out.get(run.stage, 0.0) + run.ms, 2)
        return out

    @property
    def steps_ms(self) -> dict[str, float]:
        """Milliseconds per step that ran, in order."""
        return {run.name: run.ms for run in self.steps}

    def with_elements(self, elements: list[Element]) -> Observation:
        """The same observation with the elements replaced one for one (ids given, boxes scaled):
        the provenance stays with each element."""
        if len(elements) != len(self.elements):
            raise ValueError(f"{len(elements)} elements replace {len(self.elements)}: not one for one")
        return Observation(elements, dict(self.timings_ms), list(self.steps), list(self.provenance), self.look)

    def numbered(self) -> Observation:
        """The observation as one screen on its own is reported (``caap observe``): elements in
        reading order with ids 1..n (``IdTracker``), each keeping its provenance."""
        from caap.observe.order import reading_order
        from caap.observe.tracking import IdTracker

        tracker = IdTracker()
        tracked = tracker.update(self.elements)
        provenance: list[Provenance] = []
        if len(self.provenance) == len(self.elements):
            position = {id(e): i for i, e in enumerate(self.elements)}
            provenance = [self.provenance[position[id(e)]]
                          for e in reading_order(self.elements, tracker.row_tolerance)]
        return Observation(tracked, dict(self.timings_ms), list(self.steps), provenance, self.look)

    def to_json(self, *, explain: bool = False) -> dict[str, Any]:
        """The observe-contract record (DESIGN §7) with per-stage and per-step timings; with
        ``explain``, each element also has its ``provenance``."""
        elements = [e.to_json() for e in self.elements]
        if explain and len(self.provenance) == len(elements):
            for record, origin in zip(elements, self.provenance, strict=True):
                record["provenance"] = origin.to_json()
        return {"elements": elements, "timings_ms": dict(self.timings_ms), "stages_ms": self.stages_ms,
                "steps_ms": self.steps_ms, "look": self.look}


@dataclass(frozen=True)
class Typed:
    """A value the agent typed into a text field: the field's box on the screen it was typed on, and
    the text the field should hold now. The observer may read such a field back with the value as
    the one it expects (``caap.observe.steps.typed``): a reading that differs only where the pixels
    are hard to read (a grey heading under the value) is set right when a second reader reads the
    value exactly; a field that holds something else keeps its reading."""

    box: tuple[int, int, int, int]
    text: str


MIN_NAME = 3  # characters: shorter words ("x", "4", "on") are too easily another word's misreading
_WORD = re.compile(r"[^\s\"'“”‘’()\[\]{}<>,;:!?]+")


def task_names(task: str) -> tuple[str, ...]:
    """The words of ``task`` that may name something on the screen: each word of at least
    ``MIN_NAME`` characters that holds a letter, without the punctuation around it, in order."""
    words = (w.strip(".") for w in _WORD.findall(task or ""))
    return tuple(dict.fromkeys(w for w in words if len(w) >= MIN_NAME and any(c.isalpha() for c in w)))


@runtime_checkable
class Observer(Protocol):
    """Screenshot → ``Observation`` (elements without ids; the loop's tracker assigns them).
    ``typed``: the values the agent typed into fields, for observers that read fields back;
    ``names``: the names the task speaks of (``task_names``; ``caap.observe.steps.task_names``), for
    observers that check what they read against them."""

    def observe(self, image: Image.Image, typed: Sequence[Typed] = (), names: Sequence[str] = ()) -> Observation: ...


class StaticObserver:
    """Returns a fixed element list (``caap run --elements``), whatever the image."""

    def __init__(self, elements: list[Element]) -> None:
        self.elements = elements

    def observe(self, image: Image.Image, typed: Sequence[Typed] = (), names: Sequence[str] = ()) -> Observation:
        copies = [e.model_copy() for e in self.elements]
        return Observation(copies, {"detect": 0.0, "read": 0.0, "total": 0.0}, [], [GIVEN] * len(copies))
