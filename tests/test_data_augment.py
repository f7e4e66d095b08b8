from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.data.augment import (
    AugmentConfig,
    apply_colour,
    augment_dataset,
    colour_jitter,
    colour_matrix,
    gaussian_noise,
    jitter_box,
    jitter_boxes,
)
from caap.data.export import SplitRule, export_yolo
from caap.data.format import Annotation, Dataset, DatasetError, Source, open_dataset
from caap.elements import Element

W, H = 160, 210


def asymmetric_screen(seed: int) -> Image.Image:
    """Dark, saturated left half; light right half; a black top band; a marker that moves with the seed."""
    img = Image.new("RGB", (W, H), (240, 240, 240))
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, W // 2 - 1, H - 1), fill=(20, 40, 160))
    d.rectangle((0, 0, W - 1, 39), fill=(0, 0, 0))
    d.rectangle((100, 10 + seed % 50, 150, 30 + seed % 50), fill=(200, 20, 20))
    return img


def make_dataset(root: Path, seeds: list[int], group: str = "g") -> Dataset:
    ds = Dataset.create(root, "src", {"tool": "test"})
    for seed in seeds:
        els = [
            Element(type="button", bbox=[100, 10 + seed % 50, 151, 31 + seed % 50], text="Go", focused=True),
            Element(type="icon", bbox=[0, 0, 1, 1], subtype="menu"),  # 1x1 in a corner: must never collapse
            Element(type="checkbox", bbox=[158, 208, 160, 210], checked=False),
        ]
        ann = Annotation(image="x", width=W, height=H,
                         source=Source(task=group, seed=seed, step=2, utterance="Go!"), elements=els)
        ds.add(group, f"{group}-{seed}-2", asymmetric_screen(seed), ann)
    return ds


def arr(img: Image.Image) -> np.ndarray:
    return np.asarray(img.convert("RGB"), dtype=np.float64)


# --- the transforms -----------------------------------------------------------------------------


def test_colour_identity_and_extremes() -> None:
    np.testing.assert_allclose(colour_matrix(1.0, 0.0), np.eye(3), atol=1e-6)
    np.testing.assert_allclose(colour_matrix(1.0, 360.0), np.eye(3), atol=1e-5)
    img = asymmetric_screen(3)
    assert np.array_equal(arr(apply_colour(img)), arr(img))
    grey = arr(apply_colour(img, saturation=0.0))
    assert np.abs(grey - grey.mean(axis=2, keepdims=True)).max() <= 1.0  # no chroma left
    brighter = arr(apply_colour(img, brightness=1.1))
    assert brighter.mean() > arr(img).mean()
    # A hue rotation changes colours but keeps luma (roughly).
    rotated = arr(apply_colour(img, hue_deg=90))
    luma = np.array([0.299, 0.587, 0.114])
    assert not np.array_equal(rotated, arr(img))
    assert abs((rotated @ luma).mean() - (arr(img) @ luma).mean()) < 3


def test_colour_jitter_reports_its_draws_and_is_deterministic() -> None:
    img = asymmetric_screen(0)
    a, pa = colour_jitter(img, np.random.default_rng(5), brightness=0.1, contrast=0.1, saturation=0.2, hue_deg=10)
    b, pb = colour_jitter(img, np.random.default_rng(5), brightness=0.1, contrast=0.1, saturation=0.2, hue_deg=10)
    assert pa == pb and np.array_equal(arr(a), arr(b))
    assert 0.9 <= pa["bright"] <= 1.1 and 0.9 <= pa["contrast"] <= 1.1
    assert 0.8 <= pa["sat"] <= 1.2 and -10 <= pa["hue"] <= 10
    assert np.array_equal(arr(a), arr(apply_colour(img, brightness=pa["bright"], contrast=pa["contrast"],
                                                      saturation=pa["sat"], hue_deg=pa["hue"])))


