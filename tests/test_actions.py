import pytest

from caap.act.actions import REGISTRY, ActionError, ScreenState, execute, lookup, plan, text_catalogue, tool_schemas
from caap.act.executor import Executor, RecordingExecutor
from caap.elements import Element

PAPER = ["click_element", "click_new_point", "control_click_element", "type_text", "point_element",
         "press_control_A", "press_control_C", "press_control_V", "drag_mouse_hold_down", "drag_mouse_move",
         "drag_mouse_release"]
EXTRA = ["scroll", "press_key", "double_click_element", "right_click_element", "wait", "done", "fail"]


@pytest.fixture
def screen(dropdown_screen):
    hidden = Element(id=3, type="tabled_text", bbox=[1, 90, 150, 100], text="Gena", visible=False)
    return ScreenState([*dropdown_screen, hidden], 160, 210)


def test_registry_holds_the_paper_set_and_the_extensions():
    assert list(REGISTRY) == PAPER + EXTRA
    assert [n for n, s in REGISTRY.items() if s.from_paper] == PAPER
    assert lookup("functions.Double_Click").name == "double_click_element"


def test_schemas_and_text_derive_from_the_definition():
    schemas = {s["function"]["name"]: s["function"] for s in tool_schemas()}
    assert set(schemas) == set(REGISTRY)
    click = schemas["click_element"]["parameters"]
    assert click["required"] == ["element_id"] and click["properties"]["element_id"]["type"] == "integer"
    scroll = schemas["scroll"]["parameters"]
    assert scroll["required"] == ["direction"]
    assert scroll["properties"]["direction"]["enum"] == ["up", "down", "left", "right"]
    assert schemas["drag_mouse_release"]["parameters"]["properties"] == {}
    catalogue = text_catalogue()
    for name in REGISTRY:
        assert f"functions.{name}(" in catalogue
    assert "element_id: integer" in catalogue


# Every action, the primitives it must produce on the executor.
CASES = [
    ("click_element", {"element_id": 2}, [("click", {"x": 49, "y": 96, "button": "left", "count": 1, "modifiers": []})]),
    ("click_new_point", {"x": 10, "y": 20}, [("click", {"x": 10, "y": 20, "button": "left", "count": 1, "modifiers": []})]),
    ("control_click_element", {"element_id": 1},
     [("click", {"x": 76, "y": 65, "button": "left", "count": 1, "modifiers": ["ctrl"]})]),
    ("type_text", {"string_to_type": "héllo wörld"}, [("type_text", {"text": "héllo wörld"})]),
    ("point_element", {"element_id": 1}, [("move", {"x": 76, "y": 65})]),
    ("press_control_A", {}, [("press_keys", {"keys": ["ctrl", "a"]})]),
    ("press_control_C", {}, [("press_keys", {"keys": ["ctrl", "c"]})]),
    ("press_control_V", {}, [("press_keys", {"keys": ["ctrl", "v"]})]),
    ("drag_mouse_hold_down", {"x": 5, "y": 6}, [("mouse_down", {"x": 5, "y": 6, "button": "left"})]),
    ("drag_mouse_move", {"x": 50, "y": 60}, [("move", {"x": 50, "y": 60})]),
    ("drag_mouse_release", {}, [("mouse_up", {"button": "left"})]),
    ("scroll", {"direction": "down", "element_id": 1}, [("scroll", {"x": 76, "y": 65, "dx": 0, "dy": 3})]),
    ("scroll", {"direction": "up", "amount": 5}, [("scroll", {"x": 80, "y": 105, "dx": 0, "dy": -5})]),
    ("press_key", {"key": "Shift+Tab"}, [("press_keys", {"keys": ["shift", "tab"]})]),
    ("press_key", {"key": "RETURN"}, [("press_keys", {"keys": ["enter"]})]),
    ("double_click_element", {"element_id": 2}, [("click", {"x": 49, "y": 96, "button": "left", "count": 2, "modifiers": []})]),
    ("right_click_element", {"element_id": 2}, [("click", {"x": 49, "y": 96, "button": "right", "count": 1, "modifiers": []})]),
    ("wait", {"seconds": 0.5}, [("wait", {"seconds": 0.5})]),
    ("done", {}, []),
    ("fail", {"reason": "no such item"}, []),
]


@pytest.mark.parametrize(("name", "args", "calls"), CASES)
def test_every_action_executes_as_its_primitives(screen, name, args, calls):
    ex = RecordingExecutor()
    assert isinstance(ex, Executor)
    execute(plan(name, args, screen), ex)
    assert ex.calls == calls


def test_every_registered_action_is_covered_above():
    assert {c[0] for c in CASES} == set(REGISTRY)


@pytest.mark.parametrize(
    ("name", "args", "code"),
    [
        ("click_element", {"element_id": 9}, "unknown_element"),
        ("click_element", {"element_id": 3}, "invisible_element"),
        ("click_element", {}, "missing_argument"),
        ("click_element", {"element_id": "first"}, "bad_argument"),
        ("click_element", {"element_id": 1.5}, "bad_argument"),
        ("click_element", {"element_id": 1, "speed": 3}, "bad_argument"),
        ("click_new_point", {"x": 160, "y": 5}, "out_of_bounds"),
        ("click_new_point", {"x": -1, "y": 5}, "bad_argument"),
        ("press_key", {"key": "hyper+q"}, "bad_argument"),
        ("scroll", {"direction": "sideways"}, "bad_argument"),
        ("wait", {"seconds": 99}, "bad_argument"),
        ("type_text", {"string_to_type": True}, "bad_argument"),
        ("fly", {}, "unknown_action"),
    ],
)
def test_invalid_arguments_become_structured_errors(screen, name, args, code):
    with pytest.raises(ActionError) as info:
        plan(name, args, screen)
    assert info.value.code == code
    assert info.value.message


def test_sloppy_but_clear_arguments_are_accepted(screen):
    assert plan("click_element", {"element_id": "element_2"}, screen).args == {"element_id": 2}
    assert plan("click_element", {"element_id": "2"}, screen).point == (49, 96)
    assert plan("click_new_point", {"x": "10", "y": 20.4}, screen).point == (10, 20)
    assert plan("scroll", {"direction": "DOWN"}, screen).args == {"direction": "down", "amount": 3}


def test_history_description_names_the_element(screen):
    a = plan("click_element", {"element_id": 2}, screen)
    assert a.describe() == ('{name: click_element, arg: {element_id: 2, type: button, X: 49 [1-98], '
                            'Y: 96 [80-112], text: "Submit", focused: False}}')
    assert plan("type_text", {"string_to_type": "a\"b"}, screen).describe() == '{name: type_text, arg: {string_to_type: "a\\"b"}}'
