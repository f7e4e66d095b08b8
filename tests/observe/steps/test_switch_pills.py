"""A switch the detector boxed as a text (its knob read as a letter) made a checkbox."""

from __future__ import annotations

from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.steps.switches import retype_pills

WINDOW = (246, 245, 244)  # GTK 3's Adwaita


def _pill(draw: ImageDraw.ImageDraw, x: int, y: int, word: bool = False) -> None:
    draw.rounded_rectangle([x, y, x + 49, y + 25], radius=12, fill=(53, 132, 228), outline=(27, 106, 203))
    if word:  # a badge: a word on the pill
        draw.rectangle([x + 12, y + 9, x + 36, y + 17], fill=(255, 255, 255))
    else:  # the knob, switched on
        draw.ellipse([x + 24, y + 1, x + 48, y + 24], fill=(255, 255, 255), outline=(200, 200, 200))


def test_a_text_box_fitted_to_a_switch_and_read_as_one_glyph_becomes_a_checkbox():
    image = Image.new("RGB", (300, 60), WINDOW)
    draw = ImageDraw.Draw(image)
    _pill(draw, 20, 15)
    _pill(draw, 120, 15, word=True)
    draw.rectangle([220, 20, 270, 30], fill=(40, 40, 40))  # a word's ink, no pill round it
    elements = [Element(type="text", bbox=(20, 15, 70, 41), text="0"),
                Element(type="text", bbox=(120, 15, 170, 41), text="New"),
                Element(type="text", bbox=(218, 18, 272, 32), text="I")]
    got = retype_pills(image, elements)
    assert [(e.type.value, e.text) for e in got] == [("checkbox", None), ("text", "New"), ("text", "I")]
    # A box far larger than the pill is not the pill's.
    wide = Element(type="text", bbox=(10, 5, 110, 55), text="")
    assert retype_pills(image, [wide])[0].type.value == "text"
