"""The current tab told by the accent bar along one of its sides (``read_current_tabs``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.steps.tabs import current_tabs, face_span, tab_bar
from caap.taxonomy import ElementType

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"
FIELDS = ("type", "bbox", "text", "highlighted")


def _screen(name: str) -> tuple[Image.Image, list[Element], list[dict]]:
    """A cut of a validation screen: the observer's boxes, types and read states as it found them
    before this step, and per box the label it matches (``gold_*``)."""
    labels = json.loads((DESKTOP / f"{name}.json").read_text())
    image = Image.open(DESKTOP / f"{name}.png").convert("RGB")
    return image, [Element(**{k: e[k] for k in FIELDS}) for e in labels["elements"]], labels["elements"]


def test_the_tab_barred_on_top_at_the_bottom_of_a_gtk4_notebook_is_current():
    image, found, labels = _screen("gtk4-tabs-at-bottom")
    assert not any(e.highlighted for e in found)  # the state head read none of them
    got = current_tabs(image, found)
    assert [e.highlighted for e in got] == [e["gold_highlighted"] for e in labels]
    assert [e.text for e in got if e.highlighted] == ["Storage"]
    assert all(e.type is ElementType.TAB for e in got)


def test_a_word_beside_a_bar_at_its_right_is_the_current_tab_of_a_gtk3_notebook_at_the_left():
    """GTK 3 draws the current side tab with the bar at its right; the detector boxed its word as a
    text, which carries no tab's state: it becomes the current tab, as tall as its bar."""
    image, found, _ = _screen("gtk3-tabs-at-left")
    got = current_tabs(image, found)
    current = [e for e in got if e.highlighted]
    assert [(e.text, e.type) for e in current] == [("Templates", ElementType.TAB)]
    x1, y1, x2, y2 = current[0].bbox
    old = next(e for e in found if e.text == "Templates").bbox
    assert (x1, x2) == (old[0], old[2]) and y1 < old[1] and y2 > old[3]
    assert 30 <= y2 - y1 <= 48  # the tab's height, where the word is 15 px
    # The words of the tabs behind it have no bar: they stay as they were.
    assert [(e.type, e.highlighted) for e in got if e.text != "Templates"] == \
        [(e.type, e.highlighted) for e in found if e.text != "Templates"]


def test_a_gtk4_tab_at_the_right_has_its_bar_at_its_left():
    image, found, _ = _screen("gtk4-tabs-at-right")
    got = current_tabs(image, found)
    assert [e.text for e in got if e.highlighted] == ["Sharing"]
    sharing = next(e for e in got if e.text == "Sharing")
    assert sharing.type is ElementType.TAB
    assert tab_bar(np.asarray(image), next(e for e in found if e.text == "Sharing").bbox)[0] == "left"


def test_a_focus_ring_beside_a_box_is_no_bar():
    """A linked toggle's focus ring runs along its neighbour's side, and a focused row's ring along
    the row under it; each side of a ring turns a corner at its ends, which no tab's bar does."""
    for name in ("gtk4-focused-toggle-beside", "gtk4-popover-focused-row"):
        image, found, _ = _screen(name)
        rgb = np.asarray(image)
        assert [tab_bar(rgb, e.bbox) for e in found] == [None] * len(found), name
    image, found, _ = _screen("gtk4-popover-focused-row")
    assert current_tabs(image, found) == found


def test_a_linked_row_with_several_faces_held_down_is_a_row_of_toggles():
    """GTK 4's linked toggles in a theme that draws them held down on grey, one left up on white:
    no stack switcher shows two current pages, so the row is toggles, whatever the detector typed
    them (tabs, mostly), and the grey ones are held down."""
    image, found, labels = _screen("gtk4-focused-toggle-beside")
    assert {e.type for e in found} == {ElementType.TAB, ElementType.BUTTON}
    got = current_tabs(image, found)
    assert [e.type for e in got] == [ElementType.BUTTON] * len(got)
    assert [e.checked for e in got] == [label["gold_checked"] for label in labels]
    assert not any(e.highlighted for e in got)


