"""Round trip between caap datasets and Label Studio, for people correcting auto-labels.

* ``labeling_config()``: the Label Studio labeling config, generated from ``caap.taxonomy`` (the
  one source of labels); ``annotation/labeling-config.xml`` is this text, regenerate it with
  ``python -m caap.data.labelstudio --write-config``.
* ``export_tasks()``: a dataset's annotations as a Label Studio tasks JSON file, the elements as
  pre-annotations (``predictions``) to accept and correct.
* ``import_export()``: a Label Studio "JSON" export back into the dataset (in place, or as a new
  dataset), validated against the taxonomy.

Images are referenced by URL. By default it is Label Studio's local-files form
``/data/local-files/?d=<path>`` with ``<path>`` relative to the dataset directory, so Label Studio
must run with ``LABEL_STUDIO_LOCAL_FILES_SERVING_ENABLED=true`` and
``LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT=<dataset dir>`` and the project needs a "Local files"
source storage on ``<dataset dir>/images`` (see annotation/GUIDE.md). With ``image_root_url`` the
URL is ``<image_root_url>/images/<group>/<stem>.png`` instead (any web server serving the dataset
directory).

Coordinates: Label Studio keeps rectangles in percent of the image size, caap in integer pixels
with exclusive x2/y2. Export writes exact percentages; import rounds each edge to the nearest
pixel (halves up), clips to the image and drops boxes left empty.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import shutil
import sys
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from pydantic import ValidationError

from caap.data.format import Annotation, Dataset, DatasetError, open_dataset
from caap.elements import Element
from caap.files import read_json
from caap.geometry import Box
from caap.taxonomy import (
    ATTRIBUTES,
    BOOLEAN_ATTRIBUTES,
    DETECTOR_CLASSES,
    FRACTION_ATTRIBUTES,
    SUBTYPE,
    SUBTYPES,
    TEXT,
    TYPE_ATTRIBUTES,
    ElementType,
)

log = logging.getLogger(__name__)

# Names inside the labeling config. The attribute controls are named after the attributes.
IMAGE = "image"
TYPE = "type"
LOCAL_FILES_PREFIX = "/data/local-files/?d="
DEFAULT_MODEL_VERSION = "caap-autolabel"
CONFIG_PATH = Path(__file__).resolve().parents[2] / "annotation" / "labeling-config.xml"

# Task data keys: where a task came from, so the import can map it back to its label file.
DATA_LABEL, DATA_IMAGE = "caap_label", "caap_image"
DATA_SOURCE = {"kind": "caap_kind", "task": "caap_task", "seed": "caap_seed", "step": "caap_step"}

# One colour per detector class, by class index; distinct hues first so neighbours differ.
_PALETTE: tuple[str, ...] = (
    "#1F77B4", "#17BECF", "#393B79", "#D62728", "#FF7F0E", "#2CA02C", "#9467BD", "#E377C2",
    "#8C564B", "#BCBD22", "#7F7F7F", "#637939", "#00CED1", "#FFD700", "#A55194", "#6B6ECF",
    "#E7969C", "#843C39", "#31A354", "#3182BD",
)

# Shown when hovering a label in Label Studio; the guide has the full rules.
_HINTS: dict[ElementType, str] = {
    ElementType.TEXT: "one line of plain text",
    ElementType.HYPERLINK: "a clickable link, also tab headers",
    ElementType.TABLED_TEXT: "text in a table cell or list row",
    ElementType.BUTTON: "a push button",
    ElementType.DROPDOWN: "a closed select / combo box",
    ElementType.INPUT_FIELD: "a single-line text input",
    ElementType.RADIO: "radio button AND its label text",
    ElementType.CHECKBOX: "checkbox AND its label text",
    ElementType.TEXT_AREA: "a multi-line text input",
    ElementType.DRAGGABLE_TEXT: "text whose characters can be selected by dragging",
    ElementType.RESIZE_HANDLE: "a handle that resizes something",
    ElementType.SCROLLBAR: "a scrollbar (track and thumb)",
    ElementType.SHAPE: "a drawn shape: pick its subtype",
    ElementType.ICON: "an icon: pick its subtype",
    ElementType.SLIDER: "a slider's track (toggle switches are checkboxes)",
    ElementType.TAB: "a page tab of a desktop or web tab bar",
    ElementType.TREE_ITEM: "one row of a tree (expanded when its children show)",
    ElementType.PROGRESS_BAR: "a progress bar (reports only)",
}

_ATTRIBUTE_HEADERS: dict[str, str] = {
    TEXT: "text (exactly as shown; empty if none)",
    SUBTYPE: "subtype",
    "checked": "checked",
    "focused": "focused (has the keyboard focus)",
    "highlighted": "highlighted (selected / marked)",
    "expanded": "expanded (a tree row whose children show)",
    "indeterminate": "indeterminate (neither ticked nor clear; then leave checked empty)",
    "enabled": "enabled (false: greyed out)",
    "value": "value (0 = minimum ... 1 = maximum, where the thumb or fill stands)",
}
_TRUE, _FALSE = "true", "false"
_RESULT_TYPES: dict[str, str] = {TEXT: "textarea", **{name: "choices" for name in (SUBTYPE, *BOOLEAN_ATTRIBUTES)},
                                  **{name: "number" for name in FRACTION_ATTRIBUTES}}


# --- labeling config ---------------------------------------------------------------------------

def types_with(attribute: str) -> tuple[ElementType, ...]:
    """The detector classes that carry an attribute, in class order."""
    return tuple(t for t in DETECTOR_CLASSES if attribute in TYPE_ATTRIBUTES[t])


def all_subtypes() -> tuple[tuple[ElementType, str], ...]:
    return tuple((t, s) for t in DETECTOR_CLASSES for s in SUBTYPES.get(t, ()))


def labeling_config() -> str:
    """The Label Studio labeling config for the taxonomy (XML text, newline-terminated)."""
    root = ET.Element("View")
    ET.SubElement(root, "Image", name=IMAGE, value=f"${IMAGE}", zoom="true", zoomControl="true",
                  rotateControl="false")
    # snap="pixel" and no rotation: caap boxes are axis-aligned integer pixel boxes.
    rect = ET.SubElement(root, "RectangleLabels", name=TYPE, toName=IMAGE, canRotate="false", snap="pixel",
                         strokeWidth="1", opacity="0.15")
    for index, element_type in enumerate(DETECTOR_CLASSES):
        label = ET.SubElement(rect, "Label", value=element_type.value, background=_PALETTE[index % len(_PALETTE)],
                              category=str(index))
        if element_type in _HINTS:
            label.set("hint", _HINTS[element_type])
    for attribute in ATTRIBUTES:
        types = types_with(attribute)
        if not types:
            continue
        when = ",".join(t.value for t in types)
        # The View hides header and control unless the selected region has a type that carries the
        # attribute; whenLabelValue on the control itself makes Label Studio drop the value at
        # submit time when the region's type is changed to one that does not carry it.
        view = ET.SubElement(root, "View", visibleWhen="region-selected", whenLabelValue=when)
        ET.SubElement(view, "Header", value=_ATTRIBUTE_HEADERS.get(attribute, attribute), size="6")
        common = {"name": attribute, "toName": IMAGE, "perRegion": "true", "whenLabelValue": when}
        if attribute == TEXT:
            # transcription + editable: the text stays an input field to correct in place.
            ET.SubElement(view, "TextArea", common, editable="true", transcription="true", rows="1",
                          maxSubmissions="1", placeholder="text as shown on screen")
        elif attribute == SUBTYPE:
            choices = ET.SubElement(view, "Choices", common, choice="single", layout="select")
            for element_type, subtype in all_subtypes():
                ET.SubElement(choices, "Choice", value=subtype, hint=element_type.value)
        elif attribute in BOOLEAN_ATTRIBUTES:
            choices = ET.SubElement(view, "Choices", common, choice="single-radio", showInline="true")
            ET.SubElement(choices, "Choice", value=_TRUE)
            ET.SubElement(choices, "Choice", value=_FALSE)
        elif attribute in FRACTION_ATTRIBUTES:
            ET.SubElement(view, "Number", common, min="0", max="1", step="0.01")
        else:  # a new kind of attribute in the taxonomy: decide how annotators enter it
            raise ValueError(f"no Label Studio control for the attribute {attribute!r}")
    ET.indent(root, space="  ")
    # (An XML comment may not contain a double hyphen, so the command is not spelled out here.)
    header = "<!-- Generated from caap/taxonomy.py by caap.data.labelstudio.labeling_config(); do not edit. -->"
    return header + "\n" + ET.tostring(root, encoding="unicode") + "\n"


# --- export --------------------------------------------------------------------------------------

def _percent(value: int, size: int) -> float:
    return value * 100.0 / size


def element_results(element: Element, region_id: str, width: int, height: int,
                    score: float | None = None) -> list[dict[str, Any]]:
    """The Label Studio results of one element: its rectangle, then one result per known attribute,
    all sharing the region id (per-region results repeat the region's geometry, as LS writes them).
    ``score``: the model's confidence in the region, shown on each of its results."""
    x1, y1, x2, y2 = element.bbox
    geometry = {"x": _percent(x1, width), "y": _percent(y1, height), "width": _percent(x2 - x1, width),
                "height": _percent(y2 - y1, height), "rotation": 0}
    common: dict[str, Any] = {"id": region_id, "to_name": IMAGE, "original_width": width, "original_height": height,
                              "image_rotation": 0}
    if score is not None:
        common["score"] = score
    results = [{**common, "type": "rectanglelabels", "from_name": TYPE,
                "value": {**geometry, "rectanglelabels": [element.type.value]}}]
    for name in TYPE_ATTRIBUTES[element.type]:
        value = getattr(element, name)
        if value is None:
            continue  # unknown stays unknown: no result, the annotator fills it if needed
        if name == TEXT:
            payload: dict[str, Any] = {"text": [value]}
        elif name == SUBTYPE:
            payload = {"choices": [value]}
        elif name in FRACTION_ATTRIBUTES:
            payload = {"number": value}
        else:
            payload = {"choices": [_TRUE if value else _FALSE]}
        results.append({**common, "type": _RESULT_TYPES[name], "from_name": name, "value": {**geometry, **payload}})
    return results


def annotation_results(ann: Annotation, scores: Sequence[float | None] | None = None) -> list[dict[str, Any]]:
    """``scores``: one per element (None: that element has none)."""
    results: list[dict[str, Any]] = []
    for index, element in enumerate(ann.elements):
        score = scores[index] if scores is not None else None
        results.extend(element_results(element, f"e{index + 1}", ann.width, ann.height, score))
    return results


def image_url(ds: Dataset, ann: Annotation, *, image_root_url: str | None = None,
              document_root: str | Path | None = None) -> str:
    """The URL Label Studio loads an annotation's image from (see the module docstring)."""
    if image_root_url is not None:
        return image_root_url.rstrip("/") + "/" + quote(ann.image, safe="/")
    rel = ann.image
    if document_root is not None:
        full = (ds.root / ann.image).resolve()
        try:
            rel = full.relative_to(Path(document_root).resolve()).as_posix()
        except ValueError:
            raise DatasetError(f"{full}: image is not inside the local-files document root {document_root}") from None
    return LOCAL_FILES_PREFIX + quote(rel, safe="/")


def export_tasks(dataset_root: str | Path, out_path: str | Path, *, image_root_url: str | None = None,
                 as_predictions: bool = True, model_version: str = DEFAULT_MODEL_VERSION,
                 document_root: str | Path | None = None, labels: Collection[str] | None = None,
                 scores: Mapping[str, Sequence[float | None]] | None = None) -> int:
    """Write a Label Studio tasks JSON (a list, one task per annotation) and return the task count.

    The elements go in as ``predictions`` of ``model_version`` (or, with ``as_predictions=False``,
    as finished ``annotations``). Image URLs: ``image_root_url`` + the image's path in the dataset,
    or else Label Studio local files relative to ``document_root`` (default: the dataset directory).
    ``labels``: only these label files (paths relative to the dataset) become tasks. ``scores``:
    per label file, the model's confidence in each of its elements (in the label's order), written
    on each region's results and, averaged, as the prediction's score (Label Studio sorts by it).
    """
    ds = open_dataset(dataset_root)
    tasks: list[dict[str, Any]] = []
    for label_path, ann in ds:  # validates every label before anything is written
        rel = label_path.relative_to(ds.root).as_posix()
        if labels is not None and rel not in labels:
            continue
        for index, element in enumerate(ann.elements):
            if element.type not in DETECTOR_CLASSES:
                raise DatasetError(f"{label_path}: elements[{index}].type: '{element.type.value}' is not a label "
                                   "annotators can use (only the reader produces it); fix the label first")
        data: dict[str, Any] = {
            IMAGE: image_url(ds, ann, image_root_url=image_root_url, document_root=document_root),
            DATA_LABEL: rel,
            DATA_IMAGE: ann.image,
        }
        for field, key in DATA_SOURCE.items():
            data[key] = getattr(ann.source, field)
        known = scores.get(rel) if scores is not None else None
        if known is not None and len(known) != len(ann.elements):
            raise ValueError(f"{rel}: {len(known)} scores for {len(ann.elements)} elements")
        record: dict[str, Any] = {"result": annotation_results(ann, known)}
        if as_predictions:
            given = [s for s in known or () if s is not None]
            if given:
                record["score"] = sum(given) / len(given)
            tasks.append({"data": data, "predictions": [{"model_version": model_version, **record}]})
        else:
            tasks.append({"data": data, "annotations": [record]})
    # One task per line: compact (Label Studio takes at most 200 MB per import) yet greppable.
    lines = ",\n".join(json.dumps(task, ensure_ascii=False, separators=(",", ":")) for task in tasks)
    _write_text_atomic(Path(out_path), f"[\n{lines}\n]\n" if tasks else "[]\n")
    return len(tasks)


def _write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --- import --------------------------------------------------------------------------------------

def _round_edge(value: float) -> int:
    """Nearest integer, halves up (Python's round() would send 2.5 to 2 but 3.5 to 4)."""
    return math.floor(value + 0.5)


def percent_box(x: float, y: float, w: float, h: float, width: int, height: int) -> Box | None:
    """A Label Studio percent rectangle as an integer pixel box in a ``width`` x ``height`` image:
    each edge rounded to the nearest pixel, then clipped to the image; None when nothing is left
    (a box under half a pixel wide, or one that lies entirely outside the image)."""
    x1 = _round_edge(x * width / 100.0)
    y1 = _round_edge(y * height / 100.0)
    x2 = _round_edge((x + w) * width / 100.0)
    y2 = _round_edge((y + h) * height / 100.0)
    x1, y1, x2, y2 = max(0, x1), max(0, y1), min(width, x2), min(height, y2)
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2, y2)


