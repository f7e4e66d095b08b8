"""The scripted planner's menus-group policies (caap/testing/planner/policies/menus.py), on prompts built by the
real prompter: what they plan for a screen and a history, including when an earlier step did not take."""

from __future__ import annotations

from typing import Any

from scripted_prompts import CHANGED, SAME, act, el, plan, policy_for

import caap.testing.planner.kit as kit
from caap.elements import Element
from caap.testing.planner import server as sp
from caap.testing.planner.policies import menus


def clicks(e: Element) -> tuple[str, dict[str, Any]]:
    return ("click_element", {"element_id": e.id})


SUBMIT = el(20, "button", (5, 180, 101, 205), text="Submit", focused=False)


# --- dispatch ------------------------------------------------------------------------------------------


def test_each_task_text_reaches_its_policy() -> None:
    texts = {
        "Find and click on the center of the circle, then press submit.": menus.circle_center,
        "Select Martelle": menus.click_menu,
        "Select Dee Dee>Anne-Marie>Terza": menus.click_menu,
        'Click the "Menu" button, and then find and click on the item labeled "Zoom Out".': menus.click_menu_2,
        'Click the "Menu" button, and then find and click on the item with the icon.': menus.click_menu_2,
        "Select Corrine, Catherine from the scroll list and click Submit.": menus.click_scroll_list,
        "Guess the number between 0-9 and press Submit. Use the feedback below to find the right number.":
            menus.guess_number,
        "Select -7 with the spinner and hit Submit.": menus.use_spinner,
        "Resize the textarea so that the width is larger than its initial size then press Submit.":
            menus.resize_textarea,
        "Find the last word in the text area, enter it into the text field and hit Submit.": menus.scroll_text,
        "Scroll the textarea to the bottom of the text hit submit.": menus.scroll_text_2,
        "Enter the value that corresponds with each label into the form and submit when done.": menus.read_table_2,
    }
    for text, fn in texts.items():
        assert policy_for(text) is fn, text
    # Other tasks that start with "Select" are not taken for a menu path.
    for text in ("Select the following color", "Select 5 with the slider and hit Submit.",
                 "Select Catherine from the list and click Submit.", "Select Ab, Cd and click Submit."):
        assert policy_for(text) is not menus.click_menu, text
    assert set(menus.TASKS) <= set(sp.TASKS)


# --- circle-center --------------------------------------------------------------------------------------


def test_circle_center_clicks_the_circle_then_submits() -> None:
    task = "Find and click on the center of the circle, then press submit."
    circle = el(3, "shape", (13, 101, 63, 151), subtype="circle")
    dot = el(5, "shape", (35, 123, 42, 130), subtype="point")
    assert plan(task, [circle, SUBMIT]) == [clicks(circle), clicks(SUBMIT), kit.done()]
    # The click left a dot and the screen changed, so Submit was dropped: it comes now.
    assert plan(task, [circle, dot, SUBMIT], [(act("click_element", circle), CHANGED)]) == [clicks(SUBMIT), kit.done()]
    # A click that changed nothing is made again.
    assert plan(task, [circle, SUBMIT], [(act("click_element", circle), SAME)])[0] == clicks(circle)


# --- click-menu, click-menu-2 ----------------------------------------------------------------------------


def rows(*named: tuple[int, str, int, int]) -> list[Element]:
    """Menu rows: (id, text, left x, top y), 11 pixels high."""
    return [el(i, "tabled_text", (x, y, x + 40, y + 11), text=t, highlighted=False) for i, t, x, y in named]


