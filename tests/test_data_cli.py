"""`caap dataset` commands on the committed MiniWoB++ fixture (real screenshots, generated labels)."""

import json
from pathlib import Path

from typer.testing import CliRunner

from caap.cli import app
from caap.data.format import Dataset
from caap.taxonomy import DETECTOR_CLASSES

FIXTURE = Path(__file__).parent / "fixtures" / "miniwob-mini"
runner = CliRunner()


def test_fixture_is_a_valid_dataset():
    items = list(Dataset(FIXTURE))
    assert len(items) >= 40
    assert {ann.source.seed for _, ann in items} == {1001, 1010}
    assert len({ann.source.task for _, ann in items}) == 12


def test_report_json_and_sheet(tmp_path):
    result = runner.invoke(app, ["dataset", "report", str(FIXTURE), "--json", "--sheet", str(tmp_path / "s.png")])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["images"] == len(list(Dataset(FIXTURE)))
    assert stats["types"]["checkbox"] > 0 and stats["types"]["icon"] > 0
    assert (tmp_path / "s.png").is_file()


def test_export_yolo_splits_by_seed(tmp_path):
    out = tmp_path / "yolo"
    result = runner.invoke(app, ["dataset", "export-yolo", str(FIXTURE), str(out), "--split", "val:1010"])
    assert result.exit_code == 0, result.output
    yaml = (out / "data.yaml").read_text()
    assert f"nc: {len(DETECTOR_CLASSES)}" in yaml
    train = {p.name for p in (out / "images" / "train").iterdir()}
    val = {p.name for p in (out / "images" / "val").iterdir()}
    assert train and val and not train & val
    assert all("-1010-" in n for n in val) and all("-1001-" in n for n in train)
    again = runner.invoke(app, ["dataset", "export-yolo", str(FIXTURE), str(out), "--split", "val:1010"])
    assert again.exit_code == 2 and "error:" in again.output  # no silent overwrite


def test_export_reader_and_augment(tmp_path):
    result = runner.invoke(app, ["dataset", "export-reader", str(FIXTURE), str(tmp_path / "reader"), "--split",
                                 "val:1010"])
    assert result.exit_code == 0, result.output
    line = json.loads((tmp_path / "reader" / "train.jsonl").read_text().splitlines()[0])
    assert set(line) >= {"image", "bbox", "target"} and "type" in line["target"]
    result = runner.invoke(app, ["dataset", "augment", str(FIXTURE), str(tmp_path / "aug"), "--multiplier", "2",
                                 "--split", "val:1010"])
    assert result.exit_code == 0, result.output
    items = list(Dataset(tmp_path / "aug"))
    n_train = sum(1 for _, a in Dataset(FIXTURE) if a.source.seed == 1001)
    n_val = sum(1 for _, a in Dataset(FIXTURE) if a.source.seed == 1010)
    assert len(items) == 2 * n_train + n_val  # validation originals are not augmented


def test_bad_inputs(tmp_path):
    missing = runner.invoke(app, ["dataset", "report", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "no such dataset directory" in missing.output
    bad_split = runner.invoke(app, ["dataset", "export-yolo", str(FIXTURE), str(tmp_path / "y"), "--split", "val:x"])
    assert bad_split.exit_code == 2 and "error:" in bad_split.output
