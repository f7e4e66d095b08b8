"""The text chooser of ``text_source = auto``: CTC likelihoods and features, the logistic fit, its
file, ``caap train text-choice`` on fixture screens with the shipped reader and PP-OCR, and the
observer following its verdicts."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from caap.observe.read.ctc import Alphabet
from caap.observe.text_choice import (
    CHOICE_FILE,
    FEATURES,
    TextChoiceError,
    TextChooser,
    TextChoosers,
    ctc_log_likelihood,
    features,
    levenshtein,
)
from caap.taxonomy import DETECTOR_CLASSES, PAPER_TYPES

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "miniwob-mini"
SHIPPED_READER = ROOT / "models" / "reader"


def _frames(alphabet: Alphabet, path: str) -> np.ndarray:
    """Log-probabilities whose best path is ``path`` ("-" = blank), 0.9 on the path."""
    lp = np.full((len(path), alphabet.size), math.log(0.1 / (alphabet.size - 1)), dtype=np.float32)
    for t, ch in enumerate(path):
        lp[t, 0 if ch == "-" else alphabet.encode(ch)[0]] = math.log(0.9)
    return lp


def test_ctc_likelihood_follows_the_frames_and_rejects_what_they_cannot_hold():
    alphabet = Alphabet("abl")
    lp = _frames(alphabet, "a-b-l")
    assert ctc_log_likelihood(lp, "abl", alphabet) > ctc_log_likelihood(lp, "ab", alphabet) + 1
    assert ctc_log_likelihood(lp, "abl", alphabet) > ctc_log_likelihood(lp, "bal", alphabet) + 1
    assert ctc_log_likelihood(lp, "abll", alphabet) > -1e9  # "l-l" fits in 5 frames only with a blank
    assert ctc_log_likelihood(lp, "abababa", alphabet) == -1e9  # 7 labels, 5 frames
    assert ctc_log_likelihood(lp, "", alphabet) == pytest.approx(float(lp[:, 0].sum()))


def test_lookalikes_are_settled_by_the_frames_and_l_is_left_alone():
    from caap.observe.text_choice import resolve_lookalikes

    alphabet = Alphabet("0OIilsav")
    # The frames saw a zero and a lowercase i where PP-OCR wrote "O" and "I"; the l stays PP-OCR's.
    lp = _frames(alphabet, "0-s-a-v-i-l")
    assert resolve_lookalikes("OsavIl", lp, alphabet, None) == "0savil"
    assert resolve_lookalikes("0savil", lp, alphabet, None) == "0savil"  # already the frames' text
    assert resolve_lookalikes("0savii", _frames(alphabet, "0-s-a-v-i-i"), alphabet, None) == "0savii"
    assert resolve_lookalikes("0savll", _frames(alphabet, "0-s-a-v-i-i"), alphabet, None) == "0savll"  # l: PP-OCR's
    assert resolve_lookalikes("", lp, alphabet, None) == ""
    assert resolve_lookalikes("Osav", np.zeros((0, alphabet.size), np.float32), alphabet, None) == "Osav"


def test_features_describe_the_disagreement():
    alphabet = Alphabet("Iabl ")
    lp = _frames(alphabet, "l-a-b-a")
    row = features("laba", 0.95, "Iaba", 0.99, lp, alphabet, None, "text")
    named = dict(zip(FEATURES, row, strict=True))
    assert len(row) == len(FEATURES)
    assert named["only_homoglyphs"] == 1.0 and named["edits"] == pytest.approx(1 / 3)
    assert named["ctc_gain"] < 0  # the frames say "l"
    assert named["type=text"] == 1.0 and named["type=button"] == 0.0
    other = dict(zip(FEATURES, features("lab", 0.5, "laba", 0.9, lp, alphabet, None, "button"), strict=True))
    assert other["only_homoglyphs"] == 0.0 and other["length_gain"] == pytest.approx(1 / 3)
    assert other["ocr_unknown_chars"] == 0.0
    assert dict(zip(FEATURES, features("a", 0.5, "€", 0.9, lp, alphabet, None, "text"), strict=True))[
        "ocr_unknown_chars"] == 1.0
    assert levenshtein("kitten", "sitting") == 3 and levenshtein("", "ab") == 2


def test_fit_learns_which_source_to_trust_and_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    rows, labels = [], []
    for _ in range(400):
        reader_conf, ocr_conf = float(rng.uniform(0.2, 1.0)), float(rng.uniform(0.2, 1.0))
        row = [0.0] * len(FEATURES)
        row[FEATURES.index("reader_conf")], row[FEATURES.index("ocr_conf")] = reader_conf, ocr_conf
        row[FEATURES.index("edits")] = float(rng.integers(1, 4)) / 3
        rows.append(row)
        labels.append(ocr_conf > reader_conf)  # the surer side is right
    chooser = TextChooser.fit(rows, labels)
    right = sum((chooser.prob_ocr(r) > 0.5) == y for r, y in zip(rows, labels, strict=True))
    assert right / len(rows) > 0.95
    path = tmp_path / CHOICE_FILE
    chooser.fitted = {"texts": 400}
    TextChoosers({"desktop": chooser}).save(path)
    again = TextChoosers.load(path).for_screens("desktop")
    assert again.fitted == {"texts": 400}
    assert [again.prob_ocr(r) for r in rows[:20]] == pytest.approx([chooser.prob_ocr(r) for r in rows[:20]])
    data = chooser.to_json()  # a file of one chooser (the format before kinds of screen) serves every kind
    # Fitted before the taxonomy grew: the added types' columns are missing and weigh nothing.
    added = [f"type={t.value}" for t in DETECTOR_CLASSES if t not in PAPER_TYPES]
    keep = [i for i, f in enumerate(data["features"]) if f not in added]
    old = {k: [data[k][i] for i in keep] for k in ("features", "weights", "mean", "scale")}
    path.write_text(json.dumps({**data, **old}))
    grown = TextChoosers.load(path).for_screens("web")
    assert [grown.weights[FEATURES.index(f)] for f in added] == [0.0] * len(added)
    assert [grown.prob_ocr(r) for r in rows[:20]] == pytest.approx([chooser.prob_ocr(r) for r in rows[:20]])
    path.write_text(json.dumps({**data, "features": [f for f in FEATURES if f != "edits"]}))
    with pytest.raises(TextChoiceError, match="other features"):
        TextChoosers.load(path)
    path.write_text(json.dumps({**data, "features": [*FEATURES, "type=window"]}))
    with pytest.raises(TextChoiceError, match="other features"):
        TextChoosers.load(path)
    path.write_text("{broken")
    with pytest.raises(TextChoiceError, match=CHOICE_FILE):
        TextChoosers.load(path)
    with pytest.raises(TextChoiceError, match="one per feature"):
        TextChooser([1.0], 0.0, [0.0], [1.0])
    with pytest.raises(TextChoiceError, match="at least 2 rows"):
        TextChooser.fit(rows[:1], labels[:1])


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[Path, dict]:
    """The shipped reader copied, with a chooser fitted by the CLI on the fixture's labelled boxes."""
    pytest.importorskip("rapidocr")
    if not (SHIPPED_READER / "model.safetensors").is_file():
        pytest.skip(f"{SHIPPED_READER} is not in this checkout")
    from typer.testing import CliRunner

    from caap.cli import app

    checkpoint = tmp_path_factory.mktemp("choice") / "reader"
    shutil.copytree(SHIPPED_READER, checkpoint, ignore=shutil.ignore_patterns(CHOICE_FILE, "*.png", "metrics-*"))
    # A held-out validation set of its own: the fixture's seed-1010 screens (the split takes 1001).
    half = checkpoint.parent / "held-out"
    shutil.copytree(FIXTURE, half)
    for label in (half / "labels").rglob("*.json"):
        if json.loads(label.read_text(encoding="utf-8"))["source"]["seed"] != 1010:
            label.unlink()
    result = CliRunner().invoke(app, ["train", "text-choice", "--data", str(FIXTURE), "--checkpoint", str(checkpoint),
                                      "--labelled", "--split", "val:1001-1005", "--holdout", str(half),
                                      "--screens", "web", "--threads", "1", "--json"])
    assert result.exit_code == 0, result.output
    return checkpoint, json.loads(result.stdout)


