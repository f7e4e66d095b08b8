from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from caap.data.export import (
    SplitRule,
    export_reader_samples,
    export_yolo,
    split_of,
    yolo_line,
)
from caap.data.format import Annotation, Dataset, DatasetError, Source
from caap.elements import Element
from caap.seeds import SeedRangeError, format_seed_ranges, parse_seed_ranges
from caap.taxonomy import DETECTOR_CLASSES, TYPE_ATTRIBUTES, ElementType

W, H = 160, 210


def screen(seed: int) -> Image.Image:
    img = Image.new("RGB", (W, H), (255, 255, 255))
    d = ImageDraw.Draw(img)
    d.rectangle((10, 20, 29, 59), fill=(200, 30, 30))
    d.text((40, 5 + seed % 7), str(seed), fill=(0, 0, 0))
    return img


def elements() -> list[Element]:
    return [
        Element(type="button", bbox=[10, 20, 30, 60], text="OK", focused=False),
        Element(type="checkbox", bbox=[0, 0, 160, 210], text=None, checked=True),
        Element(type="icon", bbox=[100, 100, 110, 110], subtype="like"),
    ]


def make_dataset(root: Path, seeds_by_group: dict[str, list[int | None]], *, steps: int = 1) -> Dataset:
    ds = Dataset.create(root, "test")
    for group, seeds in seeds_by_group.items():
        for seed in seeds:
            for step in range(steps):
                ann = Annotation(image="x", width=W, height=H,
                                 source=Source(task=group, seed=seed, step=step), elements=elements())
                ds.add(group, f"s{seed}-{step}", screen(seed or 0), ann)
    return ds


# --- seeds and split rules ----------------------------------------------------------------------


def test_parse_seed_ranges() -> None:
    assert parse_seed_ranges("1000-1002,3005") == [1000, 1001, 1002, 3005]
    assert parse_seed_ranges(" 7 , 5-6, 7") == [7, 5, 6]
    assert format_seed_ranges([7, 1, 2, 3, 9, 10]) == "1-3,7,9-10"
    assert format_seed_ranges([]) == "none"
    for bad in ("", "a-b", "5-3", "1,,2", "-3"):
        with pytest.raises(SeedRangeError, match="seeds"):
            parse_seed_ranges(bad)


def test_split_rule_spec() -> None:
    r = SplitRule.parse("val:2800-2999,3005")
    assert (r.split_of_seed(2800), r.split_of_seed(2999), r.split_of_seed(3005)) == ("val", "val", "val")
    assert (r.split_of_seed(2799), r.split_of_seed(3000)) == ("train", "train")
    assert str(r) == "val:2800-2999,3005"
    e = SplitRule.parse("val:every10")
    assert [e.split_of_seed(s) for s in (0, 10, 11, 19, 20)] == ["val", "val", "train", "train", "val"]
    e3 = SplitRule.parse("val:every10+3")
    assert e3.split_of_seed(13) == "val" and e3.split_of_seed(10) == "train" and str(e3) == "val:every10+3"
    t = SplitRule.parse("train:0-999")
    assert t.split_of_seed(5) == "train" and t.split_of_seed(1000) == "val"
    # No seed: always train, whatever the rule.
    for rule in (r, e, t):
        assert rule.split_of_seed(None) == "train"
    ann = Annotation(image="x", width=1, height=1, source=Source(seed=2900))
    assert split_of(ann, r) == "val"
    assert split_of(ann.model_copy(update={"source": Source()}), r) == "train"


@pytest.mark.parametrize("spec", ["2800-2999", "test:1-2", "val:", "val:every0", "val:every10+10", "val:x"])
def test_split_rule_bad_spec(spec: str) -> None:
    with pytest.raises(DatasetError, match="split"):
        SplitRule.parse(spec)


# --- YOLO ---------------------------------------------------------------------------------------


def test_yolo_line_maths() -> None:
    # x2/y2 exclusive: a 20x40 box at (10, 20) in a 100x200 image.
    assert yolo_line(3, (10, 20, 30, 60), 100, 200) == "3 0.200000 0.200000 0.200000 0.200000"
    assert yolo_line(0, (0, 0, 160, 210), 160, 210) == "0 0.500000 0.500000 1.000000 1.000000"
    assert yolo_line(13, (1, 2, 4, 9), 160, 210) == "13 0.015625 0.026190 0.018750 0.033333"


