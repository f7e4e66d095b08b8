"""Where the keyboard focus is drawn: dotted rings, carets, accent rings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.steps.figures import focus_ring, ring_box
from caap.observe.steps.focus import (
    dark_frame,
    dotted_ring,
    drawn_focus,
    empty_caret_fields,
    lone_caret,
    ringed_button,
    text_caret,
)

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"


def _screen(name: str) -> tuple[Image.Image, list[Element]]:
    labels = json.loads((DESKTOP / f"{name}.json").read_text())
    return Image.open(DESKTOP / f"{name}.png").convert("RGB"), [Element(**e) for e in labels["elements"]]


@pytest.mark.parametrize("name", ["gtk3-focused-button", "gtk3-focused-button-dark", "qt5-focused-button"])
def test_the_button_with_the_dotted_ring_is_the_focused_one(name):
    """Cuts of validation screens: GTK 3's dashed rectangle inside the focused button (light and
    dark theme, drawn at 30 % opacity) and Qt's dotted one round its label; the buttons beside it
    show none."""
    image, gold = _screen(name)
    rgb = np.asarray(image)
    assert [dotted_ring(rgb, e.bbox) for e in gold] == [bool(e.focused) for e in gold]
    unread = [e.model_copy(update={"focused": None}) for e in gold]
    assert [bool(e.focused) for e in drawn_focus(image, unread)] == [bool(e.focused) for e in gold]


def test_the_state_heads_lone_reading_yields_to_a_drawn_focus_and_two_signs_say_nothing():
    """The head read a button with nothing drawn on it focused (a large glyph boxed as a button, on a
    GTK 4 validation screen): the one control whose focus is drawn takes it. A reading on a control
    that shows a sign stands."""
    image, gold = _screen("gtk3-focused-button")
    read = [e.model_copy(update={"focused": e.text == "Medium"}) for e in gold]  # the head's (wrong) reading
    out = drawn_focus(image, read)
    assert [e.text for e in out if e.focused] == [e.text for e in gold if e.focused] == ["Underline"]
    assert drawn_focus(image, gold) == gold
    twice = Image.new("RGB", (image.width * 2, image.height), "white")
    twice.paste(image, (0, 0))
    twice.paste(image, (image.width, 0))
    both = [e.model_copy(update={"focused": None}) for e in gold] + [
        e.model_copy(update={"focused": None, "bbox": (e.bbox[0] + image.width, e.bbox[1], e.bbox[2] + image.width,
                                                       e.bbox[3])}) for e in gold]
    assert drawn_focus(twice, both) == both


def test_of_two_controls_read_focused_the_one_showing_its_focus_keeps_it():
    """Qt draws its default button as it draws a focused one, and the state head read both the
    extension dialog's Find button and its field focused (a validation screen of a training app);
    the field shows its accent ring, the button nothing more than its default look: the field
    alone keeps the focus. Where the focus shows on none or on both, the readings stand."""
    image, read = _screen("qt5-default-button-and-focused-field")
    focused = [e for e in read if e.focused]
    assert {e.type.value for e in focused} == {"button", "input_field"}
    out = drawn_focus(image, read)
    assert [(e.type.value, e.text) for e in out if e.focused] == [("input_field", "")]
    assert [e.model_copy(update={"focused": None}) for e in out] == [e.model_copy(update={"focused": None}) for e in read]
    blank = Image.new("RGB", image.size, image.getpixel((2, 2)))  # no ring anywhere: nothing to go by
    assert drawn_focus(blank, read) == read


def _field(text_end: int | None, caret_at: int | None, height: int = 30) -> np.ndarray:
    image = Image.new("RGB", (200, height), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, 199, height - 1], outline=(150, 150, 150))
    if text_end is not None:
        draw.text((8, 8), "Alice", fill=(20, 20, 20))
    if caret_at is not None:
        draw.line([(caret_at, 7), (caret_at, height - 8)], fill=(20, 20, 20))
    return np.asarray(image)


def test_a_caret_alone_in_an_empty_field_shows_its_focus():
    assert text_caret(_field(None, 8), (0, 0, 200, 30))
    assert not text_caret(_field(None, None), (0, 0, 200, 30))
    assert not text_caret(_field(True, None), (0, 0, 200, 30))  # a value, no caret
    # A thin line at the field's far end, away from the value, is a drop-down's divider.
    assert not text_caret(_field(True, 180), (0, 0, 200, 30))


def test_no_drawn_focus_on_a_plain_screen():
    image = Image.new("RGB", (300, 100), "white")
    ImageDraw.Draw(image).rectangle([10, 10, 110, 40], outline=(120, 120, 120), fill=(230, 230, 230))
    button = Element(type="button", bbox=(10, 10, 111, 41), text="OK")
    assert drawn_focus(image, [button]) == [button]


def test_a_dotted_ring_whose_corner_joins_one_side_still_counts():
    """GTK 3 (zenity): the frame's rounded corner runs into the top row of dashes, so the top run
    starts 5 px before the bottom one; they still span the same columns."""
    image, gold = _screen("gtk3-dotted-ring-corner")
    rgb = np.asarray(image)
    assert [dotted_ring(rgb, e.bbox) for e in gold] == [bool(e.focused) for e in gold]


def test_tks_dark_highlight_frame_shows_the_focused_field():
    """Tk draws a black line round the focused entry and in the window's colour round the others;
    the detector boxes its entries a few px inside the frame."""
    image, gold = _screen("tk-focused-entry")
    rgb = np.asarray(image)
    assert [dark_frame(rgb, e.bbox) for e in gold] == [bool(e.focused) for e in gold]
    unread = [e.model_copy(update={"focused": None}) for e in gold]
    assert [bool(e.focused) for e in drawn_focus(image, unread)] == [bool(e.focused) for e in gold]
    # A raised button's bevel is dark on two sides only.
    image = Image.new("RGB", (160, 60), (217, 217, 217))
    draw = ImageDraw.Draw(image)
    draw.line([(10, 50), (150, 50), (150, 10)], fill=(0, 0, 0), width=2)
    draw.line([(10, 50), (10, 10), (150, 10)], fill=(255, 255, 255), width=2)
    assert not dark_frame(np.asarray(image), (10, 10, 151, 51))


def test_a_dark_frame_beyond_a_short_box_still_shows_the_focus():
    """The detector boxed Tk's search field on its inside, 8 px short of the frame on the left; a
    field's frame may lie a tenth of its width beyond the box, a panel's frame further is no sign."""
    image, gold = _screen("tk-entry-boxed-short")
    rgb = np.asarray(image)
    assert [dark_frame(rgb, e.bbox) for e in gold] == [True]
    image = Image.new("RGB", (420, 100), (217, 217, 217))
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 20, 380, 44), fill=(255, 255, 255), outline=(0, 0, 0))
    rgb = np.asarray(image)
    assert dark_frame(rgb, (21, 21, 350, 44))      # 30 px short of the right side: within 0.1 x 329
    assert not dark_frame(rgb, (21, 21, 200, 44))  # 180 px short: another control's frame, or a panel's


def test_a_fields_accent_ring_shows_round_its_selected_text():
    """GTK 3's dark theme (zenity): the focused field's accent ring round its value, selected (its
    blue covers a third of the field). The face next to the ring is plain, unlike a coloured
    button's, which stays unringed."""
    image, gold = _screen("gtk3-dark-field-selected")
    rgb = np.asarray(image)
    assert [focus_ring(rgb, e.bbox) for e in gold] == [bool(e.focused) for e in gold]
    unread = [e.model_copy(update={"focused": None}) for e in gold]
    assert [bool(e.focused) for e in drawn_focus(image, unread)] == [bool(e.focused) for e in gold]
    button = Image.new("RGB", (120, 40), (250, 250, 250))
    ImageDraw.Draw(button).rounded_rectangle((2, 2, 117, 37), radius=4, fill=(53, 132, 228), outline=(30, 90, 180),
                                            width=2)
    assert not focus_ring(np.asarray(button), (2, 2, 118, 38))


