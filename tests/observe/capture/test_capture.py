"""Coordinate mapping, dry-run drawing, the confirmation gate: the parts that need no display."""

import io
import math

import pytest
from PIL import Image

from caap.act.actions import ScreenState, execute, plan
from caap.act.calibrate import find_markers
from caap.act.dryrun import draw_calls
from caap.act.executor import RecordingExecutor
from caap.act.safety import ConfirmationGate, ConfirmRule, describe_hotkey, label_of, terminal_ask
from caap.elements import Element
from caap.geometry import ScreenMapping
from caap.observe.capture.live import CaptureTarget
from caap.observe.capture.screen import ScreenError


def test_mapping_single_monitor_and_region_offset():
    m = ScreenMapping(0, 0)
    assert m.to_os(10, 20) == (10, 20) and m.to_image(10, 20) == (10, 20)
    region = ScreenMapping(50, 60)  # a 160x210 task region at (50, 60)
    assert region.to_os(0, 0) == (50, 60) and region.to_os(159, 209) == (209, 269)
    assert region.to_image(50, 60) == (0, 0)


def test_mapping_multi_monitor_origins():
    # mss reports monitors in virtual-screen coordinates; a monitor left of the primary is negative.
    left_monitor = ScreenMapping(-1920, 0)
    assert left_monitor.to_os(100, 50) == (-1820, 50)
    below = ScreenMapping(0, 1080)
    assert below.to_os(5, 5) == (5, 1085)
    assert left_monitor.to_image(*left_monitor.to_os(123, 45)) == (123, 45)


def test_mapping_hidpi_scale_two():
    retina = ScreenMapping(1440, 0, scale=2.0)  # second monitor, captured at 2 pixels per point
    assert retina.to_os(0, 0) == (1440, 0)
    assert retina.to_os(1, 1) == (1440, 0)  # both pixels of a point map to that point
    assert retina.to_os(2, 3) == (1441, 1)
    assert retina.to_os(2879, 1799) == (2879, 899)
    for ox, oy in [(1440, 0), (1500, 33), (2000, 899)]:
        assert retina.to_os(*retina.to_image(ox, oy)) == (ox, oy)
    with pytest.raises(ValueError):
        ScreenMapping(0, 0, 0)


def test_capture_target_parsing():
    assert CaptureTarget.parse().kind == "monitor"
    assert CaptureTarget.parse(region="10,20,160,210").region == (10, 20, 160, 210)
    assert CaptureTarget.parse(window="MiniWoB").window == "MiniWoB"
    with pytest.raises(ScreenError, match="choose one capture target"):
        CaptureTarget.parse(monitor=1, window="x")
    with pytest.raises(ScreenError, match="no area"):
        CaptureTarget.parse(region="0,0,0,10")


def test_dry_run_drawing_marks_every_kind_of_event(dropdown_screen):
    screen = ScreenState(dropdown_screen, 160, 210)
    ex = RecordingExecutor()
    for name, args in [("click_element", {"element_id": 1}), ("right_click_element", {"element_id": 2}),
                       ("drag_mouse_hold_down", {"x": 10, "y": 150}), ("drag_mouse_move", {"x": 100, "y": 180}),
                       ("drag_mouse_release", {}), ("type_text", {"string_to_type": "héllo"}),
                       ("scroll", {"direction": "down"}), ("point_element", {"element_id": 2})]:
        execute(plan(name, args, screen), ex)
    blank = Image.new("RGB", (160, 210), "white")
    drawn = draw_calls(blank, ex.calls)
    assert drawn.size == blank.size and blank.getpixel((76, 65)) == (255, 255, 255)
    assert drawn.getpixel((76, 65)) == (230, 0, 0)  # left click crosshair at the dropdown centre
    assert drawn.getpixel((49, 96)) == (0, 80, 230)  # right click on Submit
    assert drawn.getpixel((55, 165)) == (0, 150, 60)  # the drag path
    buf = io.BytesIO()
    drawn.save(buf, "PNG")


def test_label_of_finds_the_label_left_or_above():
    label = Element(type="text", bbox=[5, 60, 60, 72], text="Password")
    field = Element(type="input_field", bbox=[65, 58, 150, 74], text="", focused=True)
    above = Element(type="text", bbox=[65, 40, 120, 52], text="User name")
    far = Element(type="text", bbox=[5, 150, 60, 160], text="Far away")
    assert label_of(field, [label, field, above, far]) == "Password"
    assert label_of(field, [field, above, far]) == "User name"
    assert label_of(field, [field, far]) is None


def _screen():
    return [
        Element(id=1, type="text", bbox=[5, 60, 60, 72], text="Password"),
        Element(id=2, type="input_field", bbox=[65, 58, 150, 74], focused=False),
        Element(id=3, type="button", bbox=[5, 100, 60, 120], text="Delete", focused=False),
        Element(id=4, type="button", bbox=[70, 100, 150, 120], text="Cancel", focused=False),
        Element(id=5, type="input_field", bbox=[65, 30, 150, 46], focused=False),
    ]