def test_export_yolo(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": [1, 2, 3, 4], "b": [1, 10]})
    out = tmp_path / "yolo"
    r = export_yolo(tmp_path / "ds", out, split=SplitRule.parse("val:2,10"))
    assert r["images"] == {"train": 4, "val": 2}
    assert r["elements"] == {"train": 12, "val": 6}
    assert r["classes"]["val"] == {"button": 2, "checkbox": 2, "icon": 2}
    assert r["linked"] == 6 and r["copied"] == 0
    assert sorted(p.name for p in (out / "images" / "val").iterdir()) == ["a__s2-0.png", "b__s10-0.png"]
    # Same stem in two groups stays two files.
    assert {p.name for p in (out / "images" / "train").iterdir()} >= {"a__s1-0.png", "b__s1-0.png"}
    src = tmp_path / "ds" / "images" / "a" / "s1-0.png"
    assert os.stat(out / "images" / "train" / "a__s1-0.png").st_ino == os.stat(src).st_ino  # hard link
    lines = (out / "labels" / "train" / "a__s1-0.txt").read_text().splitlines()
    idx = {t: DETECTOR_CLASSES.index(t) for t in (ElementType.BUTTON, ElementType.CHECKBOX, ElementType.ICON)}
    assert lines == [
        f"{idx[ElementType.BUTTON]} 0.125000 0.190476 0.125000 0.190476",
        f"{idx[ElementType.CHECKBOX]} 0.500000 0.500000 1.000000 1.000000",
        f"{idx[ElementType.ICON]} 0.656250 0.500000 0.062500 0.047619",
    ]
    assert idx[ElementType.BUTTON] == 3  # the taxonomy's order, not alphabetical
    yaml = pytest.importorskip("yaml")
    data = yaml.safe_load((out / "data.yaml").read_text())
    assert data["path"] == str(out.resolve()) and Path(data["path"]).is_absolute()
    assert data["train"] == "images/train" and data["val"] == "images/val"
    assert data["nc"] == len(DETECTOR_CLASSES)
    assert data["names"] == {i: t.value for i, t in enumerate(DETECTOR_CLASSES)}
    assert "unknown" not in data["names"].values()


def test_split_keeps_each_seed_on_one_side(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": list(range(20)), "b": list(range(5, 15)), "c": [None]}, steps=2)
    out = tmp_path / "yolo"
    export_yolo(tmp_path / "ds", out, split=SplitRule.parse("val:every5"))
    seeds = {sp: {p.stem.split("__")[1].split("-")[0] for p in (out / "labels" / sp).iterdir()} for sp in ("train", "val")}
    assert not seeds["train"] & seeds["val"]
    assert seeds["val"] == {"s0", "s5", "s10", "s15"}
    assert "sNone" in seeds["train"]  # no seed: train


def test_empty_split_is_an_error(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": [1, 2, 3]})
    with pytest.raises(DatasetError, match=r"val split empty: train seeds 1-3, val seeds none"):
        export_yolo(tmp_path / "ds", tmp_path / "yolo", split=SplitRule.parse("val:100-200"))
    with pytest.raises(DatasetError, match="train split empty"):
        export_yolo(tmp_path / "ds", tmp_path / "yolo", split=SplitRule.parse("val:1-3"))
    assert not (tmp_path / "yolo").exists()


def test_refuses_to_overwrite(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": [1, 2]})
    out = tmp_path / "yolo"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    rule = SplitRule.parse("val:2")
    with pytest.raises(DatasetError, match=r"yolo: output directory is not empty"):
        export_yolo(tmp_path / "ds", out, split=rule)
    assert (out / "keep.txt").read_text() == "mine"
    export_yolo(tmp_path / "ds", out, split=rule, overwrite=True)
    assert not (out / "keep.txt").exists() and (out / "data.yaml").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp dirs left behind
    # An empty directory is fine without overwrite.
    (tmp_path / "empty").mkdir()
    export_yolo(tmp_path / "ds", tmp_path / "empty", split=rule)
    # Never into (or over) the dataset itself.
    with pytest.raises(DatasetError, match="must not be"):
        export_yolo(tmp_path / "ds", tmp_path / "ds", split=rule, overwrite=True)
    assert (tmp_path / "ds" / "dataset.json").is_file()
    with pytest.raises(DatasetError, match="inside the dataset's labels"):
        export_yolo(tmp_path / "ds", tmp_path / "ds" / "labels" / "yolo", split=rule)


def test_failed_export_keeps_the_old_one(tmp_path: Path) -> None:
    ds = make_dataset(tmp_path / "ds", {"a": [1, 2]})
    out = tmp_path / "yolo"
    export_yolo(tmp_path / "ds", out, split=SplitRule.parse("val:2"))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    ann = Annotation(image="x", width=W, height=H, source=Source(seed=3),
                     elements=[Element(type="unknown", bbox=[1, 1, 5, 5], text="?")])
    ds.add("a", "bad", screen(3), ann)
    with pytest.raises(DatasetError, match=r"labels/a/bad\.json: elements\[0\]\.type: 'unknown'"):
        export_yolo(tmp_path / "ds", out, split=SplitRule.parse("val:2"), overwrite=True)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_copies_when_hard_links_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dataset(tmp_path / "ds", {"a": [1, 2]})

    def no_link(src: object, dst: object) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    out = tmp_path / "yolo"
    r = export_yolo(tmp_path / "ds", out, split=SplitRule.parse("val:2"))
    assert r["linked"] == 0 and r["copied"] == 2
    copy, src = out / "images" / "val" / "a__s2-0.png", tmp_path / "ds" / "images" / "a" / "s2-0.png"
    assert copy.read_bytes() == src.read_bytes() and os.stat(copy).st_ino != os.stat(src).st_ino


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d["elements"][1].update(bbox=[0, 0, 161, 210]), r"elements\[1\]\.bbox"),
    (lambda d: d["elements"][0].update(type="banana"), r"elements\[0\]\.type"),
    (lambda d: d.update(width=0), "width"),
    (lambda d: d["elements"][0].update(expanded=True), r"elements\[0\]"),
])
def test_corrupt_annotation_names_file_and_field(tmp_path: Path, edit, field: str) -> None:
    make_dataset(tmp_path / "ds", {"a": [1, 2]})
    label = tmp_path / "ds" / "labels" / "a" / "s1-0.json"
    data = json.loads(label.read_text())
    edit(data)
    label.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=rf"{label}: {field}") as err:
        export_yolo(tmp_path / "ds", tmp_path / "yolo", split=SplitRule.parse("val:2"))
    assert "\n" not in str(err.value)
    assert not (tmp_path / "yolo").exists()
    with pytest.raises(DatasetError, match=str(label)):
        export_reader_samples(tmp_path / "ds", tmp_path / "reader", split=SplitRule.parse("val:2"))


