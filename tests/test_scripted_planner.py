"""The scripted MiniWoB++ planner (caap.testing.planner): reading CAAP prompts built by the real
prompter, the policies' decisions, and the server answering the official openai client."""

from __future__ import annotations

import pytest
from scripted_prompts import CHANGED, SAME, act, el, plan, prompt_text

import caap.testing.planner.kit as kit
from caap.act.actions import tool_schemas
from caap.decide.parser import ToolCall, parse_reply
from caap.elements import Element
from caap.testing.planner import server as sp

# --- reading the prompt -------------------------------------------------------------------------------


def test_parse_prompt_reads_task_elements_and_flags() -> None:
    tricky = 'say "hi" \\ back\\slash, ünïcödé ✓ {x: 1}, checked: True'
    elements = [
        el(1, "text", (3, 3, 107, 14), text='Click on the "OK" button.'),
        el(2, "checkbox", (6, 55, 43, 70), text="AU", checked=True),
        el(3, "input_field", (2, 53, 130, 74), text=tricky, focused=False),
        el(4, "shape", (13, 54, 41, 82), subtype="rectangle"),
        el(5, "resize_handle", (117, 121, 127, 131)),
        el(6, "button", (2, 85, 98, 116), text="Gone", focused=False, visible=False),
        el(7, "dropdown", (2, 57, 152, 76), text="", focused=True),
    ]
    p = kit.parse_prompt(prompt_text('Click on the "OK" button.', elements))
    assert p.task == 'Click on the "OK" button.'
    assert [e.id for e in p.elements] == [1, 2, 3, 4, 5, 7]  # the invisible one is dropped
    by_id = {e.id: e for e in p.elements}
    assert by_id[1].text == 'Click on the "OK" button.'
    assert by_id[2].type == "checkbox" and by_id[2].checked is True and by_id[2].box == (6, 55, 43, 70)
    assert (by_id[2].x, by_id[2].y) == Element(type="checkbox", bbox=[6, 55, 43, 70]).centre
    assert by_id[3].text == tricky and by_id[3].focused is False and by_id[3].checked is None
    assert by_id[4].subtype == "rectangle" and by_id[4].text is None
    assert by_id[5].type == "resize_handle"
    assert by_id[7].text == "" and by_id[7].focused is True
    assert p.steps == [] and p.next_number == 2


def test_parse_prompt_reads_history_and_previous_answer() -> None:
    box = el(3, "input_field", (2, 53, 130, 74), text='a "quoted", string_to_type: x', focused=True)
    submit = el(4, "button", (2, 85, 98, 116), text="Submit", focused=False)
    history = [
        (act("click_element", box), CHANGED),
        (act("type_text", string_to_type='He said "no", then \\ left'), CHANGED + "; the 1 action(s) planned after it were dropped"),
        (act("drag_mouse_hold_down", x=10, y=20), SAME),
        (act("press_control_A"), SAME),
        (act("scroll", submit, direction="down", amount=3), SAME),
    ]
    previous = sp.render([("drag_mouse_move", {"x": 11, "y": 22}), ("drag_mouse_release", {})], 6)
    p = kit.parse_prompt(prompt_text("Focus into the textbox.", [box, submit], history, previous))
    assert [s.number for s in p.steps] == [2, 3, 4, 5, 6] and p.next_number == 7
    click, typed, hold, select_all, scroll = p.steps
    assert click.name == "click_element" and click.element is not None
    assert click.element.id == 3 and click.element.text == box.text and click.element.focused is True
    assert click.args == {} and click.changed
    assert typed.args == {"string_to_type": 'He said "no", then \\ left'} and typed.element is None
    assert typed.outcome.startswith("the screen changed; the 1 action")
    assert hold.point == (10, 20) and not hold.changed
    assert select_all.name == "press_control_A" and select_all.args == {}
    assert scroll.element is not None and scroll.element.text == "Submit"
    assert scroll.args == {"direction": "down", "amount": 3}
    assert [(a.number, a.name, a.args) for a in p.previous] == [
        (6, "drag_mouse_move", {"x": 11, "y": 22}), (7, "drag_mouse_release", {})]


