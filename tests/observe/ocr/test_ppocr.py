"""PP-OCR (rapidocr's PP-OCRv6 small) as a text source for element crops: caap.observe.ocr.ppocr."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

pytest.importorskip("rapidocr", reason="PP-OCR needs rapidocr (pip install 'caap[vision]')")
pytest.importorskip("onnxruntime", reason="PP-OCR needs onnxruntime (pip install 'caap[vision]')")

from caap.data.format import open_dataset
from caap.observe.ocr import ppocr as ocr
from caap.observe.ocr.ppocr import PPOCR, OcrError, OcrText

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "miniwob-mini"
SCREENS = Path(__file__).resolve().parents[2] / "fixtures" / "screens"
FONT = Path("/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf")
CONTROL_GLYPHS = set("□口回☐☑◯○●◎OoQ0|[")


@pytest.fixture(scope="module")
def reader() -> PPOCR:
    return PPOCR(threads=1)


def _font(size: int = 13) -> ImageFont.FreeTypeFont:
    if not FONT.exists():
        pytest.skip(f"{FONT} is not installed (fonts-liberation)")
    return ImageFont.truetype(str(FONT), size)


def _render(lines: list[tuple[tuple[int, int], str]], size: int = 13) -> tuple[Image.Image, list[list[int]]]:
    """A 160x210 white screen with each text drawn at its place; the boxes of the drawn texts."""
    image = Image.new("RGB", (160, 210), "white")
    draw = ImageDraw.Draw(image)
    font = _font(size)
    boxes = []
    for (x, y), text in lines:
        draw.text((x, y), text, fill=(0, 0, 0), font=font)
        x1, y1, x2, y2 = draw.textbbox((x, y), text, font=font)
        boxes.append([x1 - 1, y1 - 1, x2 + 1, y2 + 1])
    return image, boxes


def _screens_with(element_type: str) -> list[tuple[Image.Image, list, list[str]]]:
    ds = open_dataset(FIXTURE)
    out = []
    for path in ds.label_paths():
        ann = ds.load(path)
        els = [e for e in ann.elements if e.type == element_type and e.text]
        if els:
            with Image.open(ds.image_path(ann)) as im:
                out.append((im.convert("RGB"), [list(e.bbox) for e in els], [e.text for e in els]))
    return out


def test_reads_rendered_text_exactly(reader: PPOCR) -> None:
    texts = ["Submit your order", "Cancel", "Select Sierra Leone"]
    image, boxes = _render([((4, 20 + 30 * i), t) for i, t in enumerate(texts)])
    got = reader.read(image, boxes)
    assert [g.text for g in got] == texts
    assert all(isinstance(g, OcrText) and 0.5 < g.confidence <= 1.0 for g in got)


def test_reads_text_clipped_by_a_tight_box(reader: PPOCR) -> None:
    # The box cuts the descenders of "g" and "p": the pixels just outside it complete them.
    image, [box] = _render([((4, 50), "gap jumping")])
    box = [box[0], box[1], box[2], box[3] - 3]
    assert reader.read(image, [box])[0].text == "gap jumping"


def test_checkbox_labels_are_read_without_the_control(reader: PPOCR) -> None:
    screens = _screens_with("checkbox")
    assert screens, "the fixture holds checkboxes"
    right = total = 0
    for image, boxes, texts in screens:
        got = reader.read(image, boxes, ["checkbox"] * len(boxes))
        for g, t in zip(got, texts, strict=True):
            total += 1
            right += g.text == t
            assert g.text[:1] not in CONTROL_GLYPHS or t.startswith(g.text[:1]), (g.text, t)
            assert len(g.text) <= len(t) + 1, (g.text, t)  # no control read as an extra character
    assert total >= 10
    assert right / total >= 0.75, f"{right}/{total} checkbox labels read exactly"


def test_a_labels_first_letter_is_no_control(reader: PPOCR) -> None:
    """A checkbox boxed on its label alone, or whose control is too faint to count as ink: its round
    or square first letter stands as close to the next as letters do, and is read."""
    image, boxes = _render([((4, 20), "Open links"), ((4, 50), "Auto-save"), ((4, 80), "Normal")])
    assert [g.text for g in reader.read(image, boxes, ["checkbox"] * 3)] == ["Open links", "Auto-save", "Normal"]
    # A control 4 px before its label is still left out.
    draw = ImageDraw.Draw(image)
    draw.rectangle((4, 112, 16, 124), outline=(60, 60, 60))
    draw.text((21, 110), "Open links", fill=(0, 0, 0), font=_font(13))
    assert reader.read(image, [[2, 108, 100, 128]], ["checkbox"])[0].text == "Open links"


def test_without_types_the_control_is_read_as_a_glyph(reader: PPOCR) -> None:
    # Why the type matters: the same crops read without it carry the control as a character more
    # often than not (or the type-aware read is at least as good).
    image, boxes, texts = _screens_with("checkbox")[0]
    typed = reader.read(image, boxes, ["checkbox"] * len(boxes))
    untyped = reader.read(image, boxes)
    assert sum(g.text == t for g, t in zip(typed, texts, strict=True)) >= \
        sum(g.text == t for g, t in zip(untyped, texts, strict=True))


def test_fixture_text_is_mostly_read_exactly(reader: PPOCR) -> None:
    right = total = 0
    for image, boxes, texts in _screens_with("text"):
        for g, t in zip(reader.read(image, boxes, ["text"] * len(boxes)), texts, strict=True):
            total += 1
            right += g.text == t
    assert total >= 50
    assert right / total >= 0.75, f"{right}/{total}"


def test_multi_line_crop_joins_lines_in_reading_order(reader: PPOCR) -> None:
    lines = [((6, 40), "first line here"), ((6, 56), "second line"), ((6, 72), "third")]
    image, _ = _render(lines)
    box = [2, 34, 150, 94]
    for kind in ("text_area", None, "text"):  # by type, and from the pixels (three rows of text)
        got = reader.read(image, [box], [kind])[0]
        assert got.text == "first line here\nsecond line\nthird", kind
        assert 0.5 < got.confidence <= 1.0
    # In a text area's frame; two words side by side on one line keep their order.
    image, _ = _render([*lines, ((100, 72), "end")])
    ImageDraw.Draw(image).rectangle([box[0], box[1], box[2] - 1, box[3] - 1], outline=(118, 118, 118))
    assert reader.read(image, [box], ["text_area"])[0].text == "first line here\nsecond line\nthird end"


def test_fixture_text_area(reader: PPOCR) -> None:
    screens = _screens_with("text_area")
    assert screens
    image, boxes, texts = screens[0]
    assert reader.read(image, boxes, ["text_area"] * len(boxes))[0].text == texts[0]


def _framed(text: str, size: int = 13, box: tuple[int, int, int, int] = (10, 40, 120, 61)) -> Image.Image:
    """A 160x210 screen with ``text`` inside a grey-framed field (an input's or a button's frame)."""
    image = Image.new("RGB", (160, 210), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([box[0], box[1], box[2] - 1, box[3] - 1], outline=(118, 118, 118))
    draw.text((box[0] + 5, box[1] + 3), text, fill=(0, 0, 0), font=_font(size))
    return image


def test_password_bullets_are_counted(reader: PPOCR) -> None:
    box = [10, 40, 120, 61]
    assert reader.read(_framed("••••"), [box], ["input_field"])[0] == OcrText("••••", 1.0)
    # Neither full stops nor hollow o's are bullets; and only an input field holds them.
    assert "•" not in reader.read(_framed("...."), [box], ["input_field"])[0].text
    assert "•" not in reader.read(_framed("ooo"), [box], ["input_field"])[0].text
    assert "•" not in reader.read(_framed("••••"), [box], ["text"])[0].text


def test_field_frame_and_caret_are_not_read(reader: PPOCR) -> None:
    image = _framed("neque")
    draw = ImageDraw.Draw(image)
    x = 15 + draw.textlength("neque", font=_font()) + 1
    draw.line([(x, 43), (x, 57)], fill=(0, 0, 0))  # the caret after the text
    assert reader.read(image, [[10, 40, 120, 61]], ["input_field"])[0].text == "neque"


def test_close_button_reads_as_multiplication_sign(reader: PPOCR) -> None:
    box = (60, 60, 80, 81)
    image = _framed("×", size=16, box=box)
    assert reader.read(image, [list(box)], ["button"])[0].text == "×"


def test_batched_read_equals_one_by_one(reader: PPOCR) -> None:
    ds = open_dataset(FIXTURE)
    ann = next(a for a in (ds.load(p) for p in ds.label_paths()) if sum(bool(e.text) for e in a.elements) >= 6)
    with Image.open(ds.image_path(ann)) as im:
        image = im.convert("RGB")
    boxes = [list(e.bbox) for e in ann.elements]
    types = [str(e.type) for e in ann.elements]
    batched = reader.read(image, boxes, types)
    single = [reader.read(image, [b], [t])[0] for b, t in zip(boxes, types, strict=True)]
    assert [(b.text, b.confidence) for b in batched] == [(s.text, s.confidence) for s in single]


def test_a_doubtful_crop_reads_the_same_whatever_is_read_with_it(reader: PPOCR) -> None:
    """Each crop is padded to its own width bucket, so its reading cannot depend on the batch: a
    name cut at its top on an email screen read "Tiphánil" among the screen's other boxes and
    "Tiphanil" alone, which flipped the observer's text choice between a memo's step and a fresh one."""
    with Image.open(SCREENS / "email-search-caret-after-name.png") as im:
        image = im.convert("RGB")
    boxes = [[3, 3, 144, 14], [7, 113, 83, 124], [3, 14, 65, 25], [7, 103, 50, 113], [7, 91, 46, 102],
             [141, 60, 157, 210], [117, 95, 129, 107], [104, 95, 115, 108], [4, 75, 48, 88], [5, 133, 147, 205],
             [6, 55, 16, 69]]
    types = ["text"] * 5 + ["scrollbar", "icon", "icon", "tabled_text", "text_area", "icon"]
    together = reader.read(image, boxes, types)
    for k in (8, 0, 3):
        alone = reader.read(image, [boxes[k]], [types[k]])[0]
        pair = reader.read(image, [boxes[k], boxes[9]], [types[k], types[9]])[0]
        assert together[k] == alone == pair, (k, together[k], alone, pair)


def test_blank_and_degenerate_boxes_read_empty(reader: PPOCR) -> None:
    image = Image.new("RGB", (160, 210), "white")
    got = reader.read(image, [[10, 10, 100, 30], [5, 5, 5, 20], [150, 200, 400, 400]], None)
    assert got == [OcrText("", 0.0)] * 3
    assert reader.read(image, []) == []
    with pytest.raises(ValueError, match="types"):
        reader.read(image, [[0, 0, 10, 10]], ["text", "button"])


def test_missing_model_file_names_its_path(monkeypatch, tmp_path) -> None:
    real = ocr.model_paths()
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(real["det"], models / ocr.DET_MODEL)  # the recogniser is missing
    monkeypatch.setattr(ocr, "_models_dir", lambda: models)
    with pytest.raises(OcrError, match=str(models / ocr.REC_MODEL).replace(".", r"\.")):
        PPOCR()


def test_corrupt_model_file_names_its_path(monkeypatch, tmp_path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / ocr.DET_MODEL).write_bytes(b"not an onnx model")
    monkeypatch.setattr(ocr, "_models_dir", lambda: models)
    with pytest.raises(OcrError, match="not a readable ONNX model") as exc:
        PPOCR()
    assert str(models / ocr.DET_MODEL) in str(exc.value)


def test_rapidocr_not_importable(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "rapidocr", None)  # makes "import rapidocr" raise ImportError
    with pytest.raises(OcrError, match=r"pip install 'caap\[vision\]'"):
        PPOCR()


def test_onnxruntime_not_importable(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(OcrError, match=r"onnxruntime.*pip install 'caap\[vision\]'"):
        PPOCR()


def test_models_come_from_the_installed_wheel_and_nothing_is_downloaded(monkeypatch) -> None:
    import rapidocr
    from rapidocr.utils import download_file

    def refuse(*args, **kwargs):
        raise AssertionError("rapidocr tried to download a file")

    monkeypatch.setattr(download_file.DownloadFile, "run", classmethod(refuse))
    paths = ocr.model_paths()
    assert paths["det"].parent == Path(rapidocr.__file__).resolve().parent / "models"
    assert paths["det"].is_file() and paths["rec"].is_file()
    image, boxes = _render([((4, 20), "Okay")])
    assert PPOCR().read(image, boxes)[0].text == "Okay"


def test_a_text_element_read_blank_goes_to_pp_ocr_whatever_the_readers_confidence(shipped_observer) -> None:
    """identify-shape shows one large letter (here a 37 px "j"): the shipped reader reads it as
    nothing and is sure of it (1.0), so the confidence rule alone never asks PP-OCR. A text element
    always shows text, so the observer asks PP-OCR and takes its text."""
    from caap.config import ObserveConfig
    from caap.observe.vision import VisionObserver

    image = Image.open(Path(__file__).resolve().parents[2] / "fixtures" / "screens" / "identify-shape-letter.png").convert("RGB")
    def figure(elements):  # the letter, as the detector boxes it: the one element between text and buttons
        (found,) = [e for e in elements if e.bbox[1] >= 60 and e.bbox[3] <= 110]
        return found

    own = VisionObserver.from_config(ObserveConfig(text_source="reader")).observe(image).elements
    mine = figure(own)
    assert mine.type.value == "text" and mine.text == "" and mine.text_confidence == 1.0
    auto = shipped_observer.observe(image).elements  # text_source = "auto", the default
    seen = figure(auto)
    assert seen.text == "j"
    # The rest of the screen keeps what the reader and the chooser gave it.
    assert {e.text for e in auto if e.type.value == "button"} == {"Rectangle", "Circle", "Triangle", "Letter",
                                                                    "Number"}


def test_top_and_bottom_lines_are_a_frame_even_without_sides() -> None:
    """A table cell between two row rules, or a field whose right side spinner buttons cover: the
    two lines spanning the box are border, however wide the text between them is (before, text
    wider than 1/1.4 of the box made them count as text). An open side ends where the lines end."""
    from caap.observe.ocr.ppocr import _borders

    ink = np.zeros((20, 80), bool)
    ink[0, 2:70] = ink[19, 2:70] = True  # the rules (or ring) end at column 70; buttons lie beyond
    ink[5:15, 4:66] = True               # text as wide as the box
    ink[3:8, 74:78] = True               # a spinner arrow
    inner, lines = _borders(ink, (0, 0, 80, 20), 0.85)
    assert inner == (2, 1, 70, 19)
    assert lines[0].sum() == 68 and lines[19].sum() == 68 and not lines[5:15].any()


def test_a_frame_inside_a_wider_box_is_found_where_its_top_and_bottom_lines_begin() -> None:
    """use-spinner: the detector's box starts 3 px left of the focus ring, so the ring's left side
    lies beyond the outer columns where side lines are looked for; with the ring left in the crop,
    PP-OCR read `-11` as `F11`. The side stands where the top and bottom lines begin."""
    from caap.observe.ocr.ppocr import _borders

    ink = np.zeros((20, 80), bool)
    ink[1:3, 3:77] = ink[17:19, 3:77] = True  # a 2 px ring from column 3 to 76 (its right side covered)
    ink[1:19, 3:5] = True                     # its left side, 3 px inside the box
    ink[9, 5:8] = True                        # a minus sign touching it
    ink[5:15, 10:12] = True                   # a digit
    inner, lines = _borders(ink, (0, 0, 80, 20), 0.85)
    assert inner == (5, 3, 77, 17)
    assert lines[:, 3:5].sum() == 2 * 18 and not lines[5:15, 10:12].any()


def test_light_text_on_a_dark_fill_is_redrawn_dark_on_white() -> None:
    """A hovered menu entry (white on jQuery UI's blue) is redrawn as dark ink on white for PP-OCR;
    dark text on a light fill (the task's yellow), and a tight box round bold dark text whose inside
    is mostly ink, are left as they are."""
    font = ImageFont.load_default(size=12)

    def crop(fill: tuple[int, int, int], ink: tuple[int, int, int]) -> np.ndarray:
        image = Image.new("RGB", (44, 16), fill)
        ImageDraw.Draw(image).text((3, 1), "Evy", fill=ink, font=font)
        return np.asarray(image)

    hovered = crop((0, 127, 255), (255, 255, 255))
    redrawn = ocr._dark_on_light(hovered, np.array([0, 127, 255], np.uint8), 60)
    assert redrawn is not None and redrawn.shape == hovered.shape
    assert redrawn[0, 0].tolist() == [255, 255, 255] and redrawn.min() < 80  # the fill white, the glyphs dark
    assert ocr._dark_on_light(crop((255, 255, 0), (0, 0, 0)), np.array([255, 255, 0], np.uint8), 60) is None
    bold = crop((255, 255, 255), (0, 0, 0))
    assert ocr._dark_on_light(bold, np.array([0, 0, 0], np.uint8), 60) is None  # the ring is white


def test_a_hovered_entry_is_read(reader: PPOCR) -> None:
    image = Image.open(SCREENS / "click-menu-hovered-entry.png")
    assert reader.read(image, [[10, 93, 28, 104]], ["tabled_text"])[0].text == "Evy"


def test_a_key_the_reader_reads_blank_gets_pp_ocrs_text(reader: PPOCR) -> None:
    """Big calculator keys holding one small character come out of the reader blank and sure of it;
    the observer hands a blank button to PP-OCR and takes a confident text, and a key that holds no
    text stays blank. A key holding one operator is told by its shape (PP-OCR is unsure of lone
    symbols: ÷ read +)."""
    from caap.elements import Element
    from caap.observe.pipeline import Look, Parts
    from caap.observe.steps.texts import reread_doubtful_texts

    image = Image.new("RGB", (360, 90), (239, 239, 239))
    draw = ImageDraw.Draw(image)
    keys = [(10, 12, 70, 75), (80, 12, 140, 75), (150, 12, 210, 75), (220, 12, 280, 75), (290, 12, 350, 75)]
    for box in keys:
        draw.rectangle(box, fill=(250, 250, 250), outline=(160, 160, 160))
    font = _font(16)
    for (x1, y1, x2, y2), text in zip(keys[:2] + keys[3:], ("7", "MR", "÷", "="), strict=True):
        w, h = draw.textbbox((0, 0), text, font=font)[2:]
        draw.text(((x1 + x2 - w) / 2, (y1 + y2 - h) / 2), text, fill=(20, 20, 20), font=font)
    blank = [Element(type="button", bbox=b, text="", text_confidence=1.0) for b in keys]
    read = [*blank, Element(type="button", bbox=keys[0], text="Seven", text_confidence=1.0)]
    look = Look(image, Parts(ocr=reader, text_source="auto"))  # PP-OCR's step alone, no reader's chooser
    assert [e.text for e in reread_doubtful_texts(look, read)] == ["7", "MR", "", "÷", "=", "Seven"]


def test_ideographs_read_for_symbols_become_the_symbols():
    from caap.observe.ocr.ppocr import latin_twins

    assert [latin_twins(t) for t in ("十", "土", "二", "Book 十 2", "abc")] == ["+", "±", "=", "Book + 2", "abc"]
    assert latin_twins("中文一") == "中文一"  # Chinese text stays as read


def test_a_greyed_label_fainter_than_ink_is_read(reader: PPOCR) -> None:
    """An insensitive button (Qt's Fusion style): its label 190 on a 240-253 face, nearer the face
    than the ink threshold. Nothing is ink at that threshold, so the label is read at the faint one,
    stretched to black on white; a blank face still reads empty."""
    image = Image.new("RGB", (90, 28), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    for y in range(2, 26):  # the face's gradient
        draw.line((2, y, 87, y), fill=(253 - y // 2,) * 3)
    draw.rounded_rectangle((1, 1, 88, 26), radius=3, outline=(196, 196, 196))
    blank = image.copy()
    draw.text((22, 6), "Export", fill=(190, 190, 190), font=_font(14))
    assert reader.read(image, [[0, 0, 90, 28]], ["button"])[0].text == "Export"
    assert reader.read(blank, [[0, 0, 90, 28]], ["button"])[0].text == ""
    # A few of its pixels dark enough to be ink (a darker first letter, antialiasing on a light part
    # of the gradient): still a greyed label, read whole at the faint threshold, not as fragments.
    darker = image.copy()
    ImageDraw.Draw(darker).text((22, 6), "E", fill=(176, 176, 176), font=_font(14))
    assert reader.read(darker, [[0, 0, 90, 28]], ["button"])[0].text == "Export"
    # A greyed digit (a calendar's day of the next month) read so is a digit, not a faint speck.
    day = Image.new("RGB", (16, 16), (255, 255, 255))
    ImageDraw.Draw(day).text((4, 1), "6", fill=(200, 200, 200), font=_font(12))
    ImageDraw.Draw(day).point((7, 12), fill=(90, 90, 90))  # one pixel dark enough to be ink
    assert reader.read(day, [[0, 0, 16, 16]], ["tabled_text"])[0].text == "6"
    # faint specks on a blank field (greyed steppers, a shading) read as punctuation are no label
    ImageDraw.Draw(blank).text((40, 6), "- +", fill=(200, 200, 200), font=_font(14))
    assert reader.read(blank, [[0, 0, 90, 28]], ["input_field"])[0] == OcrText("", 0.0)
