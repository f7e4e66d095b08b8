"""Native-size training canvases (caap.data.canvas) and growing a detector's classes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.data.canvas import PAD_RGB, export_canvas_parts, export_canvases, tile_dataset
from caap.data.export import CLASS_INDEX, SplitRule
from caap.data.format import Annotation, Dataset, DatasetError, Source, open_dataset
from caap.elements import Element
from caap.taxonomy import DETECTOR_CLASSES, ElementType

REPO = Path(__file__).resolve().parents[1]


def _screen(width: int, height: int, boxes: list[tuple[int, int, int, int]], seed: int) -> Image.Image:
    """A screen whose every labelled box is a solid colour of its own (so a canvas can be checked
    pixel for pixel against it)."""
    img = Image.new("RGB", (width, height), (250, 250, 250))
    draw = ImageDraw.Draw(img)
    for i, (x1, y1, x2, y2) in enumerate(boxes):
        draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=((37 * i + seed) % 200, (91 * i) % 200 + 20, 200))
    return img


def _dataset(root: Path, screens: list[tuple[int, int, float, int]]) -> Dataset:
    """``(width, height, scale, seed)`` per screen, each with a grid of buttons and one new-type slider."""
    ds = Dataset.create(root, "canvas-test")
    for width, height, scale, seed in screens:
        step = round(40 * scale)
        boxes = [(x, y, x + round(30 * scale), y + round(16 * scale))
                 for y in range(round(8 * scale), height - step, step) for x in range(round(8 * scale), width - step, step)]
        elements = [Element(type="button", bbox=b, text="OK") for b in boxes[:-1]]
        elements.append(Element(type=ElementType.SLIDER, bbox=boxes[-1]))
        ann = Annotation(image="x", width=width, height=height, elements=elements,
                         source=Source(kind="synth", task="t", seed=seed, scale=None if scale == 1 else scale))
        ds.add("g", f"s{seed}", _screen(width, height, boxes, seed), ann)
    return ds


def _labels(path: Path, size: int) -> list[tuple[int, tuple[int, int, int, int]]]:
    out = []
    for line in path.read_text().splitlines():
        c, cx, cy, w, h = line.split()
        x1 = round((float(cx) - float(w) / 2) * size)
        y1 = round((float(cy) - float(h) / 2) * size)
        out.append((int(c), (x1, y1, x1 + round(float(w) * size), y1 + round(float(h) * size))))
    return out


def test_small_screens_are_packed_at_their_own_size_and_large_ones_tiled(tmp_path: Path) -> None:
    _dataset(tmp_path / "ds", [(160, 210, 1.0, s) for s in range(1, 8)] + [(1200, 700, 1.0, 8)]
             + [(160, 210, 1.0, 2800)])
    got = export_canvases([tmp_path / "ds"], tmp_path / "out", split=SplitRule.parse("val:2800-2999"), size=480,
                          max_tiles=3)
    assert got["screens"] == {"train": 8, "val": 1}
    # Seven 160x210 screens: six on one canvas (three by two), one on the next; the large one: 3 tiles.
    assert got["canvases"]["train"] == 2 + 3
    for image_path in sorted((tmp_path / "out" / "images" / "train").glob("*.png")):
        canvas = np.asarray(Image.open(image_path).convert("RGB"))
        assert canvas.shape == (480, 480, 3)
        labels = _labels(tmp_path / "out" / "labels" / "train" / f"{image_path.stem}.txt", 480)
        assert labels
        for c, (x1, y1, x2, y2) in labels:
            assert 0 <= x1 < x2 <= 480 and 0 <= y1 < y2 <= 480
            assert c in (CLASS_INDEX[ElementType.BUTTON], CLASS_INDEX[ElementType.SLIDER])
            # Never scaled: a labelled box is one solid colour, never the padding grey.
            patch = canvas[y1 + 1:y2 - 1, x1 + 1:x2 - 1].reshape(-1, 3)
            assert (patch == patch[0]).all() and tuple(patch[0]) != PAD_RGB, image_path.name
    manifest = (tmp_path / "out" / "manifest.tsv").read_text()
    assert manifest.count("__t") == 3 and "g__s2800" in manifest
    # Every label of the seven small screens is on a canvas.
    small = [p for p in (tmp_path / "out" / "labels" / "train").glob("*.txt")]
    per_screen = 12  # 4 columns x 3 rows of boxes on a 160x210 screen
    assert sum(len(_labels(p, 480)) for p in small) >= 7 * per_screen


def test_a_hidpi_screen_is_shrunk_by_its_scale_and_held_out_sets_are_validation(tmp_path: Path) -> None:
    _dataset(tmp_path / "a", [(320, 420, 2.0, 1)])  # a 160x210 screen drawn at factor 2
    _dataset(tmp_path / "b", [(160, 210, 1.0, 5)])
    got = export_canvases([tmp_path / "a"], tmp_path / "out", split=SplitRule.parse("val:2800-2999"),
                          val_datasets=[tmp_path / "b"])
    assert got["screens"] == {"train": 1, "val": 1} and got["canvases"] == {"train": 1, "val": 1}
    train = _labels(next((tmp_path / "out" / "labels" / "train").glob("*.txt")), 480)
    val = _labels(next((tmp_path / "out" / "labels" / "val").glob("*.txt")), 480)
    assert sorted(b for _, b in train) == sorted(b for _, b in val)  # the same layout at factor 1


def test_bad_canvas_settings_are_refused(tmp_path: Path) -> None:
    _dataset(tmp_path / "ds", [(160, 210, 1.0, 1)])
    with pytest.raises(DatasetError, match="multiple of 32"):
        export_canvases([tmp_path / "ds"], tmp_path / "o", split=SplitRule.parse("val:1"), size=500)
    with pytest.raises(DatasetError, match="val split empty"):
        export_canvases([tmp_path / "ds"], tmp_path / "o", split=SplitRule.parse("val:2800-2999"))
    with pytest.raises(DatasetError, match="must not be"):
        export_canvases([tmp_path / "ds"], tmp_path / "ds", split=SplitRule.parse("val:1"))
    assert not (tmp_path / "o").exists()
    # A part of a larger export may leave validation to another part.
    got = export_canvases([tmp_path / "ds"], tmp_path / "o", split=SplitRule.parse("val:2800-2999"), require_val=False)
    assert got["canvases"] == {"train": 1, "val": 0}


def test_a_tiled_dataset_keeps_what_the_canvases_are_cut_from(tmp_path: Path) -> None:
    # A 160x210 screen, a 1200x700 one and a 960x600 one drawn at factor 2 (480x300 at factor 1).
    _dataset(tmp_path / "ds", [(160, 210, 1.0, 1), (1200, 700, 1.0, 2), (960, 600, 2.0, 3)])
    got = tile_dataset(tmp_path / "ds", tmp_path / "tiles", size=480, max_tiles=2)
    assert got == {"out_dir": str((tmp_path / "tiles").resolve()), "screens": 3, "tiled": 1, "written": 4,
                   "elements": got["elements"]}
    ds = open_dataset(tmp_path / "tiles")
    anns = {p.stem: a for p, a in ds}
    assert sorted(anns)[0] == "s1" and sorted(anns)[-1] == "s3"
    assert len([s for s in anns if s.startswith("s2__t")]) == 2  # two of the equally full tiles of s2
    for stem, ann in anns.items():
        img = np.asarray(Image.open(ds.image_path(ann)).convert("RGB"))
        assert (ann.width, ann.height) == (img.shape[1], img.shape[0]) and max(ann.width, ann.height) <= 480
        assert ann.source.scale is None and ann.source.seed == int(stem[1])  # the split by seed holds
        assert ann.elements
        for e in ann.elements:  # a button cut by the tile's edge: its text is unknown, not "OK"
            whole = e.bbox[2] - e.bbox[0] == 30 and e.bbox[3] - e.bbox[1] == 16
            assert e.text == ("OK" if whole else None) or e.type is ElementType.SLIDER, (stem, e)
        for e in ann.elements:  # boxes follow the pixels: each is one solid colour, never padding
            x1, y1, x2, y2 = e.bbox
            patch = img[y1 + 1:y2 - 1, x1 + 1:x2 - 1].reshape(-1, 3)
            assert (patch == patch[0]).all() and tuple(patch[0]) != PAD_RGB, (stem, e.bbox)
    assert anns["s3"].width == 480 and anns["s3"].height == 300
    # Canvases cut from the tiles hold the same labels as those cut from the screens.
    a = export_canvases([tmp_path / "ds"], tmp_path / "a", split=SplitRule.parse("val:2"), max_tiles=2)
    b = export_canvases([tmp_path / "tiles"], tmp_path / "b", split=SplitRule.parse("val:2"), max_tiles=2)
    assert a["elements"] == b["elements"]
    with pytest.raises(DatasetError, match="not empty"):
        tile_dataset(tmp_path / "ds", tmp_path / "tiles")
    # Tiling tiles again changes nothing; with seeds it picks screens (how a big set is cut for carrying).
    tile_dataset(tmp_path / "tiles", tmp_path / "again")
    assert sorted(p.name for p in (tmp_path / "again" / "images" / "g").iterdir()) == sorted(
        p.name for p in (tmp_path / "tiles" / "images" / "g").iterdir())
    picked = tile_dataset(tmp_path / "tiles", tmp_path / "s2", seeds=[2])
    assert picked["written"] == 2 and picked["elements"] == sum(len(a.elements) for s, a in anns.items() if "s2" in s)
    with pytest.raises(DatasetError, match="no screen has one of the seeds"):
        tile_dataset(tmp_path / "tiles", tmp_path / "none", seeds=[77])


def test_canvases_cut_in_parallel_parts_make_one_data_yaml(tmp_path: Path) -> None:
    _dataset(tmp_path / "a", [(160, 210, 1.0, s) for s in range(1, 4)])
    _dataset(tmp_path / "b", [(1200, 700, 1.0, 9)])
    _dataset(tmp_path / "v", [(160, 210, 1.0, 5)])
    got = export_canvas_parts({"p": [tmp_path / "a", tmp_path / "a"], "q": [tmp_path / "b"]}, tmp_path / "out",
                              split=SplitRule.parse("val:2800-2999"), max_tiles=2, val_datasets=[tmp_path / "v"])
    text = (tmp_path / "out" / "data.yaml").read_text()
    assert f'"{(tmp_path / "out" / "p").resolve()}/images/train"' in text
    assert f'"{(tmp_path / "out" / "q").resolve()}/images/train"' in text
    assert f"nc: {len(DETECTOR_CLASSES)}" in text and got["data_yaml"] == str(tmp_path / "out" / "data.yaml")
    assert got["parts"]["p"]["screens"] == {"train": 6, "val": 1}  # a named twice: packed twice
    assert got["parts"]["q"]["canvases"] == {"train": 2, "val": 0}  # a 1200x700 screen: 2 tiles
    with pytest.raises(DatasetError, match="no validation canvases"):
        export_canvas_parts({"q": [tmp_path / "b"]}, tmp_path / "out2", split=SplitRule.parse("val:2800-2999"))
