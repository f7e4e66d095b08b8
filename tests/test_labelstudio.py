"""Label Studio round trip: the labeling config, export to tasks, import of an export; and one
real Label Studio server driven through the SDK (slow: installs Label Studio once)."""

from __future__ import annotations

import copy
import json
import re
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from caap.data import labelstudio as lsmod
from caap.data.format import Annotation, Dataset, DatasetError, Source
from caap.data.labelstudio import export_tasks, import_export, labeling_config, percent_box
from caap.elements import Element
from caap.taxonomy import DETECTOR_CLASSES, ICON_SUBTYPES, SHAPE_SUBTYPES, TYPE_ATTRIBUTES

REPO = Path(__file__).resolve().parents[1]


# --- fixtures ------------------------------------------------------------------------------------

def _image(width: int, height: int, seed: int) -> Image.Image:
    im = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(im)
    draw.rectangle([seed % 7, seed % 5, width // 2, height // 3], outline=(seed % 255, 0, 0))
    return im


SCREEN_1 = [  # every type and attribute value kind, on an image whose percentages are not round
    Element(type="text", bbox=[0, 0, 157, 12], text='He said "hi"\\ – ünïcode', highlighted=False),
    Element(type="hyperlink", bbox=[2, 13, 40, 25], text="Tab 2", highlighted=True),
    Element(type="tabled_text", bbox=[2, 30, 60, 41], text="", highlighted=None),
    Element(type="button", bbox=[10, 50, 61, 81], text="OK", focused=True),
    Element(type="dropdown", bbox=[70, 50, 150, 70], text=None, focused=None),
    Element(type="input_field", bbox=[1, 90, 100, 110], text="typed", focused=False),
    Element(type="radio", bbox=[1, 111, 70, 125], text="Yes", checked=False),
    Element(type="checkbox", bbox=[71, 111, 140, 125], text="Agree", checked=True),
    Element(type="text_area", bbox=[1, 126, 120, 170], text="two\nlines", focused=False),
    Element(type="draggable_text", bbox=[1, 171, 90, 183], text="drag me"),
    Element(type="resize_handle", bbox=[150, 204, 157, 211]),
    Element(type="scrollbar", bbox=[147, 0, 157, 211]),
    Element(type="shape", bbox=[100, 180, 120, 200], subtype="triangle"),
    Element(type="icon", bbox=[121, 180, 137, 196], subtype="like", checked=True),
    Element(type="icon", bbox=[3, 4, 4, 5], subtype="menu"),  # one pixel
    Element(type="checkbox", bbox=[71, 126, 140, 140], text="Some", indeterminate=True, enabled=False),
    Element(type="slider", bbox=[10, 185, 95, 195], value=0.37, enabled=True),
    Element(type="progress_bar", bbox=[10, 200, 95, 206], value=1.0),
]
SCREEN_2 = [
    Element(type="button", bbox=[0, 0, 33, 17], text="Submit", focused=False),
    Element(type="text", bbox=[5, 3, 6, 4], text="."),
]


def make_dataset(root: Path) -> Dataset:
    ds = Dataset.create(root, "ls-test", {"kind": "test"})
    ds.add("click-button", "click-button-1000-0", _image(157, 211, 1),
           Annotation(image="-", width=157, height=211, elements=SCREEN_1,
                      source=Source(task="click-button", seed=1000, step=0, utterance="Click OK")))
    ds.add("click-button", "click-button-1001-2", _image(33, 17, 2),
           Annotation(image="-", width=33, height=17, elements=SCREEN_2,
                      source=Source(task="click-button", seed=1001, step=2)))
    ds.add("desktop", "empty screen", _image(64, 48, 3),  # a space in the name: URLs must quote it
           Annotation(image="-", width=64, height=48, elements=[], source=Source(kind="desktop", note="nothing")))
    return ds


@pytest.fixture
def dataset(tmp_path: Path) -> Dataset:
    return make_dataset(tmp_path / "ds")


def label_texts(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted((root / "labels").rglob("*.json"))}


def as_ls_export(tasks: list[dict[str, Any]], *, first_id: int = 1) -> list[dict[str, Any]]:
    """What Label Studio's "JSON" export writes for tasks whose pre-annotations were submitted as
    they are (the fields the importer reads, plus some it must ignore)."""
    out = []
    for i, task in enumerate(tasks):
        records = task.get("annotations") or task.get("predictions") or []
        out.append({
            "id": first_id + i, "data": task["data"], "predictions": [], "meta": {}, "drafts": [],
            "annotations": [{
                "id": 100 + i, "completed_by": 1, "was_cancelled": False, "ground_truth": False,
                "created_at": "2026-01-02T03:04:05.000000Z", "updated_at": "2026-01-02T03:04:05.000000Z",
                "lead_time": 3.5, "result": copy.deepcopy(r["result"]),
            } for r in records],
        })
    return out


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def task_for(export: list[dict[str, Any]], stem: str) -> dict[str, Any]:
    return next(t for t in export if t["data"]["caap_label"].endswith(f"/{stem}.json"))


# --- labeling config -----------------------------------------------------------------------------

def test_config_file_is_generated_from_the_taxonomy() -> None:
    committed = (REPO / "annotation" / "labeling-config.xml").read_text(encoding="utf-8")
    assert committed == labeling_config(), "regenerate: python -m caap.data.labelstudio --write-config"


def test_config_write_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cfg.xml"
    assert lsmod.main(["--write-config", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == labeling_config()
    assert lsmod.main([]) == 0
    assert capsys.readouterr().out.endswith(labeling_config())


def test_config_has_every_class_and_conditional_attribute_controls() -> None:
    root = ET.fromstring(labeling_config())  # also proves it is well-formed XML
    image = root.find("Image")
    assert image is not None and image.attrib["name"] == "image" and image.attrib["value"] == "$image"
    assert image.attrib["zoom"] == "true"
    rect = root.find("RectangleLabels")
    assert rect is not None and rect.attrib["name"] == "type" and rect.attrib["toName"] == "image"
    labels = rect.findall("Label")
    assert [lb.attrib["value"] for lb in labels] == [t.value for t in DETECTOR_CLASSES]
    colours = [lb.attrib["background"].upper() for lb in labels]
    assert len(set(colours)) == len(colours)
    assert [int(lb.attrib["category"]) for lb in labels] == list(range(len(DETECTOR_CLASSES)))

    controls = {el.attrib["name"]: el for el in root.iter() if el.tag in ("TextArea", "Choices", "Number")}
    assert set(controls) == {"text", "subtype", "checked", "focused", "highlighted", "expanded", "indeterminate",
                             "enabled", "value"}
    assert controls["value"].tag == "Number" and (controls["value"].attrib["min"], controls["value"].attrib["max"]) \
        == ("0", "1")
    for name, control in controls.items():
        carriers = {t.value for t in DETECTOR_CLASSES if name in TYPE_ATTRIBUTES[t]}
        assert control.attrib["toName"] == "image" and control.attrib["perRegion"] == "true"
        assert set(control.attrib["whenLabelValue"].split(",")) == carriers, name
        view = next(v for v in root.iter("View") if control in list(v))
        assert view.attrib["visibleWhen"] == "region-selected"
        assert set(view.attrib["whenLabelValue"].split(",")) == carriers, name
    assert controls["text"].tag == "TextArea" and controls["text"].attrib["editable"] == "true"
    for name in ("checked", "focused", "highlighted"):
        assert controls[name].attrib["choice"] == "single-radio"
        assert [c.attrib["value"] for c in controls[name].findall("Choice")] == ["true", "false"]
    assert [c.attrib["value"] for c in controls["subtype"].findall("Choice")] == [*SHAPE_SUBTYPES, *ICON_SUBTYPES]
    assert controls["subtype"].attrib["choice"] == "single"


def test_config_comment_cannot_break_xml() -> None:
    # An XML comment must not contain "--": Label Studio rejects the whole config otherwise.
    header = labeling_config().split("\n", 1)[0]
    assert header.startswith("<!--") and "--" not in header[4:-3]


# --- export --------------------------------------------------------------------------------------

def test_export_tasks_layout(dataset: Dataset, tmp_path: Path) -> None:
    out = tmp_path / "out" / "tasks.json"
    assert export_tasks(dataset.root, out) == 3
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert isinstance(tasks, list) and len(tasks) == 3
    first = task_for(tasks, "click-button-1000-0")
    assert first["data"] == {
        "image": "/data/local-files/?d=images/click-button/click-button-1000-0.png",
        "caap_label": "labels/click-button/click-button-1000-0.json",
        "caap_image": "images/click-button/click-button-1000-0.png",
        "caap_kind": "miniwob", "caap_task": "click-button", "caap_seed": 1000, "caap_step": 0,
    }
    assert "annotations" not in first
    [prediction] = first["predictions"]
    assert prediction["model_version"] == "caap-autolabel"
    result = prediction["result"]
    rects = [r for r in result if r["type"] == "rectanglelabels"]
    assert len(rects) == len(SCREEN_1)
    button = rects[3]
    assert button["from_name"] == "type" and button["to_name"] == "image"
    assert button["original_width"] == 157 and button["original_height"] == 211
    assert button["value"]["rectanglelabels"] == ["button"] and button["value"]["rotation"] == 0
    assert button["value"]["x"] == pytest.approx(10 * 100 / 157)
    assert button["value"]["y"] == pytest.approx(50 * 100 / 211)
    assert button["value"]["width"] == pytest.approx(51 * 100 / 157)
    assert button["value"]["height"] == pytest.approx(31 * 100 / 211)
    attrs = {r["from_name"]: r for r in result if r["id"] == button["id"] and r is not button}
    assert attrs["text"]["type"] == "textarea" and attrs["text"]["value"]["text"] == ["OK"]
    assert attrs["focused"]["type"] == "choices" and attrs["focused"]["value"]["choices"] == ["true"]
    assert set(attrs) == {"text", "focused"}
    # Unknown attributes (None) are left out, never guessed.
    dropdown_id = rects[4]["id"]
    assert [r["from_name"] for r in result if r["id"] == dropdown_id] == ["type"]
    assert len({r["id"] for r in rects}) == len(rects)

    empty = task_for(tasks, "empty screen")
    assert empty["data"]["image"] == "/data/local-files/?d=images/desktop/empty%20screen.png"
    assert empty["data"]["caap_task"] is None and empty["predictions"][0]["result"] == []


def test_export_image_url_forms(dataset: Dataset, tmp_path: Path) -> None:
    out = tmp_path / "tasks.json"
    export_tasks(dataset.root, out, image_root_url="http://localhost:8081/", as_predictions=False,
                 model_version="ignored")
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert task_for(tasks, "empty screen")["data"]["image"] == "http://localhost:8081/images/desktop/empty%20screen.png"
    assert all("predictions" not in t and len(t["annotations"]) == 1 for t in tasks)

    export_tasks(dataset.root, out, document_root=tmp_path, model_version="v2")
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert task_for(tasks, "click-button-1001-2")["data"]["image"] == (
        "/data/local-files/?d=ds/images/click-button/click-button-1001-2.png")
    assert {t["predictions"][0]["model_version"] for t in tasks} == {"v2"}

    with pytest.raises(DatasetError, match="not inside the local-files document root"):
        export_tasks(dataset.root, out, document_root=tmp_path / "elsewhere")


def test_export_refuses_unknown_elements(dataset: Dataset, tmp_path: Path) -> None:
    label = dataset.root / "labels" / "click-button" / "click-button-1001-2.json"
    data = json.loads(label.read_text(encoding="utf-8"))
    data["elements"][1]["type"] = "unknown"
    label.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"click-button-1001-2\.json: elements\[1\]\.type: 'unknown' is not a label"):
        export_tasks(dataset.root, tmp_path / "tasks.json")
    assert not (tmp_path / "tasks.json").exists()


def test_export_of_an_empty_dataset(tmp_path: Path) -> None:
    Dataset.create(tmp_path / "empty", "empty")
    assert export_tasks(tmp_path / "empty", tmp_path / "tasks.json") == 0
    assert json.loads((tmp_path / "tasks.json").read_text(encoding="utf-8")) == []
    with pytest.raises(DatasetError, match="no such dataset directory"):
        export_tasks(tmp_path / "missing", tmp_path / "tasks.json")


def test_export_refuses_a_broken_dataset(dataset: Dataset, tmp_path: Path) -> None:
    label = dataset.root / "labels" / "click-button" / "click-button-1001-2.json"
    data = json.loads(label.read_text(encoding="utf-8"))
    data["elements"][0]["type"] = "widget"
    label.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "tasks.json"
    out.write_text("keep", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"click-button-1001-2\.json: elements\[0\]\.type"):
        export_tasks(dataset.root, out)
    assert out.read_text(encoding="utf-8") == "keep"


# --- round trip ----------------------------------------------------------------------------------

@pytest.mark.parametrize("as_predictions", [True, False])
def test_round_trip_gives_back_identical_annotations(dataset: Dataset, tmp_path: Path, as_predictions: bool) -> None:
    before = label_texts(dataset.root)
    originals = {p.relative_to(dataset.root).as_posix(): a for p, a in dataset}
    tasks_path = tmp_path / "tasks.json"
    export_tasks(dataset.root, tasks_path, as_predictions=as_predictions)
    export = write_json(tmp_path / "export.json", as_ls_export(json.loads(tasks_path.read_text(encoding="utf-8"))))

    # Into a new dataset: same labels, same images (linked or copied).
    new_root = tmp_path / "corrected"
    assert import_export(export, dataset.root, out_root=new_root) == 3
    assert label_texts(new_root) == before
    for rel, ann in originals.items():
        reread = Dataset(new_root).load(new_root / rel)
        assert reread == ann
        assert (new_root / ann.image).read_bytes() == (dataset.root / ann.image).read_bytes()
    assert json.loads((new_root / "dataset.json").read_text())["generator"]["kind"] == "labelstudio-import"

    # In place: nothing changes.
    assert import_export(export, dataset.root) == 3
    assert label_texts(dataset.root) == before


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 5000), st.data())
def test_percent_round_trip_is_exact(width: int, height: int, data: st.DataObject) -> None:
    x1 = data.draw(st.integers(0, width - 1))
    y1 = data.draw(st.integers(0, height - 1))
    x2 = data.draw(st.integers(x1 + 1, width))
    y2 = data.draw(st.integers(y1 + 1, height))
    element = Element(type="scrollbar", bbox=[x1, y1, x2, y2])
    [rect] = lsmod.element_results(element, "r", width, height)
    v = rect["value"]
    assert percent_box(v["x"], v["y"], v["width"], v["height"], width, height) == (x1, y1, x2, y2)


@pytest.mark.parametrize(("percent", "size", "box"), [
    ((0, 0, 100, 100), (160, 210), (0, 0, 160, 210)),               # the whole image
    ((1.5625, 0, 1.5625, 50), (160, 210), (3, 0, 5, 105)),          # 2.5 -> 3 and 5.0: edges round half up
    ((0.3125, 0, 0.3125, 10), (160, 210), None),                    # 0.5 -> 1 and 1.0 -> 1: empty
    ((-5, -5, 10, 10), (100, 100), (0, 0, 5, 5)),                   # overshoot clipped
    ((95, 95, 10, 10), (100, 100), (95, 95, 100, 100)),
    ((33.333333, 66.666667, 33.333333, 33.333333), (3, 3), (1, 2, 2, 3)),
    ((10, 10, 0.4, 10), (100, 100), None),                          # under half a pixel wide
    ((10, 10, 0, 0), (100, 100), None),                             # a click, not a box
    ((100, 0, 5, 5), (100, 100), None),                             # nothing left inside
])
def test_percent_box_edge_cases(percent: tuple[float, ...], size: tuple[int, int],
                                box: tuple[int, int, int, int] | None) -> None:
    assert percent_box(*percent, *size) == box


# --- import --------------------------------------------------------------------------------------

@pytest.fixture
def export(dataset: Dataset, tmp_path: Path) -> list[dict[str, Any]]:
    tasks_path = tmp_path / "tasks.json"
    export_tasks(dataset.root, tasks_path)
    return as_ls_export(json.loads(tasks_path.read_text(encoding="utf-8")), first_id=7)


def _region(task: dict[str, Any], index: int) -> list[dict[str, Any]]:
    [ann] = task["annotations"]
    rid = [r for r in ann["result"] if r["type"] == "rectanglelabels"][index]["id"]
    return [r for r in ann["result"] if r["id"] == rid]


def test_import_applies_corrections_and_keeps_the_rest(dataset: Dataset, tmp_path: Path,
                                                       export: list[dict[str, Any]]) -> None:
    before = label_texts(dataset.root)
    first = task_for(export, "click-button-1000-0")
    [ann] = first["annotations"]
    for r in _region(first, 3):  # the button: new text, now unfocused
        if r["from_name"] == "text":
            r["value"]["text"] = ["Okay"]
        if r["from_name"] == "focused":
            r["value"]["choices"] = ["false"]
    # A region the annotator drew, with Label Studio's own id and extra keys.
    geo = {"x": 50.0, "y": 50.0, "width": 10.0, "height": 5.0, "rotation": 0}
    common = {"id": "Xk3_9aQ2bZ", "to_name": "image", "original_width": 157, "original_height": 211,
              "image_rotation": 0, "origin": "manual"}
    ann["result"] += [
        {**common, "type": "rectanglelabels", "from_name": "type", "value": {**geo, "rectanglelabels": ["checkbox"]}},
        {**common, "type": "textarea", "from_name": "text", "value": {**geo, "text": ["New"]}},
        {**common, "type": "choices", "from_name": "checked", "value": {**geo, "choices": ["false"]}},
    ]
    # An older submission and a newer skip of the same task must both be ignored.
    first["annotations"] = [
        {**copy.deepcopy(ann), "id": 1, "result": [], "updated_at": "2025-01-01T00:00:00Z"},
        ann,
        {"id": 999, "was_cancelled": True, "result": [], "updated_at": "2027-01-01T00:00:00Z"},
    ]
    second = task_for(export, "click-button-1001-2")
    second["annotations"] = []  # not annotated: keeps its label
    empty = task_for(export, "empty screen")
    empty["annotations"][0]["was_cancelled"] = True  # skipped: keeps its label
    path = write_json(tmp_path / "export.json", export)

    assert import_export(path, dataset.root) == 1
    after = label_texts(dataset.root)
    changed = "labels/click-button/click-button-1000-0.json"
    assert {k for k in after if after[k] != before[k]} == {changed}
    ann_after = Dataset(dataset.root).load(dataset.root / changed)
    expected = [*SCREEN_1[:3], SCREEN_1[3].model_copy(update={"text": "Okay", "focused": False}), *SCREEN_1[4:],
                Element(type="checkbox", bbox=[79, 106, 94, 116], text="New", checked=False)]
    assert ann_after.elements == expected
    assert ann_after.source.utterance == "Click OK"


def test_import_drops_empty_boxes_and_clips(dataset: Dataset, tmp_path: Path, export: list[dict[str, Any]]) -> None:
    task = task_for(export, "click-button-1001-2")
    result = task["annotations"][0]["result"]
    for r in result:
        if r["id"] == result[0]["id"]:
            r["value"].update(x=-3.0, y=-1.0, width=110.0, height=120.0)   # past every edge: clipped
        else:
            r["value"].update(width=0.5)                                   # < half a pixel of 33: dropped
    assert import_export(write_json(tmp_path / "e.json", export), dataset.root) == 3
    ann = Dataset(dataset.root).load(dataset.root / "labels/click-button/click-button-1001-2.json")
    assert ann.elements == [SCREEN_2[0]]


def _mutate_button(field: str, value: Any):
    def mutate(task: dict[str, Any]) -> None:
        rect = _region(task, 3)[0]
        rect["value"][field] = value
    return mutate


def _add_result(from_name: str, kind: str, payload: dict[str, Any], index: int = 3):
    def mutate(task: dict[str, Any]) -> None:
        rect = _region(task, index)[0]
        task["annotations"][0]["result"].append({**rect, "type": kind, "from_name": from_name,
                                                 "value": {**rect["value"], **payload}})
    return mutate


def _set_label(label: Any, index: int = 3):
    def mutate(task: dict[str, Any]) -> None:
        _region(task, index)[0]["value"]["rectanglelabels"] = [label]
    return mutate


def _drop_rect(task: dict[str, Any]) -> None:
    rect = _region(task, 3)[0]
    task["annotations"][0]["result"].remove(rect)


def _set_data(key: str, value: Any):
    def mutate(task: dict[str, Any]) -> None:
        if value is None:
            del task["data"][key]
        else:
            task["data"][key] = value
    return mutate


def _set_result_key(key: str, value: Any):
    def mutate(task: dict[str, Any]) -> None:
        rect = _region(task, 3)[0]
        if value is None:
            del rect[key]
        else:
            rect[key] = value
    return mutate


BAD_TASKS = [
    ("missing x", _mutate_button("x", None), r"region 'e4' \(result\[\d+\]\): value\.x must be a number"),
    ("x is text", _mutate_button("x", "10"), r"region 'e4' .*value\.x must be a number"),
    ("no width", lambda t: _region(t, 3)[0]["value"].pop("width"), r"region 'e4' .*value\.width"),
    ("negative width", _mutate_button("width", -3.0), r"region 'e4' .*must not be negative"),
    ("outside", _mutate_button("x", 150.0), r"region 'e4' .*lies outside the image"),
    ("rotated", _mutate_button("rotation", 30), r"region 'e4' .*rotation is 30"),
    ("unknown label", _set_label("widget"), r"region 'e4' .*unknown type label 'widget' \(one of: text, "),
    ("unknown-only label", _set_label("unknown"), r"region 'e4' .*unknown type label 'unknown'"),
    ("two labels", lambda t: _region(t, 3)[0]["value"].update(rectanglelabels=["button", "text"]),
     r"region 'e4' .*exactly one type"),
    ("forbidden attribute", _add_result("expanded", "choices", {"choices": ["true"]}),
     r"region 'e4' \(result\[\d+\]\): a button has no 'expanded' attribute \(allowed: text, checked, focused, "
     r"enabled\)"),
    ("value out of range", _add_result("value", "number", {"number": 1.5}),
     r"region 'e4' .*value.number 1.5 is not a fraction between 0 and 1"),
    ("value not a number", _add_result("value", "number", {"number": "half"}),
     r"region 'e4' .*value.number must be a number"),
    ("forbidden text", _add_result("text", "textarea", {"text": ["x"]}, index=11),
     r"region 'e12' .*a scrollbar has no 'text' attribute \(allowed: none\)"),
    ("two subtypes", _add_result("subtype", "choices", {"choices": ["menu"]}, index=12),
     r"region 'e13' .*two 'subtype' results"),
    ("bad choice", lambda t: [r["value"].update(choices=["maybe"]) for r in _region(t, 3) if r["from_name"] == "focused"],
     r"region 'e4' .*'maybe' is not one of: true, false"),
    ("two choices", lambda t: [r["value"].update(choices=["true", "false"]) for r in _region(t, 3)
                               if r["from_name"] == "focused"], r"region 'e4' .*exactly one choice"),
    ("text not a list", lambda t: [r["value"].update(text="OK") for r in _region(t, 3) if r["from_name"] == "text"],
     r"region 'e4' .*value\.text must be a list of strings"),
    ("attributes without box", _drop_rect, r"region 'e4' .*has text, focused but no labelled box"),
    ("two boxes", lambda t: t["annotations"][0]["result"].append(copy.deepcopy(_region(t, 3)[0])),
     r"region 'e4' .*two boxes"),
    ("no region id", _set_result_key("id", None), r"result\[\d+\]: missing region id"),
    ("no value", _set_result_key("value", None), r"region 'e4' .*missing value"),
    ("other control", _set_result_key("from_name", "label"), r"region 'e4' .*unexpected result type 'rectanglelabels' "
                                                              r"from control 'label'"),
    ("other image size", _set_result_key("original_width", 314), r"region 'e4' .*original_width 314 differs"),
    ("no label path", _set_data("caap_label", None), r"data\.caap_label is missing"),
    ("escaping label path", _set_data("caap_label", "labels/../../x.json"), r"data\.caap_label .* not a label path"),
    ("unknown label path", _set_data("caap_label", "labels/x/y.json"), r"data\.caap_label: labels/x/y\.json does not"),
    ("other image", _set_data("caap_image", "images/x.png"), r"data\.caap_image 'images/x\.png' differs"),
    ("other source", _set_data("caap_seed", 5), r"data\.caap_seed 5 differs .* source\.seed 1000"),
    ("result not a list", lambda t: t["annotations"][0].update(result={}), r"result must be a list"),
    ("no data", lambda t: t.pop("data"), r"missing data"),
    ("no annotations key", lambda t: t.pop("annotations"), r"no 'annotations' list \(export .*\"JSON\" format\)"),
]


@pytest.mark.parametrize(("case", "mutate", "message"), BAD_TASKS, ids=[c[0] for c in BAD_TASKS])
def test_malformed_export_names_file_task_and_region(dataset: Dataset, tmp_path: Path, export: list[dict[str, Any]],
                                                     case: str, mutate: Any, message: str) -> None:
    before = label_texts(dataset.root)
    # A good correction comes first: a bad task later must not let it be written either.
    good = task_for(export, "click-button-1001-2")
    good["annotations"][0]["result"] = []
    bad = task_for(export, "click-button-1000-0")
    mutate(bad)
    export.remove(bad)
    export.append(bad)
    path = write_json(tmp_path / "export.json", export)
    with pytest.raises(DatasetError) as info:
        import_export(path, dataset.root)
    msg = str(info.value)
    assert msg.startswith(f"{path}: task {bad['id']}"), msg
    assert "\n" not in msg
    assert re.search(message, msg), msg
    assert label_texts(dataset.root) == before
    with pytest.raises(DatasetError):
        import_export(path, dataset.root, out_root=tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_wrong_subtype_for_type(dataset: Dataset, tmp_path: Path, export: list[dict[str, Any]]) -> None:
    task = task_for(export, "click-button-1000-0")
    for r in _region(task, 12):  # the shape
        if r["from_name"] == "subtype":
            r["value"]["choices"] = ["menu"]
    with pytest.raises(DatasetError, match=r"task 7: annotation 100: region 'e13' .*'menu' is not a shape subtype"):
        import_export(write_json(tmp_path / "e.json", export), dataset.root)


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", r"not a readable JSON export"),
    ('{"tasks": []}', r"a Label Studio JSON export is a list of tasks, got dict"),
    ("[1]", r"\[0\] is not a task object"),
    ('[{"id": 3, "data": {}, "annotations": "x"}]', r"task 3: annotations must be a list"),
])
def test_unreadable_exports(dataset: Dataset, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "export.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message) as info:
        import_export(path, dataset.root)
    assert str(info.value).startswith(str(path))
    with pytest.raises(DatasetError, match="no such export file"):
        import_export(tmp_path / "missing.json", dataset.root)


def test_duplicate_tasks_for_one_image(dataset: Dataset, tmp_path: Path, export: list[dict[str, Any]]) -> None:
    export.append({**copy.deepcopy(export[0]), "id": 42})
    with pytest.raises(DatasetError, match=r"task 42: labels/.* is also corrected by task 7; one task per image"):
        import_export(write_json(tmp_path / "e.json", export), dataset.root)


def test_import_never_overwrites_another_directory(dataset: Dataset, tmp_path: Path,
                                                   export: list[dict[str, Any]]) -> None:
    path = write_json(tmp_path / "e.json", export)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"occupied: already exists and is not empty"):
        import_export(path, dataset.root, out_root=occupied)
    assert [p.name for p in occupied.iterdir()] == ["notes.txt"]
    with pytest.raises(DatasetError, match=r"is the source dataset"):
        import_export(path, dataset.root, out_root=dataset.root)
    (tmp_path / "fresh").mkdir()  # an empty directory is fine
    assert import_export(path, dataset.root, out_root=tmp_path / "fresh") == 3
    with pytest.raises(DatasetError, match=r"not a caap dataset"):
        import_export(path, tmp_path / "occupied")


