"""The current tab told by the accent bar along one of its sides (``read_tab_bars``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.steps.tabs import tab_bar, tab_bars
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
    got = tab_bars(image, found)
    assert [e.highlighted for e in got] == [e["gold_highlighted"] for e in labels]
    assert [e.text for e in got if e.highlighted] == ["Storage"]
    assert all(e.type is ElementType.TAB for e in got)


def test_a_word_beside_a_bar_at_its_right_is_the_current_tab_of_a_gtk3_notebook_at_the_left():
    """GTK 3 draws the current side tab with the bar at its right; the detector boxed its word as a
    text, which carries no tab's state: it becomes the current tab, as tall as its bar."""
    image, found, _ = _screen("gtk3-tabs-at-left")
    got = tab_bars(image, found)
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
    got = tab_bars(image, found)
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
        assert tab_bars(image, found) == found, name


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
    got = tab_bars(page, [*tabs, other])
    assert [e.highlighted for e in got] == [True, False, False, True]


def test_a_gtk4_tab_at_the_left_boxed_whole_has_its_bar_ten_pixels_out():
    """GTK 4's side tabs are boxed whole by the detector; the bar, 4 px thick, stands past the box's
    padding, 10 px out: followed through its whole thickness, it is one bar."""
    image, found, labels = _screen("gtk4-tabs-at-left")
    got = tab_bars(image, found)
    assert [e.text for e in got if e.highlighted] == ["Filters"]
    assert [label["text"] for label in labels if label["gold_highlighted"]] == ["Filters"]
