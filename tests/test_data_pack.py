"""`caap dataset pack/unpack`: one archive of datasets that unpacks to the same labels and pixels."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw
from typer.testing import CliRunner

from caap.cli import app
from caap.data.format import Annotation, Dataset, DatasetError, Source, open_dataset
from caap.data.pack import pack, unpack
from caap.elements import Element

FIXTURE = Path(__file__).parent / "fixtures" / "miniwob-mini"


def _synthetic(root: Path) -> Dataset:
    ds = Dataset.create(root, "synth")
    rng = np.random.default_rng(0)
    for i in range(3):
        image = Image.fromarray(rng.integers(200, 256, (60, 90, 3), dtype=np.uint8))  # a noisy page
        ImageDraw.Draw(image).rectangle([20, 20, 50, 35], fill=(0, 0, 0))
        ann = Annotation(image="x", width=90, height=60, source=Source(kind="synth", task="synth", seed=i),
                         elements=[Element(type="button", bbox=[20, 20, 51, 36], text="ok")])
        ds.add("synth", f"synth-{i}", image, ann)
    ds.add("synth", "synth-copy", Image.open(root / "images/synth/synth-0.png"),
           Annotation(image="x", width=90, height=60, source=Source(kind="synth", task="synth", seed=0),
                      elements=[Element(type="button", bbox=[20, 20, 51, 36], text="ok")]))
    return ds


def test_pack_round_trips_labels_and_real_pixels(tmp_path):
    synth = _synthetic(tmp_path / "synth")
    archive = tmp_path / "data.tar.gz"
    stats = pack([FIXTURE, synth.root], archive)
    real = len(open_dataset(FIXTURE))
    assert stats["datasets"]["miniwob-mini"]["screens"] == real
    assert 0 < stats["datasets"]["miniwob-mini"]["delta_images"] < real  # later steps stored as differences
    assert stats["datasets"]["synth"] == {"images": 3, "duplicate_screens": 1, "screens": 4, "elements": 4}
    roots = unpack(archive, tmp_path / "out")
    assert [r.name for r in roots] == ["miniwob-mini", "synth"]
    assert not list(roots[0].rglob("*.delta.webp")) and not (roots[0] / "pack.json").exists()
    before = {p.name: a for p, a in Dataset(FIXTURE)}
    after = {p.name: a for p, a in Dataset(roots[0])}
    assert before.keys() == after.keys()
    for name, ann in after.items():
        assert ann.image.endswith(".webp")
        assert ann.model_copy(update={"image": before[name].image}) == before[name]
        same = np.asarray(Image.open(roots[0] / ann.image).convert("RGB"))
        assert (same == np.asarray(Image.open(FIXTURE / before[name].image).convert("RGB"))).all()  # lossless
    # A screen stored twice in the source is stored once, and reads back the same.
    page = Dataset(roots[1])
    anns = {p.stem: a for p, a in page}
    assert anns["synth-copy"].image == anns["synth-0"].image
    for stem, ann in anns.items():
        got = np.asarray(Image.open(roots[1] / ann.image).convert("RGB"))
        assert (got == np.asarray(Image.open(synth.root / f"images/synth/{stem}.png").convert("RGB"))).all()


def test_pack_errors_keep_what_was_there(tmp_path):
    archive = tmp_path / "data.tar.gz"
    archive.write_bytes(b"an older archive")
    with pytest.raises(DatasetError, match=r"over the 0\.0001 MB limit"):
        pack([FIXTURE], archive, max_mb=0.0001)
    assert archive.read_bytes() == b"an older archive" and list(tmp_path.iterdir()) == [archive]
    with pytest.raises(DatasetError, match="different directory names"):
        pack([FIXTURE, FIXTURE], tmp_path / "x.tar.gz")
    with pytest.raises(DatasetError, match="no such dataset"):
        pack([tmp_path / "missing"], tmp_path / "x.tar.gz")
    with pytest.raises(DatasetError, match="unreadable archive"):
        unpack(archive, tmp_path / "out")
    with pytest.raises(DatasetError, match="no such archive"):
        unpack(tmp_path / "none.tar.gz", tmp_path / "out")
    loose = tmp_path / "loose.tar.gz"
    with tarfile.open(loose, "w:gz") as tar:
        tar.add(FIXTURE / "dataset.json", arcname="stray.json")
    with pytest.raises(DatasetError, match="not a caap dataset archive"):
        unpack(loose, tmp_path / "out")


def test_unpack_never_overwrites_a_dataset(tmp_path):
    archive = tmp_path / "data.tar.gz"
    pack([FIXTURE], archive)
    shutil.copytree(FIXTURE, tmp_path / "out" / "miniwob-mini")
    marker = tmp_path / "out" / "miniwob-mini" / "dataset.json"
    before = marker.read_text()
    with pytest.raises(DatasetError, match="already exist"):
        unpack(archive, tmp_path / "out")
    assert marker.read_text() == before


def test_pack_and_unpack_cli(tmp_path):
    runner = CliRunner()
    archive = tmp_path / "data.tar.gz"
    result = runner.invoke(app, ["dataset", "pack", str(FIXTURE), "--out", str(archive)])
    assert result.exit_code == 0, result.output
    assert "miniwob-mini:" in result.output and "MB" in result.output
    result = runner.invoke(app, ["dataset", "unpack", str(archive), str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "data" / "miniwob-mini" / "dataset.json").read_text())["packed"]
    result = runner.invoke(app, ["dataset", "pack", str(FIXTURE), "--out", str(tmp_path / "x.tgz"), "--max-mb",
                                 "0.00001"])
    assert result.exit_code != 0 and "limit" in result.output


def test_unpack_names_a_broken_difference_manifest(tmp_path):
    archive = tmp_path / "data.tar.gz"
    pack([FIXTURE], archive)
    broken = tmp_path / "broken.tar.gz"
    with tarfile.open(archive) as src, tarfile.open(broken, "w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read()
            if member.name.endswith("pack.json"):
                data = json.dumps({"deltas": [["../../etc/x", "a", "b"]]}).encode()
                member.size = len(data)
            dst.addfile(member, io.BytesIO(data))
    with pytest.raises(DatasetError, match=r"pack\.json: .*outside the dataset"):
        unpack(broken, tmp_path / "out")
