"""The element reader: semi-masking, the record format, native-resolution patches, the CTC alphabet
and head, joint training (tiny model on the fixture), exact resume, batched reading, text areas
line by line, evaluation beside PP-OCR and Tesseract, the observer's text sources, checkpoint and
settings errors, and the multi-process launch path."""

from __future__ import annotations

import itertools
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from caap.elements import Element
from caap.observe.read.configuration import ReaderError
from caap.observe.read.processing import context_window, semi_mask
from caap.observe.read.target import KEYS, decode_target, encode_target, same_record
from caap.taxonomy import BOOLEAN_ATTRIBUTES, SUBTYPE, TEXT, ElementType, attributes_of, subtypes_of

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "miniwob-mini"
CONFIG = Path(__file__).parents[3] / "training" / "reader.yaml"
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
    """Every attribute the reader's record writes for the type, known."""
    values = {}
    for name in attributes_of(element_type):
        if name not in KEYS:
            continue  # read by the state head and the level rule, not written in the record
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


def test_record_exact_scores_what_the_label_knows():
    read = Element(type="button", bbox=BOX, text="Go", checked=False, focused=False)
    assert same_record(read, Element(type="button", bbox=BOX, text="Go", focused=False))  # checked unknown
    assert not same_record(read, Element(type="button", bbox=BOX, text="Go", checked=True, focused=False))
    assert not same_record(read, Element(type="icon", bbox=BOX))
    assert not same_record(Element(type="button", bbox=BOX, text="Go"), Element(type="button", bbox=BOX, text="Go",
                                                                                focused=True))  # unread: wrong


def test_invalid_attributes_are_dropped_not_fatal():
    e = decode_target("input_field|c=1|t=Go|f=yes|zz=3|s=like|noequals", BOX)
    assert (e.type, e.text, e.checked, e.focused, e.subtype) == (ElementType.INPUT_FIELD, "Go", None, None, None)
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
        if name not in KEYS:
            continue  # not part of the record
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


# --- patches, alphabet, CTC head ---------------------------------------------------------------


def test_patches_keep_native_resolution_and_pack_each_image_alone():
    torch = pytest.importorskip("torch")
    from caap.observe.read.processing import patch_values, patchify

    small = _noise(10, 20, seed=1)  # 2 rows x 3 cols of 16x4 patches (width padded 10 -> 12)
    wide = _noise(41, 9, seed=2)  # 1 row x 11 cols
    grid = patchify([small, wide], (16, 4))
    assert grid.shapes == [(2, 3), (1, 11)]
    assert grid.flattened_patches.shape == (2, 11, 2 + patch_values(16, 4))  # padded to the longest, not 2 x 11
    assert grid.attention_mask.sum(dim=1).tolist() == [6, 11]
    rows, cols = grid.flattened_patches[0, :6, 0].tolist(), grid.flattened_patches[0, :6, 1].tolist()
    assert rows == [1, 1, 1, 2, 2, 2] and cols == [1, 2, 3, 1, 2, 3]  # row-major, 1-based
    assert grid.flattened_patches[0, 6:].abs().sum() == 0  # padding rows are zero
    # Pixels are the image's own (standardised), patch by patch: the first patch's first row of pixels.
    a = np.asarray(small, dtype=np.float32)
    z = (a - a.mean()) / a.std()
    first = grid.flattened_patches[0, 0, 2:].view(16, 4, 3)
    assert torch.allclose(first[0], torch.from_numpy(z[0, :4]), atol=1e-4)
    # max_patches scales a huge crop down (never up), keeping it inside the budget.
    huge = patchify([_noise(400, 40)], (16, 4), max_patches=64)
    assert huge.shapes[0][0] * huge.shapes[0][1] <= 64
    assert patchify([_noise(12, 16)], (16, 4), max_patches=64).shapes == [(1, 3)]


def test_alphabet_encodes_decodes_and_marks_unknown_characters():
    from caap.observe.read.ctc import BLANK, UNKNOWN, UNKNOWN_CHAR, Alphabet, AlphabetError, normalise

    alphabet = Alphabet.build(["Ünïcode 中"], extra="ab ")
    assert set("Ünïcode中ab ") <= set(alphabet.chars) and alphabet.size == len(alphabet.chars) + 2
    ids = alphabet.encode("a  b\nZ")
    assert ids[:3] == [alphabet.chars.index("a") + 2, alphabet.chars.index(" ") + 2, alphabet.chars.index("b") + 2]
    assert ids[-1] == UNKNOWN and BLANK not in ids  # Z is not in the alphabet
    assert alphabet.decode_ids(ids) == f"a b {UNKNOWN_CHAR}"  # whitespace normalised, Z unreadable
    assert alphabet.decode_ids(alphabet.encode("ab 中")) == "ab 中"
    assert normalise("  two\n lines\t") == "two lines"
    for bad in ("", "aa", UNKNOWN_CHAR):
        with pytest.raises(AlphabetError):
            Alphabet(bad)


def test_greedy_decoding_collapses_repeats_and_reports_the_weakest_character():
    torch = pytest.importorskip("torch")
    from caap.observe.read.ctc import Alphabet, greedy_decode

    alphabet = Alphabet("lo")  # ids: 0 blank, 1 unknown, 2 "l", 3 "o"
    path = [2, 2, 0, 2, 3, 3, 0]  # l l _ l o o _  ->  "llo"
    probs = torch.full((1, 9, 4), 0.01)
    for t, label in enumerate(path):
        probs[0, t, label] = 0.97
    probs[0, 4, 3] = 0.6  # the first frame of "o" is unsure
    probs[0, 7:, 2] = 0.97  # frames past the element's length are ignored
    reading = greedy_decode(probs.log(), [7], alphabet)[0]
    assert reading.text == "llo"
    assert reading.confidence == pytest.approx(0.6, abs=1e-3)
    blank = torch.tensor([0.0, -9, -9, -9]).expand(1, 3, 4)
    assert greedy_decode(blank, [3], alphabet)[0] == type(reading)("", 1.0)  # nothing written: nothing doubtful


def _tiny_model(alphabet_size: int, frames: int = 2, context: int = 0, stem: list[int] | None = None):
    from caap.train.reader import build_model, load_settings

    class A:
        size = alphabet_size

    settings = load_settings(CONFIG, {"model": "tiny", "frames_per_column": frames, "max_patches": 256,
                                      "ctc_context": context, "stem": stem or [], "patch": [16, 4]})
    return build_model(settings, vocab_size=259, alphabet=A())  # type: ignore[arg-type]


def test_ctc_head_pools_each_column_from_its_own_patches_only():
    torch = pytest.importorskip("torch")
    from caap.observe.read.processing import patchify

    model = _tiny_model(10).eval()
    grid = patchify([_noise(12, 30, seed=3), _noise(20, 10, seed=4)], (16, 4))
    hidden = torch.randn(2, grid.flattened_patches.shape[1], model.config.vision_config.hidden_size)
    log_probs, lengths = model.ctc_log_probs(hidden, grid.attention_mask, grid.flattened_patches)
    assert lengths.tolist() == [3 * 2, 5 * 2]  # columns x frames per column
    assert log_probs.shape == (2, 5 * 2, 10)
    changed = hidden.clone()
    changed[0, 1] += 5  # image 0, row 1, column 2
    changed[1, 7:] += 5  # padding tokens of image 1
    again, _ = model.ctc_log_probs(changed, grid.attention_mask, grid.flattened_patches)
    assert torch.allclose(again[1], log_probs[1])  # padding never leaks in
    assert torch.allclose(again[0, :2], log_probs[0, :2]) and torch.allclose(again[0, 4:6], log_probs[0, 4:6])
    assert not torch.allclose(again[0, 2:4], log_probs[0, 2:4])  # only column 2's frames moved


def test_column_context_mixes_neighbouring_columns_only_within_each_element():
    torch = pytest.importorskip("torch")
    from caap.observe.read.processing import patchify

    model = _tiny_model(10, context=3).eval()  # 2 layers of kernel 3: reach of 2 columns each side
    with torch.no_grad():
        for layer in model.ctc_context:  # the residual branch starts at zero; give it weight
            torch.nn.init.normal_(layer.out.weight, std=0.5)
    grid = patchify([_noise(40, 12, seed=3), _noise(20, 10, seed=4)], (16, 4))
    hidden = torch.randn(2, grid.flattened_patches.shape[1], model.config.vision_config.hidden_size)
    log_probs, lengths = model.ctc_log_probs(hidden, grid.attention_mask, grid.flattened_patches)
    assert lengths.tolist() == [10 * 2, 5 * 2]
    changed = hidden.clone()
    changed[0, 1] += 3 * torch.randn(hidden.shape[-1])  # image 0, column 2 (0-based 1); not a constant, which
                                                        # the block's layer norm would cancel
    changed[1, 7:] += 5  # padding tokens of image 1
    again, _ = model.ctc_log_probs(changed, grid.attention_mask, grid.flattened_patches)
    assert torch.allclose(again[1], log_probs[1], atol=1e-6)  # padding never leaks in
    moved = [c for c in range(10) if not torch.allclose(again[0, 2 * c:2 * c + 2], log_probs[0, 2 * c:2 * c + 2],
                                                       atol=1e-6)]
    assert moved == [0, 1, 2, 3]  # column 1 and its neighbours up to 2 columns away