def test_cli_fits_on_validation_screens_and_reports_both_policies(fitted):
    checkpoint, report = fitted
    assert report["written"] == str(checkpoint / CHOICE_FILE)
    assert report["texts"] > 100 and 0 < report["learned_from"] <= report["disagreements"] < report["texts"]
    assert report["better_of_two"] >= max(report["reader"], report["ocr"])
    assert set(report["rule"]) == set(report["chooser_cross_validated"])
    # At a threshold no text is below, neither policy sends anything to PP-OCR: both are the reader.
    assert report["rule"]["0.5"]["to_ocr"] < report["rule"]["1.01"]["to_ocr"] == 1.0
    assert report["rule"]["1.01"]["exact_match"] == report["ocr"]
    chooser = TextChoosers.load(checkpoint / CHOICE_FILE).for_screens("web")
    assert report["screens"] == "web" and chooser.fitted["screens"] == "web"
    assert chooser.fitted["boxes"] == "labelled" and chooser.fitted["texts"] == report["texts"]
    # Seed 1001 by the split, and the held-out set whole (the fixture's seed 1010).
    assert chooser.fitted["holdout"] == [str(checkpoint.parent / "held-out")] and set(report["per_kind"]) == {"miniwob"}
    assert report["per_kind"]["miniwob"]["texts"] == report["texts"]
    assert "previous_chooser" not in report  # the copy had no chooser to replace
    assert chooser.text_area_below == report["text_area_below"]