def test_a_ringed_button_holds_the_focus_where_its_face_is_grey_and_nothing_else_shows_it():
    """Qt's Fusion rings the focused push button in its accent colour round a grey face: where no
    field, drop-down or text view shows the focus, that button is focused, and two such buttons say
    nothing. Fusion also rings a dialog's default button, tinting its face: no sign of focus, which
    here is the field's (its own ring)."""
    image, gold = _screen("qt5-fusion-focused-button")
    unread = [e.model_copy(update={"focused": None}) for e in gold]
    assert [bool(e.focused) for e in drawn_focus(image, unread)] == [bool(e.focused) for e in gold]
    twice = Image.new("RGB", (2 * image.width, image.height))
    twice.paste(image, (0, 0))
    twice.paste(image, (image.width, 0))
    beside = [e.model_copy(update={"bbox": (e.bbox[0] + image.width, e.bbox[1], e.bbox[2] + image.width, e.bbox[3])})
              for e in unread]
    assert not any(e.focused for e in drawn_focus(twice, [*unread, *beside]))
    image, gold = _screen("qt5-fusion-default-button")
    rgb = np.asarray(image)
    default = next(e for e in gold if e.type.value == "button" and e.text == "Find")
    assert focus_ring(rgb, default.bbox) and not ringed_button(rgb, default.bbox)
    unread = [e.model_copy(update={"focused": None}) for e in gold]
    assert [bool(e.focused) for e in drawn_focus(image, unread)] == [bool(e.focused) for e in gold]