def test_parse_prompt_survives_trimmed_history() -> None:
    text = prompt_text("Click button ONE.", [el(1, "button", (4, 60, 44, 100), text="ONE", focused=False)])
    text = text.replace("action_1: {name: start}",
                        "action_1: {name: start}\n(action_2 to action_7 omitted to save space)\n"
                        "action_8: {name: press_key, arg: {key: \"enter\"}} -> no visible change")
    p = kit.parse_prompt(text)
    assert len(p.steps) == 1 and p.steps[0].args == {"key": "enter"} and p.next_number == 9


# --- policies ---------------------------------------------------------------------------------------


def test_unknown_task_fails() -> None:
    actions = plan("Solve the crossword.", [el(1, "text", (3, 3, 100, 14), text="Solve the crossword.")])
    assert actions[0][0] == "fail" and "no policy" in actions[0][1]["reason"]


def test_click_button_then_done() -> None:
    ok = el(2, "button", (2, 85, 98, 116), text="OK", focused=False)
    other = el(3, "button", (2, 120, 98, 150), text="Cancel", focused=False)
    assert plan('Click on the "OK" button.', [other, ok]) == [kit.click(kit.parse_prompt(
        prompt_text("x", [ok])).elements[0]), kit.done()]
    assert plan('Click on the "OK" button.', [other, ok], [(act("click_element", ok), CHANGED)]) == [kit.done()]


def test_click_checkboxes_ticks_what_differs_then_submits() -> None:
    boxes = [
        el(2, "checkbox", (6, 55, 43, 70), text="AU", checked=False),
        el(3, "checkbox", (6, 74, 48, 89), text="HF2", checked=True),   # wrongly ticked
        el(4, "checkbox", (6, 93, 48, 108), text="x7", checked=True),   # rightly ticked
        el(5, "checkbox", (6, 112, 48, 127), text="q", checked=False),
    ]
    submit = el(6, "button", (2, 130, 98, 160), text="Submit", focused=False)
    actions = plan("Select AU, x7 and click Submit.", [*boxes, submit])
    assert actions == [("click_element", {"element_id": 2}), ("click_element", {"element_id": 3}),
                       ("click_element", {"element_id": 6}), kit.done()]
    nothing = plan("Select nothing and click Submit.", [*boxes, submit])
    assert [a[1].get("element_id") for a in nothing] == [3, 4, 6, None]


def test_click_option_picks_the_radio() -> None:
    radios = [el(2, "radio", (7, 55, 44, 70), text="AU", checked=False),
              el(3, "radio", (7, 73, 72, 88), text="gHF2pKy", checked=False)]
    submit = el(4, "button", (2, 99, 98, 130), text="Submit", focused=False)
    assert plan("Select gHF2pKy and click Submit.", [*radios, submit]) == [
        ("click_element", {"element_id": 3}), ("click_element", {"element_id": 4}), kit.done()]


def test_click_checkboxes_soft_uses_synonyms() -> None:
    boxes = [el(2, "checkbox", (6, 55, 48, 70), text="stop", checked=False),
             el(3, "checkbox", (6, 74, 75, 89), text="delectable", checked=False),
             el(4, "checkbox", (6, 93, 51, 108), text="quiet", checked=False)]
    submit = el(5, "button", (2, 177, 98, 208), text="Submit", focused=False)
    actions = plan("Select words similar to mild, delicious and click Submit.", [*boxes, submit])
    assert [a[1].get("element_id") for a in actions] == [3, 4, 5, None]


