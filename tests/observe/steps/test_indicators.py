"""A check box or radio button boxed as a text is told by the control drawn at its box's start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from caap.elements import Element
from caap.observe.steps.indicators import labelled_controls, leading_control
from caap.taxonomy import ElementType

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
CONTROLS = {"checkbox", "radio"}


def _screen(name: str) -> tuple[Image.Image, list[Element], list[str | None]]:
    data = json.loads((DESKTOP / f"{name}.json").read_text())
    elements = [Element(**{k: v for k, v in e.items() if k != "labelled_type"}) for e in data["elements"]]
    return Image.open(DESKTOP / f"{name}.png").convert("RGB"), elements, [e["labelled_type"] for e in data["elements"]]


@pytest.mark.parametrize("name", ["gtk3-toggle-rows", "qt5-radios-as-texts", "gtk3-check-focus-frame",
                                  "gtk4-file-icons", "gtk3-places-icons", "qt5-document-icons", "qt5-bold-capital",
                                  "qt5-menu-save-icon", "synth-capital-o", "synth-okay", "synth-cjk-square"])
def test_a_text_starting_with_a_control_is_that_control_and_one_starting_with_an_icon_is_not(name):
    """Cuts of validation screens of training apps with the detector's boxes. GTK 3's toggle cells
    and Qt's radio buttons boxed as texts and rows (a checked cell on a selected row among them), a
    GTK 3 check box boxed on its dotted focus frame as a field: each becomes the control its label
    names, boxed from the control. Names after a folder's, a file's, a clock's, a document's or a
    floppy disk's icon (square, ringed, of many colours), a bold capital before small letters, and
    on generated pages a large capital O and a CJK ro (a square) as tall as the letters after them
    stay texts."""
    image, elements, labelled = _screen(name)
    got = labelled_controls(image, elements)
    assert len(got) == len(elements)
    for before, after, kind in zip(elements, got, labelled, strict=True):
        if before.type.value in CONTROLS:
            assert after == before
        elif kind in CONTROLS:
            assert after.type.value == kind, (before.text, kind)
            assert after.bbox[0] <= before.bbox[0] and after.bbox[2] == before.bbox[2] and after.text == before.text
        else:
            assert after.type == before.type, (before.text, kind)
    if name in ("gtk3-toggle-rows", "qt5-radios-as-texts", "gtk3-check-focus-frame"):
        assert any(e.type != b.type for e, b in zip(got, elements, strict=True))


def _line(control: str, text: str, *, boxed: bool = False, size: int = 13) -> tuple[Image.Image, list[Element]]:
    """A drawn check box (a 14 px square outline) or radio button (a ring with a dot), then a label
    in DejaVu Sans of ``size`` px."""
    image = Image.new("RGB", (220, 40), (240, 240, 240))
    draw = ImageDraw.Draw(image)
    if control == "square":
        draw.rectangle((10, 12, 23, 25), fill=(255, 255, 255), outline=(120, 120, 120))
    elif control == "ring":
        draw.ellipse((10, 12, 23, 25), fill=(255, 255, 255), outline=(120, 120, 120))
        draw.ellipse((14, 16, 19, 21), fill=(40, 40, 40))
    font = ImageFont.truetype(str(FONT), size)
    draw.text((30 if control else 10, 10), text, fill=(20, 20, 20), font=font)
    elements = [Element(type=ElementType.TEXT, bbox=(10, 11, 200, 27), text=text, score=0.9)]
    if boxed:
        elements.append(Element(type=ElementType.CHECKBOX, bbox=(9, 11, 25, 27), text="", score=0.9))
    return image, elements


def test_the_control_is_told_by_its_shape_and_size_and_a_control_boxed_already_stays_apart():
    rgb = _line("square", "Remember me")[0]
    import numpy as np

    pixels = np.asarray(rgb)
    assert leading_control(pixels, (10, 11, 200, 27)) == (ElementType.CHECKBOX, (10, 12, 24, 26))
    assert leading_control(np.asarray(_line("ring", "Large")[0]), (10, 11, 200, 27))[0] == ElementType.RADIO
    # A capital O is a ring as tall as the capitals after it: a letter, standing alone or not.
    assert leading_control(np.asarray(_line("", "Options")[0]), (10, 11, 200, 27)) is None
    for size in (13, 17):
        assert leading_control(np.asarray(_line("", "O  Level", size=size)[0]), (10, 9, 200, 30)) is None
    # A control the detector boxed on its own keeps its label a text beside it.
    image, elements = _line("square", "Remember me", boxed=True)
    assert labelled_controls(image, elements) == elements