def _number(value: Any, where: str, field: str) -> float:
    # bool is an int in Python: reject it explicitly, true/false is no coordinate.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DatasetError(f"{where}: value.{field} must be a number, got {value!r}")
    return float(value)


def _timestamp(value: Any) -> float:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            return float("-inf")
    return float("-inf")


def _latest_annotation(task: dict[str, Any], where: str) -> dict[str, Any] | None:
    annotations = task.get("annotations")
    if annotations is None:
        raise DatasetError(f"{where}: no 'annotations' list (export the project in Label Studio's \"JSON\" format)")
    if not isinstance(annotations, list):
        raise DatasetError(f"{where}: annotations must be a list")
    candidates = []
    for index, annotation in enumerate(annotations):
        if not isinstance(annotation, dict):
            raise DatasetError(f"{where}: annotations[{index}] is not an object")
        if annotation.get("was_cancelled"):
            continue  # skipped by the annotator: not a correction
        stamp = max(_timestamp(annotation.get("updated_at")), _timestamp(annotation.get("created_at")))
        ident = annotation.get("id") if isinstance(annotation.get("id"), int) else -1
        candidates.append(((stamp, ident, index), annotation))
    if not candidates:
        return None
    return max(candidates, key=lambda c: c[0])[1]


class _Region:
    def __init__(self, region_id: str, first: int) -> None:
        self.id = region_id
        self.first = first
        self.type: ElementType | None = None
        self.value: dict[str, Any] | None = None
        self.size: tuple[Any, Any] = (None, None)
        self.attributes: dict[str, Any] = {}
        self.attribute_results: dict[str, int] = {}

    def name(self) -> str:
        return f"region {self.id!r} (result[{self.first}])"


