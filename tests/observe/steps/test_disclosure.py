"""Disclosure triangles: a row's open or closed state from the arrow drawn before it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from caap.elements import Element
from caap.observe.steps.disclosure import disclosure, disclosure_triangles, triangle_direction
from caap.taxonomy import ElementType

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _screen(name: str) -> tuple[Image.Image, list[Element]]:
    labels = json.loads((DESKTOP / f"{name}.json").read_text())
    return Image.open(DESKTOP / f"{name}.png").convert("RGB"), [Element(**e) for e in labels["elements"]]


@pytest.mark.parametrize("name", ["gtk3-tree-light", "gtk3-tree-dark", "gtk3-expander-focus-ring", "qt5-tree-plus-minus"])
def test_every_labelled_row_reads_open_or_closed_from_its_triangle(name):
    """Cuts of validation screens of caap's GTK 3 showcase: tree rows boxed at their text (the
    arrow to their left), expanders boxed arrow and all (one with its dotted focus ring touching
    the arrow), leaves without a triangle, check boxes beside rows in a dark theme; a cut of Qt's
    showcase in the Windows style, whose rows open on ⊞ and ⊟ with a check box between."""
    image, gold = _screen(name)
    asked = [e.model_copy(update={"expanded": None}) for e in gold]
    got = disclosure_triangles(image, asked)
    assert [e.expanded for e in got] == [e.expanded for e in gold]
    assert sum(e.expanded is not None for e in gold) >= 1


def test_an_expander_title_taken_for_a_text_becomes_a_row_that_opens():
    image, gold = _screen("gtk3-tree-light")
    titles = [e for e in gold if e.text in ("Keyboard", "Music")]
    assert len(titles) == 2
    as_texts = [Element(type="text", bbox=e.bbox, text=e.text) for e in titles]
    got = disclosure_triangles(image, as_texts)
    assert [(e.type, e.expanded, e.text) for e in got] == [(ElementType.TREE_ITEM, True, "Keyboard"),
                                                           (ElementType.TREE_ITEM, True, "Music")]


def test_a_texts_without_a_triangle_stay_as_they_are():
    image, gold = _screen("gtk3-tree-dark")
    plain = [e for e in gold if e.type != ElementType.TREE_ITEM]
    assert plain and disclosure_triangles(image, plain) == plain


@pytest.mark.parametrize(("shape", "direction"), [
    ([(0, 0), (5, 5), (0, 10)], "right"), ([(0, 0), (10, 0), (5, 5)], "down"), ([(0, 0), (4, 4), (0, 8)], "right")])
def test_drawn_triangles_and_their_direction(shape, direction):
    image = Image.new("L", (14, 14), 0)
    ImageDraw.Draw(image).polygon([(x + 1, y + 1) for x, y in shape], fill=255)
    mask = np.asarray(image) > 127
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    assert triangle_direction(mask[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]) == direction


@pytest.mark.skipif(not FONT.is_file(), reason="needs fonts-dejavu-core (tools/setup.sh --system)")
@pytest.mark.parametrize("word", ["Kofi", "Voices", "Apps", "Tasks", "Lines", "bold", "D", "7 days", "> next"])
def test_letters_before_a_box_are_no_triangle(word):
    """A word's first letters, bold or not, lie in the strip where an arrow would stand."""
    for size, font_name in ((13, FONT), (15, FONT.with_name("DejaVuSans-Bold.ttf"))):
        image = Image.new("RGB", (160, 24), "white")
        font = ImageFont.truetype(str(font_name), size)
        ImageDraw.Draw(image).text((30, 4), word, fill=(40, 40, 40), font=font)
        assert disclosure(np.asarray(image), (60, 2, 150, 20)) is None
        assert disclosure(np.asarray(image), (30, 2, 150, 20)) is None


def test_a_combo_boxs_arrow_belongs_to_the_combo_box():
    image = Image.new("RGB", (200, 24), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 2, 70, 21], outline=(120, 120, 120))
    draw.polygon([(56, 9), (64, 9), (60, 13)], fill=(40, 40, 40))  # the combo box's ▾
    draw.text((80, 5), "Size", fill=(40, 40, 40))
    label = Element(type="text", bbox=(80, 4, 110, 18), text="Size")
    combo = Element(type="dropdown", bbox=(0, 2, 71, 22), text="Small")
    assert disclosure_triangles(image, [combo, label]) == [combo, label]
    assert disclosure_triangles(image, [label]) == [label]  # unboxed, its frame's side stands between


def test_a_header_cells_sort_arrow_is_not_the_next_cells_triangle():
    """A table's header: the previous column's ▾ stands before the next title, a rule between."""
    image = Image.new("RGB", (200, 24), "white")
    draw = ImageDraw.Draw(image)
    draw.polygon([(60, 9), (68, 9), (64, 13)], fill=(40, 40, 40))
    draw.line([(74, 1), (74, 22)], fill=(200, 200, 200))
    draw.text((80, 6), "Date", fill=(40, 40, 40))
    cell = Element(type="tabled_text", bbox=(80, 6, 106, 17), text="Date")
    assert disclosure_triangles(image, [cell]) == [cell]
    row = Image.new("RGB", (200, 24), "white")  # the same without the rule: a tree row in a view with columns
    ImageDraw.Draw(row).polygon([(60, 9), (68, 9), (64, 13)], fill=(40, 40, 40))
    ImageDraw.Draw(row).text((80, 6), "Date", fill=(40, 40, 40))
    assert disclosure_triangles(row, [cell])[0].type == ElementType.TREE_ITEM
