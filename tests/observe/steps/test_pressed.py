"""Tool bar toggles held down, told by a shaded face among flat neighbours."""

from __future__ import annotations

from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.steps.pressed import pressed_faces

BAR = (246, 245, 244)  # GTK 3's Adwaita tool bar


def _glyph(draw: ImageDraw.ImageDraw, x: int, y: int) -> None:
    draw.rectangle([x + 9, y + 5, x + 13, y + 19], fill=(52, 101, 164))  # a blue plus
    draw.rectangle([x + 4, y + 10, x + 18, y + 14], fill=(52, 101, 164))


def toolbar(pressed: bool = True, framed_row: bool = False) -> tuple[Image.Image, list[Element]]:
    image = Image.new("RGB", (200, 40), BAR)
    draw = ImageDraw.Draw(image)
    boxes = [(6, 8, 30, 32), (40, 8, 64, 32), (74, 8, 98, 32)]
    for k, (x1, y1, x2, y2) in enumerate(boxes):
        if framed_row or (pressed and k == 0):
            draw.rounded_rectangle([x1, y1, x2 - 1, y2 - 1], radius=3, fill=(222, 221, 218), outline=(160, 158, 154))
        _glyph(draw, x1 + 1, y1)
    # The detector boxes a flat icon on its glyph, a framed one on its frame.
    return image, [Element(type="icon", bbox=box if framed_row or (pressed and k == 0) else
                           (box[0] + 4, box[1] + 4, box[2] - 4, box[3] - 4)) for k, box in enumerate(boxes)]


def test_a_shaded_icon_among_flat_ones_is_held_down_and_the_flat_ones_are_not():
    image, icons = toolbar()
    got = pressed_faces(image, icons)
    assert [e.checked for e in got] == [True, False, False]
    # A flat icon far along the row (the bar's other end) is not a neighbour to compare with.
    wide = Image.new("RGB", (400, 40), BAR)
    wide.paste(image.crop((0, 0, 40, 40)), (0, 0))
    far = Element(type="icon", bbox=(330, 12, 346, 28))
    assert [e.checked for e in pressed_faces(wide, [icons[0], far])] == [None, False]
    # Nothing held down: all flat, none checked.
    image, icons = toolbar(pressed=False)
    assert [e.checked for e in pressed_faces(image, icons)] == [False, False, False]


def test_a_row_of_framed_buttons_and_other_kinds_are_left_alone():
    # Every button framed (a dialog's icon buttons): no flat neighbour to tell a held-down one by.
    image, icons = toolbar(framed_row=True)
    assert [e.checked for e in pressed_faces(image, icons)] == [None, None, None]
    # A colour swatch's face is its colour, not a grey: not a held-down face.
    image = Image.new("RGB", (200, 40), BAR)
    ImageDraw.Draw(image).rectangle([6, 8, 29, 31], fill=(200, 40, 40))
    swatch, flat = Element(type="icon", bbox=(6, 8, 30, 32)), Element(type="icon", bbox=(40, 8, 64, 32))
    assert [e.checked for e in pressed_faces(image, [swatch, flat])] == [None, False]
    # What an earlier step read held down stays so; buttons are not looked at.
    image, icons = toolbar(pressed=False)
    icons[1] = icons[1].model_copy(update={"checked": True})
    button = Element(type="button", bbox=(74, 8, 98, 32), text="B")
    assert [e.checked for e in pressed_faces(image, [icons[0], icons[1], button])] == [False, True, None]