def _choice(value: dict[str, Any], where: str, allowed: Sequence[str]) -> str:
    choices = value.get("choices")
    if not isinstance(choices, list) or len(choices) != 1 or not isinstance(choices[0], str):
        raise DatasetError(f"{where}: value.choices must hold exactly one choice, got {choices!r}")
    if choices[0] not in allowed:
        raise DatasetError(f"{where}: value.choices {choices[0]!r} is not one of: {', '.join(allowed)}")
    return choices[0]


def _collect_regions(results: Any, where: str) -> list[_Region]:
    if not isinstance(results, list):
        raise DatasetError(f"{where}: result must be a list")
    regions: dict[str, _Region] = {}
    for index, result in enumerate(results):
        at = f"{where}: result[{index}]"
        if not isinstance(result, dict):
            raise DatasetError(f"{at} is not an object")
        region_id = result.get("id")
        if not isinstance(region_id, str | int) or isinstance(region_id, bool) or region_id == "":
            raise DatasetError(f"{at}: missing region id")
        region_id = str(region_id)
        region = regions.setdefault(region_id, _Region(region_id, index))
        at = f"{where}: region {region_id!r} (result[{index}])"
        kind, control, value = result.get("type"), result.get("from_name"), result.get("value")
        if not isinstance(value, dict):
            raise DatasetError(f"{at}: missing value")
        if kind == "rectanglelabels" and control == TYPE:
            if region.type is not None:
                raise DatasetError(f"{at}: the region has two boxes")
            labels = value.get("rectanglelabels")
            if not isinstance(labels, list) or len(labels) != 1:
                raise DatasetError(f"{at}: value.rectanglelabels must hold exactly one type, got {labels!r}")
            try:
                element_type = ElementType(labels[0])
            except (ValueError, TypeError):
                element_type = None
            if element_type not in DETECTOR_CLASSES:
                raise DatasetError(f"{at}: unknown type label {labels[0]!r} (one of: "
                                   f"{', '.join(t.value for t in DETECTOR_CLASSES)})")
            region.type, region.value = element_type, value
            region.size = (result.get("original_width"), result.get("original_height"))
        elif control in _RESULT_TYPES and kind == _RESULT_TYPES[control]:
            if control in region.attributes:
                raise DatasetError(f"{at}: two '{control}' results for one region")
            if control == TEXT:
                texts = value.get("text")
                if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    raise DatasetError(f"{at}: value.text must be a list of strings, got {texts!r}")
                # Several submissions of one text area are lines of one multi-line text.
                region.attributes[TEXT] = "\n".join(texts)
            elif control == SUBTYPE:
                region.attributes[SUBTYPE] = _choice(value, at, [s for _, s in all_subtypes()])
            elif control in FRACTION_ATTRIBUTES:
                number = _number(value.get("number"), at, "number")
                if not 0.0 <= number <= 1.0:
                    raise DatasetError(f"{at}: value.number {number:g} is not a fraction between 0 and 1")
                region.attributes[control] = number
            else:
                region.attributes[control] = _choice(value, at, (_TRUE, _FALSE)) == _TRUE
            region.attribute_results[control] = index
        else:
            raise DatasetError(f"{at}: unexpected result type {kind!r} from control {control!r} (this importer reads "
                               f"the caap labeling config: 'rectanglelabels' from '{TYPE}', per-region "
                               f"{', '.join(f'{n!r}' for n in _RESULT_TYPES)})")
    return list(regions.values())