@pytest.mark.parametrize("over", ["patch", "image"])
def test_convolutional_stem_gives_a_crop_the_same_features_in_any_batch(over, tmp_path):
    torch = pytest.importorskip("torch")
    from caap.observe.read.modeling import ReaderModel, StemEmbeddings
    from caap.observe.read.processing import patchify
    from caap.train.reader import build_model, load_settings

    class A:
        size = 10

    settings = load_settings(CONFIG, {"model": "tiny", "max_patches": 256, "stem": [4, 8], "stem_over": over})
    model = build_model(settings, vocab_size=259, alphabet=A()).eval()  # type: ignore[arg-type]
    assert isinstance(model.encoder.embeddings, StemEmbeddings)
    with torch.no_grad():
        torch.nn.init.normal_(model.encoder.embeddings.mix.weight, std=0.3)  # zero at init; give it weight
    small, large = _noise(20, 12, seed=2), _noise(24, 40, seed=1)
    alone, together = patchify([small], (32, 4)), patchify([large, small], (32, 4))
    with torch.no_grad():
        a = model.encoder.embeddings(alone.flattened_patches)[0, :3]
        b = model.encoder.embeddings(together.flattened_patches)[1, :3]
    assert torch.allclose(a, b, atol=1e-5)
    model.save_pretrained(tmp_path)
    again = ReaderModel.from_pretrained(tmp_path)
    assert again.config.ctc["stem"] == [4, 8] and again.encoder.embeddings.whole_image == (over == "image")
    assert torch.equal(again.encoder.embeddings.mix.weight, model.encoder.embeddings.mix.weight)


def test_reader_model_round_trips_and_stays_a_pix2struct_model(tmp_path):
    torch = pytest.importorskip("torch")
    from transformers import Pix2StructForConditionalGeneration

    from caap.observe.read.modeling import ReaderModel

    model = _tiny_model(12)
    model.save_pretrained(tmp_path)
    again = ReaderModel.from_pretrained(tmp_path)
    assert again.config.ctc == {"classes": 12, "frames_per_column": 2, "context": 0, "context_layers": 2}
    assert torch.equal(again.ctc_head.weight, model.ctc_head.weight)
    assert isinstance(again, Pix2StructForConditionalGeneration)
    plain = Pix2StructForConditionalGeneration.from_pretrained(tmp_path)  # the CTC layers are simply extra
    assert torch.equal(plain.encoder.embeddings.patch_projection.weight,
                       model.encoder.embeddings.patch_projection.weight)


def _fixture_texts(n: int = 6) -> list:
    from caap.data.format import Dataset
    from caap.train.reader_data import Sample

    out = []
    for _, ann in Dataset(FIXTURE):
        for e in ann.elements:
            if e.type == ElementType.TEXT and e.text and len(out) < n and 4 <= len(e.text) <= 18:
                out.append(Sample(str(FIXTURE / ann.image), e))
    return out


def test_joint_objective_learns_to_read_a_few_crops_exactly():
    """The whole text path — crop, patches, encoder, column pooling, CTC loss and greedy decoding —
    learns: a tiny model overfits six real text crops until it reads them exactly."""
    torch = pytest.importorskip("torch")
    from caap.observe.read.configuration import build_tokenizer
    from caap.observe.read.ctc import Alphabet, greedy_decode
    from caap.train.reader import JointObjective, build_model, load_settings
    from caap.train.reader_data import Collate

    torch.manual_seed(0)
    samples = _fixture_texts()
    alphabet = Alphabet.build([s.element.text for s in samples], extra="")
    settings = load_settings(CONFIG, {"model": "tiny", "frames_per_column": 2, "max_patches": 256, "patch": [16, 4]})
    settings.models["tiny"].vision.update(hidden_size=64, num_hidden_layers=2, d_ff=128, d_kv=32)
    settings.models["tiny"].text.update(hidden_size=64, d_kv=32)  # cross-attention: the encoder's width
    model = build_model(settings, vocab_size=259, alphabet=alphabet)
    collate = Collate(build_tokenizer(), alphabet, patch=(16, 4), max_patches=256, mask={"context": 4},
                      max_target_tokens=32, decoder_text=False)
    batch = collate(samples)
    objective = JointObjective(model, 0.9)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    args = (batch.inputs["flattened_patches"], batch.inputs["attention_mask"], batch.labels, batch.ctc_targets,
            batch.ctc_lengths, batch.ctc_mask)
    for _ in range(300):
        loss, ctc, _ = objective(*args)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if ctc.item() < 0.02:
            break
    model.eval()
    with torch.no_grad():
        encoded = model.encode(args[0], args[1])
        log_probs, lengths = model.ctc_log_probs(encoded.last_hidden_state, args[1], args[0])
    read = [r.text for r in greedy_decode(log_probs, lengths.tolist(), alphabet)]
    assert read == [s.element.text for s in samples]


def test_the_loss_weight_decides_which_head_learns():
    pytest.importorskip("torch")
    from caap.observe.read.configuration import build_tokenizer
    from caap.observe.read.ctc import Alphabet
    from caap.train.reader import JointObjective
    from caap.train.reader_data import Collate

    samples = _fixture_texts(3)
    alphabet = Alphabet.build([s.element.text for s in samples])
    model = _tiny_model(alphabet.size)
    batch = Collate(build_tokenizer(), alphabet, patch=(16, 4), max_patches=256, mask={"context": 4},
                    max_target_tokens=32, decoder_text=False)(samples)
    args = (batch.inputs["flattened_patches"], batch.inputs["attention_mask"], batch.labels, batch.ctc_targets,
            batch.ctc_lengths, batch.ctc_mask)
    for weight, learns, idle in ((1.0, "ctc_head", "decoder"), (0.0, "decoder", "ctc_head")):
        model.zero_grad()
        JointObjective(model, weight)(*args)[0].backward()
        grads = {n: p.grad for n, p in model.named_parameters()}
        assert any(g is not None and g.abs().sum() > 0 for n, g in grads.items() if n.startswith(learns))
        assert all(g is None or g.abs().sum() == 0 for n, g in grads.items() if n.startswith(idle))
    assert batch.ctc_mask.tolist() == [1.0] * 3


def test_ctc_targets_by_element_type():
    from caap.train.reader_data import ctc_text, record_target

    assert ctc_text(Element(type="button", bbox=[0, 0, 9, 9], text=" Sub  mit ")) == "Sub mit"
    assert ctc_text(Element(type="icon", bbox=[0, 0, 9, 9], subtype="search")) == ""  # nothing to read
    assert ctc_text(Element(type="input_field", bbox=[0, 0, 9, 9])) is None  # unknown text: no CTC loss
    assert ctc_text(Element(type="text_area", bbox=[0, 0, 9, 9], text="two\nlines")) is None  # lines: decoder only
    checkbox = Element(type="checkbox", bbox=[0, 0, 9, 9], text="Yes", checked=True)
    assert record_target(checkbox, with_text=False) == "checkbox|c=1"
    assert record_target(checkbox, with_text=True) == "checkbox|c=1|t=Yes"


def test_mixed_stream_keeps_the_share_and_resumes_exactly():
    from caap.train.reader_data import GroupedBatches, MixedStream

    samples = [type("S", (), {"synthetic": i % 4 == 0})() for i in range(400)]  # 100 synthetic, 300 real
    stream = MixedStream(samples, 0.25, seed=1)  # type: ignore[arg-type]
    drawn = stream.batch(2000)
    share = sum(samples[i].synthetic for i in drawn) / len(drawn)
    assert 0.2 < share < 0.3
    real = [i for i in drawn if not samples[i].synthetic][:300]
    assert sorted(real) == [i for i in range(400) if i % 4]  # one full pass over the real pool, each once
    costs = [i % 37 for i in range(400)]
    grouped = GroupedBatches(MixedStream(samples, 0.25, seed=2), costs, 8, window=4)  # type: ignore[arg-type]
    for _ in range(5):
        grouped.next()
    saved = json.loads(json.dumps(grouped.state()))  # survives serialisation
    expected = [grouped.next() for _ in range(10)]
    again = GroupedBatches(MixedStream(samples, 0.25, seed=2), costs, 8, window=4)  # type: ignore[arg-type]
    again.restore(saved)
    assert [again.next() for _ in range(10)] == expected
    spans = [max(costs[i] for i in b) - min(costs[i] for i in b) for b in expected]
    assert statistics.mean(spans) < 0.5 * statistics.mean(  # grouped by cost: far less padding than random
        max(costs[i] for i in b) - min(costs[i] for i in b) for b in (drawn[k:k + 8] for k in range(0, 80, 8)))