def test_click_menu_points_along_the_path_then_clicks_the_leaf() -> None:
    task = "Select Alvera>Terza>Ludovika"
    top = rows((2, "Andriana", 10, 59), (3, "Alvera", 10, 76), (4, "Laurette", 10, 93))
    alvera = top[1]
    assert plan(task, top) == [("point_element", {"element_id": 3})]
    sub = rows((5, "Terza", 70, 76), (6, "Mia", 70, 93))
    assert plan(task, top + sub, [(act("point_element", alvera), CHANGED)]) == [("point_element", {"element_id": 5})]
    leaf = rows((7, "Ludovika", 120, 76))
    history = [(act("point_element", alvera), CHANGED), (act("point_element", sub[0]), CHANGED)]
    assert plan(task, top + sub + leaf, history) == [("click_element", {"element_id": 7}), kit.done()]
    # A submenu shows a moment after the pointer arrives: wait once, then point again.
    assert plan(task, top, [(act("point_element", alvera), SAME)])[0][0] == "wait"
    history = [(act("point_element", alvera), SAME), (act("wait", seconds=0.5), SAME)]
    assert plan(task, top, history) == [("point_element", {"element_id": 3})]
    # A top-level entry is clicked at once.
    assert plan("Select Laurette", top) == [("click_element", {"element_id": 4}), kit.done()]
    # A hyphenated name wraps after its hyphen onto a second row (click-menu seed 7: "Anne-" / "Corinne").
    wrapped = rows((2, "Joana", 10, 59), (3, "Anne-", 10, 76), (4, "Corinne", 10, 87))
    assert plan("Select Anne-Corinne", wrapped) == [("click_element", {"element_id": 3}), kit.done()]


def test_click_menu_2_opens_the_menu_and_its_submenu() -> None:
    task = 'Click the "Menu" button, and then find and click on the item labeled "{}".'
    button = el(4, "button", (5, 164, 55, 185), text="Menu", focused=False)
    assert plan(task.format("Play"), [button]) == [clicks(button)]
    menu = rows((5, "Save", 26, 59), (6, "Playback", 26, 76), (7, "Print...", 26, 93), (8, "Zoom In", 26, 110),
                (9, "Zoom", 26, 127), (10, "Out", 26, 138))  # "Zoom Out" wraps onto a second row
    assert plan(task.format("Play"), [*menu, button]) == [("point_element", {"element_id": 6})]
    assert plan(task.format("Zoom Out"), [*menu, button]) == [("click_element", {"element_id": 9}), kit.done()]
    assert plan(task.format("Zoom In"), [*menu, button]) == [("click_element", {"element_id": 8}), kit.done()]
    # The icon variant names its entry by the glyph the instruction shows: the observer names glyphs (icon
    # subtypes), and the planner clicks the menu's icon of the same name.
    icon = 'Click the "Menu" button, and then find and click on the item with the icon.'
    words = el(1, "text", (21, 25, 43, 36), text="icon.")
    shown = el(2, "icon", (6, 27, 16, 36), subtype="zoom_out")
    glyphs = [el(11, "icon", (11, 60, 22, 71), subtype="save"), el(12, "icon", (11, 112, 21, 121), subtype="zoom_in"),
              el(13, "icon", (11, 134, 21, 143), subtype="zoom_out")]
    assert plan(icon, [words, shown, button]) == [clicks(button)]
    assert plan(icon, [words, shown, *menu, *glyphs, button]) == [clicks(glyphs[2]), kit.done()]
    # An entry of the submenu: its parent is pointed at first.
    shown_stop = el(2, "icon", (9, 29, 14, 34), subtype="stop")
    assert plan(icon, [words, shown_stop, *menu, *glyphs, button]) == [("point_element", {"element_id": 6})]
    # No named glyph in the instruction: nothing to match, and no guess.
    assert plan(icon, [words, *menu, button])[0][0] == "fail"


# --- click-scroll-list ----------------------------------------------------------------------------------


def scroll_list(names: list[str], selected: tuple[str, ...] = ()) -> list[Element]:
    out = [el(3 + i, "tabled_text", (3, 58 + 17 * i, 136, 75 + 17 * i), text=n, highlighted=n in selected)
           for i, n in enumerate(names)]
    return [*out, el(9, "scrollbar", (136, 58, 151, 146)), el(10, "button", (2, 152, 98, 183), text="Submit",
                                                                 focused=False)]