def _region_element(region: _Region, ann: Annotation, where: str) -> Element | None:
    at = f"{where}: {region.name()}"
    if region.type is None or region.value is None:
        names = ", ".join(region.attributes)
        raise DatasetError(f"{at}: has {names} but no labelled box (rectanglelabels from '{TYPE}')")
    value = region.value
    x, y, w, h = (_number(value.get(f), at, f) for f in ("x", "y", "width", "height"))
    if w < 0 or h < 0:
        raise DatasetError(f"{at}: value.width/height must not be negative, got {w:.4g}, {h:.4g}")
    rotation = value.get("rotation", 0) or 0
    if _number(rotation, at, "rotation") % 360 != 0:
        raise DatasetError(f"{at}: value.rotation is {rotation}: caap boxes cannot be rotated (set it back to 0)")
    for field, got, want in (("original_width", region.size[0], ann.width),
                             ("original_height", region.size[1], ann.height)):
        if got is not None and got != want:
            raise DatasetError(f"{at}: {field} {got} differs from the dataset image's {want} ({ann.image}): the task "
                               "shows a different image than the dataset holds")
    box = percent_box(x, y, w, h, ann.width, ann.height)
    if box is None:
        if w > 0 and h > 0 and (x >= 100 or y >= 100 or x + w <= 0 or y + h <= 0):
            raise DatasetError(f"{at}: box x={x:.4g}%, y={y:.4g}%, width={w:.4g}%, height={h:.4g}% lies outside "
                               "the image")
        log.info("%s: dropped: box under half a pixel", at)
        return None
    for name in region.attributes:
        if name not in TYPE_ATTRIBUTES[region.type]:
            allowed = ", ".join(TYPE_ATTRIBUTES[region.type]) or "none"
            raise DatasetError(f"{where}: region {region.id!r} (result[{region.attribute_results[name]}]): a "
                               f"{region.type.value} has no '{name}' attribute (allowed: {allowed})")
    try:
        return Element(type=region.type, bbox=box, **region.attributes)
    except ValidationError as exc:
        msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise DatasetError(f"{at}: {msg}") from None