def test_gaussian_noise() -> None:
    img = Image.new("RGB", (100, 100), (128, 128, 128))
    assert np.array_equal(arr(gaussian_noise(img, np.random.default_rng(0), 0.0)), arr(img))
    noisy = arr(gaussian_noise(img, np.random.default_rng(0), 5.0)) - 128
    assert abs(noisy.mean()) < 0.2 and 4.5 < noisy.std() < 5.5
    again = arr(gaussian_noise(img, np.random.default_rng(0), 5.0)) - 128
    assert np.array_equal(noisy, again)


@pytest.mark.parametrize("max_px", [0, 1, 2, 3])
def test_jitter_boxes_stay_close_inside_and_non_empty(max_px: int) -> None:
    rng = np.random.default_rng(max_px)
    boxes = [(0, 0, 1, 1), (159, 209, 160, 210), (10, 10, 12, 11), (0, 0, 160, 210), (50, 60, 90, 80)]
    els = [Element(type="shape", bbox=b, subtype="point") for b in boxes]
    moved_any = False
    for _ in range(200):
        out = jitter_boxes(els, rng, max_px, W, H)
        for e, o in zip(els, out, strict=True):
            assert o.type == e.type and o.subtype == e.subtype
            x1, y1, x2, y2 = o.bbox
            assert 0 <= x1 < x2 <= W and 0 <= y1 < y2 <= H
            assert all(abs(a - b) <= max_px for a, b in zip(o.bbox, e.bbox, strict=True))
            moved_any |= o.bbox != e.bbox
    assert moved_any == (max_px > 0)
    assert els[0].bbox == (0, 0, 1, 1)  # the inputs are untouched


def test_jitter_box_keeps_an_axis_that_would_collapse() -> None:
    class Fixed:
        def integers(self, lo: int, hi: int, size: int) -> np.ndarray:
            return np.array([2, -2, -2, 2])  # x1 right, y1 up, x2 left, y2 down

    assert jitter_box((10, 10, 12, 12), Fixed(), 2, W, H) == (10, 8, 12, 14)  # type: ignore[arg-type]


def test_config_validation() -> None:
    with pytest.raises(DatasetError, match="brightness"):
        AugmentConfig(brightness=1.5)
    with pytest.raises(DatasetError, match="noise_sigma"):
        AugmentConfig(noise_sigma=(5.0, 1.0))


# --- whole datasets -----------------------------------------------------------------------------


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "dataset.json"}


def test_augment_dataset(tmp_path: Path) -> None:
    make_dataset(tmp_path / "src", [1, 2, 3])
    r = augment_dataset(tmp_path / "src", tmp_path / "aug", multiplier=3, seed=7)
    assert (r["originals"], r["augmented"], r["images"]) == (3, 6, 9)
    ds = open_dataset(tmp_path / "aug")
    anns = {p.stem: a for p, a in ds}
    assert len(anns) == 9 == len(list((tmp_path / "aug" / "images" / "g").iterdir()))
    gen = ds.meta()["generator"]
    assert gen["multiplier"] == 3 and gen["seed"] == 7 and gen["config"]["box_px"] == 2
    assert gen["source"] == str((tmp_path / "src").resolve())
    # Originals are byte-identical.
    for seed in (1, 2, 3):
        stem = f"g-{seed}-2"
        assert (tmp_path / "aug/images/g" / f"{stem}.png").read_bytes() == (tmp_path / "src/images/g" / f"{stem}.png").read_bytes()
        assert anns[stem].source.note is None
        for k in (1, 2):
            a = anns[f"{stem}__aug{k}"]
            assert a.source.seed == seed and a.source.task == "g" and a.source.step == 2 and a.source.utterance == "Go!"
            assert a.source.note.startswith(f"aug:k={k};bright=") and ";noise=" in a.source.note
            assert a.source.note.endswith(";box=2")
            assert a.image == f"images/g/{stem}__aug{k}.png"
            for e, o in zip(anns[stem].elements, a.elements, strict=True):
                assert (e.type, e.text, e.checked, e.focused, e.subtype) == (o.type, o.text, o.checked, o.focused, o.subtype)
                assert all(abs(x - y) <= 2 for x, y in zip(e.bbox, o.bbox, strict=True))
                assert 0 <= o.bbox[0] < o.bbox[2] <= W and 0 <= o.bbox[1] < o.bbox[3] <= H


