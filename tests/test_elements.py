import json

import pytest

from caap.elements import Element, ElementFileError, dump_elements, load_elements, parse_elements, value_labels
from caap.observe.order import reading_order
from caap.observe.tracking import IdTracker
from caap.taxonomy import DETECTOR_CLASSES, ElementType, attributes_of


def test_prompt_line_matches_the_paper_format():
    e = Element(id=3, type="button", bbox=[2, 99, 98, 130], text="Submit", focused=False)
    assert e.prompt_line() == '- ID: element_3, data: {type: button, X: 50 [2-98], Y: 114 [99-130], text: "Submit", focused: False}'


def test_prompt_line_escapes_text_and_omits_unknown_attributes():
    e = Element(id=1, type="text", bbox=[0, 0, 10, 10], text='say "hi"\nnow \\ ok')
    assert e.describe() == '{type: text, X: 5 [0-10], Y: 5 [0-10], text: "say \\"hi\\"\\nnow \\\\ ok"}'
    icon = Element(id=2, type="icon", bbox=[0, 0, 8, 8], subtype="like", checked=True)
    assert icon.describe().endswith("subtype: like, checked: True}")
    hidden = Element(id=4, type="checkbox", bbox=[0, 0, 8, 8], text="a", checked=False, visible=False)
    assert hidden.describe().endswith("checked: False, visible: False}")


def test_taxonomy_rejects_attributes_a_type_does_not_carry():
    with pytest.raises(ValueError, match="input_field element has no 'checked'"):
        Element(type="input_field", bbox=[0, 0, 5, 5], checked=True)
    with pytest.raises(ValueError, match="not a shape subtype"):
        Element(type="shape", bbox=[0, 0, 5, 5], subtype="like")
    with pytest.raises(ValueError, match="empty"):
        Element(type="text", bbox=[5, 0, 5, 5])
    assert ElementType.UNKNOWN not in DETECTOR_CLASSES
    assert attributes_of("radio") == ("text", "checked", "indeterminate", "enabled")
    with pytest.raises(ValueError, match="text element has no 'enabled'"):
        Element(type="text", bbox=[0, 0, 5, 5], text="a", enabled=False)
    with pytest.raises(ValueError, match="less than or equal to 1"):
        Element(type="slider", bbox=[0, 0, 50, 5], value=1.5)


def test_the_prompt_shows_the_unusual_states_and_values():
    greyed = Element(type="button", bbox=[0, 0, 50, 20], text="Save", enabled=False)
    usual = Element(type="button", bbox=[0, 0, 50, 20], text="Save", enabled=True)
    assert "enabled: False" in greyed.describe() and "enabled" not in usual.describe()
    mixed = Element(type="checkbox", bbox=[0, 0, 50, 20], text="All", indeterminate=True)
    clear = Element(type="checkbox", bbox=[0, 0, 50, 20], text="All", checked=False, indeterminate=False)
    assert "indeterminate: True" in mixed.describe() and "indeterminate" not in clear.describe()
    assert "value: 0.43" in Element(type="slider", bbox=[0, 0, 90, 10], value=0.4321).describe()
    # A button held down says so; a push button (never down) does not say it is up.
    down = Element(type="button", bbox=[0, 0, 50, 20], text="Bold", checked=True)
    up = Element(type="button", bbox=[0, 0, 50, 20], text="Bold", checked=False)
    assert "checked: True" in down.describe() and "checked" not in up.describe()
    # Elsewhere checked is said both ways: an unticked box is news the agent acts on.
    assert "checked: False" in clear.describe()