def test_click_scroll_list_control_clicks_targets_and_scrolls_for_the_rest() -> None:
    task = "Select Catherine, Niue from the scroll list and click Submit."
    first = ["Theodora", "Catherine", "Marilee", "Fredra", "Deeanne"]
    screen = scroll_list(first)
    assert plan(task, screen) == [("control_click_element", {"element_id": 4})]
    # A stray selection is taken off the same way.
    assert plan(task, scroll_list(first, ("Catherine", "Fredra"))) == [("control_click_element", {"element_id": 6})]
    picked = [(act("control_click_element", screen[1]), CHANGED)]
    # Niue is out of view: one wheel click at a time, down first.
    actions = plan(task, scroll_list(first, ("Catherine",)), picked)
    assert actions == [("scroll", {"direction": "down", "amount": 1, "element_id": 5})]
    # At the bottom (a scroll moved nothing) the list is scrolled back up.
    stuck = [*picked, (act("scroll", screen[2], direction="down", amount=1), SAME)]
    assert plan(task, scroll_list(first, ("Catherine",)), stuck)[0][1]["direction"] == "up"
    # Niue shows further down; Catherine, scrolled away, was selected by the earlier click.
    later = scroll_list(["Fredra", "Deeanne", "Bangladesh", "Nauru", "Niue"])
    moved = [*picked, (act("scroll", screen[2], direction="down", amount=1), CHANGED)]
    assert plan(task, later, moved) == [("control_click_element", {"element_id": 7})]
    done = [*moved, (act("control_click_element", later[4]), CHANGED)]
    assert plan(task, scroll_list(["Fredra", "Deeanne", "Bangladesh", "Nauru", "Niue"], ("Niue",)), done) == [
        ("click_element", {"element_id": 10}), kit.done()]
    # A control-click that changed nothing did not select: Catherine is still to find.
    missed = [(act("control_click_element", screen[1]), SAME), (act("scroll", screen[2], direction="down", amount=1),
                                                                CHANGED)]
    assert plan(task, scroll_list(["Fredra", "Deeanne", "Bangladesh", "Nauru", "Niue"], ("Niue",)), missed)[0][
        0] == "scroll"



def test_click_scroll_list_takes_a_name_cut_by_the_lists_edge() -> None:
    """click-scroll-list seeds 3 and 16: the list is too narrow for "Heard Island and McDonald Islands",
    which shows as "Heard Island and McD"; a short row that merely starts the name is not it."""
    task = "Select Heard Island and McDonald Islands, Nicaragua from the scroll list and click Submit."
    shown = scroll_list(["Heard Island and McD.", "Nicaragua", "Heard", "Norway", "Sudan"])
    assert plan(task, shown) == [("control_click_element", {"element_id": 3})]
    picked = scroll_list(["Heard Island and McD.", "Nicaragua", "Heard", "Norway", "Sudan"],
                         ("Heard Island and McD.", "Nicaragua"))
    assert plan(task, picked) == [("click_element", {"element_id": 10}), kit.done()]


# --- guess-number -----------------------------------------------------------------------------------------


GUESS = "Guess the number between 0-9 and press Submit. Use the feedback below to find the right number."


def guess_screen(feedback: str, shown: str, focused: bool) -> list[Element]:
    return [el(5, "text", (13, 72, 147, 83), text=feedback, highlighted=False),
            el(6, "input_field", (11, 107, 50, 128), text=shown, focused=focused),
            el(7, "button", (52, 102, 149, 133), text="Submit", focused=False)]


def test_guess_number_searches_by_halves() -> None:
    first = plan(GUESS, guess_screen("Waiting for your guess...", "", False))
    assert first == [("click_new_point", {"x": 17, "y": 117}), kit.select_all(), kit.type_text("4\n")]
    typed4 = [(act("click_new_point", x=17, y=117), CHANGED), (act("press_control_A"), SAME),
              (act("type_text", string_to_type="4\n"), CHANGED)]
    # The page runs the feedback's number into the word before it.
    assert plan(GUESS, guess_screen("The number is lower than4.", "4", True), typed4) == [
        kit.select_all(), kit.type_text("1\n")]
    # The earlier answer (lower than 4) is read from the next guess being below it.
    typed1 = [*typed4, (act("press_control_A"), CHANGED), (act("press_control_A"), SAME),
              (act("type_text", string_to_type="1\n"), CHANGED)]
    assert plan(GUESS, guess_screen("The number is higher than 1.", "1", True), typed1)[-1] == kit.type_text("2\n")
    assert plan(GUESS, guess_screen("Correct!", "2", True), typed1) == [kit.done()]


