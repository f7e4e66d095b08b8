"""Detector training (one epoch on the committed fixture), loading, inference and evaluation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from caap.elements import Element
from caap.observe.steps.boxes import merge_duplicates

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "miniwob-mini"
runner = CliRunner()


def test_merge_duplicates_keeps_the_most_confident():
    a = Element(type="button", bbox=[0, 0, 50, 20], score=0.9)
    b = Element(type="text", bbox=[1, 1, 50, 20], score=0.6)
    c = Element(type="text", bbox=[0, 30, 50, 40], score=0.5)
    assert merge_duplicates([b, c, a]) == [a, c]


SHIPPED = Path(__file__).resolve().parents[3] / "models" / "detector" / "caap-yolov8n-miniwob.pt"


def _train(project: Path, name: str, *extra: str) -> Path:
    from caap.cli import app

    result = runner.invoke(app, ["train", "detector", "--data", str(FIXTURE), "--split", "val:1010", "--batch", "8",
                                 "--project", str(project), "--name", name, *extra])
    assert result.exit_code == 0, result.output
    return project / name


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """One epoch fine-tuned from the shipped weights: the path a user takes with their own screenshots."""
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    if not SHIPPED.is_file():
        pytest.skip(f"the shipped detector is not in this checkout ({SHIPPED})")
    run = _train(tmp_path_factory.mktemp("runs"), "tiny", "--epochs", "1", "--model", str(SHIPPED))
    settings = json.loads((run / "caap-train.json").read_text())
    assert settings["args"]["box"] == 0.9 and settings["model"] == str(SHIPPED)  # the paper's loss weights
    assert settings["args"]["pretrained"] is True
    assert (run / "results.csv").is_file()
    return run / "weights" / "best.pt"


def test_training_writes_weights_and_the_detector_loads_them(trained):
    from PIL import Image

    from caap.data.format import Dataset
    from caap.geometry import iou
    from caap.observe.detect.detector import Detector

    det = Detector(trained)
    _, ann = next(iter(Dataset(FIXTURE)))
    image = Image.open(FIXTURE / ann.image).convert("RGB")
    found = det.detect(image)
    for e in found:
        x1, y1, x2, y2 = e.bbox
        assert 0 <= x1 < x2 <= image.width and 0 <= y1 < y2 <= image.height and 0 <= e.score <= 1
    # The fine-tuned weights still find the labelled elements (a broken save or load finds none).
    truth = [e.bbox for e in ann.elements]
    assert sum(any(iou(t, f.bbox) >= 0.5 for f in found) for t in truth) >= 0.8 * len(truth)
    assert [len(b) for b in det.detect_batch([image, image])] == [len(found)] * 2


def test_training_from_a_config_starts_from_scratch(tmp_path):
    """`model: yolov8n.yaml` (the shipped recipe's start): no weights needed, a run with weights."""
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    run = _train(tmp_path, "scratch", "--epochs", "1", "--model", "yolov8n.yaml")
    assert json.loads((run / "caap-train.json").read_text())["args"]["pretrained"] is False
    assert (run / "weights" / "best.pt").is_file() and (run / "weights" / "last.pt").is_file()


def test_training_settings_are_validated_before_anything_trains(tmp_path):
    """A recipe with a misspelt key or a value of the wrong kind is one error naming the file and the
    key; flags override the recipe."""
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    from caap.train.detector import DEFAULT_CONFIG, TrainingError, load_settings

    settings = load_settings(None, {"epochs": 2, "batch": None})
    assert settings.epochs == 2 and settings.box == 0.9 and settings.model == "yolov8n.yaml"
    assert "split" not in settings.yolo_args() and settings.yolo_args()["mosaic"] == 1.0
    bad = tmp_path / "bad.yaml"
    bad.write_text(DEFAULT_CONFIG.read_text() + "\nmosiac: 0.5\n")
    with pytest.raises(TrainingError, match=r"bad\.yaml: .*not an ultralytics training argument: mosiac"):
        load_settings(bad)
    bad.write_text(DEFAULT_CONFIG.read_text().replace("epochs: 20", "epochs: many"))
    with pytest.raises(TrainingError, match=r"bad\.yaml: epochs: .*'many'"):
        load_settings(bad)
    with pytest.raises(TrainingError, match="training config not found"):
        load_settings(tmp_path / "none.yaml")
    from caap.cli import app

    result = runner.invoke(app, ["train", "detector", "--data", str(FIXTURE), "--config", str(bad)])
    assert result.exit_code == 2 and "epochs" in result.output


def _epochs_done(run: Path) -> int:
    results = run / "results.csv"
    return max(0, len(results.read_text().splitlines()) - 1) if results.is_file() else 0


def test_resume_continues_an_interrupted_run(tmp_path):
    """A run killed after its first epoch resumes from its last checkpoint and finishes the epochs it had
    left, rather than starting over; a run that never started has nothing to resume."""
    import os
    import signal
    import subprocess
    import sys
    import time

    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    from caap.cli import app

    run = tmp_path / "killed"
    cmd = [sys.executable, "-m", "caap.cli", "train", "detector", "--data", str(FIXTURE), "--split", "val:1010",
           "--batch", "8", "--epochs", "4", "--model", "yolov8n.yaml", "--project", str(tmp_path), "--name", "killed"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        last, size = run / "weights" / "last.pt", -1
        while proc.poll() is None and time.monotonic() < deadline:  # until the first epoch's checkpoint is whole
            now = last.stat().st_size if last.is_file() else -1
            if _epochs_done(run) >= 1 and now > 0 and now == size:
                break
            size = now
            time.sleep(0.1)
        assert proc.poll() is None and _epochs_done(run) >= 1, "the run ended before it could be interrupted"
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    done_before = _epochs_done(run)
    assert 1 <= done_before < 4
    result = runner.invoke(app, ["train", "detector", "--data", str(FIXTURE), "--resume", "--project",
                                 str(tmp_path), "--name", "killed"])
    assert result.exit_code == 0, result.output
    assert _epochs_done(run) == 4  # the remaining epochs ran, none twice
    assert (run / "weights" / "best.pt").is_file()
    none = runner.invoke(app, ["train", "detector", "--data", str(FIXTURE), "--resume", "--project",
                               str(tmp_path), "--name", "none"])
    assert none.exit_code == 2 and "nothing to resume" in none.output


def test_eval_reports_metrics_and_latency(trained, tmp_path):
    from caap.cli import app

    result = runner.invoke(app, ["eval", "detector", "--data", str(FIXTURE), "--weights", str(trained), "--json",
                                 "--out", str(tmp_path / "m.json")])
    assert result.exit_code == 0, result.output
    metrics = json.loads(result.stdout)
    overall = metrics["overall"]
    assert metrics["images"] >= 40 and set(overall) == {"precision", "recall", "tp", "fp", "fn", "recall_by_centres"}
    tasks = metrics["per_task"]
    assert sum(t["labelled"] for t in tasks.values()) == metrics["elements"]
    assert sum(t["found"] for t in tasks.values()) == overall["tp"]
    assert all(t["found_share"] == round(t["found"] / t["labelled"], 4) for t in tasks.values() if t["labelled"])
    kinds = metrics["per_type"]  # the same elements again, by what they were labelled
    assert sum(t["labelled"] for t in kinds.values()) == metrics["elements"]
    assert sum(t["found"] for t in kinds.values()) == overall["tp"]
    assert sum(t["centres"] for t in kinds.values()) == sum(t["centres"] for t in tasks.values())
    assert set(metrics["per_class"]) >= {"text", "button", "icon"}
    assert metrics["latency_ms"]["cpu"]["images"] > 0
    assert json.loads((tmp_path / "m.json").read_text()) == metrics


def test_missing_and_corrupt_weights_are_one_clear_error(tmp_path):
    pytest.importorskip("ultralytics", reason="needs the vision extra")
    from caap.observe.detect.detector import Detector, DetectorError

    with pytest.raises(DetectorError, match="weights not found"):
        Detector(tmp_path / "none.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"\x00garbage" * 500)
    with pytest.raises(DetectorError, match=r"bad\.pt: not loadable"):
        Detector(bad)
    short = tmp_path / "short.pt"
    short.write_bytes(b"x" * 10)
    with pytest.raises(DetectorError, match="truncated"):
        Detector(short)
    from caap.cli import app

    result = runner.invoke(app, ["eval", "detector", "--data", str(FIXTURE), "--weights", str(bad)])
    assert result.exit_code == 2 and "not loadable" in result.output


def test_observe_with_the_shipped_detector(tmp_path):
    pytest.importorskip("ultralytics", reason="needs the vision extra")
    from caap.cli import app
    from caap.data.format import Dataset

    items = list(Dataset(FIXTURE))[:2]
    images = [str(FIXTURE / ann.image) for _, ann in items]
    one = runner.invoke(app, ["observe", images[0], "--no-reader", "--json", "--out-image", str(tmp_path / "o.png")])
    assert one.exit_code == 0, one.output
    record = json.loads(one.stdout)
    # The observe contract (DESIGN §7), and per stage and per step what the detector alone ran.
    assert set(record) == {"elements", "timings_ms", "stages_ms", "steps_ms", "look"} and record["look"] == "whole"
    assert set(record["timings_ms"]) == {"detect", "read", "total"}
    assert list(record["stages_ms"]) == ["detect", "fit"] and "snap_text_boxes" in record["steps_ms"]
    ids = [e["id"] for e in record["elements"]]
    assert ids == list(range(1, len(ids) + 1)) and len(ids) >= 3
    assert set(record["elements"][0]) >= {"id", "type", "bbox", "text", "checked", "focused", "highlighted",
                                          "subtype", "score"}
    assert (tmp_path / "o.png").is_file()
    # The shipped detector finds the labelled elements of a screen it never trained on (seed 1001).
    from caap.geometry import iou

    truth = [e.bbox for e in items[0][1].elements]
    found = [tuple(e["bbox"]) for e in record["elements"]]
    assert sum(any(iou(t, f) >= 0.5 for f in found) for t in truth) >= 0.8 * len(truth)
    many = runner.invoke(app, ["observe", *images, "--no-reader", "--json"])
    lines = [json.loads(line) for line in many.stdout.splitlines()]
    assert [line["image"] for line in lines] == images
    missing = runner.invoke(app, ["observe", images[0], "--reader", str(tmp_path / "none")])
    assert missing.exit_code == 2 and "--no-reader" in missing.output


def test_observe_with_the_shipped_detector_and_reader(tmp_path):
    """What a fresh clone gets: both shipped models, one batched read per screen, the JSON contract."""
    pytest.importorskip("transformers", reason="needs the vision extra")
    from caap.cli import app
    from caap.data.format import Dataset
    from caap.observe.vision import DEFAULT_READER

    assert (DEFAULT_READER / "caap-reader.json").is_file(), "the reader is shipped in models/reader/"
    _, ann = next(iter(Dataset(FIXTURE)))
    both = runner.invoke(app, ["observe", str(FIXTURE / ann.image), "--json"])
    assert both.exit_code == 0, both.output
    assert both.stdout.startswith("{"), both.stdout[:300]
    record = json.loads(both.stdout)
    assert record["timings_ms"]["read"] > 0 and len(record["elements"]) >= 3
    plain = runner.invoke(app, ["observe", str(FIXTURE / ann.image), "--no-reader", "--json"])
    assert plain.exit_code == 0, plain.output
    detector_only = json.loads(plain.stdout)
    # The default [observe] type_source is the detector's class: the reader adds text and states.
    assert [e["type"] for e in record["elements"]] == [e["type"] for e in detector_only["elements"]]
    assert [e["bbox"] for e in record["elements"]] == [e["bbox"] for e in detector_only["elements"]]
    table = runner.invoke(app, ["observe", str(FIXTURE / ann.image), "--type-source", "reader"])
    assert table.exit_code == 0, table.output
    bad = runner.invoke(app, ["observe", str(FIXTURE / ann.image), "--type-source", "both"])
    assert bad.exit_code == 2 and "type_source" in bad.output


def test_a_hidpi_screen_is_observed_at_the_models_pixel_size(tmp_path):
    """--ui-scale 2 on a screen drawn twice as large gives the elements of the screen at factor 1,
    boxes in the large screen's pixels; the whole reading pipeline sees the same pixels."""
    pytest.importorskip("transformers", reason="needs the vision extra")
    from PIL import Image

    from caap.cli import app
    from caap.data.format import Dataset

    _, ann = next(iter(Dataset(FIXTURE)))
    with Image.open(FIXTURE / ann.image) as img:
        # Each pixel drawn as a 2x2 block: BOX shrinking by 2 gives back the very same screen.
        img.convert("RGB").resize((img.width * 2, img.height * 2), Image.Resampling.NEAREST).save(tmp_path / "x2.png")
    one = runner.invoke(app, ["observe", str(FIXTURE / ann.image), "--json"])
    two = runner.invoke(app, ["observe", str(tmp_path / "x2.png"), "--json", "--ui-scale", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, one.output + two.output
    small, large = json.loads(one.stdout)["elements"], json.loads(two.stdout)["elements"]
    assert len(small) >= 3
    assert [(e["type"], e["text"]) for e in large] == [(e["type"], e["text"]) for e in small]
    assert [e["bbox"] for e in large] == [[2 * v for v in e["bbox"]] for e in small]
    unscaled = runner.invoke(app, ["observe", str(tmp_path / "x2.png"), "--json", "--no-reader"])
    assert unscaled.exit_code == 0
    bad = runner.invoke(app, ["observe", str(tmp_path / "x2.png"), "--ui-scale", "9"])
    assert bad.exit_code == 2 and "ui_scale" in bad.output


def test_a_corrupt_image_still_gives_a_clear_error_after_ultralytics_is_imported(tmp_path):
    """ultralytics patches PIL's Image.open process-wide (retry as HEIF); a corrupt file must still
    end in caap's one clear message, not a missing-module error or an install attempt."""
    pytest.importorskip("ultralytics")
    import ultralytics  # noqa: F401  (applies the patch)

    from caap.observe.capture.screen import ScreenError, load_image

    bad = tmp_path / "shot.png"
    bad.write_bytes(b"not an image at all")
    with pytest.raises(ScreenError, match="not a readable image"):
        load_image(bad)


def _big_screen() -> Any:
    """A 1280x720 screen holding several MiniWoB screens at their own size (the detector runs it
    at 1,280 px, not the 224 px of one MiniWoB screen)."""
    from PIL import Image

    screens = sorted(FIXTURE.glob("**/*.png"))[:12]
    big = Image.new("RGB", (1280, 720), "white")
    for n, path in enumerate(screens):
        big.paste(Image.open(path).convert("RGB"), (10 + (n % 6) * 210, 10 + (n // 6) * 300))
    return big


def test_onnx_runtime_finds_what_torch_finds(tmp_path):
    pytest.importorskip("onnxruntime", reason="needs the vision extra")
    from PIL import Image

    from caap.observe.detect.detector import Detector

    on_torch, on_onnx = Detector(SHIPPED, runtime="torch"), Detector(SHIPPED, runtime="onnx")
    assert (on_torch.runtime, on_onnx.runtime) == ("torch", "onnx")
    small = Image.open(sorted(FIXTURE.glob("**/*.png"))[0]).convert("RGB")
    for image in (small, _big_screen()):
        a, b = on_torch.detect(image), on_onnx.detect(image)
        assert len(a) == len(b) > 3
        for x, y in zip(sorted(a, key=lambda e: e.bbox), sorted(b, key=lambda e: e.bbox), strict=True):
            assert x.type == y.type
            assert max(abs(p - q) for p, q in zip(x.bbox, y.bbox, strict=True)) <= 1
            assert abs((x.score or 0) - (y.score or 0)) < 0.01


def test_openvino_gives_onnx_runtimes_boxes_and_auto_takes_it(monkeypatch):
    pytest.importorskip("openvino", reason="needs the vision extra")
    from PIL import Image

    from caap.observe.detect import openvino_runtime
    from caap.observe.detect.detector import Detector, DetectorError

    on_onnx, on_openvino = Detector(SHIPPED, runtime="onnx"), Detector(SHIPPED, runtime="openvino")
    assert (on_onnx.runtime, on_openvino.runtime, Detector(SHIPPED, runtime="auto").runtime) == (
        "onnx", "openvino", "openvino")
    small = Image.open(sorted(FIXTURE.glob("**/*.png"))[0]).convert("RGB")
    for image in (small, _big_screen(), _big_screen().crop((0, 0, 1000, 700))):  # square-padded and a rectangle
        a, b = on_onnx.detect(image), on_openvino.detect(image)
        assert len(a) == len(b) > 3
        for x, y in zip(sorted(a, key=lambda e: e.bbox), sorted(b, key=lambda e: e.bbox), strict=True):
            assert x.type == y.type and x.bbox == y.bbox
            assert abs((x.score or 0) - (y.score or 0)) < 0.001
    two = on_openvino.detect_batch([small, small.transpose(Image.Transpose.ROTATE_90)])  # two shapes, one size
    assert [len(d) for d in two] == [len(on_openvino.detect(small)),
                                     len(on_openvino.detect(small.transpose(Image.Transpose.ROTATE_90)))]

    monkeypatch.setattr(openvino_runtime, "available", lambda: False)  # as without the package
    assert Detector(SHIPPED, runtime="auto").runtime == "onnx"
    with pytest.raises(DetectorError, match="needs OpenVINO"):
        Detector(SHIPPED, runtime="openvino")


def test_the_onnx_graph_is_exported_once_per_weights_file(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime", reason="needs the vision extra")
    from ultralytics import YOLO

    from caap.files import file_digest
    from caap.observe.detect.onnx_export import onnx_for

    first = onnx_for(SHIPPED, tmp_path / "cache")
    assert first.is_file() and file_digest(SHIPPED) in first.name
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [first.name]  # no export folder left behind

    def no_export(*args, **kwargs):
        raise AssertionError("exported twice")

    monkeypatch.setattr(YOLO, "export", no_export)
    assert onnx_for(SHIPPED, tmp_path / "cache") == first


def test_an_unwritable_cache_is_one_clear_error_or_a_fallback_to_torch(tmp_path, monkeypatch, capsys):
    pytest.importorskip("onnxruntime", reason="needs the vision extra")
    from caap.observe.detect.detector import Detector, DetectorError

    blocker = tmp_path / "cache-is-a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CAAP_CACHE_DIR", str(blocker))
    with pytest.raises(DetectorError, match="CAAP_CACHE_DIR"):
        Detector(SHIPPED, runtime="onnx")
    det = Detector(SHIPPED, runtime="auto")
    assert det.runtime == "torch" and "running the detector in torch" in capsys.readouterr().err
    with pytest.raises(DetectorError, match="runtime must be one of"):
        Detector(SHIPPED, runtime="tensorrt")


def test_bench_observe_times_first_sight_and_the_same_screen_again(tmp_path):
    pytest.importorskip("transformers", reason="needs the vision extra")
    from caap.cli import app

    screens = sorted(FIXTURE.glob("**/*.png"))[:2]
    result = runner.invoke(app, ["bench", "observe", *map(str, screens), "--repeat", "2", "--json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["image"] for r in records] == [str(s) for s in screens]
    for r in records:
        assert r["elements"] >= 3 and (r["width"], r["height"]) == (160, 210)
        assert r["first"]["read"] > 0 and r["first"]["total"] >= r["first"]["detect"]
        # The second look reads nothing new: the memo answers for every element.
        assert r["again"]["read"] < r["first"]["read"]
    table = runner.invoke(app, ["bench", "observe", str(screens[0]), "--repeat", "1", "--detector-runtime", "torch",
                                "--reader-runtime", "torch"])
    assert table.exit_code == 0, table.output
    assert "detector runtime: torch" in table.output and "reader runtime: torch" in table.output
    missing = runner.invoke(app, ["bench", "observe", str(tmp_path / "none.png")])
    assert missing.exit_code == 2 and "no such image" in missing.output


def test_bench_observe_against_another_version_times_both_in_one_run(tmp_path):
    pytest.importorskip("transformers", reason="needs the vision extra")
    import caap
    from caap.cli import app

    screen = sorted(FIXTURE.glob("**/*.png"))[0]
    here = Path(caap.__file__).resolve().parents[1]
    # This checkout against itself (a folder): both columns measured, the ratio near 1.
    result = runner.invoke(app, ["bench", "observe", str(screen), "--against", str(here), "--rounds", "1",
                                 "--repeat", "1", "--reader-runtime", "torch", "--json"])
    assert result.exit_code == 0, result.output
    (row,) = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert row["screen"] == str(screen.resolve()) and row["base_first"] > 0 and row["new_first"] > 0
    assert row["first_ratio"] == round(row["new_first"] / row["base_first"], 3)
    assert "round 1/1: base done" in result.stderr and "round 1/1: new done" in result.stderr
    wrong = runner.invoke(app, ["bench", "observe", str(screen), "--against", "no-such-revision-anywhere"])
    assert wrong.exit_code == 2 and "neither a caap checkout nor a git revision" in wrong.output


def test_the_miniwob_benchmark_keeps_the_miniwob_detector_unless_one_is_named(tmp_path: Path) -> None:
    from caap.config import ObserveConfig
    from caap.observe.vision import DEFAULT_DETECTOR, MINIWOB_DETECTOR, miniwob_observe

    assert DEFAULT_DETECTOR.name == "caap-yolov8n-any.pt" and MINIWOB_DETECTOR.name == "caap-yolov8n-miniwob.pt"
    assert miniwob_observe(ObserveConfig()).detector == MINIWOB_DETECTOR
    named = ObserveConfig(detector=tmp_path / "mine.pt")
    assert miniwob_observe(named).detector == tmp_path / "mine.pt"


def test_matching_by_centres_counts_boxes_drawn_another_way():
    """A tree row labelled full width and boxed at its words: missed at IoU 0.5, found by centres;
    a whole panel round several elements, or a box beside one, is found by neither rule."""
    from caap.train.eval_detector import match_boxes

    row, label = (40, 10, 240, 30), (60, 10, 120, 30)  # the row's centre (140, 20) is not in the words
    words = (100, 12, 180, 28)  # centred in the row: IoU 0.08
    assert match_boxes([(0.9, words)], [row], 0.5) == [-1]
    assert match_boxes([(0.9, words)], [row], 0.5, centres=True) == [0]
    assert match_boxes([(0.9, label)], [row], 0.5, centres=True) == [-1]  # its centre is in the row, not the reverse
    panel = (0, 0, 400, 300)
    assert match_boxes([(0.9, panel)], [row, (300, 200, 340, 220)], 0.5, centres=True) == [-1]
    assert match_boxes([(0.9, (250, 10, 300, 30))], [row], 0.5, centres=True) == [-1]
    # One to one, highest score first: of two predictions on one row only one counts.
    assert match_boxes([(0.5, row), (0.9, words)], [row], 0.5, centres=True) == [-1, 0]
    assert match_boxes([(0.9, row), (0.5, words)], [row], 0.5, centres=True) == [0, -1]


def test_averaged_checkpoints_are_the_weighted_mean_and_load_as_a_detector(tmp_path):
    pytest.importorskip("ultralytics", reason="needs the vision extra")
    import importlib.util

    import torch

    from caap.observe.detect.detector import Detector
    from caap.observe.vision import DEFAULT_DETECTOR

    if not DEFAULT_DETECTOR.is_file():
        pytest.skip("shipped detector weights not present")
    spec = importlib.util.spec_from_file_location("average_weights", Path(__file__).parents[3] / "tools" / "average_weights.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    checkpoint = torch.load(DEFAULT_DETECTOR, map_location="cpu", weights_only=False)
    shifted = tmp_path / "shifted.pt"
    moved = {k: (v + 1.0 if v.is_floating_point() else v) for k, v in checkpoint["model"].float().state_dict().items()}
    checkpoint["model"].load_state_dict(moved)
    torch.save({**checkpoint, "model": checkpoint["model"].half()}, shifted)
    soup = tool.average([DEFAULT_DETECTOR, shifted], [3.0, 1.0])
    base = torch.load(DEFAULT_DETECTOR, map_location="cpu", weights_only=False)["model"].float().state_dict()
    mixed = soup["model"].float().state_dict()
    key = next(k for k, v in base.items() if v.is_floating_point() and v.numel() > 100)
    assert torch.allclose(mixed[key], base[key] + 0.25, atol=2e-2)  # float16 storage
    out = tmp_path / "soup.pt"
    torch.save(soup, out)
    assert Detector(out, runtime="torch").model.names == Detector(DEFAULT_DETECTOR, runtime="torch").model.names
    other = tmp_path / "other.pt"
    torch.save({**checkpoint, "model": None, "ema": None}, other)
    with pytest.raises(SystemExit, match="holds no model"):
        tool.average([DEFAULT_DETECTOR, other], [1.0, 1.0])
