"""The scripted planner's text-group policies (caap/testing/planner/policies/text.py): copy and paste, selecting
paragraphs by dragging, and reordering jQuery UI sortables, decided from prompts the real prompter builds."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from scripted_prompts import CHANGED, SAME, act, el, plan, policy_for

import caap.testing.planner.kit as kit
from caap.act.actions import PlannedAction
from caap.elements import Element
from caap.testing.planner import server as sp
from caap.testing.planner.policies import basic, text

Action = tuple[str, dict[str, Any]]






def ran(actions: list[Action], outcome: str = CHANGED, elements: dict[int, Element] | None = None) -> list[
        tuple[PlannedAction, str]]:
    """History entries for planned actions (an element action names its element from ``elements``)."""
    out = []
    for name, args in actions:
        element = elements[args["element_id"]] if elements and "element_id" in args else None
        rest = {k: v for k, v in args.items() if k != "element_id"}
        out.append((act(name, element, **rest), outcome))
    return out






SELECT, COPY, PASTE = ("press_control_A", {}), ("press_control_C", {}), ("press_control_V", {})


def test_tasks_reach_these_policies_not_older_ones() -> None:
    assert policy_for("Copy the text in the textarea below, paste it into the textbox and press Submit.") \
        is text.copy_paste
    assert policy_for("Copy the text from the 2nd text area below and paste it into the text input, then press "
                      "Submit.") is text.copy_paste_2
    assert policy_for("Highlight the text in the paragraph below and click submit.") is text.highlight_text
    assert policy_for("Highlight the text in the 3rd paragraph and click submit.") is text.highlight_text_2
    for where in ("to the top left.", "to the center.", "up by one.", "right by one.", "to the bottom center."):
        assert policy_for(f"Drag Drucy {where}") is text.drag_items_grid
    assert policy_for("Drag Drucy to the top.") is basic.drag_items  # drag-items keeps its own
    assert policy_for("Sort the numbers in increasing order, starting with the lowest number at the top of the "
                      "list.") is text.drag_sort_numbers
    assert set(text.TASKS) <= set(sp.TASKS)


# --- copy and paste ------------------------------------------------------------------------------------------

COPY_TASK = "Copy the text in the textarea below, paste it into the textbox and press Submit."


def copy_screen(area_focused: bool = False, field_text: str = "", field_focused: bool = False) -> list[Element]:
    return [el(1, "text", (3, 3, 129, 14), text="Copy the text in the textarea", highlighted=False),
            el(4, "text_area", (2, 52, 118, 88), text="Eget rhoncus,", focused=area_focused),
            el(5, "scrollbar", (102, 53, 117, 87)),
            el(7, "input_field", (2, 93, 130, 114), text=field_text, focused=field_focused),
            el(8, "button", (2, 117, 98, 148), text="Submit", focused=False)]


def test_copy_paste_runs_the_whole_recipe_and_goes_on_where_the_history_stopped() -> None:
    screen = copy_screen()
    by_id = {e.id: e for e in screen}
    first = plan(COPY_TASK, screen)
    assert first == [("click_element", {"element_id": 4}), SELECT, COPY, ("click_element", {"element_id": 7}),
                     SELECT, PASTE, ("click_element", {"element_id": 8}), kit.done()]
    # The click focused the text area (and the rest was dropped): go on with select-all.
    history = ran(first[:1], CHANGED, by_id)
    assert plan(COPY_TASK, copy_screen(area_focused=True), history) == first[1:]
    # Select-all, copy and the click on the field ran; the field has the focus: select-all and paste.
    history += ran([SELECT], CHANGED) + ran([COPY], SAME) + ran(first[3:4], CHANGED, by_id)
    assert plan(COPY_TASK, copy_screen(field_focused=True), history) == first[4:]
    # Pasted: the field shows the text, submit.
    history += ran([SELECT], SAME) + ran([PASTE], CHANGED)
    pasted = copy_screen(field_text="rhoncus, sed", field_focused=True)
    assert plan(COPY_TASK, pasted, history) == [("click_element", {"element_id": 8}), kit.done()]
    submitted = history + ran([("click_element", {"element_id": 8})], CHANGED, by_id)
    assert plan(COPY_TASK, pasted, submitted) == [kit.done()]


def test_copy_paste_recovers_when_a_step_did_not_take() -> None:
    screen = copy_screen()
    by_id = {e.id: e for e in screen}
    click_area, click_field = ("click_element", {"element_id": 4}), ("click_element", {"element_id": 7})
    # The click left the text area without focus: select-all would take the page, so click it again.
    assert plan(COPY_TASK, copy_screen(), ran([click_area], SAME, by_id))[0] == click_area
    # The field lost the focus after it was clicked: click it again and paste (the clipboard is full).
    history = ran([click_area], CHANGED, by_id) + ran([SELECT, COPY]) + ran([click_field], SAME, by_id)
    assert plan(COPY_TASK, copy_screen(), history) == [click_field, SELECT, PASTE,
                                                       ("click_element", {"element_id": 8}), kit.done()]
    # The whole recipe ran but the field is still empty: start over.
    history += ran([SELECT, PASTE])
    assert plan(COPY_TASK, copy_screen(field_focused=True), history)[:2] == [click_area, SELECT]
    # Something else happened after the click on the text area: start over too.
    stray = ran([click_area], CHANGED, by_id) + ran([("type_text", {"string_to_type": "x"})])
    assert plan(COPY_TASK, copy_screen(area_focused=True), stray)[0] == click_area


def test_copy_paste_2_copies_the_numbered_text_area_from_the_top() -> None:
    task = "Copy the text from the 2nd text area below and paste it into the text input, then press Submit."
    # Ids out of screen order: the 2nd area is the middle one on the screen.
    screen = [el(1, "text", (3, 3, 139, 14), text="Copy the text from the 2nd text", highlighted=False),
              el(9, "text_area", (2, 52, 63, 83), text="", focused=False),
              el(4, "text_area", (2, 118, 118, 149), text="Feugiat", focused=False),
              el(7, "text_area", (2, 85, 68, 116), text="Id", focused=False),
              el(13, "input_field", (2, 154, 130, 175), text="", focused=False),
              el(14, "button", (2, 178, 98, 209), text="Submit", focused=False)]
    actions = plan(task, screen)
    assert actions[0] == ("click_element", {"element_id": 7})
    assert actions[1:6] == [SELECT, COPY, ("click_element", {"element_id": 13}), SELECT, PASTE]
    bad = task.replace("2nd", "4th")
    assert plan(bad, screen)[0][0] == "fail"


# --- selecting paragraphs -----------------------------------------------------------------------------------


def paragraph_screen() -> list[Element]:
    return [el(1, "text", (3, 3, 121, 14), text="Highlight the text in the 1st", highlighted=False),
            el(2, "text", (3, 14, 126, 25), text="paragraph and click submit.", highlighted=False),
            el(3, "button", (7, 57, 103, 88), text="Submit", focused=False),
            el(4, "draggable_text", (12, 103, 121, 114), text="Lacus, interdum pulvinar"),
            el(5, "draggable_text", (12, 114, 94, 125), text="imperdiet. Cursus."),
            el(6, "draggable_text", (12, 135, 131, 146), text="Non, donec morbi. Nunc id"),
            el(7, "draggable_text", (12, 146, 43, 157), text="auctor."),
            el(8, "draggable_text", (12, 167, 139, 178), text="Scelerisque. Duis quisque in"),
            el(9, "draggable_text", (12, 178, 63, 189), text="id senectus")]


def test_highlight_text_2_drags_over_exactly_the_numbered_paragraph() -> None:
    task = "Highlight the text in the 2nd paragraph and click submit."
    actions = plan(task, paragraph_screen())
    # From the left edge of "Non," (line 6) to the right edge of "auctor." (line 7).
    assert actions == [kit.hold(13, 140), kit.move(42, 151), kit.release(), ("click_element", {"element_id": 3}),
                       kit.done()]
    assert plan(task.replace("2nd", "3rd"), paragraph_screen())[:2] == [kit.hold(13, 172), kit.move(62, 183)]
    assert plan(task.replace("2nd", "4th"), paragraph_screen())[0][0] == "fail"


def test_highlight_text_selects_all_lines_and_goes_on_after_a_cut_short_drag() -> None:
    task = "Highlight the text in the paragraph below and click submit."
    screen = [e for e in paragraph_screen() if e.id in (1, 2, 3, 4, 5)]
    screen[0] = el(1, "text", (3, 3, 154, 14), text="Highlight the text in the paragraph", highlighted=False)
    screen[1] = el(2, "text", (3, 14, 106, 25), text="below and click submit.", highlighted=False)
    actions = plan(task, screen)
    assert actions[:3] == [kit.hold(13, 108), kit.move(93, 119), kit.release()]
    # The move changed the screen (the selection shows): the rest of the plan comes next.
    history = ran(actions[:1], SAME) + ran(actions[1:2], CHANGED)
    assert plan(task, screen, history, sp.render(actions, 2)) == actions[2:]
    # Without the previous answer, let go at the end of the paragraph, then submit.
    assert plan(task, screen, history)[:2] == [kit.move(93, 119), kit.release()]
    # Released already: only Submit is left.
    released = history + ran([kit.release()], SAME)
    assert plan(task, screen, released) == [("click_element", {"element_id": 3}), kit.done()]


# --- sortables -------------------------------------------------------------------------------------------------

NAMES = ["Andriana", "Theadora", "Martelle", "Laurette", "Theodosia", "Ayn", "Bernette", "Drucy", "Harriet"]


def grid_screen(task: str, names: list[str] = NAMES) -> list[Element]:
    out = [el(1, "text", (3, 3, 104, 14), text=task, highlighted=False)]
    for k, name in enumerate(names):
        left, top = 10 + 46 * (k % 3), 60 + 46 * (k // 3)
        out.append(el(2 + k, "tabled_text", (left, top, left + 5 * len(name), top + 9), text=name,
                      highlighted=False))
    return out


def test_drag_items_grid_comes_onto_the_goal_from_the_side_that_puts_the_item_there() -> None:
    # Up by one from the bottom centre (cell 8) to the centre (cell 5): before Theodosia, so the last
    # move comes from the right of the grid onto the left half of Theodosia's cell.
    task = "Drag Drucy up by one."
    actions = plan(task, grid_screen(task))
    drucy, theodosia = (56 + 12, 152 + 4), (56, 106)
    assert actions[0] == kit.hold(*drucy)
    (_, start), (_, end) = actions[1], actions[2]
    assert start["x"] > 10 + 46 * 2 + 40 and end["x"] == theodosia[0] + 2 and end["y"] == start["y"] == 110 + 3
    assert actions[3:] == [kit.release(), kit.done()]
    # Right by one from the top left (cell 1) to the top centre (cell 2): after Theadora, from the left.
    task = "Drag Andriana right by one."
    actions = plan(task, grid_screen(task))
    (_, start), (_, end) = actions[1], actions[2]
    assert start["x"] < 10 and 56 + 20 <= end["x"] <= 56 + 36 and end["y"] == 64 + 3
    # Named places: "to the center" is cell 5, "to the center left" cell 4.
    task = "Drag Harriet to the center."
    assert plan(task, grid_screen(task))[2][1]["x"] == 56 + 2
    task = "Drag Harriet to the center left."
    assert plan(task, grid_screen(task))[2][1]["x"] == 10 + 2
    # Impossible: already there, or off the grid.
    task = "Drag Andriana to the top left."
    assert plan(task, grid_screen(task))[0][0] == "fail"


def test_drag_items_grid_goes_on_with_the_drag_it_started() -> None:
    task = "Drag Drucy to the top right."
    screen = grid_screen(task)
    actions = plan(task, screen)
    history = ran(actions[:1], SAME) + ran(actions[1:2], CHANGED)
    assert plan(task, screen, history, sp.render(actions, 2)) == actions[2:]
    assert plan(task, screen, history) == [kit.release()]


def test_drag_items_grid_tells_apart_names_a_line_reader_ran_together() -> None:
    # "Carmencita" runs out of its cell up to "Cecilla" in the next one: the line reader gives one line.
    task = "Drag Cecilla left by one."
    screen = [el(1, "text", (3, 3, 110, 14), text=task, highlighted=False)]
    cells = [("Ofella", 10, 31), ("Gabrielle", 56, 89), ("Anatola", 102, 130), ("Hetti", 10, 27),
             ("Cecil", 56, 74), ("Waneta", 102, 130), ("Harley", 10, 34), ("Carmencita Cecilla", 56, 127)]
    for k, (name, left, right) in enumerate(cells):
        top = 60 + 46 * (k // 3)
        screen.append(el(2 + k, "tabled_text", (left, top, right, top + 9), text=name, highlighted=False))
    actions = plan(task, screen)
    # Cecilla is the bottom right item (cell 9); left by one puts it before Carmencita (cell 8).
    assert actions[0][0] == "drag_mouse_hold_down" and 102 <= actions[0][1]["x"] <= 127
    assert actions[0][1]["y"] == 156 and actions[2] == kit.move(56 + 2, 159)
    # The same when the reader left no space between them.
    screen[-1] = el(9, "tabled_text", (56, 152, 127, 161), text="CarmencitaCecilla", highlighted=False)
    assert plan(task, screen)[2] == kit.move(58, 159)
    # Carmencita itself is found too, in cell 8.
    other = "Drag Carmencita to the top left."
    assert plan(other, screen)[0] == kit.hold(56 + 46 // 3, 156)


def test_split_cells_cuts_at_the_column_edges() -> None:
    line = kit_el(9, "tabled_text", (10, 60, 83, 69), "Jackqueline Noellyn")
    pieces = text.split_cells([line], [10, 56, 102])
    assert [p.text for p in pieces] == ["Jackqueline", "Noellyn"]
    assert pieces[1].box[0] == 56 and pieces[0].box[0] == 10
    # A name with a space inside one cell stays whole.
    whole = kit_el(3, "tabled_text", (10, 60, 40, 69), "Dee Dee")
    assert [p.text for p in text.split_cells([whole], [10, 56, 102])] == ["Dee Dee"]


def kit_el(id: int, type: str, box: tuple[int, int, int, int], value: str) -> text.El:
    return text.El(id=id, type=type, x=(box[0] + box[2]) // 2, y=(box[1] + box[3]) // 2, box=box, text=value)


def moved(values: list[int], i: int, j: int) -> list[int]:
    rest = values[:i] + values[i + 1:]
    return [*rest[:j], values[i], *rest[j:]]


def moves_to_sort(values: list[int]) -> int:
    count = 0
    while (first := text.fewest_moves(values)) is not None:
        values = moved(values, *first)
        count += 1
        assert count < 10
    assert values == sorted(values)
    return count


def test_fewest_moves_sorts_with_as_few_drags_as_possible() -> None:
    assert text.fewest_moves([1, 2, 2, 5]) is None
    assert text.fewest_moves([9, 1, 2, 3]) == (0, 3)  # one drag: the 9 to the bottom
    assert text.fewest_moves([2, 3, 4, 1]) == (3, 0)  # one drag: the 1 to the top
    assert moves_to_sort([4, 3, 2, 1]) == 3
    # Every order of four needs exactly as many drags as items outside its longest increasing run.
    for order in itertools.permutations([10, 20, 30, 40]):
        longest = max(len(c) for n in range(1, 5) for c in itertools.combinations(order, n) if list(c) == sorted(c))
        assert moves_to_sort(list(order)) == 4 - longest


SORT_TASK = "Sort the numbers in increasing order, starting with the lowest number at the top of the list."


def sort_screen(values: list[str]) -> list[Element]:
    rows = [el(4 + k, "tabled_text", (26, 62 + 29 * k, 44, 77 + 29 * k), text=v, highlighted=False)
            for k, v in enumerate(values)]
    return [el(1, "text", (3, 3, 139, 14), text="Sort the numbers in increasing", highlighted=False), *rows,
            el(8, "button", (2, 173, 98, 205), text="Submit", focused=False)]


def test_drag_sort_numbers_drags_one_number_at_a_time_then_submits() -> None:
    # -93, -83, 18, 5: one drag, the 18 down onto the lower half of the 5's row (moving the 5 up would do
    # as well; the search takes the first shortest move it finds).
    screen = sort_screen(["-93", "-83", "18", "5"])
    actions = plan(SORT_TASK, screen)
    assert actions[0] == kit.hold(35, 127) and actions[-1] == kit.release()
    first, last = actions[1][1], actions[2][1]
    assert abs(first["y"] - 127) <= 3  # the drag starts inside its own row
    assert 156 < last["y"] <= 164  # the lower half of the 5's row: after it
    # Mid-drag: the rest of the previous answer.
    history = ran(actions[:1], SAME) + ran(actions[1:2], CHANGED)
    assert plan(SORT_TASK, screen, history, sp.render(actions, 2)) == actions[2:]
    # Moving up lands on the upper half of the goal.
    up = plan(SORT_TASK, sort_screen(["5", "9", "12", "-4"]))
    assert up[0] == kit.hold(35, 156) and 62 <= up[2][1]["y"] < 69
    # Sorted (the released drag left it so): submit.
    released = history + ran([kit.release()], CHANGED)
    done_screen = sort_screen(["-93", "-83", "5", "18"])
    assert plan(SORT_TASK, done_screen, released) == [("click_element", {"element_id": 8}), kit.done()]
    submitted = released + ran([("click_element", {"element_id": 8})], CHANGED, {8: done_screen[-1]})
    assert plan(SORT_TASK, done_screen, submitted) == [kit.done()]


@pytest.mark.parametrize("values", [["3", "1"], ["-1", "-10", "7", "0"]])
def test_drag_sort_numbers_plans_a_drag_while_unsorted(values: list[str]) -> None:
    actions = plan(SORT_TASK, sort_screen(values))
    assert [a[0] for a in actions] == ["drag_mouse_hold_down", "drag_mouse_move", "drag_mouse_move",
                                       "drag_mouse_release"]