def test_guess_number_submits_a_guess_the_page_has_not_answered() -> None:
    assert plan(GUESS, guess_screen("Waiting for your guess...", "4", True)) == [kit.key("enter")]
    unfocused = plan(GUESS, guess_screen("The number is higher than 4.", "6", False))
    assert unfocused == [("click_element", {"element_id": 7})]


# --- use-spinner ------------------------------------------------------------------------------------------


def spinner(value: str, focused: bool) -> list[Element]:
    return [el(4, "input_field", (10, 69, 144, 85), text=value, focused=focused),
            el(5, "button", (138, 67, 154, 77), text="▲", focused=False),
            el(6, "button", (138, 76, 154, 86), text="▼", focused=False),
            el(7, "button", (5, 92, 101, 124), text="Submit", focused=False)]


def test_use_spinner_steps_to_the_value() -> None:
    task = "Select {} with the spinner and hit Submit."
    assert plan(task.format(7), spinner("0", False)) == [("click_element", {"element_id": 5})]
    assert plan(task.format(-3), spinner("0", False)) == [("click_element", {"element_id": 6})]
    # Once the field has the focus, keys: ten at a time when that gets closer, else one.
    assert plan(task.format(7), spinner("1", True)) == [kit.key("pageup")]
    assert plan(task.format(7), spinner("11", True)) == [kit.key("down")]
    assert plan(task.format(-9), spinner("-1", True)) == [kit.key("pagedown")]
    assert plan(task.format(4), spinner("1", True)) == [kit.key("up")]
    assert plan(task.format(7), spinner("7", True)) == [("click_element", {"element_id": 7}), kit.done()]


# --- resize-textarea --------------------------------------------------------------------------------------


def test_resize_textarea_drags_the_corner_and_checks_it_moved() -> None:
    task = "Resize the textarea so that the width is larger than its initial size then press Submit."
    area = el(4, "text_area", (20, 75, 86, 131), text="", focused=False)
    handle = el(5, "resize_handle", (69, 114, 85, 130))
    actions = plan(task, [area, handle, SUBMIT])
    assert actions == [kit.hold(77, 122), kit.move(92, 122), kit.move(107, 122), kit.release()]
    # The agent ran the grab, then asked again: the rest of the drag comes from the previous answer.
    previous = sp.render(actions, 2)
    grabbed = [(act("drag_mouse_hold_down", x=77, y=122), CHANGED)]
    assert plan(task, [area, handle, SUBMIT], grabbed, previous) == actions[1:]
    dragged = [*grabbed, (act("drag_mouse_move", x=92, y=122), CHANGED), (act("drag_mouse_move", x=107, y=122), SAME),
               (act("drag_mouse_release"), CHANGED)]
    wider = [el(4, "text_area", (20, 75, 116, 131), text="", focused=False), el(5, "resize_handle", (99, 114, 115, 130)),
             SUBMIT]
    assert plan(task, wider, dragged) == [clicks(SUBMIT), kit.done()]
    # The corner did not follow: drag again.
    assert plan(task, [area, handle, SUBMIT], dragged)[0] == kit.hold(77, 122)
    # Smaller height: upwards, and never off the screen.
    task = "Resize the textarea so that the height is smaller than its initial size then press Submit."
    assert plan(task, [area, handle, SUBMIT])[2] == kit.move(77, 92)
    low = el(5, "resize_handle", (69, 190, 85, 206))
    grow = "Resize the textarea so that the height is larger than its initial size then press Submit."
    assert plan(grow, [area, low, SUBMIT])[2] == kit.move(77, 205)