def test_gate_denies_by_default_and_asks_only_for_matching_actions():
    asked = []
    gate = ConfirmationGate(ask=lambda q: asked.append(q) or False)
    els = _screen()
    state = ScreenState(els, 160, 210)
    assert gate(plan("click_element", {"element_id": 4}, state), els) is None  # Cancel: no rule
    denial = gate(plan("click_element", {"element_id": 3}, state), els)
    assert denial and "Delete" in denial and "deletes, sends or spends" in asked[-1]
    assert gate(plan("click_new_point", {"x": 10, "y": 110}, state), els)  # a bare click on Delete too
    # Typing goes to the field clicked last; its label says Password.
    assert gate(plan("click_element", {"element_id": 2}, state), els) is None
    assert "password" in gate(plan("type_text", {"string_to_type": "hunter2"}, state), els)
    # A field the observer sees focused wins over the last click.
    els[1] = els[1].model_copy(update={"focused": False})
    els[4] = els[4].model_copy(update={"focused": True})
    assert gate(plan("type_text", {"string_to_type": "bob"}, ScreenState(els, 160, 210)), els) is None
    n = len(asked)
    assert ConfirmationGate(ask=lambda q: True)(plan("click_element", {"element_id": 3}, state), els) is None
    assert len(asked) == n


def test_user_rules_replace_the_defaults():
    els = _screen()
    state = ScreenState(els, 160, 210)
    gate = ConfirmationGate([ConfirmRule(("click_element",), r"(?i)cancel", "cancelling")], ask=lambda q: False)
    assert gate(plan("click_element", {"element_id": 3}, state), els) is None
    assert "cancelling" in gate(plan("click_element", {"element_id": 4}, state), els)


def test_terminal_ask_denies_without_a_terminal():
    out = io.StringIO()
    assert terminal_ask(1.0, stream_in=io.StringIO("y\n"), stream_out=out)("Allow?") is False
    assert "denied (no terminal" in out.getvalue()


def test_describe_hotkey():
    assert describe_hotkey("<ctrl>+<alt>+x") == "Ctrl+Alt+X"


def test_find_markers():
    img = Image.new("RGB", (100, 80), "white")
    for cx, cy in [(20, 20), (70, 20), (45, 60)]:
        for dx in range(-2, 3):
            for dy in range(-2, 3):
                img.putpixel((cx + dx, cy + dy), (255, 0, 255))
    assert find_markers(img) == [(20.0, 20.0), (70.0, 20.0), (45.0, 60.0)]
    assert math.isclose(find_markers(img)[0][0], 20.0)


def test_a_blinking_caret_is_no_change_but_anything_wider_is():
    """The loop drops the rest of a plan once an action changes the screen: a text caret blinking
    in a focused field (2 px wide, 16 tall at a large font: 32 px) must not count as a change."""
    from PIL import Image, ImageDraw

    from caap.observe.capture.screen import FrameChange

    def changed_pixels(a, b):
        return FrameChange(a, b).total()

    before = Image.new("RGB", (160, 210), "white")
    caret = before.copy()
    ImageDraw.Draw(caret).rectangle([100, 95, 101, 110], fill="black")
    assert changed_pixels(before, caret) == 0
    text = before.copy()
    ImageDraw.Draw(text).rectangle([90, 95, 101, 110], fill="black")  # a typed glyph is wider
    assert changed_pixels(before, text) == 12 * 16
    two = caret.copy()
    ImageDraw.Draw(two).rectangle([20, 95, 21, 110], fill="black")  # two carets far apart: a real change
    assert changed_pixels(before, two) == 64
    assert changed_pixels(before, Image.new("RGB", (10, 10))) == 160 * 210


def test_a_change_inside_the_boxes_acted_on_is_not_a_change_elsewhere():
    from PIL import Image, ImageDraw

    from caap.observe.capture.screen import LOCAL_CHANGE_MARGIN_PX, changed_outside

    before = Image.new("RGB", (160, 210), "white")
    after = before.copy()
    ImageDraw.Draw(after).rectangle([20, 20, 29, 29], fill="black")  # a tick inside the box
    ImageDraw.Draw(after).rectangle([17, 17, 32, 17], fill="blue")   # a focus ring just outside it
    assert changed_outside(before, after, [(20, 20, 30, 30)]) == 0
    assert changed_outside(before, after, [(20, 20, 30, 30)], margin=0) == 16
    assert changed_outside(before, after, []) == 100 + 16
    far = after.copy()
    ImageDraw.Draw(far).rectangle([100, 100, 109, 109], fill="black")  # a menu opened somewhere else
    assert changed_outside(before, far, [(20, 20, 30, 30)]) == 100
    assert changed_outside(before, far, [(20, 20, 30, 30), (100, 100, 110, 110)]) == 0
    assert LOCAL_CHANGE_MARGIN_PX >= 3
    assert changed_outside(before, Image.new("RGB", (10, 10)), [(0, 0, 160, 210)]) == 160 * 210


def test_a_change_under_an_actions_target_is_counted_in_its_box_only():
    from PIL import Image, ImageDraw

    from caap.observe.capture.screen import changed_within

    before = Image.new("RGB", (160, 210), "white")
    after = before.copy()
    ImageDraw.Draw(after).rectangle([10, 120, 99, 139], fill=(230, 230, 240))  # a suggestion list opened
    assert changed_within(before, after, (10, 130, 100, 150)) == 90 * 10 + 90 * 4  # the box and its margin
    assert changed_within(before, after, (10, 160, 100, 190)) == 0  # below the list
    assert changed_within(before, after, (200, 300, 210, 310)) == 0  # off the screen
    caret = before.copy()
    ImageDraw.Draw(caret).rectangle([50, 130, 51, 145], fill="black")
    assert changed_within(before, caret, (10, 130, 100, 150)) == 0  # a caret blinking in the field aimed at
    assert changed_within(before, Image.new("RGB", (10, 10)), (0, 0, 5, 5)) == 160 * 210