def test_login_fills_fields_in_order_and_recovers() -> None:
    task = 'Enter the username "karrie" and the password "AU" into the text fields and press login.'
    screen = [
        el(4, "text", (2, 62, 51, 73), text="Username"),
        el(5, "input_field", (7, 78, 135, 99), text="", focused=False),
        el(6, "text", (2, 114, 50, 125), text="Password"),
        el(7, "input_field", (7, 130, 115, 151), text="", focused=False),
        el(8, "button", (2, 166, 89, 197), text="Login", focused=False),
    ]
    first = plan(task, screen)
    assert first[:3] == [("click_element", {"element_id": 5}), ("press_control_A", {}), kit.type_text("karrie")]
    assert first[-2:] == [("click_element", {"element_id": 8}), kit.done()]
    # The username holds its value; the password field is focused but empty: type there.
    screen[1] = el(5, "input_field", (7, 78, 135, 99), text="karrie", focused=False)
    screen[3] = el(7, "input_field", (7, 130, 115, 151), text="", focused=True)
    assert plan(task, screen)[:2] == [("press_control_A", {}), kit.type_text("AU")]
    # Both hold their values (the password shows bullets): log in.
    screen[3] = el(7, "input_field", (7, 130, 115, 151), text="••", focused=True)
    assert plan(task, screen) == [("click_element", {"element_id": 8}), kit.done()]
    # A wrong username is replaced.
    screen[1] = el(5, "input_field", (7, 78, 135, 99), text="karie", focused=False)
    assert plan(task, screen)[0] == ("click_element", {"element_id": 5})
    # After the login button was clicked: done.
    assert plan(task, screen, [(act("click_element", screen[4]), CHANGED)]) == [kit.done()]


def test_login_popup_is_cancelled() -> None:
    task = 'Enter the username "ida" and the password "x7" into the text fields and press login.'
    screen = [el(9, "text", (10, 70, 150, 85), text="Exit to home page?"),
              el(10, "button", (20, 150, 50, 170), text="OK", focused=False),
              el(11, "button", (60, 150, 110, 170), text="Cancel", focused=False)]
    assert plan(task, screen) == [("click_element", {"element_id": 11})]


def test_enter_text_2_changes_case() -> None:
    screen = [el(4, "input_field", (2, 53, 130, 74), text="", focused=True),
              el(5, "button", (2, 85, 98, 116), text="Submit", focused=False)]
    actions = plan('Type "agustina" in all upper case letters in the text input and press Submit.', screen)
    assert actions[:2] == [("press_control_A", {}), kit.type_text("AGUSTINA")]


def test_choose_list_types_the_option() -> None:
    task = "Select Helli from the list and click Submit."
    closed = [el(3, "dropdown", (2, 57, 152, 76), text="Theodora", focused=False),
              el(4, "button", (2, 81, 98, 112), text="Submit", focused=False)]
    assert plan(task, closed)[:3] == [("click_element", {"element_id": 3}), kit.type_text("Helli"), kit.key("enter")]
    opened = [el(3, "dropdown", (2, 57, 152, 76), text="Theodora", focused=True),
              el(5, "tabled_text", (3, 77, 151, 101), text="Theodora", highlighted=True),
              el(6, "tabled_text", (3, 101, 151, 125), text="Helli", highlighted=False)]
    assert plan(task, opened, [(act("click_element", closed[0]), CHANGED)]) == [kit.type_text("Helli"),
                                                                                kit.key("enter")]
    # The enter was dropped after typing changed the screen: press it now.
    history = [(act("click_element", closed[0]), CHANGED), (act("type_text", string_to_type="Helli"), CHANGED)]
    assert plan(task, opened, history) == [kit.key("enter")]
    chosen = [el(3, "dropdown", (2, 57, 152, 76), text="Helli", focused=True), closed[1]]
    assert plan(task, chosen) == [("click_element", {"element_id": 4}), kit.done()]