def test_resize_textarea_reads_the_areas_edge_when_the_handle_is_hidden() -> None:
    """resize-textarea seeds 3 and 5: the corner was dragged under the Submit button, which covers the
    handle; the text area's own bottom edge shows that it grew."""
    task = "Resize the textarea so that the height is larger than its initial size then press Submit."
    dragged = [(act("drag_mouse_hold_down", x=111, y=141), CHANGED), (act("drag_mouse_move", x=111, y=156), CHANGED),
               (act("drag_mouse_move", x=111, y=171), CHANGED), (act("drag_mouse_release"), CHANGED)]
    grown = el(4, "text_area", (35, 81, 122, 170), text="", focused=False)
    assert plan(task, [grown, SUBMIT], dragged) == [clicks(SUBMIT), kit.done()]
    # The edge a few pixels below the grab (where it was before the drag) is no proof: no handle, no plan.
    same = el(4, "text_area", (35, 80, 121, 152), text="", focused=False)
    assert plan(task, [same, SUBMIT], dragged)[0][0] == "fail"
    # Smaller: the edge now above the point where the corner was grabbed.
    task = "Resize the textarea so that the height is smaller than its initial size then press Submit."
    up = [(act("drag_mouse_hold_down", x=72, y=117), CHANGED), (act("drag_mouse_release"), CHANGED)]
    shrunk = el(4, "text_area", (24, 70, 81, 96), text="", focused=False)
    assert plan(task, [shrunk, SUBMIT], up) == [clicks(SUBMIT), kit.done()]


# --- scroll-text, scroll-text-2 -----------------------------------------------------------------------------


def test_scroll_text_scrolls_to_the_end_then_types_the_last_word() -> None:
    task = "Find the last word in the text area, enter it into the text field and hit Submit."
    top = el(4, "text_area", (2, 54, 158, 155), text="Cursus justo. Facilisis aliquam nisl", focused=False)
    bottom = el(4, "text_area", (2, 54, 158, 155), text="nunc tortor. Placerat.", focused=False)
    bar = el(5, "scrollbar", (142, 55, 157, 154))
    answer = el(7, "input_field", (2, 160, 130, 181), text="", focused=False)
    submit = el(8, "button", (2, 184, 98, 210), text="Submit", focused=False)
    down = ("scroll", {"direction": "down", "amount": 25, "element_id": 4})
    assert plan(task, [top, bar, answer, submit]) == [down]
    # A scroll that still moved the text may have stopped short of the end.
    moved = [(act("scroll", top, direction="down", amount=25), CHANGED)]
    assert plan(task, [bottom, bar, answer, submit], moved) == [down]
    still = [*moved, (act("scroll", bottom, direction="down", amount=25), SAME)]
    actions = plan(task, [bottom, bar, answer, submit], still)
    assert actions == [clicks(answer), kit.select_all(), kit.type_text("Placerat"), clicks(submit), kit.done()]
    # A short text has no scrollbar: its last word is on show already.
    assert plan(task, [bottom, answer, submit])[2] == kit.type_text("Placerat")


def test_scroll_text_2_scrolls_until_the_end_then_submits() -> None:
    task = "Scroll the textarea to the {} of the text hit submit."
    area = el(3, "text_area", (2, 57, 158, 163), text="feugiat sagittis. Aliquam tellus", focused=False)
    submit = el(6, "button", (2, 165, 98, 196), text="Submit", focused=False)
    assert plan(task.format("top"), [area, submit]) == [("scroll", {"direction": "up", "amount": 25, "element_id": 3})]
    moved = [(act("scroll", area, direction="up", amount=25), CHANGED)]
    assert plan(task.format("top"), [area, submit], moved)[0][0] == "scroll"
    still = [*moved, (act("scroll", area, direction="up", amount=25), SAME)]
    assert plan(task.format("top"), [area, submit], still) == [clicks(submit), kit.done()]
    # A scroll the wrong way does not count.
    assert plan(task.format("bottom"), [area, submit], still)[0][1]["direction"] == "down"


# --- read-table-2 -------------------------------------------------------------------------------------------


