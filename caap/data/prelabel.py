"""Pre-labelling: the observer's elements on unlabelled screenshots, as a caap dataset and as Label
Studio predictions, so that a person corrects boxes instead of drawing every one.

``prelabel(DIR, OUT, observer, models)`` observes every image under DIR (png, jpg, jpeg, webp;
recursively, in sorted order; hidden files and folders are left out) one at a time and writes:

* a caap dataset at OUT (``caap.data.format``): ``images/<group>/<stem>.png`` (the screenshot
  as PNG) and ``labels/<group>/<stem>.json``, where ``<group>`` is DIR's name plus the image's
  folder under DIR. Each label's ``source`` is ``kind: "prelabel"``, its ``note`` names the model
  files (``ModelFiles.version``) and the original file, and ``seed`` is the image's number in the
  dataset (0, 1, 2, ...), so the exporters' seed splits (``val:every10``) hold images out;
* ``OUT/prelabel.jsonl``: one line per image with where it came from (path, SHA-256 of its
  bytes) and the model's score for each region. It is written before the image and its label:
  a run that stops half-way is resumed with ``append`` (images already there are skipped);
* the Label Studio tasks of this run's images (``caap.data.labelstudio.export_tasks``) with the
  elements as ``predictions`` of ``ModelFiles.version``, each region with its detector score.

Labels hold only what annotators can use: elements of a type that is no detector class (the
reader's ``unknown``) are dropped and counted, and an empty text is no text.

OUT must be new or empty, unless ``mode`` is ``append`` (add to the dataset there, which may be
any caap dataset; nothing in it is changed) or ``overwrite`` (delete the dataset there first).
A directory that is not a caap dataset is never written into or deleted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from PIL import Image

from caap import __version__
from caap.data.format import Annotation, Dataset, DatasetError, Source
from caap.data.labelstudio import export_tasks
from caap.elements import Element
from caap.observe.observation import Observation
from caap.taxonomy import DETECTOR_CLASSES

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
LOG_NAME = "prelabel.jsonl"
TASKS_NAME = "labelstudio-tasks.json"
SOURCE_KIND = "prelabel"

Mode = Literal["new", "append", "overwrite"]
MODES: tuple[str, ...] = ("new", "append", "overwrite")
# What happened to one screenshot, as on_image reports it.
Status = Literal["written", "already", "unreadable"]


class Observer(Protocol):
    def observe(self, image: Image.Image) -> Observation: ...


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _digest(path: Path) -> str:
    """SHA-256 of a file, or of a directory's own files (names and bytes, sorted)."""
    if path.is_file():
        return _sha256(path)
    digest = hashlib.sha256()
    for child in sorted(p for p in path.iterdir() if p.is_file()):
        digest.update(child.name.encode() + b"\0" + _sha256(child).encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class ModelFiles:
    """The model files whose predictions the labels are, and their contents' digests."""

    detector: Path
    reader: Path | None = None
    ocr: bool = False
    detector_sha256: str = ""
    reader_sha256: str = ""

    @classmethod
    def of(cls, detector: str | Path, reader: str | Path | None = None, *, ocr: bool = False) -> ModelFiles:
        det = Path(detector).resolve()
        rdr = Path(reader).resolve() if reader is not None else None
        return cls(det, rdr, ocr, _digest(det), _digest(rdr) if rdr is not None else "")

    @classmethod
    def of_observer(cls, observer: Any) -> ModelFiles:
        """The files a ``caap.observe.vision.VisionObserver`` was loaded from."""
        reader = getattr(observer, "reader", None)
        return cls.of(observer.detector.path, getattr(reader, "path", None) if reader is not None else None,
                      ocr=getattr(observer, "ocr", None) is not None)

    @property
    def version(self) -> str:
        """Label Studio's ``model_version``: the files' names with the start of their digests (two
        runs of different weights that share a name stay apart)."""
        parts = [f"{self.detector.name}@{self.detector_sha256[:8]}"]
        if self.reader is not None:
            parts.append(f"{self.reader.name}@{self.reader_sha256[:8]}")
        if self.ocr:
            parts.append("pp-ocr")
        return "+".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"detector": str(self.detector), "detector_sha256": self.detector_sha256,
                "reader": str(self.reader) if self.reader is not None else None,
                "reader_sha256": self.reader_sha256 or None, "ocr": "pp-ocr" if self.ocr else None,
                "model_version": self.version}


@dataclass
class PrelabelResult:
    dataset: Path
    tasks_path: Path
    found: int = 0         # screenshots under DIR
    written: int = 0       # observed and written now
    already: int = 0       # in OUT from an earlier run (append), left as they are
    unreadable: list[tuple[Path, str]] = field(default_factory=list)
    elements: int = 0      # written as labels
    dropped: int = 0       # of a type no label may have (the reader's unknown), or with no area left
    tasks: int = 0