def _label_rel(data: dict[str, Any], where: str) -> str:
    rel = data.get(DATA_LABEL)
    if not isinstance(rel, str) or not rel:
        raise DatasetError(f"{where}: data.{DATA_LABEL} is missing (tasks must come from `caap dataset "
                           "export-labelstudio`)")
    parts = PurePosixPath(rel).parts
    if PurePosixPath(rel).is_absolute() or ".." in parts or parts[:1] != ("labels",) or not rel.endswith(".json"):
        raise DatasetError(f"{where}: data.{DATA_LABEL} {rel!r} is not a label path of a dataset (labels/...json)")
    return rel


def _task_annotation(task: Any, index: int, ds: Dataset, source: str) -> tuple[str, Annotation, str] | None:
    """(label path relative to the dataset, corrected annotation, where) of one exported task, or
    None when the task has no usable annotation."""
    if not isinstance(task, dict):
        raise DatasetError(f"{source}: [{index}] is not a task object")
    task_id = task.get("id")
    where = f"{source}: task {task_id}" if task_id is not None else f"{source}: task [{index}]"
    data = task.get("data")
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: missing data")
    annotation = _latest_annotation(task, where)
    if annotation is None:
        return None
    rel = _label_rel(data, where)
    label_path = ds.root / rel
    if not label_path.is_file():
        raise DatasetError(f"{where}: data.{DATA_LABEL}: {rel} does not exist in {ds.root}")
    ann = ds.load(label_path)
    # The export must still match the dataset: never write corrections onto another image.
    if data.get(DATA_IMAGE, ann.image) != ann.image:
        raise DatasetError(f"{where}: data.{DATA_IMAGE} {data.get(DATA_IMAGE)!r} differs from {rel}'s image "
                           f"{ann.image!r}")
    for field, key in DATA_SOURCE.items():
        if key in data and data[key] != getattr(ann.source, field):
            raise DatasetError(f"{where}: data.{key} {data[key]!r} differs from {rel}'s source.{field} "
                               f"{getattr(ann.source, field)!r} (the dataset changed since the export)")
    if "result" not in annotation:
        raise DatasetError(f"{where}: annotation {annotation.get('id')} has no result")
    at = f"{where}: annotation {annotation.get('id')}" if annotation.get("id") is not None else where
    elements = []
    for region in _collect_regions(annotation["result"], at):
        element = _region_element(region, ann, at)
        if element is not None:
            elements.append(element)
    return rel, ann.model_copy(update={"elements": elements}), where


