"""Look-alike letters set by how they are drawn: real desktop texts' glyphs paired with what was read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import rgb_pixels
from caap.observe.steps.letter_shapes import _pairs, letter_shapes, letter_shapes_text
from caap.taxonomy import ElementType

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"
CASES = json.loads((DESKTOP / "letter-shapes.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[c["drawn"] for c in CASES])
def test_each_look_alike_letter_is_read_as_drawn(case):
    """Crops of validation screens of training apps, read as the observer read them: the reader's
    ``getitem``, ``GUi`` and ``Ipsum`` and PP-OCR's ``olga`` become what the window draws; texts
    already right stay right, among them ``lib64``'s l and i, ``holiday.png`` after an icon's
    ink, ``Bookmarks``, ``Tomato`` and ``Centre``, whose icon or radio circle before the text and
    two touching letters make as many glyphs as letters (paired, each letter would be measured on
    its neighbour's), and ``Text``, whose x inside the word stands as tall as a capital."""
    rgb = rgb_pixels(Image.open(DESKTOP / case["image"]).convert("RGB"))
    assert letter_shapes_text(rgb, case["bbox"], case["read"]) == case["drawn"]


def test_a_box_cutting_the_tops_off_leaves_a_stem_as_read():
    """An i whose dot the box cut off is a bar as tall as what is left of the line: no I."""
    case = next(c for c in CASES if c["drawn"] == "QInputDialog::getItem()")
    rgb = rgb_pixels(Image.open(DESKTOP / case["image"]).convert("RGB"))
    x1, y1, x2, y2 = case["bbox"]
    ink_top = int(np.flatnonzero((rgb[y1:y2, x1 + 20:x2 - 20] < 128).any(axis=(1, 2)))[0]) + y1
    cut = [x1, ink_top + 3, x2, y2]  # through the dots and the capitals' tops
    assert letter_shapes_text(rgb, cut, "QInputDialog::getitem()") == "QInputDialog::getitem()"


def test_the_glyphs_pair_with_the_letters_only_where_every_best_alignment_agrees():
    """Only the look-alike letters and the small letters measured against are paired."""
    thin, wide = True, False
    # "lib": l and i thin, b wide, nothing touching
    assert _pairs("lib", [thin, thin, wide]) == ({0: 0, 1: 1}, 0)
    # "git" with g and i touching is no alignment (a thin letter never touches into a glyph)
    assert _pairs("git", [wide, wide]) is None
    # "Qna" in two glyphs: Qn|a or Q|na; the a's glyph is not known either way
    assert _pairs("Qna", [wide, wide]) == ({}, 1)
    # an extra wide glyph (an icon's ink) before "il": more glyphs than letters
    assert _pairs("il", [wide, thin, thin]) is None
    # "getitem" with "ge" touching: the i, the e after it and the m are still known
    assert _pairs("getitem", [wide, wide, thin, wide, wide, wide]) == ({3: 2, 5: 4, 6: 5}, 1)


def test_the_step_changes_only_texts_and_keeps_everything_else():
    case = next(c for c in CASES if c["drawn"] == "QInputDialog::getItem()")
    image = Image.open(DESKTOP / case["image"]).convert("RGB")
    button = Element(id=1, type=ElementType.BUTTON, bbox=case["bbox"], text=case["read"], text_confidence=0.97)
    icon = Element(id=2, type=ElementType.ICON, bbox=case["bbox"])
    out = letter_shapes(image, [button, icon])
    assert out[0].text == case["drawn"] and out[0].text_confidence == 0.97 and out[0].bbox == button.bbox
    assert out[1] is icon
