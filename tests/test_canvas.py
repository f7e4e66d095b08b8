"""Native-size training canvases (caap.data.canvas) and growing a detector's classes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.data.canvas import PAD_RGB, export_canvases
from caap.data.export import CLASS_INDEX, SplitRule
from caap.data.format import Annotation, Dataset, DatasetError, Source
from caap.elements import Element
from caap.taxonomy import DETECTOR_CLASSES, PAPER_TYPES, ElementType

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


def test_growing_the_shipped_detector_keeps_its_predictions(tmp_path: Path) -> None:
    pytest.importorskip("ultralytics", reason="needs the vision extra")
    from ultralytics import YOLO

    from caap.train.detector import grow_classes

    shipped = REPO / "models" / "detector" / "caap-yolov8n-miniwob.pt"
    if not shipped.is_file():
        pytest.skip("the shipped detector is not in models/detector/")
    assert grow_classes(shipped, tmp_path / "grown.pt") == len(PAPER_TYPES)
    screen = next((REPO / "tests" / "fixtures" / "miniwob-mini" / "images").rglob("*.png"))
    arr = np.asarray(Image.open(screen).convert("RGB"))[:, :, ::-1]
    before, after = (YOLO(str(w)).predict(arr, imgsz=224, verbose=False)[0].boxes
                     for w in (shipped, tmp_path / "grown.pt"))
    assert len(YOLO(str(tmp_path / "grown.pt")).names) == len(DETECTOR_CLASSES)
    assert len(before) >= 3
    assert np.allclose(before.xyxy.numpy(), after.xyxy.numpy()) and (before.cls == after.cls).all()
    assert np.allclose(before.conf.numpy(), after.conf.numpy(), atol=1e-4)


def test_reserved_screens_are_never_exported_for_training(tmp_path: Path) -> None:
    from caap.data.export import export_yolo

    ds = _dataset(tmp_path / "ds", [(160, 210, 1.0, 1), (160, 210, 1.0, 2800)])
    ann = Annotation(image="x", width=160, height=210, elements=[Element(type="button", bbox=(1, 1, 30, 20))],
                     source=Source(kind="desktop", task="gtk3-widget-factory", seed=3))
    ds.add("g", "reserved", _screen(160, 210, [(1, 1, 30, 20)], 3), ann)
    for export in (lambda: export_canvases([tmp_path / "ds"], tmp_path / "o", split=SplitRule.parse("val:2800")),
                   lambda: export_yolo(tmp_path / "ds", tmp_path / "o", split=SplitRule.parse("val:2800"))):
        with pytest.raises(DatasetError, match="gtk3-widget-factory is reserved for evaluation"):
            export()
    assert not (tmp_path / "o").exists()
    outside = Annotation(image="x", width=160, height=210, source=Source(kind="miniwob", task="navigate-tree", seed=4))
    (tmp_path / "ds" / "labels" / "g" / "reserved.json").unlink()
    ds.add("g", "outside", _screen(160, 210, [], 4), outside)
    with pytest.raises(DatasetError, match="navigate-tree is outside the paper's 67"):
        export_yolo(tmp_path / "ds", tmp_path / "o", split=SplitRule.parse("val:2800"))