def _read_export(path: Path) -> list[Any]:
    data = read_json(path, DatasetError, missing="no such export file", unreadable="not a readable JSON export")
    if not isinstance(data, list):
        raise DatasetError(f"{path}: a Label Studio JSON export is a list of tasks, got {type(data).__name__}")
    return data


def _label_text(ann: Annotation) -> str:
    return json.dumps(ann.to_json(), ensure_ascii=False) + "\n"


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        dst.unlink()
    try:
        os.link(src, dst)  # images are never edited in place, so a hard link is a free copy
    except OSError:
        shutil.copy2(src, dst)


def import_export(export_path: str | Path, dataset_root: str | Path, *, out_root: str | Path | None = None) -> int:
    """Read a Label Studio "JSON" export and write each task's latest non-cancelled annotation back
    as caap annotations; return how many were written.

    Without ``out_root`` the labels of the dataset are updated in place; with it a new dataset is
    made there (``out_root`` must not exist or be empty) holding every image of the source (hard
    links where possible) with the corrected labels, the others unchanged. Tasks without an
    annotation keep their labels. The whole export is validated before anything is written.
    """
    export_path = Path(export_path)
    ds = open_dataset(dataset_root)
    tasks = _read_export(export_path)
    updates: dict[str, Annotation] = {}
    seen: dict[str, str] = {}
    for index, task in enumerate(tasks):
        converted = _task_annotation(task, index, ds, str(export_path))
        if converted is None:
            continue
        rel, ann, where = converted
        task_name = where.removeprefix(f"{export_path}: ")
        if rel in seen:
            raise DatasetError(f"{where}: {rel} is also corrected by {seen[rel]}; one task per image")
        seen[rel] = task_name
        updates[rel] = ann
    if out_root is None:
        for rel, ann in updates.items():
            _write_text_atomic(ds.root / rel, _label_text(ann))
        return len(updates)

    out = Path(out_root)
    if out.exists() and out.resolve() == ds.root.resolve():
        raise DatasetError(f"{out}: is the source dataset; leave out the output to update it in place")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DatasetError(f"{out}: already exists and is not empty; choose a new directory (nothing was written)")
    originals = list(ds)  # validate the whole source before creating anything
    meta = ds.meta()
    new = Dataset.create(out, str(meta.get("name", ds.root.name)), {
        "kind": "labelstudio-import", "source_dataset": str(ds.root.resolve()),
        "export": str(export_path.resolve()), "source_generator": meta.get("generator", {}),
    })
    for label_path, ann in originals:
        rel = label_path.relative_to(ds.root).as_posix()
        _link_or_copy(ds.image_path(ann), new.root / ann.image)  # image first: never a label without its image
        _write_text_atomic(new.root / rel, _label_text(updates.get(rel, ann)))
    return len(updates)


# --- command line --------------------------------------------------------------------------------

def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m caap.data.labelstudio",
                                     description="Label Studio labeling config for the caap taxonomy.")
    parser.add_argument("--write-config", nargs="?", const=str(CONFIG_PATH), metavar="PATH",
                        help=f"write the config to PATH (default {CONFIG_PATH}) instead of printing it")
    args = parser.parse_args(argv)
    if args.write_config:
        _write_text_atomic(Path(args.write_config), labeling_config())
        print(f"wrote {args.write_config}")
    else:
        sys.stdout.write(labeling_config())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