def test_two_boxes_of_one_text_view_see_its_one_caret():
    """The detector left two overlapping boxes on one GTK 4 text view; both hold its caret (after
    ``1991``): one place, so the focus goes to the surer box, not to nobody."""
    image, boxes = _screen("gtk4-text-view-twice")
    rgb = np.asarray(image)
    assert all(text_caret(rgb, e.bbox) for e in boxes)
    said = drawn_focus(image, [e.model_copy(update={"focused": None}) for e in boxes])
    assert [bool(e.focused) for e in said] == [True, False] and boxes[0].score > boxes[1].score


def test_a_caret_alone_in_an_empty_field_is_no_text():
    """GTK 4's caret stands a pixel inside the field's accent ring; the reader read it ``1``."""
    image, (field,) = _screen("gtk4-empty-field-caret")
    assert lone_caret(np.asarray(image), field.bbox)
    read = [field.model_copy(update={"text": "1"})]
    assert [e.text for e in empty_caret_fields(image, read)] == [""]
    # A value that only looks like a caret's reading is kept where more than a caret is drawn.
    assert [e.text for e in empty_caret_fields(Image.fromarray(_field(True, None)),
                                               [Element(type="input_field", bbox=(0, 0, 200, 30), text="l")])] == ["l"]


def test_a_caret_ending_a_line_of_a_text_view_shows_its_focus():
    """A GTK 4 text view of three lines, the caret after the last one's ``nine``: each line is
    looked at as a one-line value. With the caret painted out, no line ends in one."""
    image, gold = _screen("gtk4-text-view-lines")
    rgb = np.asarray(image).copy()
    assert text_caret(rgb, gold[0].bbox) and not lone_caret(rgb, gold[0].bbox)
    said = drawn_focus(image, [gold[0].model_copy(update={"focused": False})])
    assert said[0].focused is True
    ink = np.abs(rgb.astype(int) - rgb[-1, -1].astype(int)).max(axis=2) > 48
    cols = np.nonzero(ink)[1]
    right = cols.max()  # the caret is the rightmost ink of the view
    rgb[:, right - 1:right + 1] = rgb[-1, -1]
    assert not text_caret(rgb, gold[0].bbox)


