"""Rules the observer applies around the two networks, each on the screen from a benchmark episode
that it fixed (tests/fixtures/screens/, captured from the vision benchmark's traces)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.colour import dominant_colour, on_page_colour
from caap.observe.detector import drop_spanning_rows
from caap.observe.vision import DEFAULT_DETECTOR, DEFAULT_READER, plain_rows_unhighlighted

SCREENS = Path(__file__).parent / "fixtures" / "screens"


def row(text: str, box: list[int], score: float = 0.9, **kw) -> Element:
    return Element(type="tabled_text", bbox=box, text=text, score=score, **kw)


@pytest.fixture(scope="module")
def observer():
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    from caap.observe.vision import VisionObserver

    if not DEFAULT_DETECTOR.is_file() or not (DEFAULT_READER / "model.safetensors").is_file():
        pytest.skip("the shipped models are not in this checkout")
    return VisionObserver.load()


def test_a_box_over_two_rows_goes_and_the_rows_stay():
    a, b, c = row("Theodora", [2, 58, 151, 78]), row("Catherine", [3, 75, 141, 91]), row("Marilee", [3, 92, 141, 108])
    both = row("Theodora Catherine", [4, 63, 136, 92], score=0.5)
    button = Element(type="button", bbox=[2, 150, 98, 180], text="Submit")
    assert drop_spanning_rows([a, both, b, c, button]) == [a, b, c, button]
    # Rows side by side (a table's cells) are not stacked under one box; nor is a lone pair.
    cells = [row("x", [0, 0, 40, 20]), row("y", [40, 0, 80, 20]), row("z", [0, 20, 80, 40])]
    assert drop_spanning_rows(cells) == cells
    assert drop_spanning_rows([a, both]) == [a, both]
    # A sure row stays whatever unsure boxes lie inside it (the evaluation asks for every box above 0.001).
    sure = row("Theodora Catherine", [4, 63, 136, 92], score=0.95)
    assert drop_spanning_rows([a, sure, b, c]) == [a, sure, b, c]


def test_page_colour_and_a_row_on_it():
    image = Image.new("RGB", (160, 210), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    draw.rectangle([2, 75, 140, 91], fill=(30, 110, 220))  # a selected row
    draw.text((5, 60), "Theodora", fill="black")
    rgb = np.asarray(image)
    page = dominant_colour(rgb)
    assert np.abs(page - 255).max() <= 8
    assert on_page_colour(rgb, [2, 58, 140, 75], page)
    assert not on_page_colour(rgb, [2, 75, 141, 92], page)
    with pytest.raises(ValueError):
        dominant_colour(rgb[:0])


def test_a_row_on_the_page_colour_is_not_highlighted_and_a_filled_one_is():
    image = Image.new("RGB", (160, 210), "white")
    ImageDraw.Draw(image).rectangle([2, 75, 140, 91], fill=(30, 110, 220))
    rows = [row("Theodora", [2, 58, 140, 75], highlighted=True), row("Catherine", [2, 75, 141, 92], highlighted=True),
            Element(type="text", bbox=[2, 58, 140, 75], text="Theodora", highlighted=True)]
    out = plain_rows_unhighlighted(image, rows)
    assert [e.highlighted for e in out] == [False, True, True]  # other types keep the reader's word
    assert rows[0].highlighted is True  # the input list is not changed in place


def test_focus_outline_around_a_list_does_not_select_its_first_row(observer):
    """click-scroll-list after one ctrl-click: the list has keyboard focus (a dark outline around
    it) and only Catherine is selected. The reader's colour statistics took the outline for a
    selection of Theodora, and the agent kept deselecting her."""
    found = observer.observe(Image.open(SCREENS / "click-scroll-list-focus-outline.png"))
    selected = {e.text for e in found if e.type.value == "tabled_text" and e.highlighted}
    assert selected == {"Catherine"}


def test_two_selected_rows_are_two_elements(observer):
    found = observer.observe(Image.open(SCREENS / "click-scroll-list-two-selected.png"))
    rows = sorted((e for e in found if e.type.value == "tabled_text"), key=lambda e: e.bbox[1])
    assert [e.text for e in rows[:2]] == ["Theodora", "Catherine"]
    assert [e.highlighted for e in rows[:3]] == [True, True, False]


def test_a_minus_touching_the_focus_ring_is_read(observer):
    """use-spinner with "-1" in the focused field: the minus sign touches the 2 px focus ring,
    whose right side the spinner buttons cover. The frame is found from its top and bottom lines,
    the buttons are cut off where those lines end, and the minus is no corner speck."""
    found = observer.observe(Image.open(SCREENS / "use-spinner-focused.png"))
    (field,) = [e for e in found if e.type.value == "input_field"]
    assert field.text == "-1"
