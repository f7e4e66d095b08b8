"""Exporters from the canonical dataset format: an ultralytics YOLO detection dataset for the
detector, and JSON Lines element samples for the reader.

Both split train/validation **by seed** (``source.seed``), never by random image: screens from one
MiniWoB++ episode (same seed, several steps) and the augmented copies of a screen are
near-duplicates, and letting them straddle the split would make validation scores meaningless.

Split spec syntax (``SplitRule.parse``)::

    SIDE:SEEDS
      SIDE   val | train        the seeds named go to SIDE, every other seeded image to the other split
      SEEDS  RANGES             comma-separated seeds and inclusive ranges: 2800-2999  or  2800-2999,3005
           | everyN[+R]         every seed with seed % N == R (R defaults to 0): every10, every10+3

    "val:2800-2999"   seeds 2800..2999 are validation, the rest train
    "val:every10"     seeds divisible by 10 are validation (a 10% hold-out)
    "train:0-999"     seeds 0..999 are training, the rest validation

Annotations without a seed (hand-made screenshots, say) always go to **train**: they cannot be
tied to an episode, so they could leak into a seed-clean validation set.

Outputs are built in a fresh temporary directory next to the target and moved into place only
once complete, so a failure never leaves a half-written export nor harms an earlier one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from caap.data.format import Annotation, DatasetError, open_dataset
from caap.data.reserved import check_trainable
from caap.seeds import SeedRangeError, format_seed_ranges, parse_ranges
from caap.taxonomy import DETECTOR_CLASSES, TYPE_ATTRIBUTES, ElementType

Split = Literal["train", "val"]
SPLITS: tuple[Split, Split] = ("train", "val")

# --- seeds and split rules ----------------------------------------------------------------------

_EVERY = re.compile(r"^\s*every\s*(\d+)\s*(?:\+\s*(\d+)\s*)?$", re.IGNORECASE)


@dataclass(frozen=True)
class SplitRule:
    """Which seeds go to validation. See the module docstring for the spec syntax."""

    side: Split = "val"
    ranges: tuple[tuple[int, int], ...] = ()
    every: int | None = None
    remainder: int = 0

    def __post_init__(self) -> None:
        if self.side not in SPLITS:
            raise DatasetError(f"split rule: side must be 'train' or 'val', not '{self.side}'")
        if (self.every is None) == (not self.ranges):
            raise DatasetError("split rule: give either seed ranges or every=N, not both or neither")
        if self.every is not None and not (self.every >= 1 and 0 <= self.remainder < self.every):
            raise DatasetError(f"split rule: every{self.every}+{self.remainder}: need N >= 1 and 0 <= R < N")

    @classmethod
    def parse(cls, spec: str) -> SplitRule:
        """``"val:2800-2999"``, ``"val:2800-2999,3005"``, ``"val:every10"``, ``"val:every10+3"``, ``"train:0-999"``."""
        side, sep, seeds = spec.partition(":")
        side = side.strip().lower()
        if not sep or side not in SPLITS:
            raise DatasetError(
                f"split spec '{spec}': expected SIDE:SEEDS with SIDE 'val' or 'train', "
                "e.g. 'val:2800-2999' or 'val:every10'"
            )
        m = _EVERY.match(seeds)
        if m:
            return cls(side=side, every=int(m.group(1)), remainder=int(m.group(2) or 0))  # type: ignore[arg-type]
        try:
            ranges = parse_ranges(seeds, what=f"split spec '{spec}'")
        except SeedRangeError as exc:
            raise DatasetError(str(exc)) from None
        return cls(side=side, ranges=ranges)  # type: ignore[arg-type]

    def names(self, seed: int) -> bool:
        """Whether the rule names this seed (so it goes to ``side``)."""
        if self.every is not None:
            return seed % self.every == self.remainder
        return any(lo <= seed <= hi for lo, hi in self.ranges)

    def split_of_seed(self, seed: int | None) -> Split:
        if seed is None:
            return "train"  # unseeded screens cannot be held out cleanly; see the module docstring
        other: Split = "train" if self.side == "val" else "val"
        return self.side if self.names(seed) else other

    def __str__(self) -> str:
        if self.every is not None:
            return f"{self.side}:every{self.every}" + (f"+{self.remainder}" if self.remainder else "")
        return f"{self.side}:" + ",".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in self.ranges)


def split_of(ann: Annotation, rule: SplitRule) -> Split:
    """``"train"`` or ``"val"`` for an annotation, by its ``source.seed`` (no seed: train)."""
    return rule.split_of_seed(ann.source.seed)


# --- reading the dataset ------------------------------------------------------------------------


@dataclass
class Item:
    """One annotated screenshot of a dataset, with where it lives."""

    label_path: Path
    group: str
    stem: str
    image_path: Path
    ann: Annotation

    @property
    def flat_name(self) -> str:
        """A file name unique across groups (``<group>__<stem>``; nested groups joined the same way)."""
        return f"{self.group.replace('/', '__')}__{self.stem}"


def load_items(dataset_root: str | Path, *, allow_unknown: bool = False, allow_empty: bool = False) -> list[Item]:
    """Every annotation of a dataset, validated up front so an export fails before writing anything."""
    ds = open_dataset(dataset_root)
    labels = ds.root / "labels"
    items: list[Item] = []
    for label_path, ann in ds:
        if not allow_unknown:
            for i, e in enumerate(ann.elements):
                if e.type is ElementType.UNKNOWN:
                    raise DatasetError(
                        f"{label_path}: elements[{i}].type: 'unknown' is not a trainable type "
                        "(fix or delete this element before exporting)"
                    )
        rel = label_path.relative_to(labels)
        group = rel.parent.as_posix() if rel.parent != Path(".") else "_"
        items.append(Item(label_path, group, label_path.stem, ds.image_path(ann), ann))
    if not items and not allow_empty:
        raise DatasetError(f"{ds.root}: the dataset holds no annotations (labels/*/*.json)")
    return items


def _check_both_splits(items: list[Item], splits: list[Split], rule: SplitRule, root: Path) -> None:
    """Both splits must hold images; otherwise say which seeds went where, so the rule can be fixed."""
    if set(splits) == set(SPLITS):
        return
    seeds: dict[Split, list[int]] = {"train": [], "val": []}
    unseeded = 0
    for item, sp in zip(items, splits, strict=True):
        if item.ann.source.seed is None:
            unseeded += 1
        else:
            seeds[sp].append(item.ann.source.seed)
    empty = next(s for s in SPLITS if s not in splits)
    raise DatasetError(
        f"{root}: split '{rule}' leaves the {empty} split empty: "
        f"train seeds {format_seed_ranges(seeds['train'])}, val seeds {format_seed_ranges(seeds['val'])}"
        + (f", {unseeded} image(s) without a seed (always train)" if unseeded else "")
    )


# --- safe output directories --------------------------------------------------------------------


def guard_output(out_dir: Path, dataset_root: Path) -> None:
    """Refuse an output directory that is (or contains) the dataset: overwrite=True would delete it."""
    out, root = out_dir.resolve(), dataset_root.resolve()
    if out == root or root.is_relative_to(out):
        raise DatasetError(f"{out_dir}: the output directory must not be (or contain) the dataset {dataset_root}")
    if out.is_relative_to(root / "labels") or out.is_relative_to(root / "images"):
        raise DatasetError(f"{out_dir}: the output directory must not lie inside the dataset's labels/ or images/")


@contextlib.contextmanager
def fresh_output_dir(out_dir: str | Path, *, overwrite: bool = False) -> Iterator[Path]:
    """Yield an empty temporary directory beside ``out_dir``; on success it replaces ``out_dir``.

    A non-empty ``out_dir`` is refused unless ``overwrite``; even then the old one is only removed
    once the new one is complete, so an error halfway never loses anything.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise DatasetError(f"{out_dir}: exists and is not a directory")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not overwrite:
        raise DatasetError(f"{out_dir}: output directory is not empty (pass overwrite=True to replace it)")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=out_dir.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old: Path | None = None
    try:
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
            os.replace(out_dir, old / "x")  # move aside first: os.replace onto a non-empty directory fails
        os.replace(tmp, out_dir)
    except OSError:
        if old is not None and (old / "x").exists():
            os.replace(old / "x", out_dir)  # put the previous output back
        for leftover in (tmp, old):
            if leftover is not None:
                shutil.rmtree(leftover, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def link_or_copy(src: Path, dst: Path) -> bool:
    """Hard-link ``src`` to ``dst`` (cheap, no extra disk); copy across filesystems. True if linked."""
    try:
        os.link(src, dst)
        return True
    except OSError:
        shutil.copyfile(src, dst)
        return False


# --- YOLO ---------------------------------------------------------------------------------------

CLASS_INDEX: dict[ElementType, int] = {t: i for i, t in enumerate(DETECTOR_CLASSES)}


def yolo_line(class_index: int, bbox: tuple[int, int, int, int], width: int, height: int) -> str:
    """``class cx cy w h`` normalised to [0, 1] with 6 decimals (x2/y2 exclusive, so w = x2 - x1)."""
    x1, y1, x2, y2 = bbox
    cx, cy = (x1 + x2) / 2 / width, (y1 + y2) / 2 / height
    w, h = (x2 - x1) / width, (y2 - y1) / height
    return f"{class_index} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}"


def yolo_labels(ann: Annotation) -> list[str]:
    return [yolo_line(CLASS_INDEX[e.type], e.bbox, ann.width, ann.height) for e in ann.elements]


def data_yaml(path: Path | None, *, train: str | list[str] = "images/train",
              val: str | list[str] = "images/val") -> str:
    """ultralytics' data.yaml; written by hand (strings JSON-quoted, valid YAML) to avoid a YAML dependency.
    ``train``/``val``: folders under ``path``, or lists of absolute folders (``path`` None)."""
    lines = [
        *([f"path: {json.dumps(str(path))}"] if path is not None else []),
        f"train: {json.dumps(train)}",
        f"val: {json.dumps(val)}",
        f"nc: {len(DETECTOR_CLASSES)}",
        "names:",
        *(f"  {i}: {t.value}" for i, t in enumerate(DETECTOR_CLASSES)),
    ]
    return "\n".join(lines) + "\n"


def _check_unique_names(items: list[Item]) -> None:
    seen: dict[str, Path] = {}
    for item in items:
        if item.flat_name in seen:
            raise DatasetError(
                f"{item.label_path}: exports as '{item.flat_name}', the same file name as {seen[item.flat_name]}"
            )
        seen[item.flat_name] = item.label_path


def export_yolo(
    dataset_root: str | Path, out_dir: str | Path, *, split: SplitRule, overwrite: bool = False
) -> dict[str, Any]:
    """Write an ultralytics YOLO detection dataset to ``out_dir``.

    ``images/{train,val}/<group>__<stem>.png`` (hard links where possible), ``labels/{train,val}/
    <group>__<stem>.txt`` (``class cx cy w h``; class = index in ``DETECTOR_CLASSES``; an image
    without elements gets an empty file, i.e. a background image) and ``data.yaml``.
    Returns ``{"out_dir", "split", "images": {split: n}, "elements": {split: n},
    "classes": {split: {type: n}}, "seeds": {split: n}, "linked": n, "copied": n}``.
    """
    root = Path(dataset_root)
    out_dir = Path(out_dir)
    guard_output(out_dir, root)
    items = load_items(root)
    check_trainable((item.label_path, item.ann.source) for item in items)
    splits = [split_of(item.ann, split) for item in items]
    _check_both_splits(items, splits, split, root)
    _check_unique_names(items)

    images: Counter[str] = Counter()
    elements: Counter[str] = Counter()
    classes: dict[str, Counter[str]] = {s: Counter() for s in SPLITS}
    seeds: dict[str, set[int]] = {s: set() for s in SPLITS}
    linked = copied = 0
    final = out_dir.resolve()
    with fresh_output_dir(out_dir, overwrite=overwrite) as tmp:
        for sp in SPLITS:
            (tmp / "images" / sp).mkdir(parents=True)
            (tmp / "labels" / sp).mkdir(parents=True)
        for item, sp in zip(items, splits, strict=True):
            name = item.flat_name
            if link_or_copy(item.image_path, tmp / "images" / sp / f"{name}{item.image_path.suffix.lower()}"):
                linked += 1
            else:
                copied += 1
            lines = yolo_labels(item.ann)
            (tmp / "labels" / sp / f"{name}.txt").write_text("".join(f"{ln}\n" for ln in lines), encoding="utf-8")
            images[sp] += 1
            elements[sp] += len(lines)
            classes[sp].update(e.type.value for e in item.ann.elements)
            if item.ann.source.seed is not None:
                seeds[sp].add(item.ann.source.seed)
        (tmp / "data.yaml").write_text(data_yaml(final), encoding="utf-8")
    return {
        "out_dir": str(final),
        "split": str(split),
        "images": {s: images[s] for s in SPLITS},
        "elements": {s: elements[s] for s in SPLITS},
        "classes": {s: {t.value: classes[s][t.value] for t in DETECTOR_CLASSES if classes[s][t.value]} for s in SPLITS},
        "seeds": {s: len(seeds[s]) for s in SPLITS},
        "linked": linked,
        "copied": copied,
    }


# --- reader samples -----------------------------------------------------------------------------


def reader_target(element: Any) -> dict[str, Any]:
    """The reader's target: the type plus exactly the attributes it carries (nulls kept, meaning unknown)."""
    target: dict[str, Any] = {"type": element.type.value}
    for name in TYPE_ATTRIBUTES[element.type]:
        target[name] = getattr(element, name)
    return target


def export_reader_samples(
    dataset_root: str | Path,
    out_path: str | Path,
    *,
    split: SplitRule,
    overwrite: bool = False,
    absolute_paths: bool = True,
) -> dict[str, Any]:
    """Write ``out_path/train.jsonl`` and ``out_path/val.jsonl``, one line per element::

        {"image": "/abs/DATASET/images/g/s.png", "bbox": [x1, y1, x2, y2],
         "target": {"type": "checkbox", "text": "ok", "checked": null, "indeterminate": false, "enabled": true},
         "group": "g", "stem": "s", "seed": 1000}

    ``image`` is absolute, or relative to the dataset directory with ``absolute_paths=False``.
    Returns ``{"out_dir", "split", "images": {split: n}, "samples": {split: n}, "types": {split: {type: n}}}``.
    """
    root = Path(dataset_root)
    out_dir = Path(out_path)
    guard_output(out_dir, root)
    items = load_items(root)
    check_trainable((item.label_path, item.ann.source) for item in items)
    splits = [split_of(item.ann, split) for item in items]
    _check_both_splits(items, splits, split, root)

    images: Counter[str] = Counter()
    samples: Counter[str] = Counter()
    types: dict[str, Counter[str]] = {s: Counter() for s in SPLITS}
    base = root.resolve()
    with fresh_output_dir(out_dir, overwrite=overwrite) as tmp:
        files = {s: (tmp / f"{s}.jsonl").open("w", encoding="utf-8") for s in SPLITS}
        try:
            for item, sp in zip(items, splits, strict=True):
                image = str(base / item.ann.image) if absolute_paths else item.ann.image
                images[sp] += 1
                for e in item.ann.elements:
                    record = {
                        "image": image, "bbox": list(e.bbox), "target": reader_target(e),
                        "group": item.group, "stem": item.stem, "seed": item.ann.source.seed,
                    }
                    files[sp].write(json.dumps(record, ensure_ascii=False) + "\n")
                    samples[sp] += 1
                    types[sp][e.type.value] += 1
        finally:
            for f in files.values():
                f.close()
    return {
        "out_dir": str(out_dir.resolve()),
        "split": str(split),
        "images": {s: images[s] for s in SPLITS},
        "samples": {s: samples[s] for s in SPLITS},
        "types": {s: dict(sorted(types[s].items())) for s in SPLITS},
    }
