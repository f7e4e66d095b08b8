import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from caap.act.actions import ActionError, ScreenState
from caap.decide.parser import ToolCall, bind_all, loads_loose, parse_reply
from caap.elements import Element


@pytest.fixture
def screen(dropdown_screen):
    return ScreenState(dropdown_screen, 160, 210)


def planned(text, screen, tool_calls=None):
    result = parse_reply(text, tool_calls)
    actions, errors = bind_all(result.proposals, screen)
    return [(a.name, a.args) for a in actions], [e.code for e in result.errors + errors]


CLICK1 = [("click_element", {"element_id": 1})]


@pytest.mark.parametrize(
    "text",
    [
        "Action_2=(Action: functions.click_element, Argument: {element_id: 1})",
        "### Actions to be Performed\n**Action_2**=(Action: functions.click_element, Argument: {element_id: 1})",
        "```\nAction_2 = (Action: functions.click_element, Argument: {\"element_id\": 1})\n```",
        "Action_2=(Action: click_element, Argument: {element_id: element_1})",
        "Action_2=(Action: functions.click_element, Argument: {'element_id': '1'})",
        "Action_2=(Action: functions.click_element, Arguments: {element_id = 1,})",
        "action_2: (action: functions.click_element, argument: {element_id: 1})",
        "(Action: functions.click_element, Argument: {element_id: 1})",
        "I will open the list first.\n\nfunctions.click_element({\"element_id\": 1})\n\nThat should do it.",
        "- click_element(element_id=1)",
        "1. click_element(1)",
        '```json\n{"action": "click_element", "element_id": 1}\n```',
        '{"name": "click_element", "arguments": "{\\"element_id\\": 1}"}',
        "Action_2=(Action: functions.click_element, Argument: {element_id: 1})\nDone.",
        # The plan mentions an action in prose; only the final numbered line counts.
        "Plan: first click_element (element_1) then submit.\nAction_2=(Action: functions.click_element, Argument: {element_id: 1})",
        # A copy of the format template is ignored.
        "Format: Action_2=(Action: functions.some_function_name, Argument: {property_name: property_val})\n"
        "Action_2=(Action: functions.click_element, Argument: {element_id: 1})",
        # The same numbered action written twice (plan, then answer) runs once.
        "Action_2=(Action: functions.click_element, Argument: {element_id: 1})\n\n### Answer\n"
        "Action_2=(Action: functions.click_element, Argument: {element_id: 1})",
    ],
)
def test_real_world_variants_of_one_click(text, screen):
    assert planned(text, screen) == (CLICK1, [])


def test_several_actions_in_order(screen):
    text = ("Action_2=(Action: functions.click_element, Argument: {element_id: 1})\n"
            "Action_3=(Action: functions.type_text, Argument: {string_to_type: \"Helli, \\\"quoted\\\"\"})\n"
            "Action_4=(Action: functions.press_key, Argument: {key: Enter})\n"
            "Action_5=(Action: functions.press_control_A, Argument: {})\n"
            "Action_6=(Action: functions.drag_mouse_release)")
    acts, errors = planned(text, screen)
    assert errors == []
    assert acts == [("click_element", {"element_id": 1}), ("type_text", {"string_to_type": 'Helli, "quoted"'}),
                    ("press_key", {"key": "enter"}), ("press_control_A", {}), ("drag_mouse_release", {})]


def test_prose_that_only_mentions_actions_is_no_action(screen):
    acts, errors = planned("The next action: click the dropdown, then click_element on Submit.", screen)
    assert acts == [] and errors == ["no_action"]


def test_batch_stops_at_the_first_invalid_action(screen):
    text = ("Action_2=(Action: functions.click_element, Argument: {element_id: 1})\n"
            "Action_3=(Action: functions.click_element, Argument: {element_id: 7})\n"
            "Action_4=(Action: functions.click_element, Argument: {element_id: 2})")
    assert planned(text, screen) == (CLICK1, ["unknown_element"])


def test_terminal_action_ends_the_batch(screen):
    text = ("Action_2=(Action: functions.click_element, Argument: {element_id: 2})\n"
            "Action_3=(Action: functions.done, Argument: {reason: \"submitted\"})\n"
            "Action_4=(Action: functions.click_element, Argument: {element_id: 1})")
    acts, _ = planned(text, screen)
    assert [a[0] for a in acts] == ["click_element", "done"]