# --- a real Label Studio -------------------------------------------------------------------------

@pytest.mark.slow
def test_real_label_studio_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      label_studio: Any) -> None:
    """Install Label Studio (once, into .venv-labelstudio; the conftest fixture), start it, import
    the tasks through the SDK, annotate one task, export it through the API and import the export
    into the dataset."""
    from label_studio_sdk import LabelStudio

    t0 = time.monotonic()
    ds = make_dataset(tmp_path / "ds")
    before = label_texts(ds.root)
    tasks_path = tmp_path / "tasks.json"
    assert export_tasks(ds.root, tasks_path) == 3
    tasks = json.loads(tasks_path.read_text(encoding="utf-8"))

    with label_studio.running(ds.root, tmp_path / "ls-data") as server:
        client = LabelStudio(base_url=server.url, api_key=server.token)
        project = client.projects.create(title="caap round trip", label_config=labeling_config())
        parsed = client.projects.get(id=project.id).parsed_label_config
        assert parsed["type"]["labels"] == [t.value for t in DETECTOR_CLASSES]
        assert parsed["checked"]["conditionals"] == {"type": "label", "name": "button,radio,checkbox,icon"}
        client.import_storage.local.create(project=project.id, path=str(ds.root / "images"), title="caap images")
        imported = client.projects.import_tasks(project.id, request=tasks, return_task_ids=True)
        assert imported.task_count == 3 and imported.prediction_count == 3

        by_label = {t.data["caap_label"]: t for t in client.tasks.list(project=project.id, fields="all")}
        task = by_label["labels/click-button/click-button-1000-0.json"]
        # The image URL works: Label Studio serves the dataset's file.
        req = urllib.request.Request(server.url + task.data["image"], headers={"Authorization": f"Token {server.token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            assert resp.read() == (ds.root / "images/click-button/click-button-1000-0.png").read_bytes()
        spaced = by_label["labels/desktop/empty screen.json"].data["image"]
        with urllib.request.urlopen(urllib.request.Request(
                server.url + spaced, headers={"Authorization": f"Token {server.token}"}), timeout=30) as resp:
            assert resp.status == 200

        # Accept the prediction, correct one text, add one region.
        full = client.tasks.get(id=str(task.id))
        [prediction] = full.predictions
        result = copy.deepcopy(prediction.result)
        button_id = [r for r in result if r["type"] == "rectanglelabels"][3]["id"]
        for r in result:
            if r["id"] == button_id and r["from_name"] == "text":
                r["value"]["text"] = ["Okay"]
        geo = {"x": 50.0, "y": 50.0, "width": 10.0, "height": 5.0, "rotation": 0}
        common = {"id": "n3wR3g1on", "to_name": "image", "original_width": 157, "original_height": 211,
                  "image_rotation": 0, "origin": "manual"}
        result += [
            {**common, "type": "rectanglelabels", "from_name": "type", "value": {**geo, "rectanglelabels": ["hyperlink"]}},
            {**common, "type": "textarea", "from_name": "text", "value": {**geo, "text": ["More"]}},
        ]
        client.annotations.create(id=task.id, result=result, parent_prediction=prediction.id, lead_time=4.2)

        data = b"".join(client.projects.exports.download_sync(project.id, export_type="JSON", download_all_tasks=True))
        export_path = tmp_path / "export.json"
        export_path.write_bytes(data)
    assert server.proc.poll() is not None

    assert import_export(export_path, ds.root) == 1
    after = label_texts(ds.root)
    changed = "labels/click-button/click-button-1000-0.json"
    assert {k for k in after if after[k] != before[k]} == {changed}
    ann = Dataset(ds.root).load(ds.root / changed)
    assert ann.elements == [*SCREEN_1[:3], SCREEN_1[3].model_copy(update={"text": "Okay"}), *SCREEN_1[4:],
                            Element(type="hyperlink", bbox=[79, 106, 94, 116], text="More")]
    total_s = time.monotonic() - t0
    with capsys.disabled():
        print(f"\n[label studio] install {label_studio.install_s:.1f}s (0 = venv reused), server start "
              f"{label_studio.start_s:.1f}s, whole test {total_s:.1f}s")