def test_prefetched_batches_are_the_serial_ones_and_resume_where_the_model_stopped():
    """Worker processes collate ahead (a GPU waited on one process's cropping), yet every batch,
    its box jitter included, is the one the serial loop makes, and the saved stream position is
    that after the last batch handed out, not after those collated ahead."""
    torch = pytest.importorskip("torch")
    from caap.observe.read.configuration import build_tokenizer
    from caap.observe.read.ctc import Alphabet
    from caap.train.reader_data import BatchPrefetch, Collate, GroupedBatches, MixedStream

    samples = _fixture_texts(12)
    alphabet = Alphabet.build([s.element.text for s in samples])
    collate = Collate(build_tokenizer(), alphabet, patch=(16, 4), max_patches=256, mask={"context": 4},
                      max_target_tokens=32, decoder_text=False, jitter=2, seed=5)

    def grouped() -> GroupedBatches:
        return GroupedBatches(MixedStream(samples, 0.0, seed=4), [0] * len(samples), 4, window=2)

    serial = BatchPrefetch(grouped(), samples, collate, step=7, batch=4)
    expected = [serial.next() for _ in range(6)]
    ahead = BatchPrefetch(grouped(), samples, collate, step=7, batch=4, workers=2, ahead=3)
    try:
        got = [ahead.next() for _ in range(3)]
        saved = json.loads(json.dumps(ahead.state()))
    finally:
        ahead.close()
    resumed = grouped()
    resumed.restore(saved)  # six batches were collated ahead, three handed out: resume after the third
    again = BatchPrefetch(resumed, samples, collate, step=10, batch=4)
    got += [again.next() for _ in range(3)]
    for (indices, batch), (want_indices, want) in zip(got, expected, strict=True):
        assert indices == want_indices
        assert torch.equal(batch.inputs["flattened_patches"], want.inputs["flattened_patches"])
        assert torch.equal(batch.ctc_targets, want.ctc_targets)


def test_batches_group_crops_of_one_patch_grid():
    """A wide line and a tall list of about the same patch count share a batch only where a window of
    draws turns from one to the other: the whole-crop stem pads every crop to the largest rows and
    columns of its batch."""
    from caap.train.reader_data import GroupedBatches, MixedStream, Sample, patch_shape

    mask = {"context": 4, "outline_px": 2}
    wide = Sample("s.png", Element(type="text", bbox=[0, 0, 152, 16], text="x"), False)
    tall = Sample("s.png", Element(type="text", bbox=[0, 0, 1, 632], text="x"), False)
    assert patch_shape(wide, (32, 4), mask) == (1, 40) and patch_shape(tall, (32, 4), mask) == (20, 3)
    samples = [wide if i % 2 else tall for i in range(64)]

    def mixed(costs: list) -> int:
        grouped = GroupedBatches(MixedStream(samples, 0.0, seed=3), costs, 8, window=4)
        return sum(len({samples[i].element.bbox[3] for i in grouped.next()}) > 1 for _ in range(16))

    assert mixed([patch_shape(s, (32, 4), mask) for s in samples]) <= 4  # one turn per window of 4 batches
    assert mixed([40] * len(samples)) >= 12  # by patch count alone (40 and 60) they mix


def test_box_jitter_stays_inside_the_image():
    import random

    from caap.train.reader_data import jitter_box

    rng = random.Random(0)
    for box in [(0, 0, 1, 1), (150, 200, 160, 210), (10, 10, 12, 11), (20, 30, 80, 45)]:
        for _ in range(300):
            x1, y1, x2, y2 = jitter_box(box, 2, 160, 210, rng)
            assert 0 <= x1 < x2 <= 160 and 0 <= y1 < y2 <= 210
            assert all(abs(a - b) <= 2 for a, b in zip((x1, y1, x2, y2), box, strict=True))