def test_tool_calls_win_and_tolerate_sloppy_json(screen):
    calls = [ToolCall("click_element", '{"element_id": "element_1"}'),
             ToolCall("functions.type_text", "{string_to_type: 'abc'}"),
             ToolCall("press_key", "")]
    acts, errors = planned("some prose", screen, calls)
    assert acts == [("click_element", {"element_id": 1}), ("type_text", {"string_to_type": "abc"})]
    assert errors == ["missing_argument"]
    acts, errors = planned(None, screen, [ToolCall("click_element", "{element_id: ")])
    assert acts == [] and errors == ["bad_argument"]


def test_loose_reader():
    assert loads_loose("{a: 1, 'b': \"x\", c: True, d: None, e: [1, 2.5], f: bare words}") == {
        "a": 1, "b": "x", "c": True, "d": None, "e": [1, 2.5], "f": "bare words"}
    assert loads_loose('{"u": "\\u00e9"}') == {"u": "é"}


# --- fuzzing: at least 200 generated malformed answers, nothing escapes -----------------------
FUZZ_SCREEN = ScreenState([
    Element(id=1, type="dropdown", bbox=[1, 55, 152, 76], text="Theodora", focused=False),
    Element(id=2, type="button", bbox=[1, 80, 98, 112], text="Submit", focused=False),
], 160, 210)
NAMES = st.sampled_from(["click_element", "functions.click_element", "type_text", "press_key", "scroll",
                         "drag_mouse_move", "done", "fail", "frobnicate", "", "some_function_name", "click",
                         "functions.", "Action", "wait"])
KEYS = st.sampled_from(["element_id", "x", "y", "string_to_type", "key", "direction", "amount", "seconds",
                        "reason", "id", "", "???"])
VALUES = st.one_of(
    st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.text(max_size=20), st.sampled_from(["element_1", "element_99", "'unterminated", '"x', "{", "}", "[", "NaN",
                                           "1e999", "-0", "element_", "True", "Enter", "shift+", "+"]),
)


@st.composite
def malformed_answers(draw):
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 6))
        name = draw(NAMES)
        args = draw(st.dictionaries(KEYS, VALUES, max_size=3))
        raw_args = ", ".join(f"{k}: {v!r}" if draw(st.booleans()) else f"{k}: {v}" for k, v in args.items())
        num = draw(st.integers(-3, 12))
        if kind == 0:
            pieces.append(f"Action_{num}=(Action: functions.{name}, Argument: {{{raw_args}}})")
        elif kind == 1:  # cut off mid-way
            full = f"**Action_{num}**=(Action: {name}, Argument: {{{raw_args}}})"
            pieces.append(full[: draw(st.integers(0, len(full)))])
        elif kind == 2:
            pieces.append(f"{name}({raw_args})")
        elif kind == 3:
            pieces.append("```json\n" + json.dumps({"action": name, **{k: str(v) for k, v in args.items()}}) + "\n```")
        elif kind == 4:
            pieces.append(draw(st.text(max_size=80)))
        elif kind == 5:
            pieces.append(f"Action_{num}=(Action: functions.{name}, Argument: " + "{" * draw(st.integers(1, 30)))
        else:
            pieces.append(draw(st.sampled_from(["(((", ")))", "Argument: {a: [1, {b: (", "Action_=(Action:",
                                                "functions.click_element(", "\\", "\x00", "Action_2=()"])))
    return "\n".join(pieces)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=malformed_answers())
def test_fuzz_text_answers_never_raise(text):
    screen = FUZZ_SCREEN
    result = parse_reply(text)
    actions, errors = bind_all(result.proposals, screen)
    assert all(isinstance(e, ActionError) and e.message for e in result.errors + errors)
    assert actions or result.errors or errors  # never silently nothing


@settings(max_examples=200, deadline=None)
@given(calls=st.lists(st.tuples(NAMES, st.one_of(st.text(max_size=60), VALUES.map(json.dumps))), min_size=1, max_size=3))
def test_fuzz_tool_calls_never_raise(calls):
    screen = FUZZ_SCREEN
    result = parse_reply(None, [ToolCall(n, a) for n, a in calls])
    _, errors = bind_all(result.proposals, screen)
    assert all(isinstance(e, ActionError) for e in result.errors + errors)