def test_json_round_trip_follows_the_observe_contract(tmp_path, dropdown_screen):
    data = dump_elements(dropdown_screen)
    record = data["elements"][0]
    contract = {"id", "type", "bbox", "text", "checked", "focused", "highlighted", "subtype", "score"}
    # The contract's fields are all there; the additions: the reader's text confidence and the
    # states added since (`caap.taxonomy`).
    assert set(record) == contract | {"text_confidence", "expanded", "indeterminate", "enabled", "value"}
    assert record["text_confidence"] is None
    assert record["checked"] is None and record["focused"] is False
    path = tmp_path / "els.json"
    path.write_text(json.dumps(data))
    assert load_elements(path) == dropdown_screen
    # JSON Lines from `caap observe` on several images: the first object is used.
    path.write_text(json.dumps({"image": "a.png", **data}) + "\n" + json.dumps(data) + "\n")
    assert load_elements(path) == dropdown_screen


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"items": []}', 'expected {"elements"'),
        ('{"elements": [{"type": "button", "box": [0,0,5,5]}]}', r"elements\[0\]\.(bbox|box)"),
        ('{"elements": [{"type": "buton", "bbox": [0,0,5,5]}]}', r"elements\[0\]\.type"),
        ('{"elements": [{"type": "button", "bbox": [0,0,5]}]}', r"elements\[0\]\.bbox"),
        ('{"elements": [{"id": 1, "type": "text", "bbox": [0,0,5,5]}, {"id": 1, "type": "text", "bbox": [0,0,5,5]}]}',
         "duplicate element ids"),
    ],
)
def test_bad_element_files_name_file_and_field(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ElementFileError, match=message) as info:
        load_elements(path)
    assert str(path) in str(info.value)


def test_missing_element_file(tmp_path):
    with pytest.raises(ElementFileError, match="no such file"):
        load_elements(tmp_path / "nope.json")


def _el(x, y, w=20, h=10, t="text", text=None):
    return Element(type=t, bbox=[x, y, x + w, y + h], text=text)


def test_reading_order_groups_rows_tolerating_small_offsets():
    a, b, c, d = _el(50, 12, text="b"), _el(5, 10, text="a"), _el(5, 40, text="c"), _el(90, 14, text="b2")
    assert [e.text for e in reading_order([d, c, a, b])] == ["a", "b", "b2", "c"]
    # 10 px apart is a new row with the default tolerance of 5.
    assert [e.text for e in reading_order([_el(50, 10, text="x"), _el(5, 20, text="y")])] == ["x", "y"]


def test_ids_are_stable_vanished_elements_are_marked_and_new_ids_are_fresh():
    tracker = IdTracker()
    dropdown = Element(type="dropdown", bbox=[1, 55, 152, 76], text="Storm")
    submit = Element(type="button", bbox=[1, 80, 98, 112], text="Submit")
    first = tracker.update([submit, dropdown])
    assert [(e.id, e.text) for e in first] == [(1, "Storm"), (2, "Submit")]

    options = [Element(type="tabled_text", bbox=[1, 77 + 16 * i, 152, 92 + 16 * i], text=t)
               for i, t in enumerate(["Selie", "Janella"])]
    second = tracker.update([dropdown, *options])
    by_text = {e.text: e for e in second}
    assert by_text["Storm"].id == 1 and by_text["Selie"].id == 3 and by_text["Janella"].id == 4
    assert by_text["Submit"].id == 2 and by_text["Submit"].visible is False
    assert second[-1].text == "Submit"  # vanished ones come after the visible list

    # The dropdown now shows the choice (same place → same id); Submit reappears with its old id;
    # the options vanish and are carried once.
    third = tracker.update([dropdown.model_copy(update={"text": "Janella"}), submit])
    assert [(e.id, e.text, e.visible) for e in third] == [
        (1, "Janella", True), (2, "Submit", True), (3, "Selie", False), (4, "Janella", False)]
    fourth = tracker.update([submit])
    assert [(e.id, e.visible) for e in fourth] == [(2, True), (1, False)]
    # A brand-new element never reuses an id.
    fifth = tracker.update([submit, _el(0, 0, text="new")])
    assert max(e.id for e in fifth) == 5


def test_scrolled_element_keeps_its_id_by_text_and_size():
    tracker = IdTracker()
    tracker.update([_el(0, 100, 60, 12, "tabled_text", "Cassandry")])
    moved = tracker.update([_el(0, 40, 60, 12, "tabled_text", "Cassandry")])
    assert moved[0].id == 1 and len(moved) == 1


def test_parse_elements_accepts_bare_list():
    els = parse_elements([{"type": "scrollbar", "bbox": [150, 0, 160, 210]}])
    assert els[0].type is ElementType.SCROLLBAR