def test_read_table_2_fills_each_labelled_field_from_the_table() -> None:
    task = "Enter the value that corresponds with each label into the form and submit when done."
    table = [el(4 + 2 * i, "tabled_text", (6, 57 + 16 * i, 50, 68 + 16 * i), text=k, highlighted=False)
             for i, k in enumerate(["Gender", "Last name", "Color"])]
    table += [el(5 + 2 * i, "tabled_text", (98, 57 + 16 * i, 130, 68 + 16 * i), text=v, highlighted=False)
              for i, v in enumerate(["Male", "Nielsen", "orange"])]
    form = [el(14, "text", (5, 137, 32, 148), text="Color:", highlighted=False),
            el(15, "input_field", (70, 137, 158, 151), text="", focused=False),
            el(16, "text", (5, 152, 55, 163), text="Last name:", highlighted=False),
            el(17, "input_field", (70, 152, 158, 166), text="", focused=False),
            el(18, "button", (5, 167, 101, 198), text="Submit", focused=False)]
    actions = plan(task, table + form)
    assert [a for a in actions if a[0] == "type_text"] == [kit.type_text("orange"), kit.type_text("Nielsen")]
    assert actions[-2:] == [("click_element", {"element_id": 18}), kit.done()]
    # A field that holds its value already is left alone.
    form[1] = el(15, "input_field", (70, 137, 158, 151), text="orange", focused=False)
    assert [a for a in plan(task, table + form) if a[0] == "type_text"] == [kit.type_text("Nielsen")]


def labelled_form(first_id: int, top: int, labels: list[str]) -> list[Element]:
    """read-table-2's form: a label and a field a row, 15 px apart from ``top``, then Submit."""
    rows: list[Element] = []
    for k, label in enumerate(labels):
        y = top + 15 * k
        rows += [el(first_id + 2 * k, "text", (5, y, 5 + min(60, 5 * len(label)), y + 11), text=label + ":",
                    highlighted=False),
                 el(first_id + 2 * k + 1, "input_field", (70, y, 158, y + 14), text="", focused=False)]
    y = top + 15 * len(labels)
    return [*rows, el(first_id + 2 * len(labels), "button", (5, y, 101, y + 31), text="Submit", focused=False)]


def test_read_table_2_reads_a_row_run_together_into_one_line() -> None:
    task = "Enter the value that corresponds with each label into the form and submit when done."
    screen = [el(9, "tabled_text", (6, 89, 53, 100), text="Last name", highlighted=False),
              el(10, "tabled_text", (59, 89, 89, 100), text="Farrell", highlighted=False),
              el(11, "tabled_text", (6, 105, 80, 116), text="First name Anni", highlighted=False),
              *labelled_form(13, 137, ["Last name", "First name"])]
    typed = [a for a in plan(task, screen) if a[0] == "type_text"]
    assert typed == [kit.type_text("Farrell"), kit.type_text("Anni")]


def test_read_table_2_reads_cells_whose_text_wraps() -> None:
    """A key or value too long for its cell wraps onto two lines (``Year of`` / ``Birth``,
    ``Trinidad and`` / ``Tobago``); a row's cells are centred on each other, so the value's first line
    starts above the one-line key and the rows above and below stay out of it, even where the
    boxes sit a pixel off centre (``Tobago``) as a reader's may."""
    task = "Enter the value that corresponds with each label into the form and submit when done."
    cells = [(9, 59, 33, 70, "Color"), (65, 59, 100, 70, "maroon"), (65, 73, 122, 84, "Trinidad and"),
             (9, 78, 45, 90, "Country"), (65, 85, 99, 94, "Tobago"), (9, 98, 46, 109, "Religion"),
             (65, 98, 116, 109, "Christianity"), (9, 112, 41, 123, "Year of"), (65, 117, 89, 129, "2012"),
             (9, 123, 33, 134, "Birth"), (9, 137, 40, 148, "Gender"), (65, 137, 88, 148, "Male")]
    table = [el(3 + i, "tabled_text", (x1, y1, x2, y2), text=t, highlighted=False)
             for i, (x1, y1, x2, y2, t) in enumerate(cells)]
    form = labelled_form(20, 160, ["Country", "Year of Birth", "Gender"])
    typed = [a for a in plan(task, table + form) if a[0] == "type_text"]
    assert typed == [kit.type_text("Trinidad and Tobago"), kit.type_text("2012"), kit.type_text("Male")]
    # read-table asks for one key the same way.
    one = plan("Enter the value of Country into the text field and press Submit.",
               [*table, el(21, "input_field", (70, 160, 158, 174), text="", focused=False), form[-1]])
    assert [a for a in one if a[0] == "type_text"] == [kit.type_text("Trinidad and Tobago")]