def test_a_caret_ending_a_line_that_touches_the_one_above_is_found():
    """A cut of a validation screen (gtk4-demo's hypertext view): a raised word's descender joins
    the last two lines into one band of ink, whose last column is that word's, not the caret after
    ``text.``. Painted out, the caret is not found."""
    image = Image.open(DESKTOP / "gtk4-text-view-caret-lines-touch.png").convert("RGB")
    box = (3, 13, 390, 158)
    assert text_caret(np.asarray(image), box)
    ImageDraw.Draw(image).rectangle([50, 97, 51, 116], fill="white")
    assert not text_caret(np.asarray(image), box)


def test_a_held_down_toggle_with_an_accent_ring_holds_the_focus():
    """GTK 4's linked toggles (gtk4-demo's info bar, a validation screen): the focused one, held
    down, is ringed round its warm grey face, which spreads as much as Fusion's tinted default
    button. Read held down (as ``read_shaded_buttons`` reads it), the ring is its focus; read as a
    push button, the tinted face says nothing."""
    image, gold = _screen("gtk4-held-toggle-focused")
    assert [e.text for e in gold if e.focused] == ["Warning"]
    held = [e.model_copy(update={"focused": None}) for e in gold]
    assert [bool(e.focused) for e in drawn_focus(image, held)] == [bool(e.focused) for e in gold]
    plain = [e.model_copy(update={"checked": False}) for e in held]
    assert not any(e.focused for e in drawn_focus(image, plain))


def test_a_ring_the_box_lies_a_few_pixels_off_is_still_seen():
    """A GTK 4 drop-down focused (a validation screen): the detector boxed it 5 px above its ring,
    so the box's band holds only the ring's sides. Moved onto the ring, the band holds it all; the
    field beside it, unringed, stays unfocused."""
    image, gold = _screen("gtk4-dropdown-ring-off-box")
    rgb = np.asarray(image)
    drop = next(e for e in gold if e.type.value == "dropdown")
    assert not focus_ring(rgb, drop.bbox)
    assert focus_ring(rgb, drop.bbox, reach=5)
    unread = [e.model_copy(update={"focused": None if e.focused is None else False}) for e in gold]
    out = drawn_focus(image, unread)
    assert [e.type.value for e in out if e.focused] == ["dropdown"]


def test_a_ring_line_on_fewer_than_three_sides_moves_no_box():
    image = Image.new("RGB", (120, 60), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([10, 10, 109, 49], outline=(128, 128, 128))
    draw.line([10, 14, 109, 14], fill=(53, 132, 228), width=2)  # a selected row's edge, say
    rgb = np.asarray(image)
    assert ring_box(rgb, (10, 10, 110, 50), 5) is None
    assert not focus_ring(rgb, (10, 10, 110, 50), reach=5)
    draw.rectangle([10, 14, 109, 49], outline=(53, 132, 228), width=2)  # a ring, 4 px below the box's top
    rgb = np.asarray(image)
    assert ring_box(rgb, (10, 10, 110, 50), 5) == (10, 14, 110, 50)
    assert not focus_ring(rgb, (10, 10, 110, 50)) and focus_ring(rgb, (10, 10, 110, 50), reach=5)


def test_a_caret_in_a_text_views_first_column_at_the_screens_edge_is_seen():
    """GTK 4's print editor (a validation screen): the text view starts at the window's left edge
    and its caret stands in its first column, where a box inside the screen has its border."""
    image, gold = _screen("gtk4-text-view-at-screen-edge")
    view = next(e for e in gold if e.type.value == "text_area")
    rgb = np.asarray(image)
    whole = (0, 22, view.bbox[2], view.bbox[3])  # the view as grown to its panel
    assert text_caret(rgb, whole)
    assert not text_caret(rgb, (3, 22, view.bbox[2], view.bbox[3]))  # a box with a border on its left