def test_not_a_dataset(tmp_path: Path) -> None:
    (tmp_path / "nope").mkdir()
    with pytest.raises(DatasetError, match=r"nope/dataset.json: not a caap dataset"):
        export_yolo(tmp_path / "nope", tmp_path / "yolo", split=SplitRule.parse("val:2"))


# --- reader samples -----------------------------------------------------------------------------


def test_reader_samples(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": [1, 2], "b": [3]})
    out = tmp_path / "reader"
    r = export_reader_samples(tmp_path / "ds", out, split=SplitRule.parse("val:3"))
    assert r["samples"] == {"train": 6, "val": 3} and r["images"] == {"train": 2, "val": 1}
    val = [json.loads(line) for line in (out / "val.jsonl").read_text().splitlines()]
    assert val[0] == {
        "image": str((tmp_path / "ds" / "images" / "b" / "s3-0.png").resolve()),
        "bbox": [10, 20, 30, 60],
        "target": {"type": "button", "text": "OK", "checked": None, "focused": False, "enabled": None},
        "group": "b", "stem": "s3-0", "seed": 3,
    }
    # Only the attributes the type carries; carried-but-unknown stays null.
    assert val[1]["target"] == {"type": "checkbox", "text": None, "checked": True, "indeterminate": None,
                                "enabled": None}
    assert val[2]["target"] == {"type": "icon", "subtype": "like", "checked": None, "enabled": None}
    for rec in val:
        assert list(rec["target"]) == ["type", *TYPE_ATTRIBUTES[ElementType(rec["target"]["type"])]]
        assert Path(rec["image"]).is_file()
    train = [json.loads(line) for line in (out / "train.jsonl").read_text().splitlines()]
    assert {rec["seed"] for rec in train} == {1, 2}

    rel = export_reader_samples(tmp_path / "ds", tmp_path / "rel", split=SplitRule.parse("val:3"), absolute_paths=False)
    first = json.loads((tmp_path / "rel" / "val.jsonl").read_text().splitlines()[0])
    assert first["image"] == "images/b/s3-0.png" and rel["samples"]["val"] == 3
    with pytest.raises(DatasetError, match="not empty"):
        export_reader_samples(tmp_path / "ds", out, split=SplitRule.parse("val:3"))


def test_swap_failure_restores_the_previous_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_dataset(tmp_path / "ds", {"a": [1, 2]})
    out = tmp_path / "yolo"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    real_replace, calls = os.replace, []

    def flaky_replace(src: object, dst: object) -> None:
        calls.append(dst)
        if len(calls) == 2:  # moving the new export into place
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(OSError, match="No space"):
        export_yolo(tmp_path / "ds", out, split=SplitRule.parse("val:2"), overwrite=True)
    assert (out / "keep.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "yolo"]