# --- inputs and output -----------------------------------------------------------------------------

def _walk(root: Path) -> Iterator[Path]:
    # os.walk does not follow symlinked folders, so a link loop cannot make the listing endless.
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if not name.startswith("."):
                yield Path(folder) / name


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def find_images(images_dir: str | Path, *, exclude: str | Path | None = None) -> list[Path]:
    """The screenshots under ``images_dir``, sorted; DatasetError when there are none. Files under
    ``exclude`` (the output, when it lies inside ``images_dir``) are left out."""
    root = Path(images_dir)
    if not root.exists():
        raise DatasetError(f"{root}: no such folder")
    if not root.is_dir():
        raise DatasetError(f"{root}: not a folder (give the folder that holds the screenshots)")
    skip = Path(exclude).resolve() if exclude is not None else None
    files = [p for p in _walk(root) if skip is None or not _inside(p.resolve(), skip)]
    if not files:
        raise DatasetError(f"{root}: the folder is empty")
    images = sorted((p for p in files if p.suffix.lower() in IMAGE_SUFFIXES), key=lambda p: p.as_posix())
    if not images:
        raise DatasetError(f"{root}: holds no screenshots ({', '.join(IMAGE_SUFFIXES)}) among its {len(files)} "
                           "files")
    return images


def check_output(out_root: str | Path, mode: Mode, images_dir: str | Path | None = None) -> None:
    """Refuse an output that this mode must not write to (DatasetError, nothing touched)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    out = Path(out_root)
    if images_dir is not None and _inside(Path(images_dir).resolve(), out.resolve()):
        raise DatasetError(f"{out}: holds the screenshots' folder {images_dir}; choose an output outside it")
    if not out.exists():
        return
    if not out.is_dir():
        raise DatasetError(f"{out}: exists and is not a directory")
    if not any(out.iterdir()):
        return
    if not (out / "dataset.json").is_file():
        raise DatasetError(f"{out}: already exists, is not empty and is not a caap dataset; choose another "
                           "directory (nothing was written)")
    Dataset(out).meta()  # an unreadable dataset.json is no dataset to add to or to delete
    if mode == "new":
        held = len(Dataset(out))
        raise DatasetError(f"{out}: already holds a caap dataset ({held} labelled images); use --append to add "
                           "these screenshots to it (those already there are skipped, so an interrupted run "
                           "resumes) or --overwrite to replace it (nothing was written)")


# --- labels ----------------------------------------------------------------------------------------

def label_elements(elements: list[Element], width: int, height: int) -> tuple[list[Element], list[float | None], int]:
    """(annotation elements, their detector scores, how many were dropped) of an observation."""
    kept: list[Element] = []
    scores: list[float | None] = []
    dropped = 0
    for e in elements:
        x1, y1, x2, y2 = max(0, e.bbox[0]), max(0, e.bbox[1]), min(width, e.bbox[2]), min(height, e.bbox[3])
        if e.type not in DETECTOR_CLASSES or x2 <= x1 or y2 <= y1:
            dropped += 1
            continue
        text = e.text if e.text is not None and e.text.strip() else None
        kept.append(e.model_copy(update={"bbox": (x1, y1, x2, y2), "text": text, "id": None, "score": None,
                                         "text_confidence": None, "visible": True}))
        scores.append(e.score)
    return kept, scores, dropped


def _region_key(element_type: str, bbox: Any) -> str:
    return f"{element_type}:{','.join(str(int(v)) for v in bbox)}"


def _read_log(path: Path) -> dict[str, dict[str, Any]]:
    """The log's entries by source SHA-256 (the latest line wins); a line cut off by a crash is skipped."""
    entries: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return entries
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
            continue
        label, seed = entry.get("label"), entry.get("seed")
        # Only a label path of this dataset: the log says where labels are written again.
        if (isinstance(label, str) and label.startswith("labels/") and label.endswith(".json")
                and ".." not in Path(label).parts and isinstance(seed, int) and not isinstance(seed, bool)):
            entries[entry["sha256"]] = entry
    return entries