def test_click_link_clicks_inside_a_line_of_text_and_moves_on() -> None:
    task = 'Click on the link "eget".'
    line = el(2, "text", (2, 52, 134, 63), text="Donec ridiculus eget rhoncus,")
    screen = [el(1, "text", (3, 3, 107, 14), text=task), line,
              el(3, "text", (2, 63, 133, 74), text="pellentesque nasceturegetnon,")]
    first = plan(task, screen)
    assert first[0][0] == "click_new_point"
    x, y = first[0][1]["x"], first[0][1]["y"]
    assert y == 57 and 70 < x < 100  # "eget" is the third word of the line
    # That one was plain text (nothing happened): the run-together one is next.
    second = plan(task, screen, [(act("click_new_point", x=x, y=y), SAME)])
    assert second[0][0] == "click_new_point" and second[0][1]["y"] == 68
    # A hyperlink element is clicked directly; once the screen changed, done.
    link = el(4, "hyperlink", (30, 80, 50, 90), text="eget")
    assert plan(task, [*screen, link]) == [("click_element", {"element_id": 4})]
    assert plan(task, [*screen, link], [(act("click_element", link), CHANGED)]) == [kit.done()]


def test_words_run_together_are_split_only_into_words() -> None:
    p = kit.parse_prompt(prompt_text('Click on the link "nec".', [
        el(2, "text", (2, 52, 134, 63), text="donec velnecornare est,ut"),
    ]))
    assert len(kit.word_points(p, "nec")) == 1  # in "velnecornare", not in "donec"
    assert kit.word_points(p, "est") == []  # "est,ut" holds "est,"


def test_drag_items_plans_the_whole_drag_and_goes_on_from_the_previous_answer() -> None:
    task = "Drag Theodosia to the 3rd position."
    names = ["Andriana", "Theadora", "Martelle", "Laurette", "Theodosia"]
    rows = [el(3 + i, "tabled_text", (26, 62 + 29 * i, 75, 77 + 29 * i), text=n, highlighted=False)
            for i, n in enumerate(names)]
    actions = plan(task, rows)
    assert actions[0] == kit.hold(*rows[4].centre) and actions[-2:] == [kit.release(), kit.done()]
    assert all(a[0] == "drag_mouse_move" for a in actions[1:-2])
    assert actions[-3][1]["y"] < rows[2].centre[1]  # past the middle of the 3rd row, going up
    # The agent ran the hold and the first move, then dropped the rest: the rest comes next.
    previous = sp.render(actions, 2)
    history = [(act(actions[0][0], **actions[0][1]), SAME), (act(actions[1][0], **actions[1][1]), CHANGED)]
    assert plan(task, rows, history, previous) == actions[2:]


def test_drag_box_moves_the_small_box_onto_the_large_one() -> None:
    task = "Drag the smaller box so that it is completely inside the larger box."
    screen = [el(3, "shape", (13, 54, 41, 82), subtype="rectangle"),
              el(4, "shape", (54, 78, 112, 136), subtype="rectangle"),
              el(5, "button", (2, 157, 98, 188), text="Submit", focused=False)]
    actions = plan(task, screen)
    assert actions[0] == kit.hold(27, 68) and kit.move(83, 107) in actions
    assert actions[-3:] == [kit.release(), ("click_element", {"element_id": 5}), kit.done()]


def test_use_autocomplete_waits_for_suggestions_then_picks_one() -> None:
    task = 'Enter an item that starts with "An" and ends with "ica".'
    field = el(4, "input_field", (10, 71, 138, 92), text="An", focused=True)
    submit = el(5, "button", (10, 97, 106, 128), text="Submit", focused=False)
    typed = [(act("type_text", string_to_type="An"), CHANGED)]
    assert plan(task, [field, submit], typed) == [("wait", {"seconds": 1.0})]
    menu = [el(6, "tabled_text", (16, 96, 67, 112), text="Anguilla"),
            el(7, "tabled_text", (16, 118, 79, 134), text="Antarctica"),
            el(8, "tabled_text", (16, 140, 92, 156), text="Antigua and"),
            el(9, "tabled_text", (16, 156, 70, 166), text="Barbuda")]
    assert plan(task, [field, *menu], typed) == [("click_element", {"element_id": 7})]
    barbuda = 'Enter an item that starts with "Ant" and ends with "uda".'
    field = el(4, "input_field", (10, 71, 138, 92), text="Ant", focused=True)
    assert plan(barbuda, [field, *menu], typed) == [("click_element", {"element_id": 8})]
    # Nothing on show fits: a country that does is typed whole.
    mali = 'Enter an item that starts with "Ma" and ends with "ali".'
    field = el(4, "input_field", (10, 71, 138, 92), text="Ma", focused=True)
    macao = [el(6, "tabled_text", (16, 96, 67, 112), text="Macao")]
    assert plan(mali, [field, *macao, submit], typed)[:2] == [("press_control_A", {}), kit.type_text("Mali")]
    # Suggestions left over from before anything was typed are ignored.
    empty = el(4, "input_field", (10, 71, 138, 92), text="", focused=False)
    assert plan(mali, [empty, *macao, submit])[0] == ("click_element", {"element_id": 4})


