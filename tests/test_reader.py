"""The element reader: semi-masking, the target format, training (tiny, one epoch on the fixture),
resume, batched reading, evaluation (with Tesseract beside it) and checkpoint errors."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from caap.elements import Element
from caap.observe.reader import ReaderError, decode_target, encode_target
from caap.observe.semimask import context_window, semi_mask
from caap.taxonomy import BOOLEAN_ATTRIBUTES, SUBTYPE, TEXT, ElementType, attributes_of, subtypes_of

FIXTURE = Path(__file__).parent / "fixtures" / "miniwob-mini"
CONFIG = Path(__file__).parents[1] / "training" / "reader.yaml"
BOX = (3, 4, 20, 30)


# --- semi-masking -------------------------------------------------------------------------------


def _noise(w: int = 40, h: int = 50, seed: int = 0) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB")


def test_semi_mask_keeps_the_element_darkens_the_rest_and_outlines_outside():
    image = _noise()
    src = np.asarray(image).astype(int)
    out = np.asarray(semi_mask(image, [10, 12, 25, 30], darken=0.5, outline_px=2, outline_rgb=(255, 0, 0))).astype(int)
    assert out.shape == src.shape
    assert (out[12:30, 10:25] == src[12:30, 10:25]).all()  # element pixels untouched
    ring = np.zeros(src.shape[:2], bool)
    ring[10:32, 8:27] = True
    ring[12:30, 10:25] = False
    assert (out[ring] == [255, 0, 0]).all()  # the outline: 2 px just outside the box
    outside = np.ones(src.shape[:2], bool)
    outside[10:32, 8:27] = False
    assert (out[outside] == np.round(src[outside] * 0.5)).all()  # everything else darkened
    assert (np.asarray(semi_mask(image, [10, 12, 25, 30])) == out).all()  # deterministic


def test_semi_mask_at_the_image_edge_clips_the_outline_never_the_element():
    image = _noise()
    src = np.asarray(image)
    out = np.asarray(semi_mask(image, [0, 0, 40, 10], outline_px=3, outline_rgb=(0, 255, 0)))
    assert (out[0:10] == src[0:10]).all()
    assert (out[10:13] == [0, 255, 0]).all()  # only the bottom band fits
    out = np.asarray(semi_mask(image, [-5, -5, 100, 100]))  # clipped to the image: nothing darkened
    assert (out == src).all()
    with pytest.raises(ValueError, match="no pixels inside"):
        semi_mask(image, [50, 60, 70, 80])


def test_context_crop_is_shifted_inside_the_image_and_keeps_its_size():
    assert context_window((10, 10, 20, 20), 100, 100, 5) == (5, 5, 25, 25)
    assert context_window((0, 0, 10, 10), 100, 100, 5) == (0, 0, 20, 20)  # top-left corner: shifted, not shrunk
    assert context_window((90, 95, 100, 100), 100, 100, 5) == (80, 85, 100, 100)  # bottom-right corner
    assert context_window((10, 10, 20, 20), 100, 30, 20) == (0, 0, 50, 30)  # taller than the image: whole height
    assert context_window((10, 10, 20, 20), 100, 100, 0, outline_px=2) == (8, 8, 22, 22)  # the outline always fits
    image = _noise(40, 50)
    src = np.asarray(image)
    out = semi_mask(image, [0, 0, 10, 10], context=5, outline_px=2)
    assert out.size == (20, 20)
    assert (np.asarray(out)[0:10, 0:10] == src[0:10, 0:10]).all()
    assert semi_mask(image, [5, 5, 15, 15], context=100).size == (40, 50)


# --- target format ------------------------------------------------------------------------------


def _full(element_type: ElementType, text: str = "Sub|mit = ok\\\nnext\tline é ✓ 中文") -> Element:
    values = {}
    for name in attributes_of(element_type):
        if name == TEXT:
            values[name] = text
        elif name == SUBTYPE:
            values[name] = subtypes_of(element_type)[-1]
        else:
            values[name] = True
    return Element(type=element_type, bbox=BOX, **values)


@pytest.mark.parametrize("element_type", list(ElementType))
def test_every_type_round_trips(element_type):
    element = _full(element_type)
    encoded = encode_target(element)
    assert "\n" not in encoded and "\t" not in encoded
    assert decode_target(encoded, BOX) == element
    bare = Element(type=element_type, bbox=BOX)  # every attribute unknown: omitted
    assert encode_target(bare) == element_type.value
    assert decode_target(element_type.value, BOX) == bare


def test_format_examples_and_escaping():
    button = Element(type="button", bbox=BOX, text="Submit", focused=False)
    assert encode_target(button) == "button|f=0|t=Submit"
    assert encode_target(Element(type="icon", bbox=BOX, subtype="like", checked=True)) == "icon|c=1|s=like"
    tricky = Element(type="text", bbox=BOX, text="a|b=c\\d\ne", highlighted=True)
    assert encode_target(tricky) == "text|h=1|t=a\\|b\\=c\\\\d\\ne"
    assert decode_target(encode_target(tricky), BOX) == tricky
    empty = Element(type="text_area", bbox=BOX, text="", focused=True)
    assert encode_target(empty) == "text_area|f=1|t="
    assert decode_target("text_area|f=1|t=", BOX).text == ""


@pytest.mark.parametrize("raw", ["", "Submit", "button=1|t=x", "notatype|t=x", "|t=x", " button|t=x", "\\", "é|"])
def test_malformed_generations_read_as_unknown_with_the_raw_text(raw):
    element = decode_target(raw, BOX)
    assert element.type is ElementType.UNKNOWN
    assert element.text == (raw or None)
    assert element.bbox == BOX


def test_invalid_attributes_are_dropped_not_fatal():
    e = decode_target("button|c=1|t=Go|f=yes|zz=3|s=like|noequals", BOX)
    assert (e.type, e.text, e.checked, e.focused, e.subtype) == (ElementType.BUTTON, "Go", None, None, None)
    assert decode_target("icon|s=banana|c=1", BOX) == Element(type="icon", bbox=BOX, checked=True)
    assert decode_target("shape|s=circle|s=line", BOX).subtype == "circle"  # first of a repeated key
    assert decode_target("text|t=abc\\", BOX).text == "abc\\"  # trailing lone backslash
    assert decode_target("text|t=a\\qb", BOX).text == "aqb"  # unknown escape
    assert decode_target("scrollbar|t=x", BOX) == Element(type="scrollbar", bbox=BOX)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("|=\\ntcfhs01 abé✓\n\t") | st.characters(), max_size=40))
def test_decoding_never_raises(raw):
    element = decode_target(raw, BOX)
    assert isinstance(element, Element) and element.bbox == BOX


@st.composite
def elements(draw):
    element_type = draw(st.sampled_from(list(ElementType)))
    values = {}
    for name in attributes_of(element_type):
        if name == TEXT:
            values[name] = draw(st.none() | st.text(max_size=30))
        elif name == SUBTYPE:
            values[name] = draw(st.none() | st.sampled_from(subtypes_of(element_type)))
        elif name in BOOLEAN_ATTRIBUTES:
            values[name] = draw(st.none() | st.booleans())
    return Element(type=element_type, bbox=BOX, **values)


@settings(max_examples=300, deadline=None)
@given(elements())
def test_any_element_round_trips(element):
    assert decode_target(encode_target(element), BOX) == element


# --- training, reading, evaluation ---------------------------------------------------------------


def _test_config(tmp: Path) -> Path:
    cfg = yaml.safe_load(CONFIG.read_text())
    cfg.update({"workers": 0, "batch": 8, "val_max_samples": 8, "device": "cpu", "threads": 1, "max_patches": 64})
    path = tmp / "reader-test.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    pytest.importorskip("transformers")
    from caap.train.reader import train

    tmp = tmp_path_factory.mktemp("reader")
    out = train(FIXTURE, config=_test_config(tmp), model_config="tiny", epochs=1, split="val:1010",
                out=tmp / "run", max_samples=16)
    return out


def test_training_writes_best_last_metrics_and_settings(run):
    assert (run / "best" / "caap-reader.json").is_file() and (run / "best" / "config.json").is_file()
    assert (run / "last" / "trainer_state.pt").is_file()
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["epoch"] == 1
    assert {"train_loss", "val_loss", "exact_match", "type_accuracy", "lr"} <= set(lines[0])
    record = json.loads((run / "caap-train.json").read_text())
    assert record["settings"]["model"] == "tiny" and record["samples"]["used"]["train"] == 16
    meta = json.loads((run / "best" / "caap-reader.json").read_text())
    assert meta["max_patches"] == 64 and meta["semi_mask"]["darken"] == 0.5 and meta["max_new_tokens"] > 1


def test_resume_continues_and_refuses_to_clobber(run, tmp_path):
    from caap.train.reader import train

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    with pytest.raises(ReaderError, match="already holds a run"):
        train(FIXTURE, config=_test_config(tmp_path), model_config="tiny", out=copy)
    with pytest.raises(ReaderError, match="already trained 1 of 1"):
        train(FIXTURE, out=copy, resume=True)
    train(FIXTURE, out=copy, resume=True, epochs=2)
    lines = [json.loads(x) for x in (copy / "metrics.jsonl").read_text().splitlines()]
    assert [x["epoch"] for x in lines] == [1, 2]
    assert lines[0]["lr"] == 0 and lines[1]["lr"] == 0  # each plan ends annealed; the extension restarted warm
    assert lines[1]["train_loss"] != lines[0]["train_loss"]
    assert json.loads((copy / "caap-train.json").read_text())["resumed"][0]["epoch"] == 1
    with pytest.raises(ReaderError, match="nothing to resume"):
        train(FIXTURE, out=tmp_path / "none", resume=True)


def _screen():
    from caap.data.format import Dataset

    _, ann = max(Dataset(FIXTURE), key=lambda item: len(item[1].elements))
    return Image.open(FIXTURE / ann.image).convert("RGB"), ann


def test_resumed_schedule_continues_the_plan_and_anneals():
    from caap.train.reader import _continue, _schedule

    plan = _schedule("linear", 10, 300)  # 3 epochs of 100 steps
    rest = _continue("linear", plan(200), 100)  # resumed after epoch 2, same plan
    assert all(abs(rest(s) - plan(200 + s)) < 1e-9 for s in range(0, 101, 10))
    shorter = _continue("linear", plan(200), 40)  # the last epoch on fewer samples: still ends at 0
    assert shorter(0) == plan(200) and shorter(40) == 0 and shorter(20) == plan(200) / 2
    assert _continue("cosine", 0.5, 10)(10) < 1e-12


def test_reader_reads_a_whole_screen_in_one_generate_call(run):
    from caap.observe.reader import Reader

    reader = Reader(run / "best")
    image, ann = _screen()
    calls = []
    real = reader.model.generate
    reader.model.generate = lambda **kw: calls.append(kw["flattened_patches"].shape[0]) or real(**kw)
    boxes = [e.bbox for e in ann.elements]
    found = reader.read(image, boxes)
    assert calls == [len(boxes)]  # one batched call for the screen
    assert [e.bbox for e in found] == boxes
    assert all(isinstance(e, Element) for e in found)
    assert set(reader.last_timings_ms) == {"prepare", "generate", "total"}
    calls.clear()
    reader.chunk_size = 4
    assert len(reader.read(image, boxes)) == len(boxes)
    assert calls == [4] * (len(boxes) // 4) + ([len(boxes) % 4] if len(boxes) % 4 else [])
    calls.clear()
    assert reader.read(image, []) == [] and calls == []


def test_reader_keeps_detector_fields_and_falls_back_to_type_hints(run, monkeypatch):
    import caap.observe.reader as reader_module

    reader = reader_module.Reader(run / "best")
    image, _ = _screen()
    monkeypatch.setattr(reader_module, "generate_texts", lambda model, tok, inputs, n: ["garbage", "button|t=Go"])
    detected = [Element(type="checkbox", bbox=[1, 1, 20, 20], score=0.8, id=3),
                Element(type="text", bbox=[30, 30, 60, 40], score=0.5)]
    first, second = reader.read(image, detected)
    assert (first.type, first.score, first.id, first.text) == (ElementType.CHECKBOX, 0.8, 3, None)  # unreadable: hint
    assert (second.type, second.text, second.score) == (ElementType.BUTTON, "Go", 0.5)  # read: the reader decides
    monkeypatch.setattr(reader_module, "generate_texts", lambda model, tok, inputs, n: ["garbage"])
    assert reader.read(image, [[1, 1, 20, 20]])[0].type is ElementType.UNKNOWN
    with pytest.raises(ReaderError, match=r"boxes\[0\]"):
        reader.read(image, [[500, 500, 600, 600]])
    with pytest.raises(ReaderError, match="type_hints"):
        reader.read(image, [[1, 1, 20, 20]], type_hints=["button", "text"])


def test_eval_reports_reader_and_tesseract(run):
    from caap.train.eval_reader import evaluate

    result = evaluate(FIXTURE, run / "best", limit=3)
    assert result["screens"] == 3 and result["elements"] > 0
    assert {"type_accuracy", "exact_match", "unreadable", "text", "attributes", "per_type", "latency_ms",
            "tesseract"} <= set(result)
    assert set(result["text"]) == {"elements", "exact_match", "cer"}
    assert set(result["attributes"]) == {"checked", "focused", "highlighted", "subtype"}
    cpu = result["latency_ms"]["cpu"]
    assert cpu["screens"] == 3 and cpu["per_element"] > 0
    tess = result["tesseract"]
    assert "error" in tess or {"exact_match", "cer", "ms_per_element"} <= set(tess)
    if "error" not in tess:
        assert tess["elements"] == result["text"]["elements"]


def test_eval_on_detected_boxes_scores_matched_elements_and_times_the_observation(run):
    from caap.observe.vision import DEFAULT_DETECTOR
    from caap.train.eval_reader import evaluate

    if not DEFAULT_DETECTOR.is_file():
        pytest.skip(f"{DEFAULT_DETECTOR} is not in this checkout")
    result = evaluate(FIXTURE, run / "best", limit=3, tesseract=False, latency_screens=0, detector=DEFAULT_DETECTOR)
    det = result["detection"]
    assert result["boxes"] == "detected"
    assert det["matched"] + det["missed"] == det["labelled"] > 0
    assert result["elements"] == det["matched"]  # only matched boxes are scored
    observe = result["observe_ms"]
    assert observe["per_screen"]["screens"] == 3 and observe["per_screen"]["mean"] > 0
    with pytest.raises(ReaderError, match="not found"):
        evaluate(FIXTURE, run / "best", limit=1, detector=FIXTURE / "nope.pt")


def test_box_jitter_stays_inside_the_image_and_changes_per_epoch():
    import random

    from caap.train.reader import ElementDataset, Sample, jitter_box

    rng = random.Random(0)
    for box in [(0, 0, 1, 1), (150, 200, 160, 210), (10, 10, 12, 11), (20, 30, 80, 45)]:
        for _ in range(300):
            x1, y1, x2, y2 = jitter_box(box, 2, 160, 210, rng)
            assert 0 <= x1 < x2 <= 160 and 0 <= y1 < y2 <= 210
            assert all(abs(a - b) <= 2 for a, b in zip((x1, y1, x2, y2), box, strict=True))
    image_path = next((FIXTURE / "images").rglob("*.png"))

    class Tok:
        eos_token_id = 1

        def __call__(self, text):
            return type("T", (), {"input_ids": [*text.encode(), 1]})

    ds = ElementDataset([Sample(str(image_path), (20, 30, 80, 45), "text|t=x")], Tok(), {"context": 12}, 32,
                        jitter=2, seed=0)
    first = np.asarray(ds[0][0])
    assert (np.asarray(ds[0][0]) == first).all()  # the same within an epoch (deterministic)
    sizes = set()
    for epoch in range(8):
        ds.epoch = epoch
        sizes.add(ds[0][0].size)
    assert len(sizes) > 1  # the crop follows the moved box
    plain = ElementDataset(ds.samples, Tok(), {"context": 12}, 32)
    assert plain[0][0].size == (84, 39)  # no jitter: the box plus 12 px on every side


def test_eval_without_tesseract_reports_the_error(run, monkeypatch):
    import caap.train.eval_reader as ev

    monkeypatch.setattr(ev.shutil, "which", lambda name: None)
    result = ev.evaluate(FIXTURE, run / "best", limit=1, latency_screens=0)
    assert "tesseract-ocr" in result["tesseract"]["error"]


def test_levenshtein():
    from caap.train.eval_reader import levenshtein

    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "abc") == 0


# --- errors ---------------------------------------------------------------------------------------


def test_missing_and_corrupt_checkpoints_raise_reader_error(run, tmp_path):
    from caap.observe.reader import Reader

    with pytest.raises(ReaderError, match="not found"):
        Reader(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReaderError, match=re.escape("caap-reader.json: missing")):
        Reader(tmp_path / "empty")
    bad = tmp_path / "bad"
    shutil.copytree(run / "best", bad)
    weights = bad / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:100])
    with pytest.raises(ReaderError, match=re.escape(f"{bad}: not a loadable")):
        Reader(bad)
    (bad / "caap-reader.json").write_text("{not json")
    with pytest.raises(ReaderError, match=re.escape("caap-reader.json: unreadable")):
        Reader(bad)
    meta = json.loads((run / "best" / "caap-reader.json").read_text())
    (bad / "caap-reader.json").write_text(json.dumps({**meta, "max_patches": "many"}))
    with pytest.raises(ReaderError, match="max_patches"):
        Reader(bad)


def test_training_input_errors_are_reader_errors(tmp_path):
    from caap.train.reader import train

    config = _test_config(tmp_path)
    with pytest.raises(ReaderError, match=re.escape("dataset.json")):
        train(tmp_path, config=config, model_config="tiny", out=tmp_path / "a")
    with pytest.raises(ReaderError, match="leaves no labelled elements in the val split"):
        train(FIXTURE, config=config, model_config="tiny", split="val:5-6", out=tmp_path / "b")
    with pytest.raises(ReaderError, match="hub is off"):
        train(FIXTURE, config=config, base="google/pix2struct-base", split="val:1010", out=tmp_path / "c", max_samples=4)
    with pytest.raises(ReaderError, match="model: must name one of"):
        train(FIXTURE, config=config, model_config="huge", out=tmp_path / "d")
    with pytest.raises(ReaderError, match=re.escape("nope.yaml: training config not found")):
        train(FIXTURE, config=tmp_path / "nope.yaml", out=tmp_path / "e")
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE, broken)
    for png in (broken / "images").rglob("*.png"):
        png.write_bytes(png.read_bytes()[:200])
    with pytest.raises(ReaderError, match=r"\.png: not a readable image"):
        train(broken, config=config, model_config="tiny", split="val:1010", out=tmp_path / "f", max_samples=4)


def test_reader_cli_train_eval_and_observe(tmp_path):
    """The commands wired to the reader: train tiny, evaluate, and observe a screen with detector + reader."""
    import json as _json

    from typer.testing import CliRunner

    from caap.cli import app

    runner = CliRunner()
    fixture = Path(__file__).parent / "fixtures" / "miniwob-mini"
    out = tmp_path / "reader"
    result = runner.invoke(app, ["train", "reader", "--data", str(fixture), "--model", "tiny", "--epochs", "1",
                                 "--split", "val:1010", "--max-samples", "24", "--device", "cpu", "--out", str(out)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["eval", "reader", "--data", str(fixture), "--checkpoint", str(out / "best"),
                                 "--limit", "2", "--no-tesseract"])
    assert result.exit_code == 0, result.output
    assert "type_accuracy" in _json.loads(result.stdout)
    bad = runner.invoke(app, ["eval", "reader", "--data", str(fixture), "--checkpoint", str(tmp_path / "none")])
    assert bad.exit_code == 2 and "error:" in bad.output


def test_length_grouped_batches_cover_every_sample_once_and_cut_padding():
    import torch

    from caap.train.reader import LengthGroupedBatches, Sample

    rng = np.random.default_rng(0)
    samples = [Sample("x.png", (0, 0, 1, 1), "t" * int(n)) for n in rng.integers(5, 200, 1000)]

    def batches(seed):
        return list(LengthGroupedBatches(samples, 32, torch.Generator().manual_seed(seed), window=10))

    first = batches(3)
    assert len(first) == len(LengthGroupedBatches(samples, 32, torch.Generator())) == 32
    assert sorted(i for b in first for i in b) == list(range(1000))
    assert first == batches(3) and first != batches(4)  # the order follows the generator

    def padding(groups):
        lengths = [len(s.target) for s in samples]
        return sum(max(lengths[i] for i in b) * len(b) - sum(lengths[i] for i in b) for b in groups)

    plain = [list(range(i, min(i + 32, 1000))) for i in range(0, 1000, 32)]
    assert padding(first) < 0.2 * padding(plain)


def test_merge_reading_by_type_source():
    from caap.observe.vision import VisionObserver, merge_reading

    det = Element(type="button", bbox=[0, 0, 40, 20], score=0.9, id=4)
    read = Element(type="hyperlink", bbox=[0, 0, 40, 20], text="Submit", highlighted=True, id=4)
    paper = merge_reading(det, read, "reader")
    assert (paper.type, paper.text, paper.score, paper.highlighted) == (ElementType.HYPERLINK, "Submit", 0.9, True)
    kept = merge_reading(det, read, "detector")  # the detector's class; the text carries over, `highlighted` not
    assert (kept.type, kept.text, kept.score, kept.id, kept.focused) == (ElementType.BUTTON, "Submit", 0.9, 4, None)
    unread = Element(type="unknown", bbox=[0, 0, 40, 20])
    assert merge_reading(det, unread, "reader").type is ElementType.BUTTON  # unreadable: the detector's guess
    icon = merge_reading(Element(type="icon", bbox=[0, 0, 9, 9], score=0.8),
                         Element(type="checkbox", bbox=[0, 0, 9, 9], checked=True, text="x"), "detector")
    assert (icon.type, icon.checked, icon.subtype, icon.text) == (ElementType.ICON, True, None, None)
    with pytest.raises(ValueError, match="type_source"):
        VisionObserver(object(), None, type_source="both")  # type: ignore[arg-type]


def test_position_bias_gets_its_own_rate_and_no_decay():
    pytest.importorskip("transformers")
    from caap.train.reader import build_model, load_settings, param_groups

    settings = load_settings(CONFIG)
    model = build_model(settings["models"]["tiny"], vocab_size=259, max_patches=64)
    names = {id(p): n for n, p in model.named_parameters()}
    settings.update(lr=1e-3, weight_decay=0.01, position_bias_lr=30.0)
    groups = param_groups(model, settings)
    assert len(groups) == 3 and sum(len(g["params"]) for g in groups) == len(names)
    position = groups[2]
    assert [names[id(p)] for p in position["params"]] == [
        "decoder.layer.0.self_attention.attention.relative_attention_bias.weight"]
    assert position["lr"] == pytest.approx(0.03) and position["weight_decay"] == 0.0
    assert all(names[id(p)].endswith("weight") and p.ndim == 2 for p in groups[0]["params"])
    settings["position_bias_lr"] = 1.0  # the grouping of runs started before the setting existed
    assert len(param_groups(model, settings)) == 2