def test_a_click_on_stacked_buttons_goes_where_only_that_button_is():
    """click-test-2 seed 7: the box of ONE (behind TWO) had its middle on TWO's edge, and the click
    meant for ONE pressed TWO. Each button is clicked in the band of its box the other's box leaves."""
    from caap.elements import click_point

    two = Element(id=2, type="button", bbox=[38, 162, 85, 201], text="TWON")
    one = Element(id=3, type="button", bbox=[55, 157, 98, 199], text="WONE")
    assert click_point(one, [two, one]) == (91, 178)
    assert click_point(two, [two, one]) == (46, 181)
    # Alone, boxed twice (mostly the same box), inside another, or overlapping an element of another
    # type (a label over its field): the centre.
    assert click_point(one, [one]) == one.centre
    twice = Element(id=4, type="button", bbox=[56, 157, 99, 200])
    assert click_point(one, [one, twice]) == one.centre
    panel = Element(id=5, type="button", bbox=[0, 150, 150, 210])
    assert click_point(one, [one, panel]) == one.centre
    label = Element(id=6, type="text", bbox=[38, 162, 85, 201], text="x")
    assert click_point(one, [one, label]) == one.centre
    # A sliver left uncovered is no place to click: the centre.
    sliver = Element(id=7, type="button", bbox=[40, 150, 95, 205])
    assert click_point(one, [one, sliver]) == one.centre


def test_a_planned_click_goes_to_the_click_point():
    from caap.act.actions import ScreenState, plan

    two = Element(id=2, type="button", bbox=[38, 162, 85, 201], text="TWON")
    one = Element(id=3, type="button", bbox=[55, 157, 98, 199], text="WONE")
    planned = plan("click_element", {"element_id": 3}, ScreenState([two, one], 160, 210))
    assert planned.point == (91, 178)


def test_a_check_box_boxed_with_its_label_is_clicked_on_its_control():
    """GTK 3 and Qt toggle a list's or tree's checkable row only where its box is drawn: a click on
    the name picks the row. A check box or radio button boxed with its label is clicked on the
    square of its height at its left; one boxed alone (or a switch) in its middle."""
    from caap.elements import click_point

    row = Element(id=1, type="checkbox", bbox=[138, 1, 188, 22], text="Mei")
    assert click_point(row, [row]) == (148, 11)
    radio = Element(id=2, type="radio", bbox=[6, 55, 70, 70], text="D68QEQ")
    assert click_point(radio, [radio]) == (13, 62)
    alone = Element(id=3, type="checkbox", bbox=[10, 10, 26, 26])
    assert click_point(alone, [alone]) == alone.centre
    button = Element(id=4, type="button", bbox=[138, 1, 188, 22], text="Mei")
    assert click_point(button, [button]) == button.centre


def test_the_number_beside_a_bar_is_its_value_label():
    bar = Element(type="progress_bar", bbox=[10, 40, 230, 50])
    near = Element(type="text", bbox=[236, 38, 266, 52], text="75 %")
    word = Element(type="text", bbox=[10, 20, 60, 32], text="Volume")
    far = Element(type="text", bbox=[400, 40, 420, 52], text="12")
    assert value_labels(bar, [bar, near, word, far]) == [near]
    # Only what has a value has a value label.
    assert value_labels(Element(type="button", bbox=[10, 40, 230, 50], text="OK"), [near]) == []


def test_an_element_retyped_keeps_only_what_its_new_type_carries():
    button = Element(type="button", bbox=(0, 0, 40, 20), text="Bold", focused=True, checked=False)
    box = button.retyped(ElementType.CHECKBOX, checked=True)
    assert (box.type, box.text, box.checked, box.focused) == (ElementType.CHECKBOX, "Bold", True, None)
    assert Element.model_validate(box.model_dump()) == box
    word = Element(type="text", bbox=(0, 0, 40, 20), text="Page 1", highlighted=True)
    assert word.retyped(ElementType.TAB).highlighted is True
    assert word.retyped(ElementType.BUTTON, checked=True).highlighted is None
