from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw
from rich.console import Console

from caap.data.format import Annotation, Dataset, DatasetError, Source
from caap.data.report import contact_sheet, dataset_stats, format_stats
from caap.elements import Element
from caap.report.draw import TYPE_COLOURS, element_label
from caap.taxonomy import DETECTOR_CLASSES, ElementType

W, H = 160, 210
BG = (250, 250, 210)


def make_dataset(root: Path, groups: dict[str, int]) -> Dataset:
    """``groups``: group -> number of images; seeds 0..n-1; the last image of each group is 200x100."""
    ds = Dataset.create(root, "report-test")
    for group, n in groups.items():
        for seed in range(n):
            w, h = (200, 100) if seed == n - 1 and n > 1 else (W, H)
            img = Image.new("RGB", (w, h), BG)
            ImageDraw.Draw(img).text((5, 5), f"{group} {seed}", fill=(0, 0, 0))
            els = [
                Element(type="button", bbox=[5, 40, 60, 70], text="Submit now please", focused=seed == 0),
                Element(type="checkbox", bbox=[5, 75, 15, 85], text="a", checked=[True, False, None][seed % 3]),
            ]
            if seed % 2 == 0:
                els.append(Element(type="icon", bbox=[80, 10, 90, 20], subtype="like"))
                els.append(Element(type="text", bbox=[100, 10, 150, 20], text="", highlighted=True))
            ann = Annotation(image="x", width=w, height=h, elements=els,
                             source=Source(task=group, seed=seed, step=0, note="aug:k=1" if seed == 5 else None))
            ds.add(group, f"{group}-{seed}", img, ann)
    return ds


def test_dataset_stats(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": 3, "b": 1})
    s = dataset_stats(tmp_path / "ds")
    assert s["name"] == "report-test"
    assert s["images"] == 4
    # a: seeds 0 (4 elements), 1 (2), 2 (4); b: seed 0 (4)
    assert s["elements"] == 14
    assert s["groups"] == {"a": {"images": 3, "elements": 10}, "b": {"images": 1, "elements": 4}}
    assert s["tasks"] == s["groups"]
    assert list(s["types"]) == [t.value for t in DETECTOR_CLASSES]  # zeros included, taxonomy order
    assert s["types"]["button"] == 4 and s["types"]["checkbox"] == 4 and s["types"]["icon"] == 3
    assert s["types"]["text"] == 3 and s["types"]["radio"] == 0
    assert s["attributes"]["checkbox"] == {"text": {"present": 4}, "checked": {"true": 2, "false": 1, "null": 1},
                                           "indeterminate": {"null": 4}, "enabled": {"null": 4}}
    assert s["attributes"]["button"]["focused"] == {"false": 2, "true": 2}
    assert s["attributes"]["icon"] == {"subtype": {"like": 3}, "checked": {"null": 3}, "enabled": {"null": 3}}
    assert s["attributes"]["text"] == {"text": {"empty": 3}, "highlighted": {"true": 3}}
    assert "radio" not in s["attributes"]
    assert s["elements_per_image"] == {"mean": 3.5, "min": 2, "max": 4}
    assert s["image_sizes"] == {"160x210": 3, "200x100": 1}
    assert s["seeds"] == {"distinct": 3, "ranges": "0-2", "unseeded": 0}
    assert s["augmented"] == 0
    json.dumps(s)  # JSON-serialisable, for a --json flag

    text_out = Console(record=True, width=150)
    text_out.print(format_stats(s))
    rendered = text_out.export_text()
    for needle in ("report-test", "checked: true 2, false 1, null 1", "200x100 (1)", "resize_handle"):
        assert needle in rendered


def test_stats_on_a_corrupt_label(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": 2})
    label = tmp_path / "ds" / "labels" / "a" / "a-0.json"
    data = json.loads(label.read_text())
    data["source"]["seed"] = "many"
    label.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=rf"{label}: source\.seed"):
        dataset_stats(tmp_path / "ds")
    label.write_text("{not json")
    with pytest.raises(DatasetError, match=rf"{label}: not a readable JSON"):
        contact_sheet(tmp_path / "ds", tmp_path / "sheet.png")


def test_element_label() -> None:
    e = Element(type="checkbox", bbox=[0, 0, 5, 5], text="A  very\nlong label text", checked=True)
    assert element_label(e) == 'checkbox "A very long …" ✓'
    assert element_label(e.model_copy(update={"checked": False})).endswith("✗")
    b = Element(type="button", bbox=[0, 0, 5, 5], text="OK", focused=True)
    assert element_label(b) == 'button "OK" F'
    t = Element(type="text", bbox=[0, 0, 5, 5], text="hi", highlighted=True)
    assert element_label(t) == 'text "hi" H'
    assert element_label(Element(type="icon", bbox=[0, 0, 5, 5], subtype="like")) == "icon like"


def test_contact_sheet(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": 3, "b": 1})
    out = tmp_path / "sheets" / "sheet.png"
    paths = contact_sheet(tmp_path / "ds", out, per_group=2, columns=8, scale=2)
    assert paths == [out]
    img = Image.open(out).convert("RGB")
    # 3 cells (2 of a, 1 of b) in one row; a cell is the largest scaled image (200x2 wide) + 10 px padding.
    assert img.width == 10 + 3 * (400 + 10)
    assert 420 + 30 < img.height < 420 + 200
    a = np.asarray(img)
    assert (a != 255).any(axis=2).mean() > 0.3  # not blank
    for t in (ElementType.BUTTON, ElementType.CHECKBOX, ElementType.ICON):
        assert (a == TYPE_COLOURS[t]).all(axis=2).any(), t  # each type's box colour is drawn
    # The screenshot is enlarged with NEAREST: its background colour appears exactly, in big blocks.
    assert (a == BG).all(axis=2).sum() > 320 * 420 * 0.3


def test_contact_sheet_splits_into_several_sheets(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {f"g{i:02d}": 2 for i in range(7)})
    out = tmp_path / "sheet.png"
    paths = contact_sheet(tmp_path / "ds", out, per_group=2, columns=4, scale=1, max_size=1000)
    assert len(paths) > 1 and not out.exists()
    assert paths == [tmp_path / f"sheet-{i}.png" for i in range(1, len(paths) + 1)]
    for p in paths:
        w, h = Image.open(p).size
        assert w <= 1000 and h <= 1000
    assert not list(tmp_path.glob(".*.tmp"))


def test_contact_sheet_groups(tmp_path: Path) -> None:
    make_dataset(tmp_path / "ds", {"a": 3, "b": 1, "c": 1})
    [p] = contact_sheet(tmp_path / "ds", tmp_path / "b.png", groups=["b"], scale=1)
    assert Image.open(p).width == 10 + 160 + 10
    with pytest.raises(DatasetError, match=r"groups: no such group\(s\) zz \(have: a, b, c\)"):
        contact_sheet(tmp_path / "ds", tmp_path / "z.png", groups=["zz"])
    with pytest.raises(DatasetError, match=r"\.png"):
        contact_sheet(tmp_path / "ds", tmp_path / "z.jpg")


def test_empty_dataset(tmp_path: Path) -> None:
    Dataset.create(tmp_path / "ds", "empty")
    s = dataset_stats(tmp_path / "ds")
    assert s["images"] == 0 and s["elements"] == 0 and s["elements_per_image"]["max"] == 0
    Console(record=True).print(format_stats(s))
    with pytest.raises(DatasetError, match="no annotations"):
        contact_sheet(tmp_path / "ds", tmp_path / "sheet.png")
