"""The canonical dataset format (schema version 1): screenshots plus one annotation JSON per image.

Layout of a dataset directory::

    DATASET/
      dataset.json                      {"schema_version": 1, "name": ..., "created": ..., "generator": {...}}
      images/<group>/<stem>.png         the screenshot, exactly as the agent captures it
      labels/<group>/<stem>.json        its annotation (below)

An annotation::

    {"schema_version": 1,
     "image": "images/click-button/click-button-1000-0.png",   # relative to the dataset directory
     "width": 160, "height": 210,
     "source": {"kind": "miniwob", "task": "click-button", "seed": 1000, "step": 0,
                "utterance": "Click on the \\"ok\\" button."},
     "elements": [{"type": "button", "bbox": [x1, y1, x2, y2], "text": "ok", "checked": null,
                   "focused": false, "highlighted": null, "subtype": null}, ...]}

Elements are ``caap.elements.Element`` records (the taxonomy of ``caap.taxonomy``; ``id`` and
``score`` are null in annotations), boxes in image pixels (``caap.geometry``), inside the image.
``<group>`` is the task for MiniWoB++ data and anything the user likes otherwise. The split into
train/validation is by ``source.seed`` (see the exporters), never by random image.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from caap import __version__
from caap.elements import Element
from caap.files import read_json

SCHEMA_VERSION = 1


class DatasetError(ValueError):
    """A dataset, annotation or image that cannot be used; the message names the file and field."""


class Source(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str = "miniwob"
    task: str | None = None
    seed: int | None = None
    step: int | None = None
    utterance: str | None = None
    note: str | None = None
    # The device scale factor the screen was drawn at (HiDPI: 1.25-2): boxes are in captured pixels;
    # the detector's training canvases shrink the screen by it (caap.data.canvas).
    scale: float | None = Field(default=None, ge=0.5, le=4.0, description="None: 1")


class Annotation(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = SCHEMA_VERSION
    image: str
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    source: Source = Field(default_factory=Source)
    elements: list[Element] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self) -> Annotation:
        if self.schema_version != SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {self.schema_version} is not supported (this caap reads {SCHEMA_VERSION})"
            )
        for i, e in enumerate(self.elements):
            x1, y1, x2, y2 = e.bbox
            if x1 < 0 or y1 < 0 or x2 > self.width or y2 > self.height:
                raise ValueError(f"elements[{i}].bbox {list(e.bbox)} lies outside the {self.width}x{self.height} image")
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": self.schema_version,
            "image": self.image,
            "width": self.width,
            "height": self.height,
            "source": self.source.model_dump(exclude_none=True),
            "elements": [_element_record(e) for e in self.elements],
        }


def _element_record(e: Element) -> dict[str, Any]:
    record = e.to_json()
    record.pop("id", None)
    record.pop("score", None)
    record.pop("visible", None)
    return record


def _field(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def parse_annotation(data: Any, source: str) -> Annotation:
    if not isinstance(data, dict):
        raise DatasetError(f"{source}: an annotation must be a JSON object")
    try:
        return Annotation.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = _field(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        raise DatasetError(f"{source}: {where + ': ' if where else ''}{msg}") from None


def load_annotation(path: str | Path) -> Annotation:
    path = Path(path)
    data = read_json(path, DatasetError, missing="no such annotation file",
                     unreadable="not a readable JSON annotation")
    return parse_annotation(data, str(path))


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class Dataset:
    """A dataset directory in the canonical format."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    # --- creating -------------------------------------------------------------------------------
    @classmethod
    def create(cls, root: str | Path, name: str, generator: dict[str, Any] | None = None) -> Dataset:
        """Create (or reopen, keeping what is there) a dataset directory."""
        ds = cls(root)
        meta_path = ds.root / "dataset.json"
        if meta_path.exists():
            ds.meta()  # validates
            return ds
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        _write_atomic(meta_path, json.dumps({
            "schema_version": SCHEMA_VERSION, "name": name, "created": created,
            "caap_version": __version__, "generator": generator or {},
        }, indent=2) + "\n")
        return ds

    def meta(self) -> dict[str, Any]:
        path = self.root / "dataset.json"
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DatasetError(f"{path}: not a caap dataset (no dataset.json)") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise DatasetError(f"{path}: unreadable ({exc})") from None
        if not isinstance(meta, dict) or meta.get("schema_version") != SCHEMA_VERSION:
            raise DatasetError(f"{path}: schema_version must be {SCHEMA_VERSION}")
        return meta

    def add(self, group: str, stem: str, image: Any, annotation: Annotation) -> Path:
        """Save an image (PIL) and its annotation; the annotation is written last, so a crash
        between the two leaves an orphan image, never a label without its image."""
        rel = f"images/{group}/{stem}.png"
        img_path = self.root / rel
        img_path.parent.mkdir(parents=True, exist_ok=True)
        image.save(img_path)
        ann = annotation.model_copy(update={"image": rel, "width": image.width, "height": image.height})
        label_path = self.root / "labels" / group / f"{stem}.json"
        self.save_label(label_path, ann)
        return label_path

    def save_label(self, label_path: Path, annotation: Annotation) -> None:
        """Write a changed annotation over its label file (atomically: the old one or the new one)."""
        _write_atomic(label_path, json.dumps(annotation.to_json(), ensure_ascii=False) + "\n")

    # --- reading --------------------------------------------------------------------------------
    def label_paths(self) -> list[Path]:
        return sorted((self.root / "labels").rglob("*.json"))

    def __iter__(self) -> Iterator[tuple[Path, Annotation]]:
        self.meta()
        for path in self.label_paths():
            yield path, self.load(path)

    def load(self, label_path: Path) -> Annotation:
        ann = load_annotation(label_path)
        if not (self.root / ann.image).is_file():
            raise DatasetError(f"{label_path}: image: {ann.image} does not exist in {self.root}")
        return ann

    def image_path(self, ann: Annotation) -> Path:
        return self.root / ann.image

    def __len__(self) -> int:
        return len(self.label_paths())


def open_dataset(root: str | Path) -> Dataset:
    ds = Dataset(root)
    if not ds.root.is_dir():
        raise DatasetError(f"{ds.root}: no such dataset directory")
    ds.meta()
    return ds