@pytest.mark.parametrize(("task", "screen", "expected"), [
    ("Click on Tab #2.", [el(2, "hyperlink", (12, 64, 43, 75), text="Tab #1"),
                          el(3, "hyperlink", (56, 64, 87, 75), text="Tab #2")], 3),
    ('Click on a "textarea" widget.', [el(2, "input_field", (2, 80, 130, 101), text="a", focused=False),
                                       el(3, "text_area", (2, 106, 128, 132), text="b", focused=False)], 3),
    ("Focus into the 2nd input textbox.", [el(2, "input_field", (7, 59, 135, 80), text="", focused=False),
                                           el(3, "input_field", (15, 98, 143, 119), text="", focused=False)], 3),
    ('Close the dialog box by clicking the "x".', [el(3, "button", (86, 87, 106, 108), text="×", focused=False)], 3),
    ('Click the button in the dialog box labeled "OK".', [el(6, "button", (43, 148, 97, 169), text="Cancel", focused=True),
                                                         el(7, "button", (100, 148, 137, 169), text="OK", focused=False)], 7),
])
def test_one_click_tasks(task: str, screen: list[Element], expected: int) -> None:
    assert plan(task, screen) == [("click_element", {"element_id": expected}), kit.done()]


def test_click_collapsible_opens_then_submits() -> None:
    task = "Expand the section below and click submit."
    header = el(3, "button", (4, 54, 156, 71), text="Section #2", focused=False)
    closed = [header, el(4, "button", (3, 86, 99, 117), text="Submit", focused=False)]
    assert plan(task, closed) == [("click_element", {"element_id": 3})]
    opened = [header, el(5, "text", (6, 74, 120, 85), text="Donec ridiculus"),
              el(4, "button", (3, 140, 99, 171), text="Submit", focused=False)]
    assert plan(task, opened, [(act("click_element", header), CHANGED)]) == [
        ("click_element", {"element_id": 4}), kit.done()]


def test_click_button_sequence() -> None:
    one = el(3, "button", (4, 60, 44, 100), text="ONE", focused=False)
    two = el(4, "button", (69, 112, 109, 152), text="TWO", focused=False)
    task = "Click button ONE, then click button TWO."
    assert plan(task, [one, two]) == [("click_element", {"element_id": 3}), ("click_element", {"element_id": 4}),
                                      kit.done()]
    assert plan(task, [one, two], [(act("click_element", one), CHANGED)]) == [("click_element", {"element_id": 4}),
                                                                                kit.done()]