def test_augment_is_deterministic(tmp_path: Path) -> None:
    make_dataset(tmp_path / "src", [1, 2])
    augment_dataset(tmp_path / "src", tmp_path / "a", seed=3)
    augment_dataset(tmp_path / "src", tmp_path / "b", seed=3)
    augment_dataset(tmp_path / "src", tmp_path / "c", seed=4)
    a, b, c = files(tmp_path / "a"), files(tmp_path / "b"), files(tmp_path / "c")
    assert a == b
    assert a.keys() == c.keys() and a != c
    # A copy depends on its own image only: adding another image does not change it.
    make_dataset(tmp_path / "src2", [1, 2, 9])
    augment_dataset(tmp_path / "src2", tmp_path / "d", seed=3)
    d = files(tmp_path / "d")
    assert all(d[k] == v for k, v in a.items())


def test_never_flipped(tmp_path: Path) -> None:
    make_dataset(tmp_path / "src", [1, 2, 3, 4])
    augment_dataset(tmp_path / "src", tmp_path / "aug", multiplier=4, seed=1)
    orig = arr(asymmetric_screen(1))
    for k in (1, 2, 3):
        img = arr(Image.open(tmp_path / "aug" / "images" / "g" / f"g-1-2__aug{k}.png"))
        assert img.shape == orig.shape
        left, right = img[:, : W // 2].mean(), img[:, W // 2:].mean()
        assert left < right - 80  # the dark half stays on the left
        # Closer to the original than to any mirror image of it.
        err = np.abs(img - orig).mean()
        assert err < np.abs(img - orig[:, ::-1]).mean() / 3 and err < np.abs(img - orig[::-1]).mean() / 3


def test_augmented_copies_follow_their_seed_into_the_split(tmp_path: Path) -> None:
    make_dataset(tmp_path / "src", list(range(10)))
    augment_dataset(tmp_path / "src", tmp_path / "aug", seed=0)
    export_yolo(tmp_path / "aug", tmp_path / "yolo", split=SplitRule.parse("val:every5"))
    val = sorted(p.stem for p in (tmp_path / "yolo" / "labels" / "val").iterdir())
    assert val == [f"g__g-{s}-2{suffix}" for s in (0, 5) for suffix in ("", "__aug1", "__aug2")]
    train = {p.stem for p in (tmp_path / "yolo" / "labels" / "train").iterdir()}
    assert len(train) == 24 and not train & set(val)


def test_augment_refusals(tmp_path: Path) -> None:
    make_dataset(tmp_path / "src", [1])
    out = tmp_path / "aug"
    out.mkdir()
    (out / "x").write_text("keep")
    with pytest.raises(DatasetError, match="not empty"):
        augment_dataset(tmp_path / "src", out)
    assert (out / "x").read_text() == "keep"
    r = augment_dataset(tmp_path / "src", out, overwrite=True, multiplier=2)
    assert r["images"] == 2 and not (out / "x").exists()
    with pytest.raises(DatasetError, match="already an augmented copy"):
        augment_dataset(out, tmp_path / "aug2")
    with pytest.raises(DatasetError, match="multiplier"):
        augment_dataset(tmp_path / "src", tmp_path / "aug3", multiplier=0)
    with pytest.raises(DatasetError, match="must not be"):
        augment_dataset(tmp_path / "src", tmp_path / "src", overwrite=True)
    # multiplier=1 is a plain copy.
    assert augment_dataset(tmp_path / "src", tmp_path / "copy", multiplier=1)["augmented"] == 0


def test_corrupt_source_label(tmp_path: Path) -> None:
    make_dataset(tmp_path / "src", [1, 2])
    label = tmp_path / "src" / "labels" / "g" / "g-2-2.json"
    data = json.loads(label.read_text())
    data["elements"][0]["bbox"] = [100, 10, 99, 20]
    label.write_text(json.dumps(data))
    with pytest.raises(DatasetError, match=rf"{label}: elements\[0\]\.bbox"):
        augment_dataset(tmp_path / "src", tmp_path / "aug")
    assert not (tmp_path / "aug").exists()