def test_text_lines_split_a_text_area_into_its_lines():
    from PIL import ImageDraw, ImageFont

    from caap.observe.read.lines import text_lines

    font = ImageFont.truetype("/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf", 13)
    image = Image.new("RGB", (160, 210), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([10, 20, 150, 100], outline=(118, 118, 118))  # the area's border
    draw.rectangle([140, 21, 149, 99], fill=(200, 200, 200))  # a scrollbar down its right side
    for i, line in enumerate(["first line", "second jgpq", "third"]):
        draw.text((14, 24 + 17 * i), line, fill="black", font=font)
    lines = text_lines(image, (10, 20, 151, 101))
    assert len(lines) == 3
    assert all(a[3] <= b[1] + 1 for a, b in itertools.pairwise(lines))  # top to bottom, apart
    assert all(10 <= x1 < x2 <= 140 and 20 <= y1 < y2 <= 101 for x1, y1, x2, y2 in lines)
    assert text_lines(Image.new("RGB", (50, 50), "white"), (5, 5, 45, 45)) == []


# --- training, reading, evaluation ---------------------------------------------------------------


OVERRIDES = {"model": "tiny", "batch": 8, "val_max_samples": 12, "device": "cpu", "threads": 1, "log_every": 0,
             "split": "val:1010", "train_samples": 64, "eval_every_minutes": 60, "checkpoint_every_minutes": 60}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    pytest.importorskip("transformers")
    from caap.train.reader import train

    return train(FIXTURE, overrides=OVERRIDES, out=tmp_path_factory.mktemp("reader") / "run")


def test_training_writes_best_last_metrics_and_settings(run):
    assert (run / "best" / "caap-reader.json").is_file() and (run / "best" / "config.json").is_file()
    assert (run / "last" / "trainer_state.pt").is_file()
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert len(lines) == 1 and lines[0]["samples"] == 64 and lines[0]["step"] == 8
    assert {"train_loss", "train_ctc", "train_decoder", "text_exact", "record_exact", "type_accuracy", "lr",
            "samples_per_s"} <= set(lines[0])
    record = json.loads((run / "caap-train.json").read_text())
    assert record["settings"]["model"] == "tiny" and record["samples"]["elements"]["val"] > 0
    meta = json.loads((run / "best" / "caap-reader.json").read_text())
    assert meta["format"] == 2 and meta["patch"] == [32, 4] and meta["semi_mask"]["context"] == 4
    assert meta["decoder_text"] is False and set("Okay") <= set(meta["alphabet"]) and meta["max_new_tokens"] > 1


def test_a_paused_run_resumes_exactly_where_it_stopped(run, tmp_path):
    """Half the plan, a checkpoint, a resume: the weights equal those of the run trained straight through."""
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file

    from caap.train.reader import train

    half = train(FIXTURE, overrides=OVERRIDES, out=tmp_path / "half", stop_after_samples=32)
    assert json.loads((half / "last" / "caap-reader.json").read_text())["samples"] == 32
    train(out=half, resume=True)  # the run's own data
    straight, resumed = load_file(run / "last" / "model.safetensors"), load_file(half / "last" / "model.safetensors")
    assert straight.keys() == resumed.keys()
    assert all(torch.allclose(straight[k], resumed[k], atol=1e-5) for k in straight)
    with pytest.raises(ReaderError, match="already holds a run"):
        train(FIXTURE, overrides=OVERRIDES, out=half)
    with pytest.raises(ReaderError, match="already reached its plan"):
        train(FIXTURE, out=half, resume=True)
    with pytest.raises(ReaderError, match=r"cannot change \['lr'\]"):
        train(FIXTURE, out=half, resume=True, overrides={"lr": 0.1, "train_samples": 128})
    with pytest.raises(ReaderError, match="trains on its own data"):
        train(tmp_path, out=half, resume=True, overrides={"train_samples": 96})
    train(FIXTURE, out=half, resume=True, overrides={"train_samples": 96})  # a longer plan continues
    assert json.loads((half / "caap-train.json").read_text())["resumed"][-1]["samples"] == 64
    with pytest.raises(ReaderError, match="nothing to resume"):
        train(FIXTURE, out=tmp_path / "none", resume=True)


def _screen():
    from caap.data.format import Dataset

    _, ann = max(Dataset(FIXTURE), key=lambda item: len(item[1].elements))
    return Image.open(FIXTURE / ann.image).convert("RGB"), ann


def test_reader_reads_a_screen_in_passes_of_similar_crops_and_one_generation(run, monkeypatch):
    from caap.observe.read import inference
    from caap.observe.read.inference import Reader
    from caap.observe.read.processing import grid_size

    reader = Reader(run / "best", runtime="torch")  # the passes counted on the model's own encoder
    image, ann = _screen()
    calls = {"encode": [], "generate": []}
    encode, generate = reader.model.encode, inference.forced_greedy
    reader.model.encode = lambda p, m: calls["encode"].append(p.shape[0]) or encode(p, m)
    monkeypatch.setattr(inference, "forced_greedy",
                        lambda d, memory, *a: calls["generate"].append(memory.shape[0]) or generate(d, memory, *a))
    boxes = [e.bbox for e in ann.elements]
    got = reader.read(image, boxes)
    found = got.elements
    assert sum(calls["encode"]) == len(boxes) and calls["generate"] == [len(boxes)]
    assert [e.bbox for e in found] == boxes and all(isinstance(e, Element) for e in found)
    assert set(got.timings_ms) == {"prepare", "infer", "total"} and got.log_probs == []  # frames only when asked
    texts = [e for e in found if TEXT in attributes_of(e.type)]
    assert all(e.text is not None and 0 <= e.text_confidence <= 1 for e in texts)
    assert [r.text for r, e in zip(got.readings, found, strict=True) if e.text is not None] == [
        e.text for e in texts]  # the CTC reading is the element's text
    # Passes: every crop once, no pass padded beyond pad_waste times its own patches; the readings
    # are those of one big batch and of small chunks (a crop reads the same in any company).
    crops = reader._crops(image, boxes)
    groups = reader.passes(crops)
    assert sorted(i for g in groups for i in g) == list(range(len(crops))) and len(groups) > 1
    for group in groups:
        shapes = [grid_size(crops[i].width, crops[i].height, reader.spec.patch) for i in group]
        padded = len(group) * max(r for r, _ in shapes) * max(c for _, c in shapes)
        assert len(group) == 1 or padded <= reader.pad_waste * sum(r * c for r, c in shapes)
    said = [(r.text, r.record) for r in got.readings]
    with_frames = reader.read(image, boxes, log_probs=True)
    assert [(r.text, r.record) for r in with_frames.readings] == said
    assert [f.shape[1] for f in with_frames.log_probs] == [reader.alphabet.size] * len(boxes)
    reader.pad_waste = float("inf")
    calls = {"encode": [], "generate": []}
    again = reader.read(image, boxes)
    assert calls["encode"] == [len(boxes)] and [(r.text, r.record) for r in again.readings] == said
    reader.chunk_size = 4
    calls = {"encode": [], "generate": []}
    chunked = reader.read(image, boxes)
    assert len(chunked) == len(boxes)
    assert calls["encode"] == [4] * (len(boxes) // 4) + ([len(boxes) % 4] if len(boxes) % 4 else [])
    assert [(r.text, r.record) for r in chunked.readings] == said
    calls = {"encode": [], "generate": []}
    assert reader.read(image, []).elements == [] and calls == {"encode": [], "generate": []}


def test_a_text_area_is_read_line_by_line(run):
    from PIL import ImageDraw, ImageFont

    from caap.observe.read.inference import Reader

    reader = Reader(run / "best", runtime="torch")  # passes counted on the model's own encoder
    font = ImageFont.truetype("/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf", 13)
    image = Image.new("RGB", (160, 210), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([10, 20, 150, 100], outline=(118, 118, 118))
    for i, line in enumerate(["one", "two", "three"]):
        draw.text((14, 24 + 17 * i), line, fill="black", font=font)
    from caap.observe.read.lines import text_lines

    lines = text_lines(image, (10, 20, 151, 101))
    assert len(lines) == 3
    alone = [r.text for r in reader.infer(reader._crops(image, lines), [False] * 3, 1)[0]]
    encode = reader.model.encode
    sizes = []
    reader.model.encode = lambda p, m: sizes.append(p.shape[0]) or encode(p, m)
    got = reader.read(image, [[10, 20, 151, 101]], ["text_area"])
    assert sum(sizes) == 1 + 3  # the area (for its record) and its three lines, in passes by size
    assert got.readings[0].text == "\n".join(t for t in alone if t)  # the lines' readings, joined


@pytest.mark.parametrize("with_text", [False, True])
def test_record_grammar_allows_every_record_and_nothing_else(with_text):
    from caap.observe.read.configuration import build_tokenizer
    from caap.observe.read.target import RecordGrammar

    tok = build_tokenizer()
    grammar = RecordGrammar(tok, text=with_text)
    ids = lambda s: tok(s, add_special_tokens=False).input_ids  # noqa: E731

    def accepts(record: str) -> bool:
        seq = [*ids(record), tok.eos_token_id]
        return all(t in grammar.allowed(seq[:i]) for i, t in enumerate(seq))

    for element_type in ElementType:
        if element_type is ElementType.UNKNOWN:
            continue
        full = _full(element_type)
        assert accepts(encode_target(full.model_copy(update={"text": None})))
        assert accepts(encode_target(Element(type=element_type, bbox=BOX)))
        if TEXT in attributes_of(element_type):
            assert accepts(encode_target(full)) == with_text  # any text after t=, escapes included
    # "butt" continues only as "button" (the loop the constraint exists for); a finished record only ends.
    assert grammar.allowed(ids("butt")) == ids("o")
    assert set(grammar.allowed(ids("button"))) == {tok.eos_token_id, *ids("|")}
    assert grammar.allowed(ids("scrollbar")) == [tok.eos_token_id]
    assert not accepts("buttton") and not accepts("input_field|c=1") and not accepts("icon|s=nonsense")
    assert grammar.allowed([*ids("text"), tok.eos_token_id]) == [tok.eos_token_id]
    assert grammar.longest == 1 + max(  # the longest record (every attribute, the longest subtype) and eos
        len(ids(encode_target(_full(t).model_copy(update={"text": None, "subtype": sub}))))
        for t in ElementType if t is not ElementType.UNKNOWN for sub in (subtypes_of(t) or (None,)))


def test_constrained_generation_writes_only_valid_records(run):
    from caap.observe.read.inference import Reader

    image, ann = _screen()
    boxes = [e.bbox for e in ann.elements]
    free, constrained = Reader(run / "best", constrained=False), Reader(run / "best")
    unconstrained = free.read(image, boxes)
    got = constrained.read(image, boxes)
    found = got.elements
    assert all(decode_target(r.record, b).type is not ElementType.UNKNOWN
               for r, b in zip(got.readings, boxes, strict=True))
    assert [encode_target(e.model_copy(update={"text": None, "text_confidence": None})) for e in found] == [
        r.record for r in got.readings]  # the record read back is exactly what was written
    assert len(unconstrained.readings) == len(found)
    # Following the detector's classes, every record is of the hinted type, whatever the decoder prefers.
    hints = list(itertools.islice(itertools.cycle(["button", "checkbox", "text", "icon"]), len(boxes)))
    followed = constrained.read(image, boxes, hints, follow_hints=True).elements
    assert [e.type.value for e in followed] == hints
    assert all(e.text is not None for e in followed if TEXT in attributes_of(e.type))


def test_reader_keeps_detector_fields_and_falls_back_to_type_hints(run, monkeypatch):
    from caap.observe.read.inference import Reader

    reader = Reader(run / "best")
    image, _ = _screen()
    detected = [Element(type="checkbox", bbox=[1, 1, 20, 20], score=0.8, id=3),
                Element(type="text", bbox=[30, 30, 60, 40], score=0.5)]
    real = reader.infer
    monkeypatch.setattr(reader, "infer", lambda crops, gen, n, types, colours, log_probs=False: (
        real(crops, gen, n, types, colours)[0], ["garbage", "button|f=1"], [None, None]))
    first, second = reader.read(image, detected).elements
    assert (first.type, first.score, first.id) == (ElementType.CHECKBOX, 0.8, 3)  # unreadable record: the hint
    assert first.text is not None  # ...still with the CTC head's text
    assert (second.type, second.focused, second.score) == (ElementType.BUTTON, True, 0.5)
    with pytest.raises(ReaderError, match=r"boxes\[0\]"):
        reader.read(image, [[500, 500, 600, 600]])
    with pytest.raises(ReaderError, match="type_hints"):
        reader.read(image, [[1, 1, 20, 20]], type_hints=["button", "text"])


def test_eval_scores_every_text_source_on_the_same_elements(run, tmp_path):
    from caap.train.eval_reader import evaluate

    result = evaluate(FIXTURE, run / "best", limit=3, text_source="reader", errors=tmp_path / "errors.jsonl")
    rows = [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()]
    with pytest.raises(ReaderError, match="directory does not exist"):
        evaluate(FIXTURE, run / "best", limit=1, text_source="reader", errors=tmp_path / "no" / "errors.jsonl")
    texts = [r for r in rows if r["attribute"] == "text"]
    misread = sum(r["reader"] != r["gold"] for r in texts)  # the tiny model misreads most texts
    assert misread == round((1 - result["text"]["reader"]["exact_match"]) * result["text"]["elements"]) > 0
    assert all(r["gold"] != r["reader"] or r["gold"] != r["default"] or r["ocr"] not in (None, r["gold"])
               for r in texts)  # only texts some source got wrong
    states = [r for r in rows if r["attribute"] != "text"]
    for name, score in result["attributes"].items():  # one row per state the observer got wrong
        wrong = sum(r["attribute"] == name for r in states)
        assert wrong == round((1 - score["accuracy"]) * score["elements"]) if score["elements"] else wrong == 0
    assert result["screens"] == 3 and result["elements"] > 0 and result["boxes"] == "labelled"
    assert {"type", "record_exact", "text", "attributes", "per_type", "per_task", "latency_ms", "tesseract"} <= set(result)
    text = result["text"]
    assert text["elements"] > 0 and {"exact_match", "cer"} <= set(text["reader"])
    assert text["default"]["source"] == "reader" and text["default"]["exact_match"] == text["reader"]["exact_match"]
    # The texts a label can show whole: here (MiniWoB's labels fit their boxes) every one of them.
    assert 0 < text["default_drawn_whole"]["elements"] <= text["elements"]
    assert "exact_match" in text["ocr"] or "error" in text["ocr"]
    if "auto" in text:
        assert text["auto"]["0.5"]["to_ocr"] is not None
    assert set(result["attributes"]) == {"checked", "pressed", "focused", "highlighted", "expanded", "indeterminate",
                                         "enabled", "value", "subtype"}
    for score in result["attributes"].values():  # each beside the score of always answering the commonest value
        majority = score["majority"]
        assert majority is None if not score["elements"] else 0 < majority["accuracy"] <= 1
    # Per task and per toolkit: the same counts, grouped (the fixture's MiniWoB screens are the web's).
    kits = result["per_toolkit"]
    assert set(kits) == {"web"}
    assert kits["web"]["text_elements"] == sum(t["text_elements"] for t in result["per_task"].values())
    for name, score in kits["web"]["attributes"].items():
        assert score["elements"] == result["attributes"][name]["elements"]
        assert score["accuracy"] == result["attributes"][name]["accuracy"]
    tess = result["tesseract"]
    assert "error" in tess or tess["elements"] == text["elements"]


def test_eval_on_detected_boxes_scores_matched_elements_and_times_the_observation(run):
    from caap.observe.vision import DEFAULT_DETECTOR
    from caap.train.eval_reader import evaluate

    if not DEFAULT_DETECTOR.is_file():
        pytest.skip(f"{DEFAULT_DETECTOR} is not in this checkout")
    result = evaluate(FIXTURE, run / "best", limit=3, tesseract=False, ocr=False, text_source="reader",
                      latency_screens=0, detector=DEFAULT_DETECTOR)
    det = result["detection"]
    assert result["boxes"] == "detected"
    assert det["matched"] + det["missed"] == det["labelled"] > 0
    assert det["found"] == round(det["matched"] / det["labelled"], 4)
    assert 0 < det["matched_centres"] <= det["labelled"]
    assert result["elements"] == det["matched"]  # only matched boxes are scored
    observe = result["observe_ms"]
    assert observe["per_screen"]["screens"] == 3 and observe["per_screen"]["mean"] > 0
    assert result["type"]["detector"] > 0.9
    with pytest.raises(ReaderError, match="not found"):
        evaluate(FIXTURE, run / "best", limit=1, detector=FIXTURE / "nope.pt")
    with pytest.raises(ReaderError, match="needs PP-OCR"):
        evaluate(FIXTURE, run / "best", limit=1, ocr=False, text_source="auto")


def test_eval_without_tesseract_reports_the_error(run, monkeypatch):
    import caap.train.eval_reader as ev

    monkeypatch.setattr(ev.shutil, "which", lambda name: None)
    result = ev.evaluate(FIXTURE, run / "best", limit=1, latency_screens=0, ocr=False, text_source="reader")
    assert "tesseract-ocr" in result["tesseract"]["error"]


def test_levenshtein():
    from caap.train.eval_reader import levenshtein

    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "abc") == 0


def test_observer_sends_only_doubtful_texts_to_ocr(run):
    pytest.importorskip("rapidocr")
    from caap.observe.detect.detector import Detector
    from caap.observe.ocr.ppocr import PPOCR
    from caap.observe.vision import DEFAULT_DETECTOR, VisionObserver

    if not DEFAULT_DETECTOR.is_file():
        pytest.skip(f"{DEFAULT_DETECTOR} is not in this checkout")
    from caap.observe.read.inference import Reader

    detector, reader, ocr = Detector(DEFAULT_DETECTOR), Reader(run / "best"), PPOCR(threads=1)
    image, _ = _screen()
    calls = []
    read = ocr.read
    ocr.read = lambda img, boxes, types=None: calls.append(len(boxes)) or read(img, boxes, types)
    plain = VisionObserver(detector, reader, text_source="reader").observe(image).elements
    never = VisionObserver(detector, reader, text_source="auto", ocr=ocr, ocr_threshold=0.0).observe(image).elements
    assert calls == [] and [e.text for e in never] == [e.text for e in plain]
    doubtful = [i for i, e in enumerate(plain) if e.text_confidence is not None and e.text_confidence < 0.99]
    observer = VisionObserver(detector, reader, text_source="auto", ocr=ocr, ocr_threshold=0.99)
    seen = observer.observe(image)
    mixed = seen.elements
    assert calls == ([len(doubtful)] if doubtful else [])
    assert "ocr" in seen.timings_ms and ("reread_doubtful_texts" in seen.steps_ms or not doubtful)
    truth = read(image, [plain[i].bbox for i in doubtful], [plain[i].type.value for i in doubtful]) if doubtful else []
    assert [mixed[i].text for i in doubtful] == [t.text for t in truth]
    assert all(mixed[i].text == plain[i].text for i in range(len(plain)) if i not in doubtful)
    calls.clear()
    everything = VisionObserver(detector, reader, text_source="ocr", ocr=ocr).observe(image).elements
    assert calls == [sum(e.text is not None for e in plain)] and len(everything) == len(plain)
    with pytest.raises(ValueError, match="needs an OCR engine"):
        VisionObserver(detector, reader, text_source="auto")
    with pytest.raises(ValueError, match="text_source"):
        VisionObserver(detector, reader, text_source="both", ocr=ocr)


# --- errors ---------------------------------------------------------------------------------------


def test_missing_and_corrupt_checkpoints_raise_reader_error(run, tmp_path):
    from caap.observe.read.inference import Reader

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
    for field, value, message in (("max_patches", "many", "max_patches"), ("patch", [16], "patch"),
                                  ("alphabet", "", "alphabet"), ("format", 1, "format 1 readers had no CTC head")):
        (bad / "caap-reader.json").write_text(json.dumps({**meta, field: value}))
        with pytest.raises(ReaderError, match=message):
            Reader(bad)
    good = tmp_path / "good"
    shutil.copytree(run / "best", good)
    (good / "caap-reader.json").write_text(json.dumps({**meta, "alphabet": meta["alphabet"][:-1]}))
    with pytest.raises(ReaderError, match="CTC head has"):
        Reader(good)


def test_training_input_errors_are_reader_errors(tmp_path):
    from caap.train.reader import train

    with pytest.raises(ReaderError, match=re.escape("dataset.json")):
        train(tmp_path, overrides=OVERRIDES, out=tmp_path / "a")
    with pytest.raises(ReaderError, match="leaves no real labelled elements for validation"):
        train(FIXTURE, overrides={**OVERRIDES, "split": "val:5-6"}, out=tmp_path / "b")
    with pytest.raises(ReaderError, match="hub is off"):
        train(FIXTURE, overrides={**OVERRIDES, "base": "google/pix2struct-base"}, out=tmp_path / "c")
    with pytest.raises(ReaderError, match="'huge' is not one of the configs"):
        train(FIXTURE, overrides={**OVERRIDES, "model": "huge"}, out=tmp_path / "d")
    with pytest.raises(ReaderError, match=re.escape("nope.yaml: training config not found")):
        train(FIXTURE, config=tmp_path / "nope.yaml", out=tmp_path / "e")
    with pytest.raises(ReaderError, match="ctc_weight"):
        train(FIXTURE, overrides={**OVERRIDES, "ctc_weight": 2}, out=tmp_path / "g")
    with pytest.raises(ReaderError, match="lerning_rate"):
        train(FIXTURE, overrides={**OVERRIDES, "lerning_rate": 1}, out=tmp_path / "h")
    broken = tmp_path / "broken"
    shutil.copytree(FIXTURE, broken)
    for png in (broken / "images").rglob("*.png"):
        png.write_bytes(png.read_bytes()[:200])
    with pytest.raises(ReaderError, match=r"\.png: not a readable image"):
        train(broken, overrides=OVERRIDES, out=tmp_path / "f")


def test_base_checkpoint_fine_tunes_with_a_fresh_ctc_head(run, tmp_path):
    """A local Pix2Struct directory (here: the tiny run's weights saved as a plain Pix2Struct model
    with other patches) is a base: its encoder is kept, the patch projection and CTC head re-learned."""
    torch = pytest.importorskip("torch")
    from transformers import Pix2StructForConditionalGeneration

    from caap.train.reader import train

    plain = Pix2StructForConditionalGeneration.from_pretrained(run / "best")
    plain.save_pretrained(tmp_path / "base")
    out = train(FIXTURE, overrides={**OVERRIDES, "base": str(tmp_path / "base"), "train_samples": 16,
                                    "patch": [16, 8]}, out=tmp_path / "ft")
    tuned = Pix2StructForConditionalGeneration.from_pretrained(out / "last")
    assert tuned.encoder.embeddings.patch_projection.in_features == 16 * 8 * 3
    assert not torch.equal(tuned.encoder.encoder.layer[0].mlp.wo.weight, plain.encoder.encoder.layer[0].mlp.wo.weight)


def test_a_base_read_with_finer_ctc_frames_starts_out_reading_the_same(run):
    """frames_per_column 2 → 4 on a base with the same alphabet: each frame of the base's head is
    copied, so the readings before any fine-tuning step are the base's."""
    import yaml

    from caap.observe.read.configuration import build_tokenizer
    from caap.observe.read.ctc import Alphabet
    from caap.observe.read.inference import Reader
    from caap.train.reader import ReaderTrainSettings, load_base

    base = Reader(run / "best")
    settings = yaml.safe_load(CONFIG.read_text())
    settings.update({**OVERRIDES, "base": str(run / "best"), "frames_per_column": 4})
    tok = build_tokenizer()
    model = load_base(ReaderTrainSettings(**settings), vocab_size=len(tok), alphabet=Alphabet(base.spec.alphabet),
                      pad=tok.pad_token_id, eos=tok.eos_token_id).eval()
    assert model.frames_per_column == 4
    finer = Reader.in_memory(model, base.spec, tok, path=run / "best", device="cpu")
    image, ann = _screen()
    crops = base._crops(image, [e.bbox for e in ann.elements])
    before = [(r.text, round(r.confidence, 4)) for r in base.infer(crops, [False] * len(crops), 1)[0]]
    after = [(r.text, round(r.confidence, 4)) for r in finer.infer(crops, [False] * len(crops), 1)[0]]
    assert after == before


def test_a_base_fine_tuned_on_new_characters_keeps_reading_its_own(run):
    """New data with characters the base never saw: the run's alphabet is the base's, in its order,
    then the new characters, and the base's CTC rows are kept, so before any step the texts read
    are the base's (the new characters start as copies of "unknown")."""
    import dataclasses

    import yaml

    from caap.observe.read.configuration import build_tokenizer
    from caap.observe.read.ctc import Alphabet
    from caap.observe.read.inference import Reader
    from caap.train.reader import ReaderTrainSettings, base_alphabet, load_base

    base = Reader(run / "best")
    settings = yaml.safe_load(CONFIG.read_text())
    settings.update({**OVERRIDES, "base": str(run / "best")})
    parsed = ReaderTrainSettings(**settings)
    grown = base_alphabet(parsed, ["Жюль Верн", "ĀĒĪ"])
    assert grown.chars.startswith(base.spec.alphabet) and set("ЖюВĀĒĪ") <= set(grown.chars)
    assert base_alphabet(parsed.model_copy(update={"base": None}), ["x"]) == Alphabet.build(["x"])
    tok = build_tokenizer()
    model = load_base(parsed, vocab_size=len(tok), alphabet=grown, pad=tok.pad_token_id,
                      eos=tok.eos_token_id).eval()
    wider = Reader.in_memory(model, dataclasses.replace(base.spec, alphabet=grown.chars), tok,
                             path=run / "best", device="cpu")
    image, ann = _screen()
    crops = base._crops(image, [e.bbox for e in ann.elements])
    before = [r.text for r in base.infer(crops, [False] * len(crops), 1)[0]]
    after = [r.text for r in wider.infer(crops, [False] * len(crops), 1)[0]]
    assert after == before


def test_colour_statistics_tell_a_tinted_crop_from_a_white_one():
    from caap.observe.read.processing import COLOUR_SETS, crop_colour, patchify

    white = np.full((12, 40, 3), 255, np.uint8)
    white[5:7, 5:30] = 30  # a line of dark "text"
    tinted = white.copy()
    tinted[white[:, :, 0] == 255] = (228, 239, 255)  # a hovered row's background
    a, b = crop_colour(white), crop_colour(tinted)
    assert a.shape == (COLOUR_SETS["crop"],) and a.min() >= 0 and a.max() <= 1
    assert np.allclose(a[6:], 1.0) and abs(b[6] - 228 / 255) < 1e-6  # the middle's colour
    neighbour = white.copy()
    neighbour[:2] = (30, 100, 220)  # a selected row just above, seen in the semi-mask's context
    assert np.allclose(crop_colour(neighbour)[6:], a[6:])  # the middle's colour is the element's own
    grid = patchify([white, tinted], (16, 4))
    assert grid.colour.shape == (2, COLOUR_SETS["crop"])
    # Standardised pixels barely differ (a dark line on light); the colour statistics do.
    assert float((grid.colour[0] - grid.colour[1]).abs().max()) > 0.1
    given = np.zeros((2, 21), np.float32)
    assert patchify([white, tinted], (16, 4), colour=given).colour.shape == (2, 21)
    with pytest.raises(ValueError, match="colour rows"):
        patchify([white, tinted], (16, 4), colour=given[:1])


def test_box_colour_sees_the_focus_ring_the_red_frame_covers_and_no_neighbour():
    """The `box` set is measured on the screenshot: a 2 px focus ring just outside a button is
    where the semi-mask draws its red frame (the `crop` set cannot see it), and a selected row
    beyond that ring changes nothing."""
    from caap.observe.read.processing import COLOUR_SETS, box_colour, colour_set, crop_colour, semi_mask

    screen = np.full((60, 80, 3), 255, np.uint8)
    box = (20, 20, 60, 40)
    screen[20:40, 20:60] = 235  # a grey button
    ringed = screen.copy()
    ringed[18:42, 18:62][[0, 1, -2, -1], :] = (16, 16, 16)  # the focus ring: 2 px around the box
    ringed[18:42, 18:62][:, [0, 1, -2, -1]] = (16, 16, 16)
    ringed[20:40, 20:60] = 235
    plain, focused = box_colour(screen, box), box_colour(ringed, box)
    assert plain.shape == (COLOUR_SETS["box"],) and plain.min() >= 0 and plain.max() <= 1
    assert np.allclose(plain[:9], focused[:9])  # the box itself is the same
    assert focused[9] < 0.1 < 0.9 < plain[9]  # the ring's mean red: dark ring vs white page
    mask = {"context": 4, "outline_px": 2}
    crops = [np.asarray(semi_mask(Image.fromarray(a), box, **mask)) for a in (screen, ringed)]
    assert np.allclose(crop_colour(crops[0]), crop_colour(crops[1]))  # the red frame hid it
    beside = screen.copy()
    beside[5:17] = (30, 100, 220)  # a selected row above, beyond the ring
    assert np.allclose(box_colour(beside, box), plain)
    edge = box_colour(screen, (0, 0, 30, 10))  # in the corner: only part of a ring
    assert np.isfinite(edge).all()
    with pytest.raises(ValueError, match="no pixels"):
        box_colour(screen, (90, 90, 99, 99))
    assert colour_set(True) == "crop" and colour_set("box") == "box" and colour_set(False) is None
    with pytest.raises(ValueError, match="colour must be"):
        colour_set("ring")


@pytest.mark.parametrize("colour", [True, "box"])
def test_colour_layers_on_a_trained_reader_leave_its_text_and_learn_only_the_decoder(run, tmp_path, colour):
    """`colour` + `train_parts: decoder` on a base: the colour layers start at zero (the base's
    records at step 0), the encoder and CTC head never move (the same texts after training), and
    the checkpoint round-trips with its colour layers (either set: statistics of the crop, or of
    the screenshot around the box)."""
    torch = pytest.importorskip("torch")
    import yaml

    from caap.observe.read.configuration import build_tokenizer, load_model
    from caap.observe.read.ctc import Alphabet
    from caap.observe.read.inference import Reader
    from caap.train.reader import ReaderTrainSettings, load_base

    base = Reader(run / "best")
    settings = yaml.safe_load(CONFIG.read_text())
    settings.update({**OVERRIDES, "base": str(run / "best"), "colour": colour})
    tok = build_tokenizer()
    model = load_base(ReaderTrainSettings(**settings), vocab_size=len(tok), alphabet=Alphabet(base.spec.alphabet),
                      pad=tok.pad_token_id, eos=tok.eos_token_id).eval()
    assert model.colour is not None and float(model.colour[2].weight.detach().abs().sum()) == 0.0
    image, ann = _screen()
    boxes = [e.bbox for e in ann.elements]
    start = Reader.in_memory(model, base.spec, tok, path=run / "best", device="cpu")
    assert [(e.text, e.type) for e in start.read(image, boxes).elements] == [
        (e.text, e.type) for e in base.read(image, boxes).elements]
    from caap.train.reader import train

    out = train(FIXTURE, overrides={**OVERRIDES, "base": str(run / "best"), "train_samples": 48, "colour": colour,
                                    "train_parts": "decoder", "lr": 1e-2}, out=tmp_path / "colour")
    tuned = load_model(out / "last")
    assert tuned.colour is not None and float(tuned.colour[2].weight.detach().abs().sum()) > 0
    assert tuned.colour_set == ("crop" if colour is True else colour)
    frozen = base.model
    for name in ("ctc_head.weight", "encoder.encoder.layer.0.mlp.wo.weight"):
        assert torch.equal(dict(tuned.named_parameters())[name], dict(frozen.named_parameters())[name]), name
    moved = [n for n, p in tuned.named_parameters()
             if n.startswith("decoder.") and not torch.equal(p, dict(frozen.named_parameters())[n])]
    assert moved  # the decoder learned
    reread = Reader(out / "last")
    assert [e.text for e in reread.read(image, boxes, [e.type for e in ann.elements], follow_hints=True).elements] == [
        e.text for e in base.read(image, boxes, [e.type for e in ann.elements], follow_hints=True).elements]


def test_reader_cli_train_eval_and_observe(tmp_path):
    """The commands wired to the reader: train tiny, evaluate, observe a screen with detector + reader."""
    from typer.testing import CliRunner

    from caap.cli import app

    runner = CliRunner()
    out = tmp_path / "reader"
    result = runner.invoke(app, ["train", "reader", "--data", str(FIXTURE), "--model", "tiny", "--train-samples", "24",
                                 "--split", "val:1010", "--device", "cpu", "--set", "val_max_samples=8",
                                 "--set", "frames_per_column=1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "caap-train.json").read_text())["settings"]["frames_per_column"] == 1
    result = runner.invoke(app, ["eval", "reader", "--data", str(FIXTURE), "--checkpoint", str(out / "best"),
                                 "--limit", "2", "--no-tesseract", "--no-ocr", "--text-source", "reader"])
    assert result.exit_code == 0, result.output
    assert "reader" in json.loads(result.stdout)["text"]
    bad = runner.invoke(app, ["eval", "reader", "--data", str(FIXTURE), "--checkpoint", str(tmp_path / "none")])
    assert bad.exit_code == 2 and "error:" in bad.output
    bad = runner.invoke(app, ["train", "reader", "--data", str(FIXTURE), "--set", "patch", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "KEY=VALUE" in bad.output


def test_observe_reads_every_detected_box_with_a_trained_checkpoint(run):
    """`caap observe --reader CHECKPOINT`: the shipped detector's boxes, each read by the given reader
    (its type the detector's class, a text with a confidence wherever the type carries text)."""
    from typer.testing import CliRunner

    from caap.cli import app
    from caap.observe.vision import DEFAULT_DETECTOR

    if not DEFAULT_DETECTOR.is_file():
        pytest.skip(f"the shipped detector is not in this checkout ({DEFAULT_DETECTOR})")
    runner = CliRunner()
    image = next((FIXTURE / "images").rglob("*.png"))
    boxes = runner.invoke(app, ["observe", str(image), "--json", "--no-reader"])
    assert boxes.exit_code == 0, boxes.output
    detected = json.loads(boxes.stdout)["elements"]
    result = runner.invoke(app, ["observe", str(image), "--json", "--reader", str(run / "best"),
                                 "--text-source", "reader"])
    assert result.exit_code == 0, result.output
    elements = json.loads(result.stdout)["elements"]
    assert len(detected) >= 3
    assert [(e["type"], e["bbox"]) for e in elements] == [(e["type"], e["bbox"]) for e in detected]
    for e in elements:
        if TEXT in attributes_of(ElementType(e["type"])):
            assert isinstance(e["text"], str) and 0.0 <= e["text_confidence"] <= 1.0, e


def test_reader_lm_is_counted_tuned_written_and_used(run, tmp_path):
    """`caap train reader-lm` on the tiny run: the model is counted from the training split, the
    fusion grid is scored on the validation texts, the file lands beside the weights and the
    reader searches its doubtful texts with it; a corrupt file is one clear error."""
    from typer.testing import CliRunner

    from caap.cli import app
    from caap.observe.read.charlm import LM_FILE, CharLM
    from caap.observe.read.inference import Reader

    checkpoint = tmp_path / "ckpt"
    shutil.copytree(run / "best", checkpoint)
    runner = CliRunner()
    result = runner.invoke(app, ["train", "reader-lm", "--data", str(FIXTURE), "--checkpoint", str(checkpoint),
                                 "--split", "val:1010", "--val-max", "20", "--order", "4", "--force", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["elements"] > 0 and report["written"] == str(checkpoint / LM_FILE)
    assert {"weight", "bonus", "below", "exact_match", "searched"} <= set(report["grid"][0])
    best = report["best"]
    assert best["exact_match"] == max(g["exact_match"] for g in report["grid"])
    lm = CharLM.load(checkpoint / LM_FILE)
    assert (lm.fusion.weight, lm.fusion.bonus, lm.fusion.below) == (best["weight"], best["bonus"], best["below"])
    # Validation screens are not counted.
    from caap.data.format import open_dataset
    from caap.train.reader_lm import training_texts

    texts, _ = training_texts([FIXTURE], "val:1010")
    screens = list(open_dataset(FIXTURE))
    val_only = ({e.text for _, a in screens if a.source.seed == 1010 for e in a.elements if e.text}
                - {e.text for _, a in screens if a.source.seed != 1010 for e in a.elements if e.text})
    assert val_only and texts and not val_only & set(texts)
    reader = Reader(checkpoint)
    assert reader.lm is not None
    image, ann = _screen()
    boxes = [e.bbox for e in ann.elements]
    lm.fusion = type(lm.fusion)(weight=0.5, bonus=1.0, below=1.01)  # search every text
    reader.lm = lm
    searched = reader.read(image, boxes).elements
    plain = Reader(checkpoint, lm=False).read(image, boxes).elements
    assert [e.text_confidence for e in searched] == [e.text_confidence for e in plain]  # confidence: the pixels'
    assert Reader(checkpoint, lm=False).lm is None
    (checkpoint / LM_FILE).write_text("{broken")
    with pytest.raises(ReaderError, match=LM_FILE):
        Reader(checkpoint)


def test_merge_reading_by_type_source():
    from caap.observe.steps.reading import merge_reading
    from caap.observe.vision import VisionObserver

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

    settings = load_settings(CONFIG, {"model": "tiny", "position_bias_lr": 30.0})
    model = _tiny_model(10)
    names = {id(p): n for n, p in model.named_parameters()}
    groups = param_groups(model, settings)
    assert len(groups) == 3 and sum(len(g["params"]) for g in groups) == len(names)
    position = groups[2]
    assert [names[id(p)] for p in position["params"]] == [
        "decoder.layer.0.self_attention.attention.relative_attention_bias.weight"]
    assert position["lr"] == pytest.approx(0.03) and position["weight_decay"] == 0.0
    assert all(names[id(p)].endswith("weight") and p.ndim == 2 for p in groups[0]["params"])
    assert len(param_groups(model, settings.model_copy(update={"position_bias_lr": 1.0}))) == 2
    assert build_model  # imported for the settings path above


def test_learning_rate_warms_up_then_decays_to_zero():
    from caap.train.reader import load_settings, lr_factor

    settings = load_settings(CONFIG, {"warmup": 0.1, "schedule": "cosine"})
    assert lr_factor(0.0, settings) < 0.01 and lr_factor(0.1, settings) == pytest.approx(1.0)
    assert lr_factor(0.55, settings) == pytest.approx(0.5) and lr_factor(1.0, settings) == pytest.approx(0.0)
    linear = settings.model_copy(update={"schedule": "linear"})
    assert lr_factor(0.55, linear) == pytest.approx(0.5) and lr_factor(0.8, linear) == pytest.approx(2 / 9)


def test_two_processes_train_one_model_under_torchrun(tmp_path):
    """The multi-GPU launch path, on the CPU: torchrun starts two processes (gloo), each trains on
    its half of every batch, process 0 evaluates and writes the run."""
    import subprocess
    import sys

    pytest.importorskip("torch")
    env = {**__import__("os").environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", "-m", "caap.cli",
           "train", "reader", "--data", str(FIXTURE), "--model", "tiny", "--train-samples", "32", "--batch", "4",
           "--split", "val:1010", "--device", "cpu", "--threads", "1", "--set", "val_max_samples=8",
           "--out", str(tmp_path / "ddp")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    record = json.loads((tmp_path / "ddp" / "caap-train.json").read_text())
    assert record["processes"] == 2
    lines = [json.loads(x) for x in (tmp_path / "ddp" / "metrics.jsonl").read_text().splitlines()]
    assert lines[-1]["samples"] == 32 and lines[-1]["step"] == 4  # 4 steps of 2 processes x 4 samples
    assert (tmp_path / "ddp" / "best" / "model.safetensors").is_file()


def test_a_fine_tune_keeps_the_colour_layers_of_its_base(run, tmp_path):
    """A base that reads colour, fine-tuned with settings that do not mention colour (the
    default): its trained colour layers are loaded, not dropped with the states they read."""
    torch = pytest.importorskip("torch")
    import yaml

    from caap.observe.read.configuration import build_tokenizer, load_model
    from caap.observe.read.ctc import Alphabet
    from caap.observe.read.inference import Reader
    from caap.train.reader import ReaderTrainSettings, load_base, train

    coloured = train(FIXTURE, overrides={**OVERRIDES, "base": str(run / "best"), "train_samples": 16,
                                         "colour": True, "train_parts": "decoder", "lr": 1e-2},
                     out=tmp_path / "colour") / "last"
    settings = yaml.safe_load(CONFIG.read_text())
    settings.update({**OVERRIDES, "base": str(coloured)})
    assert settings["colour"] is False
    tok = build_tokenizer()
    model = load_base(ReaderTrainSettings(**settings), vocab_size=len(tok),
                      alphabet=Alphabet(Reader(coloured).spec.alphabet), pad=tok.pad_token_id, eos=tok.eos_token_id)
    base = load_model(coloured)
    assert model.colour is not None and model.colour_set == "crop"
    for a, b in zip(model.colour.parameters(), base.colour.parameters(), strict=True):
        assert torch.equal(a.detach().float(), b.detach().float())


def test_a_batch_with_a_non_finite_loss_is_skipped_and_a_diverged_run_stops(run, tmp_path, monkeypatch):
    """One NaN batch leaves the weights as they were (listed in skipped.jsonl) instead of turning
    every later step into NaN; a run whose batches are all NaN stops with one clear error."""
    torch = pytest.importorskip("torch")
    import caap.train.reader as trainer
    from caap.observe.read.configuration import load_model

    real = trainer.JointObjective
    calls = {"n": 0}

    def poisoned(bad):
        def make(*args, **kwargs):
            objective = real(*args, **kwargs)
            forward = objective.forward

            def step(*a, **k):
                calls["n"] += 1
                loss, ctc, dec = forward(*a, **k)
                return (loss * float("nan"), ctc, dec) if bad(calls["n"]) else (loss, ctc, dec)

            objective.forward = step
            return objective
        return make

    monkeypatch.setattr(trainer, "JointObjective", poisoned(lambda n: n == 2))
    out = trainer.train(FIXTURE, overrides={**OVERRIDES, "base": str(run / "best"), "train_samples": 32},
                        out=tmp_path / "one")
    lines = [json.loads(x) for x in (out / "skipped.jsonl").read_text().splitlines()]
    assert [x["step"] for x in lines] == [1] and lines[0]["loss"] == "nan" and lines[0]["elements"]
    tuned = load_model(out / "last")
    assert all(bool(torch.isfinite(p).all()) for p in tuned.parameters())
    metrics = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert metrics[-1]["skipped_batches"] == 1
    monkeypatch.setattr(trainer, "MAX_SKIPPED_IN_A_ROW", 3)
    monkeypatch.setattr(trainer, "JointObjective", poisoned(lambda n: True))
    with pytest.raises(ReaderError, match="3 batches in a row had a non-finite loss"):
        trainer.train(FIXTURE, overrides={**OVERRIDES, "base": str(run / "best"), "train_samples": 64},
                      out=tmp_path / "all")


def test_a_base_and_its_fine_tune_average_with_the_grown_ctc_head(tmp_path):
    """The reader soup: a fine-tune that grew the alphabet averages with its base, whose CTC head
    takes part grown as training grows it (new characters start as its unknown row); checkpoints of
    another lineage are refused with one message. The tool writes a loadable float16 checkpoint."""
    torch = pytest.importorskip("torch")
    from caap.observe.read.configuration import ReaderSpec, load_checkpoint_meta, load_model, save_checkpoint
    from caap.observe.read.ctc import UNKNOWN
    from caap.train.reader import average_readers

    torch.manual_seed(0)
    base, tuned = _tiny_model(5), _tiny_model(6)  # alphabets "abc" and "abcd": 5 and 6 classes
    save_checkpoint(base, tmp_path / "base", ReaderSpec(alphabet="abc"))
    save_checkpoint(tuned, tmp_path / "tuned", ReaderSpec(alphabet="abcd"))
    save_checkpoint(_tiny_model(6), tmp_path / "other", ReaderSpec(alphabet="abxd"))

    soup, meta = average_readers([tmp_path / "base", tmp_path / "tuned"], [1.0, 3.0])
    assert meta["alphabet"] == "abcd" and meta["averaged_from"][1].endswith("x 0.750")
    state, b, t = soup.state_dict(), base.state_dict(), tuned.state_dict()
    key = "encoder.encoder.layer.0.attention.query.weight"
    assert torch.allclose(state[key], 0.25 * b[key] + 0.75 * t[key], atol=1e-6)
    hidden = b["ctc_head.weight"].shape[-1]
    w_base, w_tuned = b["ctc_head.weight"].view(2, 5, hidden), t["ctc_head.weight"].view(2, 6, hidden)
    w = state["ctc_head.weight"].view(2, 6, hidden)
    assert torch.allclose(w[:, :5], 0.25 * w_base + 0.75 * w_tuned[:, :5], atol=1e-6)
    assert torch.allclose(w[:, 5], 0.25 * w_base[:, UNKNOWN] + 0.75 * w_tuned[:, 5], atol=1e-6)  # "d"

    with pytest.raises(ReaderError, match="not the start of"):
        average_readers([tmp_path / "other", tmp_path / "tuned"], [1.0, 1.0])
    with pytest.raises(ReaderError, match="one share each"):
        average_readers([tmp_path / "base", tmp_path / "tuned"], [1.0])

    tool = Path(__file__).resolve().parents[3] / "tools" / "average_weights.py"
    done = subprocess.run([sys.executable, str(tool), str(tmp_path / "base"), str(tmp_path / "tuned"),
                           "--out", str(tmp_path / "soup")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert load_checkpoint_meta(tmp_path / "soup")["stored_dtype"] == "float16"
    loaded = load_model(tmp_path / "soup")
    assert torch.allclose(loaded.state_dict()[key], (0.5 * b[key] + 0.5 * t[key]).half().float())
    failed = subprocess.run([sys.executable, str(tool), str(tmp_path / "other"), str(tmp_path / "tuned"),
                             "--out", str(tmp_path / "soup2")], capture_output=True, text=True, timeout=300)
    assert failed.returncode != 0 and "not the start of" in failed.stderr and not (tmp_path / "soup2").exists()


def test_a_field_labelled_empty_that_shows_text_trains_no_ctc_target(tmp_path):
    """A placeholder (or a value the labeller missed) drawn in a field labelled empty gets no CTC
    target, so the head never learns to read drawn text as nothing; an empty field, its border and
    a caret keep the empty target."""
    pytest.importorskip("torch")
    from PIL import ImageDraw, ImageFont

    from caap.observe.read.configuration import build_tokenizer
    from caap.observe.read.ctc import Alphabet
    from caap.train.reader_data import Collate, Sample, shows_text

    image = Image.new("RGB", (400, 160), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    boxes = {"empty": (10, 10, 190, 40), "caret": (210, 10, 390, 40), "placeholder": (10, 60, 190, 90),
             "dark": (210, 60, 390, 90)}
    for name, box in boxes.items():
        draw.rectangle(box, outline=(120, 120, 120), fill=(30, 30, 30) if name == "dark" else None)
    draw.line((216, 16, 216, 34), fill="black")  # a caret
    draw.text((16, 68), "Search files", fill=(117, 117, 117), font=font)
    draw.text((216, 68), "-72.45", fill=(230, 230, 230), font=font)
    assert {name: shows_text(image, box) for name, box in boxes.items()} == {
        "empty": False, "caret": False, "placeholder": True, "dark": True}

    path = tmp_path / "fields.png"
    image.save(path)
    samples = [Sample(str(path), Element(type="input_field", bbox=list(box), text="")) for box in boxes.values()]
    samples.append(Sample(str(path), Element(type="input_field", bbox=list(boxes["dark"]), text="-72.45")))
    batch = Collate(build_tokenizer(), Alphabet.build(["-72.45"]), patch=(16, 4), max_patches=256,
                    mask={"context": 4}, max_target_tokens=32, decoder_text=False)(samples)
    assert batch.ctc_mask.tolist() == [1.0, 1.0, 0.0, 0.0, 1.0]  # the labelled value still trains
    assert batch.ctc_lengths.tolist() == [0, 0, 0, 0, 6]