def test_stacked_buttons_are_found_by_what_shows_of_their_names() -> None:
    """click-test-2 and click-button-sequence: the buttons cover each other. What shows of ONE is ``ON``
    (seed 17), or its box takes in a letter of TWO in front of it (``WONE``, seed 7)."""
    two = el(3, "button", (108, 64, 149, 105), text="TWO", focused=False)
    on = el(4, "button", (77, 75, 117, 115), text="ON", focused=False)
    assert plan("Click button ONE.", [two, on]) == [("click_element", {"element_id": 4}), kit.done()]
    twon = el(2, "button", (38, 162, 85, 201), text="TWON", focused=False)
    wone = el(3, "button", (55, 157, 98, 199), text="WONE", focused=False)
    assert plan("Click button ONE, then click button TWO.", [twon, wone]) == [
        ("click_element", {"element_id": 3}), ("click_element", {"element_id": 2}), kit.done()]
    # Two candidates that both could be ONE are no answer: the task fails rather than guess.
    o = el(5, "button", (4, 60, 44, 100), text="ON", focused=False)
    n = el(6, "button", (50, 60, 90, 100), text="NE", focused=False)
    assert plan("Click button ONE, then click button TWO.", [two, o, n])[0][0] == "fail"
    # All of ONE's name under TWO (seed 4008: a 2 px band shows): the one button with no name is ONE,
    # while TWO is on show; without TWO, or with two nameless buttons, nothing is.
    sliver = el(7, "button", (16, 109, 56, 111))
    assert plan("Click button ONE.", [two, sliver]) == [("click_element", {"element_id": 7}), kit.done()]
    assert plan("Click button ONE, then click button TWO.", [sliver, two]) == [
        ("click_element", {"element_id": 7}), ("click_element", {"element_id": 3}), kit.done()]
    assert plan("Click button ONE.", [sliver])[0][0] == "fail"
    other = el(8, "button", (60, 109, 90, 111))
    assert plan("Click button ONE.", [two, sliver, other])[0][0] == "fail"
    # ONE clicked, and what showed of it is no longer told apart (its focus ring redrew it): TWO next.
    assert plan("Click button ONE, then click button TWO.", [two], [(act("click_element", sliver), CHANGED)]) == [
        ("click_element", {"element_id": 3}), kit.done()]


# --- the server -------------------------------------------------------------------------------------


def test_server_answers_the_openai_client_in_text_and_tools_mode() -> None:
    openai = pytest.importorskip("openai")
    task = "Select AU and click Submit."
    screen = [el(2, "checkbox", (6, 55, 43, 70), text="AU", checked=False),
              el(3, "button", (2, 101, 98, 132), text="Submit", focused=False)]
    server = sp.serve(0)
    try:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0, timeout=10)
        assert [m.id for m in client.models.list()] == ["scripted"]
        expected = [("click_element", {"element_id": 2}), ("click_element", {"element_id": 3}),
                    ("done", {"reason": "the task is complete"})]

        text = prompt_text(task, screen, mode="text")
        reply = client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": text}])
        parsed = parse_reply(reply.choices[0].message.content, None)
        assert not parsed.errors
        assert [(p.name, p.args, p.number) for p in parsed.proposals] == [(n, a, i) for i, (n, a) in
                                                                          enumerate(expected, start=2)]

        text = prompt_text(task, screen, mode="tools")
        reply = client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": text}],
                                               tools=tool_schemas())
        message = reply.choices[0].message
        assert reply.choices[0].finish_reason == "tool_calls"
        calls = [ToolCall(c.function.name, c.function.arguments, c.id) for c in message.tool_calls]
        parsed = parse_reply(message.content, calls)
        assert not parsed.errors and [(p.name, p.args) for p in parsed.proposals] == expected
        assert "Action_2=(Action: functions.click_element" in (message.content or "")  # the plan, for next time

        for _ in range(30):  # the server keeps only the latest requests
            client.chat.completions.create(model="scripted", messages=[{"role": "user", "content": text}])
        assert len(server.requests) <= 20
    finally:
        server.stop()


# --- tasks whose answer is worked out from the screen ---------------------------------------------------


