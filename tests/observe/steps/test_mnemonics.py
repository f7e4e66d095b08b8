"""Mnemonic underlines: Qt's line under the Alt-key letter is painted out for the readers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.steps.field_ink import reading_boxes
from caap.observe.steps.mnemonics import mnemonic_underline, without_mnemonic_underlines

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"


def _word(underline: tuple[int, int] | None = None, *, under_all: bool = False, gap_row: bool = True) -> np.ndarray:
    """An ink mask of a made-up word: five letters 5 px wide, 2 px apart, rows 2-11 (baseline 11),
    with an optional line two rows under the baseline."""
    ink = np.zeros((16, 40), bool)
    for k in range(5):
        x = 1 + 7 * k
        ink[2:12, x] = ink[2:12, x + 4] = True  # two stems
        ink[2, x:x + 5] = True                 # a top bar
    if under_all:
        ink[13, 1:36] = True
    elif underline is not None:
        a, b = underline
        ink[13 if gap_row else 12, a:b] = True
    return ink


def test_a_line_under_one_letter_of_a_word_is_a_mnemonic():
    assert mnemonic_underline(_word((8, 13))) == (13, 14, 8, 13)
    assert mnemonic_underline(_word()) is None


def test_underscores_link_underlines_and_bottom_strokes_are_not():
    underscore = _word()
    underscore[13, 36:40] = True  # after the last letter, nothing over it
    assert mnemonic_underline(underscore) is None
    assert mnemonic_underline(_word(under_all=True)) is None   # a link's line under the whole text
    assert mnemonic_underline(_word((8, 13), gap_row=False)) is None  # touching the letter: its own stroke
    tail = _word()  # a g's tail: its descender runs down into the foot under it
    tail[12:14, 12] = True
    tail[13, 8:13] = True
    assert mnemonic_underline(tail) is None
    box = np.zeros((16, 40), bool)  # a check box before a label: its bottom edge meets its sides
    box[2:14, 0] = box[2:14, 11] = box[2, 0:12] = box[13, 0:12] = True
    box[4:12, 15:17] = box[4:12, 20:22] = True
    assert mnemonic_underline(box) is None


def test_the_readers_get_find_without_its_underline():
    """Qt's Fusion dialog: Find and Browse... underline their F and B; PP-OCR read the underlined F
    as E. With the lines painted out it reads Find, and the drop-downs' texts are untouched."""
    from caap.observe.ocr.ppocr import PPOCR

    labels = json.loads((DESKTOP / "qt5-fusion-focused-button.json").read_text())
    elements = [Element(**e) for e in labels["elements"]]
    image = Image.open(DESKTOP / "qt5-fusion-focused-button.png").convert("RGB")
    clean = without_mnemonic_underlines(image, elements)
    changed = np.flatnonzero((np.asarray(clean) != np.asarray(image)).any(axis=2).any(axis=1))
    buttons = [e for e in elements if e.type.value == "button"]
    assert changed.size and all(any(e.bbox[1] <= r < e.bbox[3] for e in buttons) for r in changed)
    find = next(e for e in buttons if e.text == "Find")
    ocr = PPOCR()
    assert ocr.read(image, [find.bbox])[0].text == "Eind"
    assert ocr.read(clean, [find.bbox])[0].text == "Find"


def test_lines_under_a_gradient_faced_button_a_cut_frame_and_an_l_are_painted_out(ppocr):
    """Misreadings of screens of training apps: Qt's default button ``Find`` (a gradient face, whose
    most common colour is its blue frame), ``To clipboard`` (its box cuts the frame's top off, so
    only the bottom edge is there to take for a frame), ``QMessageBox::critical()`` (the line under
    a one-pixel ``l``) and three greyed buttons (``Find``, ``Previous``, ``Flat Button``: label and
    line 190 on a 240 face, fainter than ink; PP-OCR read them ``Eind``, ``P`` and ``Elat Button``).
    PP-OCR reads each as drawn once the line is gone."""
    cases = json.loads((DESKTOP / "mnemonic-buttons.json").read_text())
    assert sum(bool(case.get("greyed")) for case in cases) == 3
    for case in cases:
        image = Image.open(DESKTOP / case["image"]).convert("RGB")
        button = Element(type=case["type"], bbox=case["bbox"], text=case["drawn"])
        clean = without_mnemonic_underlines(image, [button])
        rows = np.flatnonzero((np.asarray(clean) != np.asarray(image)).any(axis=2).any(axis=1))
        _, y1, _, y2 = case["bbox"]
        assert rows.size and (y1 + y2) / 2 < rows.min() <= rows.max() < y2, case["drawn"]  # under the letters
        assert ppocr.read(clean, [case["bbox"]])[0].text == case["drawn"]
        # With its line gone, a greyed label is fainter than ink but for a few pixels, which must
        # not pass for a key's glyphs: the readers read the whole button.
        assert reading_boxes(clean, [button], keys=True)[0].bbox == tuple(case["bbox"]), case["drawn"]