def test_other_coloured_lines_are_no_bar():
    page = Image.new("RGB", (300, 120), (255, 255, 255))
    draw = ImageDraw.Draw(page)
    word = (40, 20, 100, 34)
    draw.rectangle([44, 24, 96, 30], fill=(40, 40, 40))  # the word's ink
    blue = (53, 132, 228)
    rgb = lambda: np.asarray(page)  # noqa: E731
    # A one-pixel underline (a link) is too thin.
    draw.line([40, 37, 100, 37], fill=blue)
    assert tab_bar(rgb(), word) is None
    # A bar 3 px thick under the word, as long as it plus the tab's padding: the current tab.
    draw.rectangle([28, 37, 112, 39], fill=blue)
    assert tab_bar(rgb(), word) == ("bottom", 28, 113)
    # The same bar running on far past the word (a slider's or a progress bar's fill) is none.
    draw.rectangle([28, 37, 260, 39], fill=blue)
    assert tab_bar(rgb(), word) is None
    # A bar on two sides (a selected row's fill round the word) is none either.
    page.paste((255, 255, 255), (0, 0, 300, 120))
    draw.rectangle([30, 14, 110, 40], fill=blue)
    draw.rectangle([44, 24, 96, 30], fill=(255, 255, 255))
    assert tab_bar(rgb(), word) is None
    # Grey is no accent: a tab strip's grey border under the word says nothing.
    page.paste((255, 255, 255), (0, 0, 300, 120))
    draw.rectangle([28, 37, 112, 39], fill=(150, 150, 150))
    assert tab_bar(rgb(), word) is None


def test_a_barred_tab_clears_a_head_read_selection_in_its_strip_only():
    page = Image.new("RGB", (400, 120), (246, 245, 244))
    draw = ImageDraw.Draw(page)
    tabs = [Element(type="tab", bbox=(10 + 80 * k, 10, 80 + 80 * k, 40), text=f"T{k}", highlighted=k == 2)
            for k in range(3)]
    draw.rectangle([10, 37, 79, 39], fill=(53, 132, 228))  # the first tab is the current one
    other = Element(type="tab", bbox=(10, 80, 80, 110), text="Elsewhere", highlighted=True)  # another strip
    got = current_tabs(page, [*tabs, other])
    assert [e.highlighted for e in got] == [True, False, False, True]


def test_a_gtk4_tab_at_the_left_boxed_whole_has_its_bar_ten_pixels_out():
    """GTK 4's side tabs are boxed whole by the detector; the bar, 4 px thick, stands past the box's
    padding, 10 px out: followed through its whole thickness, it is one bar."""
    image, found, labels = _screen("gtk4-tabs-at-left")
    got = current_tabs(image, found)
    assert [e.text for e in got if e.highlighted] == ["Filters"]
    assert [label["text"] for label in labels if label["gold_highlighted"]] == ["Filters"]


def test_the_held_down_page_of_a_gtk4_stack_switcher_is_the_current_tab():
    """A stack switcher's pages are linked buttons, the current one on a grey face darker than the
    white of the others and of the window; the detector boxes them on their words, short of their
    frames, so each face is followed out to its frame before the row is seen to be linked."""
    image, found, labels = _screen("gtk4-stack-switcher")
    assert not any(e.highlighted for e in found)
    got = current_tabs(image, found)
    assert [bool(e.highlighted) for e in got] == [label["gold_highlighted"] for label in labels]
    rgb = np.asarray(image)
    spans = [face_span(rgb, e.bbox) for e in found if e.type is ElementType.TAB]
    assert all(b[0] - a[1] <= 3 for a, b in itertools.pairwise(spans))  # faces that touch


def test_a_stack_switcher_in_a_header_bar_clears_what_the_head_read_on_a_light_page():
    image, found, _ = _screen("gtk4-stack-switcher-header")
    assert [e.text for e in found if e.highlighted] == ["System"]  # the head's mistake
    got = current_tabs(image, found)
    assert [e.text for e in got if e.highlighted] == []
    # The current page was boxed a button: the held-down face is left to ``read_shaded_buttons``.
    assert [(e.type, e.checked) for e in got if e.text == "About"] == [(ElementType.BUTTON, None)]