def test_math_tasks_compute_the_answer() -> None:
    field = el(5, "input_field", (106, 62, 154, 98), text="", focused=True)
    submit = el(6, "button", (32, 118, 128, 149), text="Submit", focused=False)
    arithmetic = "Solve the math problem and type your answer into the textbox. Press submit when done."
    lines = [el(1, "text", (3, 3, 150, 14), text="Solve the math problem and type"),
             el(2, "text", (3, 14, 131, 25), text="your answer into the textbox."),
             el(3, "text", (3, 25, 116, 36), text="Press submit when done.")]
    problem = el(4, "text", (6, 62, 100, 95), text="3 - 7 =")
    assert plan(arithmetic, [*lines, problem, field, submit])[:2] == [("press_control_A", {}), kit.type_text("-4")]
    problem = el(4, "text", (6, 62, 100, 95), text="6 x 7 =")
    assert plan(arithmetic, [*lines, problem, field, submit])[1] == kit.type_text("42")
    algebra = "Solve for x and type your answer into the textbox. Press Submit when done."
    for equation, answer in (("0 + x = 8", "8"), ("x - 3 = 10", "13"), ("3 - x = 10", "-7"), ("x + 9 = 2", "-7")):
        screen = [el(4, "text", (21, 52, 139, 85), text=equation), el(5, "text", (24, 92, 66, 125), text="x ="),
                  field, submit]
        assert plan(algebra, screen)[1] == kit.type_text(answer), equation


def test_read_table_and_find_word() -> None:
    field = el(13, "input_field", (7, 133, 135, 154), text="", focused=False)
    submit = el(14, "button", (7, 154, 103, 185), text="Submit", focused=False)
    table = [el(3, "tabled_text", (9, 59, 43, 70), text="Gender"), el(4, "tabled_text", (91, 59, 114, 70), text="Male"),
             el(5, "tabled_text", (9, 73, 57, 84), text="Last name"),
             el(6, "tabled_text", (91, 73, 131, 84), text="Reynolds")]
    task = "Enter the value of Last name into the text field and press Submit."
    assert plan(task, [*table, field, submit])[:3] == [("click_element", {"element_id": 13}), ("press_control_A", {}),
                                                       kit.type_text("Reynolds")]
    task = 'Find the 4th word in the paragraph, type that into the textbox and press "Submit".'
    screen = [el(1, "text", (3, 3, 111, 14), text="Find the4th wordin the"),  # the reader ran words together
              el(2, "text", (3, 14, 129, 25), text="paragraph, type that into the"),
              el(3, "text", (3, 25, 126, 36), text='textbox and press "Submit".'),
              el(4, "text", (2, 62, 158, 73), text="Lacus, interdum pulvinar imperdiet."),
              el(5, "text", (2, 73, 59, 84), text="Cursus. Nisi,"), field, submit]
    assert plan(task, screen)[2] == kit.type_text("imperdiet")


def test_movie_search_matches_labels_to_fields_in_any_layout() -> None:
    task = "Search for action movies directed by Bowen from year 1998."
    beside = [el(4, "tabled_text", (9, 89, 49, 100), text="Director"),
              el(5, "input_field", (52, 84, 151, 105), text="", focused=False),
              el(6, "tabled_text", (19, 114, 49, 125), text="Genre"),
              el(7, "input_field", (52, 109, 151, 130), text="", focused=False),
              el(8, "tabled_text", (27, 139, 49, 150), text="Year"),
              el(9, "input_field", (52, 134, 151, 155), text="", focused=False),
              el(10, "text", (64, 166, 96, 177), text="Submit")]
    typed = [a[1]["string_to_type"] for a in plan(task, beside) if a[0] == "type_text"]
    assert typed == ["Bowen", "action", "1998"]
    under = [el(5, "input_field", (10, 60, 150, 75), text="", focused=False),
             el(4, "text", (10, 76, 60, 88), text="Year"),
             el(7, "input_field", (10, 95, 150, 110), text="", focused=False),
             el(6, "text", (10, 111, 60, 123), text="Genre"),
             el(9, "input_field", (10, 130, 150, 145), text="", focused=False),
             el(8, "text", (10, 146, 60, 158), text="Director"),
             el(10, "text", (50, 170, 100, 185), text="Search")]
    typed = [a[1]["string_to_type"] for a in plan(task, under) if a[0] == "type_text"]
    assert typed == ["1998", "action", "Bowen"]
    assert plan(task, under)[-2:] == [("click_element", {"element_id": 10}), kit.done()]