def _append_log(path: Path, entry: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")
        f.flush()
        os.fsync(f.fileno())


def _group_of(path: Path, images_dir: Path) -> str:
    top = images_dir.resolve().name or "screens"
    rel = path.parent.relative_to(images_dir)
    return (Path(top) / rel).as_posix() if rel != Path(".") else top


def _free_stem(ds: Dataset, group: str, stem: str, taken: set[str]) -> str:
    """``stem``, or ``stem-2``, ``stem-3`` ... where a label of that name exists or is planned."""
    candidate, n = stem, 1
    while f"labels/{group}/{candidate}.json" in taken or (ds.root / "labels" / group / f"{candidate}.json").exists():
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def _scores_for(ds: Dataset, rel: str, entry: dict[str, Any]) -> list[float | None]:
    """The logged score of each element the label holds now; a region a person has changed since has none."""
    logged = {r[0]: r[1] for r in entry.get("regions", []) if isinstance(r, list) and len(r) == 2}
    ann = ds.load(ds.root / rel)
    return [logged.get(_region_key(e.type.value, e.bbox)) for e in ann.elements]


# --- the run ---------------------------------------------------------------------------------------

def prelabel(images_dir: str | Path, out_root: str | Path, observer: Observer, models: ModelFiles, *,
             mode: Mode = "new", tasks_path: str | Path | None = None, image_root_url: str | None = None,
             on_image: Callable[[Path, Status, str], None] | None = None) -> PrelabelResult:
    """Observe every screenshot under ``images_dir`` and write the dataset, log and tasks (module
    docstring). ``on_image(path, status, message)`` is called once per screenshot. Raises
    DatasetError (before writing anything) for a folder without screenshots or an output it
    must not write to."""
    images_dir, out = Path(images_dir), Path(out_root)
    images = find_images(images_dir, exclude=out)
    check_output(out, mode, images_dir)
    if mode == "overwrite" and (out / "dataset.json").is_file():
        shutil.rmtree(out)
    ds = Dataset.create(out, out.resolve().name, {
        "kind": SOURCE_KIND, "command": "caap dataset prelabel", "images_dir": str(images_dir.resolve()),
        "caap_version": __version__, **models.to_json()})
    log_path = ds.root / LOG_NAME
    logged = _read_log(log_path)
    # Names and seeds of the log count as taken too: a logged image whose label a crash cut off
    # gets them back when it is observed again.
    taken = {p.relative_to(ds.root).as_posix() for p in ds.label_paths()} | {e["label"] for e in logged.values()}
    seeds = [a.source.seed for _, a in ds if a.source.seed is not None]
    seeds += [e["seed"] for e in logged.values() if isinstance(e.get("seed"), int)]
    next_seed = 1 + max(seeds, default=-1)
    result = PrelabelResult(ds.root, Path(tasks_path) if tasks_path is not None else ds.root / TASKS_NAME,
                            found=len(images))
    task_labels: dict[str, dict[str, Any]] = {}

    def report(path: Path, status: Status, message: str = "") -> None:
        if on_image is not None:
            on_image(path, status, message)

    for path in images:
        try:
            sha = _sha256(path)
        except OSError as exc:
            result.unreadable.append((path, f"cannot be read ({exc.strerror or exc})"))
            report(path, "unreadable", result.unreadable[-1][1])
            continue
        entry = logged.get(sha)
        if entry is not None and (ds.root / entry["label"]).is_file():
            # Observed before (an earlier run, or a copy of a screenshot seen above): keep what is
            # there, a person may have corrected it since.
            result.already += 1
            task_labels.setdefault(entry["label"], entry)
            report(path, "already", entry["label"])
            continue
        try:
            with Image.open(path) as img:
                image = img.convert("RGB")
        except (OSError, ValueError, Image.DecompressionBombError) as exc:
            result.unreadable.append((path, f"not a readable image ({exc})"))
            report(path, "unreadable", result.unreadable[-1][1])
            continue
        elements, scores, dropped = label_elements(observer.observe(image).elements, image.width, image.height)
        if entry is not None:  # logged, but the run stopped before its label was written: same place
            rel = entry["label"]
            group, stem, seed = str(Path(rel).parent.relative_to("labels").as_posix()), Path(rel).stem, entry["seed"]
        else:
            group = _group_of(path, images_dir)
            stem = _free_stem(ds, group, path.stem, taken)
            rel, seed = f"labels/{group}/{stem}.json", next_seed
            next_seed += 1
        taken.add(rel)
        source_rel = path.relative_to(images_dir).as_posix()
        ann = Annotation(image=f"images/{group}/{stem}.png", width=image.width, height=image.height,
                         source=Source(kind=SOURCE_KIND, seed=seed,
                                       note=f"model prediction ({models.version}) of {source_rel}"),
                         elements=elements)
        entry = {"sha256": sha, "source": str(path.resolve()), "label": rel, "seed": seed,
                 "model_version": models.version,
                 "regions": [[_region_key(e.type.value, e.bbox), s] for e, s in zip(elements, scores, strict=True)]}
        _append_log(log_path, entry)  # first: a label is never there without its log line
        logged[sha] = entry
        ds.add(group, stem, image, ann)
        del image  # one screenshot in memory at a time
        result.written += 1
        result.elements += len(elements)
        result.dropped += dropped
        task_labels[rel] = entry
        report(path, "written", rel)

    scores_of = {rel: _scores_for(ds, rel, entry) for rel, entry in task_labels.items()}
    result.tasks = export_tasks(ds.root, result.tasks_path, image_root_url=image_root_url,
                                model_version=models.version, labels=set(task_labels), scores=scores_of)
    return result
