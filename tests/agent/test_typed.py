"""Values the agent typed, read back: the loop's record of what went into which field
(caap/agent/typed.py) and the observer's step that reads a field back with it
(caap/observe/steps/typed.py), on email-inbox's search field typed over the grey "Results" heading."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from caap.act.actions import PlannedAction
from caap.agent.typed import TypedValues
from caap.elements import Element
from caap.observe.observation import Typed
from caap.observe.steps.typed import confirmed, misread_typed_fields

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"
# email-inbox dev seed 4000: `Sonny` typed into the search field, which lies over the grey "Results"
# heading; the reader reads `Snry`, PP-OCR `Sonriy`, PP-OCR on the field's darkest ink `Sonny`.
OVER_HEADING = SCREENS / "email-inbox-typed-over-heading.png"
OVER_HEADING_2 = SCREENS / "email-inbox-typed-over-heading-2.png"
SEARCH = (3, 73, 129, 90)

FIELD = Element(id=1, type="input_field", bbox=(10, 60, 140, 80), text="")
OTHER = Element(id=2, type="input_field", bbox=(10, 100, 140, 120), text="old", focused=True)
BUTTON = Element(id=3, type="button", bbox=(10, 130, 100, 150), text="Submit")
SCREEN = [FIELD, OTHER, BUTTON]


def act(name: str, element: Element | None = None, point: tuple[int, int] | None = None, **args: object) -> PlannedAction:
    return PlannedAction(name, dict(args), element, point)


def follow(*actions: PlannedAction) -> list[Typed]:
    values = TypedValues()
    for a in actions:
        values.after(a, SCREEN)
    return values.typed()


def test_typing_is_followed_field_by_field() -> None:
    # Clicked, all selected, typed: the value replaces whatever the field showed.
    assert follow(act("click_element", FIELD), act("press_control_A"), act("type_text", string_to_type="Sonny")) \
        == [Typed(FIELD.bbox, "Sonny")]
    # Typed on without selecting: added to what the field is known to hold (its reading, then what was typed).
    assert follow(act("click_element", OTHER), act("type_text", string_to_type="er")) == [Typed(OTHER.bbox, "older")]
    assert follow(act("click_element", FIELD), act("type_text", string_to_type="ab"),
                  act("type_text", string_to_type="c")) == [Typed(FIELD.bbox, "abc")]
    # Typing before any click goes to the focused field; a click at a point, to the field under it.
    assert follow(act("type_text", string_to_type="x")) == [Typed(OTHER.bbox, "oldx")]
    assert follow(act("click_new_point", point=(20, 70)), act("press_key", key="ctrl+a"),
                  act("type_text", string_to_type="7")) == [Typed(FIELD.bbox, "7")]
    # A click elsewhere, or Tab, ends typing into the field: the keys that follow are not its.
    assert follow(act("click_element", FIELD), act("click_element", BUTTON), act("type_text", string_to_type="x")) == []
    assert follow(act("click_element", FIELD), act("press_key", key="tab"), act("type_text", string_to_type="x")) == []
    # Keys that edit the value otherwise forget it; two fields keep their own values.
    assert follow(act("click_element", FIELD), act("type_text", string_to_type="ab"),
                  act("press_key", key="backspace")) == []
    assert follow(act("click_element", FIELD), act("type_text", string_to_type="ab"), act("press_control_V")) == []
    assert follow(act("click_element", FIELD), act("type_text", string_to_type="a"), act("click_element", OTHER),
                  act("press_control_A"), act("type_text", string_to_type="b")) \
        == [Typed(FIELD.bbox, "a"), Typed(OTHER.bbox, "b")]


def test_only_fields_read_otherwise_than_typed_are_looked_at_again() -> None:
    moved = Element(type="input_field", bbox=(11, 61, 141, 81), text="Snry")  # the field a pixel off: still it
    assert misread_typed_fields([moved, BUTTON], [Typed(FIELD.bbox, "Sonny")]) == [(0, "Sonny")]
    assert misread_typed_fields([moved.model_copy(update={"text": "Sonny"})], [Typed(FIELD.bbox, "Sonny")]) == []
    assert misread_typed_fields([BUTTON], [Typed(BUTTON.bbox, "Submit!")]) == []  # a button is typed into by no one
    far = Element(type="input_field", bbox=(10, 100, 140, 120), text="x")
    assert misread_typed_fields([far], [Typed(FIELD.bbox, "Sonny")]) == []
    assert confirmed(" Sonny ", [], "Sonny") and not confirmed("sonny", [], "Sonny")
    assert not confirmed("Sonny.", ["Sonny."], "Sonny")  # a letter more
    # The darkest ink's reading misses the r that the field as drawn shows: confirmed together.
    assert confirmed("Anne-Coinne", ["ArneCorinne", "ArneCorinne"], "Anne-Corinne")
    # What the darkest ink shows more (the hyphen, an n) or what no reading shows (a value cut short,
    # letters the page changed) is not typed there.
    for other in ("AnneCorinne", "Ann-Corinne", "Anne-Corinn", "Anne-Corrine", "Anne-Corinnes"):
        assert not confirmed("Anne-Coinne", ["ArneCorinne", "ArneCorinne"], other), other
    assert not confirmed("Xyz-Qwerty", ["Anne-Corinne"], "Anne-Corinne!")  # far off, and a letter unseen


def search_field(observer, typed: list[Typed]) -> str | None:
    found = observer.observe(Image.open(OVER_HEADING), typed=typed).elements
    fields = [e for e in found if e.type.value == "input_field"]
    assert len(fields) == 1
    return fields[0].text


def test_a_value_whose_readings_each_miss_a_letter_is_read_back(miniwob_observer) -> None:
    """email-inbox-nl-turk dev seed 4004: ``Anne-Corinne`` over the heading; the reader and PP-OCR
    read ``ArneCorinne``, PP-OCR in the darkest ink ``Anne-Coinne``."""
    found = miniwob_observer.observe(Image.open(OVER_HEADING_2), typed=[Typed((5, 72, 130, 90), "Anne-Corinne")])
    assert [e.text for e in found.elements if e.type.value == "input_field"] == ["Anne-Corinne"]
    found = miniwob_observer.observe(Image.open(OVER_HEADING_2), typed=[Typed((5, 72, 130, 90), "AnneCorinne")])
    assert [e.text for e in found.elements if e.type.value == "input_field"] != ["AnneCorinne"]


def test_a_value_typed_over_a_grey_heading_is_read_back(miniwob_observer) -> None:
    assert search_field(miniwob_observer, [Typed(SEARCH, "Sonny")]) == "Sonny"
    # What the field does not show is not read into it: the readers' letters decide, not the agent.
    for other in ("Sunny", "Sonn", "Sonnys", "sonny"):
        assert search_field(miniwob_observer, [Typed(SEARCH, other)]) != other
    # Typed into some other field: this one is read as it is.
    assert search_field(miniwob_observer, [Typed((3, 120, 129, 137), "Sonny")]) != "Sonny"


def test_a_value_painting_out_the_heading_took_a_letter_of_is_read_back_from_the_screen(miniwob_observer) -> None:
    """email-inbox-nl-turk dev seeds 4022 and 4030: the step that paints a field's stray ink over
    took a letter of the typed value with the grey heading (PP-OCR read ``Jore``, ``-erza``); the
    screen as taken still shows it (``Jörielts``; ``Ferza`` in its darkest ink, ``Felizą`` as drawn)."""
    for name, value, wrong in (("email-inbox-typed-over-heading-painted.png", "Jorie", "Jokie"),
                               ("email-inbox-typed-over-heading-painted-2.png", "Feliza", "Fexiza")):
        image = Image.open(SCREENS / name)
        found = miniwob_observer.observe(image, typed=[Typed((3, 72, 128, 90), value)]).elements
        assert [e.text for e in found if e.type.value == "input_field"] == [value]
        found = miniwob_observer.observe(image, typed=[Typed((3, 72, 128, 90), wrong)]).elements
        assert [e.text for e in found if e.type.value == "input_field"] != [wrong]  # a letter no reading shows
