"""Finding a remembered element on the current screen (replay and the action cache)."""

from __future__ import annotations

from caap.elements import Element
from caap.observe.grounding import describe_miss, locate, text_similarity
from caap.taxonomy import ElementType

SIZE = (160, 210)


def el(kind: str, box, text=None, **kw) -> Element:
    return Element(type=ElementType(kind), bbox=box, text=text, **kw)


def test_text_match_survives_a_move_and_an_ocr_typo_but_not_another_word():
    target = el("button", (10, 10, 60, 30), "Submit")
    screen = [el("button", (90, 150, 140, 170), "Subrnit"), el("button", (10, 10, 60, 30), "Cancel")]
    found = locate(target, screen, screen_size=SIZE)
    assert found is not None and found.element.text == "Subrnit" and found.shift_px > 100
    assert locate(target, [screen[1]], screen_size=SIZE) is None
    assert text_similarity("Submit ", "submit") == 1.0


def test_type_must_agree_unless_lifted():
    target = el("hyperlink", (10, 10, 60, 30), "next")
    screen = [el("text", (10, 10, 60, 30), "next")]
    assert locate(target, screen, screen_size=SIZE) is None
    assert locate(target, screen, screen_size=SIZE, same_type=False).element is screen[0]
    assert "no hyperlink on the screen" in describe_miss(target, screen)


def test_textless_elements_match_by_position_and_size():
    target = el("checkbox", (10, 50, 22, 62), checked=False)
    near, far = el("checkbox", (12, 52, 24, 64), checked=True), el("checkbox", (120, 180, 132, 192))
    assert locate(target, [far, near], screen_size=SIZE).element is near
    assert locate(target, [far], screen_size=SIZE) is None  # more than a quarter of the diagonal away
    assert locate(target, [el("checkbox", (10, 50, 60, 100))], screen_size=SIZE) is None  # 4x larger


def test_the_nearer_of_two_equal_texts_wins_and_a_perfect_tie_is_ambiguous():
    target = el("button", (10, 10, 60, 30), "OK")
    a, b = el("button", (12, 10, 62, 30), "OK"), el("button", (100, 10, 150, 30), "OK")
    assert locate(target, [b, a], screen_size=SIZE).element is a
    mirror = el("button", (8, 10, 58, 30), "OK")  # as far to the left as a is to the right
    assert locate(target, [a, mirror], screen_size=SIZE) is None


def test_a_short_label_is_matched_by_position_first():
    # Recorded: two checkboxes both misread as "l". Now the second reads differently while a third
    # reads "l": the one still in place is the same element, not the other "l".
    target = el("checkbox", (5, 93, 72, 108), "l")
    screen = [el("checkbox", (5, 55, 52, 70), "l"), el("checkbox", (5, 93, 72, 108), "ZBq")]
    assert locate(target, screen, screen_size=SIZE).element is screen[1]
    # A short real word that moved is still found by its text, and the nearer of two by position.
    ok = el("button", (10, 10, 50, 30), "OK")
    moved = [el("button", (80, 150, 120, 170), "OK"), el("button", (10, 40, 50, 60), "No")]
    assert locate(ok, moved, screen_size=SIZE).element is moved[0]
    assert locate(ok, moved[1:], screen_size=SIZE).element is moved[1]  # nothing reads "OK": the nearest
    far = [el("button", (110, 180, 150, 200), "No")]
    assert locate(ok, far, screen_size=SIZE) is None
    assert "of a similar size near [30, 20]" in describe_miss(ok, far)


def test_a_match_still_in_place_beats_a_better_text_far_away():
    clicked = el("tab", (746, 12, 871, 44), "Page 3")
    here = el("tab", (746, 12, 871, 44), "Pege 3")  # read with a typo where it was
    far = el("tab", (836, 720, 906, 750), "page 3")  # another tab, its text folding to the same
    found = locate(clicked, [far, here], screen_size=(1024, 768))
    assert found is not None and found.element is here
    assert locate(clicked, [far], screen_size=(1024, 768)).element is far  # moved: the text decides