def test_identify_shape_and_scroll_list_is_not_taken_for_checkboxes() -> None:
    buttons = [el(4, "button", (13, 126, 90, 147), text="Rectangle", focused=False),
               el(5, "button", (96, 126, 147, 147), text="Circle", focused=False),
               el(7, "button", (90, 151, 141, 172), text="Letter", focused=False),
               el(8, "button", (48, 176, 112, 197), text="Number", focused=False)]
    task = "Click the button that best describes the figure below."
    assert plan(task, [el(3, "text", (68, 67, 86, 101), text="0"), *buttons])[0] == ("click_element", {"element_id": 8})
    assert plan(task, [el(3, "shape", (60, 60, 100, 100), subtype="circle"), *buttons])[0] == (
        "click_element", {"element_id": 5})
    rows = [el(3, "tabled_text", (3, 58, 136, 75), text="Catherine", highlighted=False),
            el(9, "button", (2, 152, 98, 183), text="Submit", focused=False)]
    # click-scroll-list has its own policy (caap.testing.planner.policies.menus): a control-click, not a checkbox tick.
    assert plan("Select Catherine from the scroll list and click Submit.", rows)[0] == (
        "control_click_element", {"element_id": 3})


def test_figure_letter_is_not_taken_for_a_task_line() -> None:
    task = "Click the button that best describes the figure below."
    screen = [el(1, "text", (3, 3, 114, 14), text="Click the button that best"),
              el(2, "text", (3, 14, 122, 25), text="describes the figure below."),
              el(3, "text", (73, 67, 81, 101), text="l"),  # "l" is also part of the task's text
              el(7, "button", (90, 151, 141, 172), text="Letter", focused=False)]
    assert plan(task, screen)[0] == ("click_element", {"element_id": 7})


def test_read_table_row_read_as_one_line() -> None:
    task = "Enter the value of Last name into the text field and press Submit."
    screen = [el(7, "tabled_text", (9, 87, 111, 98), text="Last name Dominguez"),
              el(11, "input_field", (7, 133, 135, 154), text="", focused=True),
              el(12, "button", (7, 154, 103, 185), text="Submit", focused=False)]
    assert plan(task, screen)[1] == kit.type_text("Dominguez")


def test_use_autocomplete_uncovers_the_submit_button() -> None:
    task = 'Enter an item that starts with "Ma" and ends with "ali".'
    field = el(4, "input_field", (10, 71, 138, 92), text="Mali", focused=True)
    stale = [el(6, "tabled_text", (16, 96, 59, 112), text="Macao")]  # Submit is under the list
    typed = [(act("type_text", string_to_type="Mali"), CHANGED)]
    assert plan(task, [field, *stale], typed) == [("wait", {"seconds": 1.0})]
    fresh = [el(6, "tabled_text", (16, 96, 59, 112), text="Mali")]
    assert plan(task, [field, *fresh], typed) == [("click_element", {"element_id": 6})]


def test_click_tab_2_hard_walks_numbered_tabs() -> None:
    # The -hard variant labels its tabs "1".."N"; tab 1 is on show at the start, so the word's absence
    # there sends the planner to tab 2, then to tab 3 once tab 2 was clicked.
    task = 'Switch between the tabs to find and click on the link "lectus".'
    tabs = [el(3 + i, "hyperlink", (12 + 20 * i, 64, 18 + 20 * i, 75), text=str(i + 1)) for i in range(3)]
    body = [el(6, "text", (19, 104, 107, 115), text="Purus pretium. Duis")]
    assert plan(task, [*tabs, *body]) == [("click_element", {"element_id": 4})]
    history = [(act("click_element", tabs[1]), CHANGED)]
    assert plan(task, [*tabs, *body], history) == [("click_element", {"element_id": 5})]
    shown = [el(6, "text", (19, 104, 107, 115), text="sed lectus amet")]
    assert plan(task, [*tabs, *shown], history)[0][0] == "click_new_point"