@pytest.mark.parametrize("name", ["tk-notebook-tabs", "qt5-fusion-tabs"])
def test_notebook_tabs_drawn_the_other_way_are_left_alone(name):
    """Tk's and Fusion's notebooks draw the tabs behind the current one on a darker face and the
    current one open into its page: no linked row of buttons."""
    image, found, _ = _screen(name)
    assert current_tabs(image, found) == found


def test_a_two_tab_notebook_whose_current_tab_opens_into_its_page_is_no_switcher():
    """Two tabs, the one behind darker than the window: as a two-page stack switcher would look,
    but the current tab has no line under it (it opens into its page) and stands taller than the
    one behind, where a switcher's buttons are framed all round on the same rows."""
    window, behind, line = (217, 217, 217), (195, 195, 195), (120, 120, 120)

    def row(notebook: bool) -> Image.Image:
        image = Image.new("RGB", (260, 90), window)
        draw = ImageDraw.Draw(image)
        draw.rectangle([10, 10, 100, 36], fill=window, outline=line)  # the current tab
        draw.rectangle([101, 12 if notebook else 10, 190, 36], fill=behind, outline=line)
        if notebook:
            draw.line([10, 36, 250, 36], fill=line)  # the page's top ...
            draw.line([11, 36, 99, 36], fill=window)  # ... open under the current tab
        return image

    tabs = [Element(type="tab", bbox=(10, 10, 101, 37), text="First"),
            Element(type="tab", bbox=(101, 12, 191, 37), text="Second")]
    assert current_tabs(row(notebook=True), tabs) == tabs
    # Framed all round on the same rows, the same two faces are a switcher on its second page.
    assert [e.highlighted for e in current_tabs(row(notebook=False), tabs)] == [False, True]


def test_a_face_no_darker_than_the_window_is_not_held_down():
    """Framed tabs on white faces beside one flat on the window's own grey: the window shows
    through a flat face, which says nothing of a held-down page."""
    window, line = (236, 236, 236), (150, 150, 150)
    image = Image.new("RGB", (300, 60), window)
    draw = ImageDraw.Draw(image)
    faces = [(255, 255, 255), window, (255, 255, 255)]
    for k, face in enumerate(faces):
        draw.rectangle([10 + 90 * k, 12, 100 + 90 * k, 40], fill=face, outline=line)
    tabs = [Element(type="tab", bbox=(10 + 90 * k, 12, 101 + 90 * k, 41), text=f"T{k}") for k in range(3)]
    assert current_tabs(image, tabs) == tabs
    # The same row with the middle face well under the window's grey: its current page.
    draw.rectangle([101, 13, 189, 39], fill=(200, 200, 200))
    assert [e.highlighted for e in current_tabs(image, tabs)] == [False, True, False]


def test_a_dark_stack_switcher_whose_current_page_has_no_frame_of_its_own():
    """In the dark theme the current page's face is as dark as its frame, so its frame is not seen;
    the pages left up are framed, and the row is read from them."""
    image, found, labels = _screen("gtk4-stack-switcher-dark")
    got = current_tabs(image, found)
    assert [e.text for e in got if e.highlighted] == ["Page 1"]
    assert [bool(e.highlighted) for e in got] == [label["gold_highlighted"] for label in labels]


def test_dark_linked_toggles_whose_held_faces_run_into_each_other():
    """Two toggles held down side by side in the dark theme: their faces meet with no line between,
    and a face beside the row (a tab's strip) runs on into the row's first face, unframed. The row
    of framed faces is read first, as toggles: two held down, typed buttons."""
    image, found, labels = _screen("gtk4-linked-toggles-dark")
    got = current_tabs(image, found)
    toggles = [k for k, label in enumerate(labels) if label["gold_type"] == "button"]
    assert [got[k].type for k in toggles] == [ElementType.BUTTON] * 4  # Year was one already
    assert [bool(got[k].checked) for k in toggles] == [labels[k]["gold_checked"] for k in toggles]
    assert [(e.text, e.type) for e in got if e.highlighted] == [("Sharing", ElementType.TAB)]