def test_a_refit_scores_the_chooser_it_replaces_on_the_same_texts(fitted, tmp_path):
    from typer.testing import CliRunner

    from caap.cli import app

    checkpoint, _ = fitted
    result = CliRunner().invoke(app, ["train", "text-choice", "--data", str(FIXTURE), "--checkpoint", str(checkpoint),
                                      "--labelled", "--split", "val:1001-1001", "--threads", "1",
                                      "--out", str(tmp_path / "again.json"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    before = report["previous_chooser"]
    assert set(before) == set(report["rule"]) and "previous_chooser" in report["per_kind"]["miniwob"]
    # At a threshold nothing is under, any chooser gives the reader's text.
    assert before["0.5"]["to_ocr"] == report["rule"]["0.5"]["to_ocr"]
    assert (checkpoint / CHOICE_FILE).read_text() != (tmp_path / "again.json").read_text()
    # Fitted for desktop windows (the default) beside the web pages' chooser, which is kept as it was.
    web = TextChoosers.load(checkpoint / CHOICE_FILE)
    both = TextChoosers.load(tmp_path / "again.json")
    assert report["screens"] == "desktop" and set(both.by_screens) == {"desktop", "web"}
    assert both.for_screens("web").to_json() == web.for_screens("web").to_json()
    assert both.for_screens("desktop").fitted["screens"] == "desktop"
    assert web.for_screens("desktop") is web.for_screens("web")  # a kind with none of its own: the other's


def test_observer_follows_the_chooser(fitted):
    from PIL import Image

    from caap.data.format import open_dataset
    from caap.observe.detect.detector import Detector
    from caap.observe.ocr.ppocr import PPOCR
    from caap.observe.read.inference import Reader
    from caap.observe.steps.texts import BLANK_BUTTON_OCR, GLYPH_BEFORE_OCR, glyph_before
    from caap.observe.vision import DEFAULT_DETECTOR, VisionObserver
    from caap.taxonomy import TEXT_ELEMENT_TYPES

    if not DEFAULT_DETECTOR.is_file():
        pytest.skip(f"{DEFAULT_DETECTOR} is not in this checkout")
    checkpoint, _ = fitted
    detector, reader, ocr = Detector(DEFAULT_DETECTOR), Reader(checkpoint), PPOCR(threads=1)
    fitted_choosers = reader.choosers
    assert fitted_choosers is not None
    fitted_chooser = fitted_choosers.for_screens("desktop")
    ds = open_dataset(FIXTURE)
    screens = [Image.open(ds.image_path(ann)).convert("RGB") for _, ann in list(ds)[:12]]
    # Every screen looked at whole: the two observers' elements are compared index by index.
    plain = VisionObserver(detector, reader, text_source="reader", partial_look=0)
    observer = VisionObserver(detector, reader, text_source="auto", ocr=ocr, ocr_threshold=1.01, partial_look=0)
    assert observer.parts.chooser is fitted_chooser and plain.parts.chooser is None  # auto only
    always = TextChooser([0.0] * len(FEATURES), 60.0, [0.0] * len(FEATURES), [1.0] * len(FEATURES),
                         text_area_below=1.01)
    never = TextChooser([0.0] * len(FEATURES), -60.0, [0.0] * len(FEATURES), [1.0] * len(FEATURES))
    decided = 0
    for image in screens:
        mine = plain.observe(image).elements
        chosen = observer.observe(image).elements
        texty = [i for i, e in enumerate(mine) if e.text is not None]
        theirs = ocr.read(image, [mine[i].bbox for i in texty], [mine[i].type.value for i in texty])
        for i, o in zip(texty, theirs, strict=True):
            assert chosen[i].text in (mine[i].text, o.text)
            decided += mine[i].text != o.text
        reader.choosers = TextChoosers({"desktop": always})
        # PP-OCR's text everywhere, but a button the reader read blank takes it only where PP-OCR is
        # sure of it (BLANK_BUTTON_OCR; a dropdown's chevron boxed as a button reads "V" unsure).
        blank_key = [mine[i].type.value == "button" and not (mine[i].text or "").strip() for i in texty]
        assert [e.text for i, e in enumerate(observer.observe(image).elements) if i in texty] == [
            o.text if not k or (o.text.strip() and o.confidence >= BLANK_BUTTON_OCR) else mine[i].text
            for i, o, k in zip(texty, theirs, blank_key, strict=True)]
        reader.choosers = TextChoosers({"desktop": never})
        kept = observer.observe(image).elements
        for i, o in zip(texty, theirs, strict=True):
            if mine[i].type.value == "text_area":
                continue
            # The reader's text stands, but where it read nothing for a text element: PP-OCR's then,
            # and for a button PP-OCR's where it is sure of it (BLANK_BUTTON_OCR), and where the
            # reader read a control's glyph before PP-OCR's whole text (GLYPH_BEFORE_OCR).
            blank = (mine[i].type in TEXT_ELEMENT_TYPES and not mine[i].text) or (
                o.confidence >= GLYPH_BEFORE_OCR and glyph_before(mine[i].text or "", o.text))
            key = (mine[i].type.value == "button" and not (mine[i].text or "").strip() and o.text.strip() != ""
                   and o.confidence >= BLANK_BUTTON_OCR)
            assert kept[i].text == (o.text if blank or key else mine[i].text)
        reader.choosers = fitted_choosers
    assert decided > 0


def test_a_controls_glyph_read_before_a_label_is_left_out():
    from caap.observe.steps.texts import glyph_before

    assert glyph_before("C Radio button 2", "Radio button 2")  # a radio's ring
    assert glyph_before("-G] Thaddeus", "Thaddeus") and glyph_before("ル Overlay", "Overlay")
    assert not glyph_before("Radio button 2", "Radio button 2")  # nothing before it
    assert not glyph_before("Card 12", "12")  # a first word of four letters is a word
    assert not glyph_before("A to", "to")  # too little left to be sure of
    assert not glyph_before("C Radio button", "Radio button 2")  # the rest differs


def test_an_icon_each_reader_reads_its_own_way_is_left_out_of_the_name():
    """Desktop tree rows: an expander, a check box or an icon before the name (readings of
    validation screens)."""
    from caap.observe.steps.texts import icon_before

    sure, unsure = 0.98, 0.6
    assert icon_before("名`mDisplay", "□Display", unsure) == "Display"
    assert icon_before("l Ken", "∇Ken", unsure) == "Ken" and icon_before("♥ Projects", "▶Projects", unsure) == "Projects"
    assert icon_before("e.ロCamera", "Camera", unsure) == "Camera"  # PP-OCR left the icon out; the reader's is foreign
    # The reader misread the name too: PP-OCR's after its icon, where PP-OCR is sure.
    assert icon_before("^Tesks", "▶Tasks", sure) == "Tasks" and icon_before("^Tesks", "▶Tasks", unsure) is None
    assert icon_before("Tasks", "▶Tasks", sure) is None  # the reader's own reading: left to the chooser
    # Both read the same marks before it: words in another script (generated UIs' mixed labels).
    assert icon_before("搜索 Done", "搜索 Done", sure) is None and icon_before("グインCity", "ログイン City", sure) is None
    assert icon_before("tFilters", "Filters", sure) is None  # a lone ASCII letter may be the name's (iPhone)
    assert icon_before("jWJj", "WJj", sure) is None  # a MiniWoB random name PP-OCR read short
    # A frame's line through its title is no icon.
    assert icon_before("-Password Entry-", "Password Entry-", sure) is None
    assert icon_before("–Fully Editable", "—Fully Editable—", sure) is None
    assert icon_before("+43", "43", sure) is None and icon_before("Radio", "Radio", sure) is None
    assert icon_before("名`Ab", "□Ab", sure) is None  # too few letters to be sure of
    assert icon_before("x Music", "(Music", sure) is None  # a bracket opens names


def test_pp_ocrs_text_keeps_the_spaces_the_reader_read():
    from caap.observe.steps.texts import spaced_as

    assert spaced_as("CaseInsensitive", "Case Insensitive") == "Case Insensitive"
    assert spaced_as("4KB", "4 KB") == "4 KB" and spaced_as("Where are we?", "Where are we ?") == "Where are we ?"
    assert spaced_as("This is the", "Thisis the") == "This is the"  # PP-OCR's own spaces stay
    assert spaced_as("11", "1 1") == "11"  # no space between two digits
    assert spaced_as("Drafts", "Dr efts") == "Drafts"  # other letters: PP-OCR's text as it reads


def test_choosers_per_kind_of_screen_and_the_one_chooser_file(tmp_path):
    n = len(FEATURES)
    take, keep = (TextChooser([0.0] * n, b, [0.0] * n, [1.0] * n) for b in (5.0, -5.0))
    both = TextChoosers({"desktop": take, "web": keep})
    both.save(tmp_path / "both.json")
    again = TextChoosers.load(tmp_path / "both.json")
    assert again.for_screens("desktop").bias == 5.0 and again.for_screens("web").bias == -5.0
    # A file of one chooser (the format before kinds of screen) serves every kind.
    (tmp_path / "one.json").write_text(json.dumps(take.to_json()))
    one = TextChoosers.load(tmp_path / "one.json")
    assert one.for_screens("web").bias == one.for_screens("desktop").bias == 5.0
    # Replacing one kind's keeps what the other used.
    mixed = one.with_chooser("web", keep)
    assert mixed.for_screens("desktop").bias == 5.0 and mixed.for_screens("web").bias == -5.0
    with pytest.raises(TextChoiceError, match="screens must be one of"):
        both.for_screens("tablet")
    with pytest.raises(TextChoiceError, match="kinds of screen"):
        TextChoosers({"tablet": take})
    (tmp_path / "bad.json").write_text(json.dumps({"format": "caap-text-choice/2", "screens": {"tablet": {}}}))
    with pytest.raises(TextChoiceError, match="broken text chooser"):
        TextChoosers.load(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps({"format": "caap-text-choice/2", "screens": {"web": {"x": 1}}}))
    with pytest.raises(TextChoiceError, match=r"\[web\]: not a text chooser"):
        TextChoosers.load(tmp_path / "bad.json")


def test_the_observer_takes_its_kind_of_screens_chooser(fitted, tmp_path):
    from caap.config import ObserveConfig
    from caap.observe.read.inference import Reader
    from caap.observe.vision import VisionObserver, miniwob_observe

    checkpoint, _ = fitted
    n = len(FEATURES)
    both = TextChoosers({"desktop": TextChooser([0.0] * n, 5.0, [0.0] * n, [1.0] * n),
                         "web": TextChooser([0.0] * n, -5.0, [0.0] * n, [1.0] * n)})
    reader_dir = tmp_path / "reader"
    shutil.copytree(checkpoint, reader_dir)
    both.save(reader_dir / CHOICE_FILE)
    reader = Reader(reader_dir)
    desktop = VisionObserver(None, reader, text_source="auto", ocr=object())
    web = VisionObserver(None, reader, text_source="auto", ocr=object(), screens="web")
    assert desktop.parts.chooser is not None and desktop.parts.chooser.bias == 5.0
    assert web.parts.chooser is not None and web.parts.chooser.bias == -5.0
    with pytest.raises(ValueError, match="screens must be one of"):
        VisionObserver(None, reader, text_source="auto", ocr=object(), screens="phone")
    # The MiniWoB benchmark observes web pages unless the section says otherwise.
    assert miniwob_observe(ObserveConfig()).screens == "web"
    assert miniwob_observe(ObserveConfig(screens="desktop")).screens == "desktop"


def test_a_broken_chooser_file_is_one_reader_error(fitted, tmp_path):
    from caap.observe.read.configuration import ReaderError
    from caap.observe.read.inference import Reader

    checkpoint, _ = fitted
    broken = tmp_path / "reader"
    shutil.copytree(checkpoint, broken)
    (broken / CHOICE_FILE).write_text('{"format": "something else"}')
    with pytest.raises(ReaderError, match="not a text chooser"):
        Reader(broken)


def test_eval_scores_the_chooser_beside_the_confidence_rule(fitted):
    from caap.train.eval_reader import evaluate

    checkpoint, _ = fitted
    result = evaluate(FIXTURE, checkpoint, limit=10, tesseract=False, latency_screens=1, threads=1,
                      text_source="auto", ocr_threshold=0.98)
    text = result["text"]
    assert set(text["auto_chooser"]) == set(text["auto"])
    # The observer's default under auto is the chooser at the configured threshold, on the same texts.
    assert text["default"]["exact_match"] == text["auto_chooser"]["0.98"]["exact_match"]
    assert text["auto_chooser"]["0.98"]["to_ocr"] <= text["auto"]["0.98"]["to_ocr"]  # text areas: their own limit


def test_text_area_limit_is_the_confidence_that_reads_most_areas_right():
    from caap.train.text_choice import AREA_THRESHOLDS, _text_area_limit

    def area(conf: float, reader_right: bool) -> dict:
        return {"type": "text_area", "gold": "a\nb", "reader": "a\nb" if reader_right else "a b",
                "ocr": "a b" if reader_right else "a\nb", "reader_conf": conf, "features": None}

    # The reader is right at 0.62 and 0.74 and wrong at 0.4: PP-OCR only below a limit in (0.4, 0.62].
    rows = [area(0.62, True), area(0.74, True), area(0.4, False), {**area(0.9, True), "type": "text"}]
    limit = _text_area_limit(rows)
    assert 0.4 < limit <= 0.62 and limit in AREA_THRESHOLDS
    assert limit == min(th for th in AREA_THRESHOLDS if th > 0.4)  # ties: the fewest PP-OCR calls
    assert _text_area_limit([area(0.7, False)]) == min(th for th in AREA_THRESHOLDS if th > 0.7)
    assert _text_area_limit(rows[-1:]) == 0.9  # no text areas


def test_a_desktop_a_the_reader_read_as_e_is_pp_ocrs():
    """The reader reads a desktop font's ``a`` as ``e``; where the two texts differ in that alone,
    PP-OCR's stands on desktop windows whatever the chooser says (web pages: the chooser decides)."""
    from PIL import Image, ImageDraw

    from caap.elements import Element
    from caap.observe.pipeline import Parts
    from caap.observe.read.inference import Reader
    from caap.observe.steps.texts import a_read_as_e, chosen_text
    from caap.observe.vision import DEFAULT_READER
    from caap.report.draw import label_font

    assert a_read_as_e("Lerge", "Large") and a_read_as_e("Tomés", "Tomás") and a_read_as_e("Drefts", "Drafts")
    assert not a_read_as_e("Large", "Lerge")  # PP-OCR's e for the reader's a: not this rule's
    assert not a_read_as_e("Lorge", "Large") and not a_read_as_e("Lerge", "Large ") and not a_read_as_e("a", "a")
    if not (DEFAULT_READER / "config.json").is_file():
        pytest.skip(f"{DEFAULT_READER} is not in this checkout")
    reader = Reader(DEFAULT_READER)
    image = Image.new("RGB", (90, 28), "white")
    ImageDraw.Draw(image).text((8, 6), "Large", fill="black", font=label_font(13))
    readings = reader.read(image, [(0, 0, 90, 28)], ["button"], log_probs=True)
    never = TextChooser([0.0] * len(FEATURES), -60.0, [0.0] * len(FEATURES), [1.0] * len(FEATURES))
    reader.choosers = TextChoosers({"desktop": never, "web": never})
    misread = Element(type="button", bbox=(0, 0, 90, 28), text="Lerge", text_confidence=0.7)
    assert chosen_text(Parts(reader=reader, screens="desktop"), readings, misread, "Large", 0.99, 0) == "Large"
    assert chosen_text(Parts(reader=reader, screens="web"), readings, misread, "Large", 0.99, 0) is None
    other = misread.model_copy(update={"text": "Lorge"})
    assert chosen_text(Parts(reader=reader, screens="desktop"), readings, other, "Large", 0.99, 0) is None


def test_a_sure_reading_whose_frames_half_see_an_a_goes_to_pp_ocr():
    """Frames that read ``e`` but give ``a`` a fair chance put a sure reading in doubt."""
    import numpy as np

    from caap.observe.read.ctc import Alphabet
    from caap.observe.steps.texts import A_IN_DOUBT_LOG_P, a_in_doubt

    alphabet = Alphabet("Leagr")
    e, a, r = (alphabet.encode(c)[0] for c in "ear")
    lp = np.full((4, alphabet.size), -30.0, dtype=np.float32)
    lp[0, r], lp[1, e], lp[2, 0], lp[3, r] = 0.0, 0.0, 0.0, 0.0  # "rer", blank between
    assert not a_in_doubt(lp, alphabet)
    lp[1, a] = A_IN_DOUBT_LOG_P + 1.0  # a little weight on "a" where "e" is read
    assert a_in_doubt(lp, alphabet)
    lp[1, a], lp[3, a] = -30.0, 0.0  # an "a" read as such elsewhere: no e in doubt
    assert not a_in_doubt(lp, alphabet)
    assert not a_in_doubt(np.zeros((0, alphabet.size)), alphabet)


def test_three_periods_the_reader_read_as_an_ellipsis_are_pp_ocrs(ppocr):
    """Tk's menu draws ``Print...`` with three periods; the reader, which knows the ellipsis of the
    generated pages, reads ``Print…`` and is sure of it. PP-OCR, whose alphabet has both, reads
    such texts again, and where the two differ in that alone its periods stand."""
    import json

    from PIL import Image

    from caap.elements import Element
    from caap.observe.pipeline import Parts, Pipeline
    from caap.observe.read.inference import Reader
    from caap.observe.steps.texts import periods_read_as_ellipsis
    from caap.observe.vision import DEFAULT_READER

    assert periods_read_as_ellipsis("Print…", "Print...") and periods_read_as_ellipsis("a… b…", "a... b...")
    assert not periods_read_as_ellipsis("Print...", "Print…") and not periods_read_as_ellipsis("Print…", "Prlnt...")
    if not (DEFAULT_READER / "config.json").is_file():
        pytest.skip(f"{DEFAULT_READER} is not in this checkout")
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "desktop"
    labels = json.loads((fixtures / "tk-menu-periods.json").read_text())
    image = Image.open(fixtures / "tk-menu-periods.png").convert("RGB")
    rows = [Element(type=e["type"], bbox=e["bbox"]) for e in labels["elements"]]
    parts = Parts(reader=Reader(DEFAULT_READER), ocr=ppocr, screens="desktop")
    pipeline = Pipeline()
    look = pipeline.look(image, parts)
    read = pipeline.run(look, rows, start="read_elements", stop="read_lone_letters")
    assert [e.text for e in read] == [e["drawn"] for e in labels["elements"]]
    without = Pipeline(disable=("reread_doubtful_texts",))
    assert any("…" in (e.text or "") for e in without.run(without.look(image, parts), rows, start="read_elements",
                                                           stop="read_lone_letters"))
