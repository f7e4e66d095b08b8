"""Tool bar toggles held down, told by a shaded face among flat neighbours."""

from __future__ import annotations

from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.steps.pressed import pressed_faces, shaded_buttons

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


WINDOW = (244, 244, 244)  # GTK 4's default window


def _buttons(faces: list[tuple[int, int, int]], kind: str = "button") -> tuple[Image.Image, list[Element]]:
    """A linked row of text buttons on the window, each on its face with a dark word on it."""
    image = Image.new("RGB", (400, 60), WINDOW)
    draw = ImageDraw.Draw(image)
    elements = []
    for k, face in enumerate(faces):
        x = 20 + 90 * k
        draw.rectangle([x, 15, x + 89, 48], fill=face, outline=(205, 199, 194))
        draw.rectangle([x + 25, 28, x + 60, 36], fill=(46, 52, 54))  # the label's ink
        elements.append(Element(type=kind, bbox=(x, 15, x + 90, 49), text=f"B{k}"))
    return image, elements


def test_a_text_button_on_a_grey_face_well_darker_than_the_window_is_held_down():
    # GTK 4's linked toggles: held down (220, 212, 212), up (252, 252, 252); GTK 3's push button
    # gradient stays within a few levels of the window.
    image, buttons = _buttons([(220, 212, 212), (252, 252, 252), (238, 237, 236)])
    assert [e.checked for e in shaded_buttons(image, buttons)] == [True, None, None]
    # A coloured face (a suggested or destructive action) is not a held-down grey.
    image, buttons = _buttons([(53, 132, 228), (192, 28, 40)])
    assert [e.checked for e in shaded_buttons(image, buttons)] == [None, None]


def test_a_shaded_tab_stays_a_tab():
    # Tk's notebooks draw the tabs behind the current one as dark as GTK 4's held-down toggles: a
    # box typed a tab keeps its type and says nothing held down.
    image, tabs = _buttons([(220, 212, 212), (244, 244, 244), (220, 212, 212)], kind="tab")
    button = Element(type="button", bbox=tabs[2].bbox, text=tabs[2].text)
    got = shaded_buttons(image, [*tabs[:2], button])
    assert got[:2] == tabs[:2] and got[2].checked is True


def test_a_web_pages_plain_button_on_white_is_not_held_down():
    # Chromium's default button face (239) on a white page is as much darker as Fusion's held-down
    # face on its grey window (223 on 239): on white, only a darker face counts.
    image = Image.new("RGB", (200, 60), (255, 255, 255))
    ImageDraw.Draw(image).rectangle([20, 15, 109, 48], fill=(239, 239, 239), outline=(118, 118, 118))
    web = Element(type="button", bbox=(20, 15, 110, 49), text="Submit")
    assert shaded_buttons(image, [web])[0].checked is None
    image = Image.new("RGB", (200, 60), (239, 239, 239))
    ImageDraw.Draw(image).rectangle([20, 15, 109, 48], fill=(223, 223, 223), outline=(160, 160, 160))
    assert shaded_buttons(image, [web])[0].checked is True


def test_a_held_down_toggle_at_the_windows_top_edge_is_read_from_the_sides_that_fit():
    # A window's tool bar starts at the capture's top: the ring above the box does not fit.
    image = Image.new("RGB", (200, 40), (244, 244, 244))
    ImageDraw.Draw(image).rectangle([3, 2, 49, 25], fill=(220, 220, 220), outline=(170, 170, 170))
    button = Element(type="button", bbox=(3, 2, 50, 26), text="Sync")
    assert [e.checked for e in shaded_buttons(image, [button])] == [True]
