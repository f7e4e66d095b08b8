"""`caap record`: raw input merged into registry actions (pure), and live recordings on Xvfb.

The live tests start their own Xvfb and Chromium (skipping, with the package named, when either is
missing), drive real OS input with xdotool, and read the demonstration file the recorder wrote.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from live_marks import live
from PIL import Image

from caap.act.secrets import Secrets
from caap.decide.demos import load_demo
from caap.elements import Element
from caap.record.events import (
    HOVER_S,
    MAX_DRAG_POINTS,
    Annotator,
    Key,
    Merger,
    MouseButton,
    MouseMove,
    Wheel,
    element_at,
)

HOTKEY = "<ctrl>+<alt>+x"


def run(events, merger: Merger | None = None, end: float | None = None):
    """Feed events; then let time pass (``end``) and stop. Returns every step as (action, args, point)."""
    merger = merger or Merger(HOTKEY)
    gestures = []
    for ev in events:
        gestures += merger.feed(ev)
    if end is not None:
        gestures += merger.tick(end)
    gestures += merger.finish()
    return [(s.action, s.args, s.point) for g in gestures for s in g.steps], gestures


def click(t, x, y, button="left"):
    return [MouseButton(t, x, y, button, True), MouseButton(t + 0.05, x, y, button, False)]


def keys(t, text, step=0.05):
    out = []
    for i, ch in enumerate(text):
        out += [Key(t + i * step, ch.lower(), True, ch), Key(t + i * step + 0.01, ch.lower(), False, ch)]
    return out


def press(t, *names):
    """A combo: modifiers down, the last key down and up, modifiers up."""
    *mods, key = names
    evs = [Key(t, m, True) for m in mods]
    char = key if len(key) == 1 else None
    evs += [Key(t + 0.01, key, True, char), Key(t + 0.02, key, False, char)]
    evs += [Key(t + 0.03, m, False) for m in mods]
    return evs


# --- the merger ---------------------------------------------------------------------------------------------

def test_single_click_waits_for_the_double_click_window():
    merger = Merger()
    assert merger.feed(MouseButton(0.0, 10, 20, "left", True)) == []
    assert merger.feed(MouseButton(0.05, 10, 20, "left", False)) == []
    assert merger.pending_t == 0.0
    assert merger.tick(0.3) == []  # a second click could still come
    (g,) = merger.tick(0.6)
    assert [(s.action, s.point) for s in g.steps] == [("click_element", (10, 20))]
    assert g.t == 0.0 and merger.pending_t is None


def test_double_right_and_control_clicks():
    steps, _ = run([*click(0, 50, 50), *click(0.2, 51, 52), *click(1.0, 5, 5, "right"),
                    Key(2.0, "ctrl", True), *click(2.1, 30, 30), Key(2.3, "ctrl", False)], end=5)
    assert steps == [("double_click_element", {}, (50, 50)), ("right_click_element", {}, (5, 5)),
                     ("control_click_element", {}, (30, 30))]


def test_two_clicks_far_apart_or_slow_are_two_clicks():
    steps, _ = run([*click(0, 50, 50), *click(0.2, 80, 50), *click(1.5, 80, 50)], end=5)
    assert [s[0] for s in steps] == ["click_element"] * 3


def test_drag_path_is_subsampled_and_ends_at_the_release_point():
    path = [MouseMove(0.1 + i * 0.01, 10 + i, 20 + i // 2) for i in range(1, 60)]
    evs = [MouseButton(0.0, 10, 20, "left", True), *path, MouseButton(1.0, 75, 52, "left", False)]
    steps, (g,) = run(evs)
    names = [s[0] for s in steps]
    assert names[0] == "drag_mouse_hold_down" and steps[0][1] == {"x": 10, "y": 20}
    assert names[-1] == "drag_mouse_release" and steps[-1][2] == (75, 52)
    moves = [s for s in steps if s[0] == "drag_mouse_move"]
    assert 2 <= len(moves) <= MAX_DRAG_POINTS
    assert moves[-1][1] == {"x": 75, "y": 52}  # last move = release point
    xs = [m[1]["x"] for m in moves]
    assert xs == sorted(xs)  # in path order
    assert g.t == 0.0


def test_a_small_wobble_is_still_a_click():
    evs = [MouseButton(0.0, 10, 20, "left", True), MouseMove(0.02, 12, 21), MouseButton(0.05, 12, 21, "left", False)]
    steps, _ = run(evs, end=1)
    assert steps == [("click_element", {}, (10, 20))]


def test_a_pointer_at_rest_is_a_hover_gesture_and_a_click_covers_it():
    """A menu that opens on hover: the pointer moved there and rested. The merger offers it as a
    point_element gesture once it rested HOVER_S (the recorder keeps it only where the screen
    changed beyond the element); a click or key soon after the move covers it, a drag is a drag."""
    merger = Merger()
    assert merger.feed(MouseMove(0.0, 30, 40)) == [] and merger.hovering and merger.pending_t == 0.0
    assert merger.feed(MouseMove(0.1, 60, 40)) == []  # moved on: the newer resting place counts
    assert merger.tick(0.1 + HOVER_S - 0.01) == []
    (g,) = merger.tick(0.1 + HOVER_S)
    assert g.hover and g.t == 0.1 and [(s.action, s.point) for s in g.steps] == [("point_element", (60, 40))]
    assert merger.tick(5.0) == [] and merger.pending_t is None  # offered once
    steps, gestures = run([MouseMove(0.0, 60, 40), *click(0.2, 60, 40)], end=3)
    assert steps == [("click_element", {}, (60, 40))] and not any(g.hover for g in gestures)
    steps, _ = run([MouseMove(0.0, 60, 40), *keys(0.1, "a")], end=3)
    assert [s[0] for s in steps] == ["type_text"]
    steps, _ = run([MouseButton(0.0, 10, 20, "left", True), MouseMove(0.1, 60, 40),
                    MouseButton(0.9, 60, 40, "left", False)], end=3)
    assert steps[0][0] == "drag_mouse_hold_down"
    steps, _ = run([MouseMove(0.0, 60, 40)])  # stopped before it rested: nothing
    assert steps == []


def test_a_hover_binds_to_the_element_under_it_or_is_dropped():
    menu = [Element(id=1, type="tabled_text", bbox=[40, 30, 100, 50], text="Playback>")]
    (g,) = run([MouseMove(0.0, 60, 40)], end=1)[1]
    (step,) = Annotator()(g, menu, menu)
    assert step.action == "point_element" and step.args == {"element_id": 1} and step.element == menu[0]
    assert Annotator()(g, [], []) == []  # nothing observed under it: no element to point at again


def test_typing_with_shift_and_backspace_is_one_step():
    evs = [Key(0, "shift", True), Key(0.01, "h", True, "h"), Key(0.02, "h", False, "h"), Key(0.03, "shift", False),
           *keys(0.1, "ello wx"), Key(0.5, "backspace", True), Key(0.51, "backspace", False),
           *keys(0.6, "orld"), Key(1.0, "shift", True), Key(1.01, "1", True, "!"), Key(1.02, "shift", False)]
    steps, (g,) = run(evs)
    assert steps == [("type_text", {"string_to_type": "Hello world!"}, None)]
    assert g.t == 0.01


def test_backspace_without_pending_text_is_a_key_and_erased_text_is_nothing():
    steps, _ = run([*keys(0, "ab"), *press(0.2, "backspace"), *press(0.3, "backspace"), *press(0.4, "backspace")])
    assert steps == [("press_key", {"key": "backspace"}, None)]


def test_control_shortcuts_and_other_combos():
    evs = [*press(0, "ctrl", "a"), *press(0.2, "ctrl", "c"), *press(0.4, "ctrl", "v"), *press(0.6, "ctrl", "z"),
           *press(0.8, "enter"), *press(1.0, "shift", "tab"), *press(1.2, "escape"), *press(1.4, "up"),
           *press(1.6, "ctrl", "shift", "Z"), *press(1.8, "caps_lock")]
    steps, _ = run(evs)
    assert [(s[0], s[1]) for s in steps] == [
        ("press_control_A", {}), ("press_control_C", {}), ("press_control_V", {}),
        ("press_key", {"key": "ctrl+z"}), ("press_key", {"key": "enter"}), ("press_key", {"key": "shift+tab"}),
        ("press_key", {"key": "escape"}), ("press_key", {"key": "up"}), ("press_key", {"key": "ctrl+shift+z"})]


def test_the_stop_hotkey_is_not_a_step_and_pending_text_is_flushed():
    steps, _ = run([*keys(0, "hi"), *press(0.5, "ctrl", "alt", "x")])
    assert steps == [("type_text", {"string_to_type": "hi"}, None)]


def test_pending_text_is_flushed_when_another_action_starts():
    merger = Merger()
    for ev in keys(0, "abc"):
        assert merger.feed(ev) == []
    (g,) = merger.feed(MouseButton(1.0, 5, 5, "left", True))
    assert g.steps[0].args == {"string_to_type": "abc"}
    assert merger.feed(MouseButton(1.05, 5, 5, "left", False)) == []
    assert merger.pending_t == 1.0  # the click is now in progress
    g1, g2 = merger.feed(Key(1.1, "enter", True))  # a key ends the double-click wait at once
    assert [g1.steps[0].action, g2.steps[0].action] == ["click_element", "press_key"]


def test_wheel_clicks_merge_into_one_scroll():
    evs = [Wheel(0, 40, 40, 0, -1), Wheel(0.1, 41, 40, 0, -1), Wheel(0.2, 41, 41, 0, -1), Wheel(2.0, 40, 40, 0, 1),
           Wheel(3.0, 40, 40, 1, 0)]
    steps, _ = run(evs, end=10)
    assert steps == [("scroll", {"direction": "down", "amount": 3}, (40, 40)),
                     ("scroll", {"direction": "up", "amount": 1}, (40, 40)),
                     ("scroll", {"direction": "right", "amount": 1}, (40, 40))]


# --- binding to observed elements ---------------------------------------------------------------------------

def els():
    return [Element(id=1, type="text", bbox=[0, 0, 200, 100], text="Login"),
            Element(id=2, type="text", bbox=[10, 10, 60, 30], text="Password"),
            Element(id=3, type="input_field", bbox=[70, 10, 190, 30], text=""),
            Element(id=4, type="input_field", bbox=[70, 40, 190, 60], text="alice"),
            Element(id=5, type="button", bbox=[70, 70, 120, 90], text="Sign in")]


def test_steps_are_bound_to_the_smallest_element_under_the_point():
    assert element_at(els(), (80, 20)).id == 3  # the field, not the panel around it
    assert element_at(els(), (5, 95)).id == 1
    assert element_at(els(), (300, 300)) is None
    _, gestures = run([*click(0, 80, 75), *click(1, 300, 5), *click(2, 71, 71, "right"), Wheel(3, 100, 50, 0, -2)],
                      end=10)
    annotate = Annotator()
    before = [*els(), Element(id=6, type="text", bbox=[250, 0, 400, 20], text="far")]
    steps = [s for g in gestures for s in annotate(g, before, before, {"before": "a.png", "after": "b.png"})]
    assert [(s.action, s.args) for s in steps] == [
        ("click_element", {"element_id": 5}), ("click_element", {"element_id": 6}),
        ("right_click_element", {"element_id": 5}), ("scroll", {"direction": "down", "amount": 2, "element_id": 4})]
    assert steps[0].element.text == "Sign in" and steps[0].point == (80, 75)
    assert steps[0].screenshots == {"before": "a.png", "after": "b.png"}
    # Nothing observed under the pointer (or --no-observe): the click keeps its point.
    (g,) = run(click(0, 300, 300), end=1)[1]
    (s,) = Annotator()(g, els(), None)
    assert (s.action, s.args, s.element) == ("click_new_point", {"x": 300, "y": 300}, None)
    (s,) = Annotator()(g, None, None)
    assert (s.action, s.args) == ("click_new_point", {"x": 300, "y": 300})


def test_text_typed_into_a_password_field_is_masked():
    _, gestures = run([*click(0, 100, 20), *keys(1, "hunter2"), *click(2, 100, 50), *keys(3, "bob")])
    annotate = Annotator()
    steps = [s for g in gestures for s in annotate(g, els(), els())]
    typed = [s for s in steps if s.action == "type_text"]
    assert typed[0].args == {"string_to_type": "*******"} and typed[0].masked  # the field labelled Password
    assert typed[1].args == {"string_to_type": "bob"} and not typed[1].masked
    # A field showing only bullets is a password field too, whatever its label.
    bullets = [Element(id=1, type="input_field", bbox=[0, 0, 100, 20], text="•••")]
    _, gestures = run([*click(0, 5, 5), *keys(1, "pw")])
    annotate = Annotator()
    steps = [s for g in gestures for s in annotate(g, bullets, bullets)]
    assert steps[-1].masked and steps[-1].args["string_to_type"] == "**"


def test_a_given_secret_typed_is_recorded_as_its_placeholder():
    _, gestures = run([*click(0, 100, 50), *keys(1, "x-hunter22-y")])
    annotate = Annotator(Secrets.parse(["PW=hunter22"], environ={}))
    steps = [s for g in gestures for s in annotate(g, els(), els())]
    typed = [s for s in steps if s.action == "type_text"]
    assert typed[0].args == {"string_to_type": "x-{PW}-y"} and not typed[0].masked  # replay types it back
    assert [tuple(e.bbox) for e in annotate.secret_fields] == [(70, 40, 190, 60)]  # the field clicked


# --- live recordings on Xvfb --------------------------------------------------------------------------------



PAGE = Path(__file__).parent / "pages" / "actions.html"


@pytest.fixture(scope="module")
def xvfb():
    from caap.bench.display import VirtualDisplay

    with VirtualDisplay(1024, 768) as display:
        yield display


@pytest.fixture(scope="module")
def page(xvfb):
    from caap.bench.browser import Chromium

    with Chromium(PAGE.as_uri(), display=xvfb.name, window_pos=(40, 30), window_size=(520, 420)) as browser:
        ox, oy = browser.content_origin()
        yield browser, (ox, oy, 400, 300)


def xdo(display, *args):
    subprocess.run(["xdotool", *map(str, args)], env={"DISPLAY": display}, check=True, timeout=10)


class Recording:
    """``caap record`` in a child process (pynput binds to the display of the process it runs in)."""

    def __init__(self, display: str, out: Path, region, *extra: str) -> None:
        env = dict(os.environ, DISPLAY=display, PYTHONUNBUFFERED="1")
        cmd = [sys.executable, "-c", "from caap.cli import main; main()", "record", "--task", "demo task",
               "--out", str(out), "--region", ",".join(map(str, region)), *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: list[str] = []
        while True:  # wait until the listeners are hooked in
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError("caap record exited early:\n" + "".join(self.lines) + self.proc.stdout.read())
            self.lines.append(line)
            if line.startswith("Recording "):
                break

    def finish(self, timeout: float = 60) -> str:
        text, _ = self.proc.communicate(timeout=timeout)
        return "".join(self.lines) + text


def wait_for_steps(out: Path, n: int, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if out.exists():
            demo = load_demo(out)
            if len(demo.steps) >= n:
                return demo
        time.sleep(0.1)
    raise AssertionError(f"{out} did not reach {n} steps")


def check_screenshots(out: Path, demo):
    for step in demo.steps:
        for which in ("before", "after"):
            png = out.parent / step.screenshots[which]
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PIL import Image

    with Image.open(out.parent / demo.steps[0].screenshots["before"]) as im:
        assert im.size == (400, 300)


@live
def test_live_recording_without_observation(page, xvfb, tmp_path):
    browser, region = page
    ox, oy = region[:2]
    d = xvfb.name
    browser.evaluate("document.getElementById('t1').value = ''; document.getElementById('t2').value = ''")
    out = tmp_path / "demo.json"
    rec = Recording(d, out, region, "--no-observe")
    try:
        xdo(d, "mousemove", ox + 50, oy + 25, "click", 1)  # the button
        demo = wait_for_steps(out, 1)
        assert not demo.complete  # still recording: every step so far is already on disk
        assert demo.steps[0].action == "click_new_point" and demo.steps[0].args == {"x": 50, "y": 25}
        xdo(d, "mousemove", ox + 60, oy + 61, "click", 1)  # field t1
        time.sleep(0.6)
        xdo(d, "type", "--delay", "30", "Hi there")
        xdo(d, "key", "BackSpace", "BackSpace", "BackSpace", "BackSpace", "BackSpace", "key", "BackSpace")
        xdo(d, "type", "--delay", "30", "x!")
        xdo(d, "key", "ctrl+a")
        xdo(d, "key", "Tab")
        xdo(d, "mousemove", ox + 20, oy + 100, "mousedown", 1)
        for i in range(1, 31):
            xdo(d, "mousemove", ox + 20 + i * 5, oy + 100 + i)
        xdo(d, "mouseup", 1)
        time.sleep(0.3)
        xdo(d, "mousemove", 900, 700, "click", 1)  # outside the captured area: not a step
        xdo(d, "mousemove", ox + 150, oy + 120, "click", "--repeat", 2, "--delay", 80, 1)
        time.sleep(0.6)
        xdo(d, "mousemove", ox + 60, oy + 190, "click", 5)  # wheel down over the scroller
        time.sleep(0.8)
        xdo(d, "key", "ctrl+alt+x")
        output = rec.finish()
    finally:
        if rec.proc.poll() is None:
            rec.proc.kill()
    assert rec.proc.returncode == 0, output
    demo = load_demo(out)
    assert demo.complete and demo.source == "human" and demo.task == "demo task"
    assert demo.screen == {"width": 400, "height": 300}
    names = [s.action for s in demo.steps]
    assert names == ["click_new_point", "click_new_point", "type_text", "press_control_A", "press_key",
                     "drag_mouse_hold_down", *["drag_mouse_move"] * (len(names) - 9), "drag_mouse_release",
                     "double_click_element", "scroll"], output
    assert demo.steps[1].args == {"x": 60, "y": 61}
    assert demo.steps[2].args == {"string_to_type": "Hix!"}
    assert demo.steps[4].args == {"key": "tab"}
    drag = [s for s in demo.steps if s.action.startswith("drag_")]
    assert drag[0].args == {"x": 20, "y": 100}
    assert 2 <= len(drag) - 2 <= 10 and drag[-2].args == {"x": 170, "y": 130} and drag[-1].point == (170, 130)
    assert demo.steps[-2].point == (150, 120)
    assert demo.steps[-1].args["direction"] == "down" and demo.steps[-1].point == (60, 190)
    for s in demo.steps:
        if s.point is not None:
            assert 0 <= s.point[0] < 400 and 0 <= s.point[1] < 300
    check_screenshots(out, demo)
    assert f"Recorded {len(demo.steps)} steps" in output
    assert "ctrl+alt" not in json.dumps(demo.model_dump(mode="json"))


@live
def test_live_recording_with_the_vision_models_and_ctrl_c(page, xvfb, tmp_path):
    pytest.importorskip("ultralytics", reason="needs the vision extra (ultralytics)")
    pytest.importorskip("transformers", reason="needs the vision extra (transformers)")
    root = Path(__file__).resolve().parents[1]
    if not (root / "models" / "detector").exists():
        pytest.skip("needs the shipped models in models/")
    _, region = page
    ox, oy = region[:2]
    d = xvfb.name
    out = tmp_path / "demo.json"
    rec = Recording(d, out, region)
    try:
        xdo(d, "mousemove", ox + 50, oy + 25, "click", 1)
        time.sleep(0.6)
        xdo(d, "key", "Escape")
        wait_for_steps(out, 2, timeout=60)
        rec.proc.send_signal(signal.SIGINT)  # Ctrl-C ends a recording as cleanly as the hotkey
        output = rec.finish()
    finally:
        if rec.proc.poll() is None:
            rec.proc.kill()
    assert rec.proc.returncode == 0, output
    demo = load_demo(out)
    assert demo.complete and [s.action for s in demo.steps][-1] == "press_key", output
    click_step = demo.steps[0]
    assert click_step.point == (50, 25)
    assert click_step.before is not None and click_step.after is not None
    if click_step.action == "click_element":  # an element was seen under the pointer
        assert click_step.element is not None and click_step.element.id == click_step.args["element_id"]
        assert click_step.before[click_step.args["element_id"] - 1] == click_step.element
    else:
        assert click_step.action == "click_new_point"
    check_screenshots(out, demo)


def test_a_secret_typed_in_a_recording_is_in_no_file_and_no_screenshot(page, xvfb, tmp_path, ppocr):
    """The value typed into a field that shows it in clear is stored as {PIN}: not in the
    demonstration, nor in the elements read off the screen, nor readable in its screenshots."""
    pytest.importorskip("transformers", reason="needs the vision extra (transformers)")
    browser, region = page
    ox, oy = region[:2]
    d, out, value = xvfb.name, tmp_path / "demo.json", "Orchid-7731"
    os.environ["CAAP_SECRET_PIN"] = value
    try:
        rec = Recording(d, out, region)
    finally:
        del os.environ["CAAP_SECRET_PIN"]
    try:
        xdo(d, "mousemove", ox + 80, oy + 61, "click", 1)
        time.sleep(0.6)
        xdo(d, "type", "--delay", "30", value)
        time.sleep(0.6)
        xdo(d, "mousemove", ox + 250, oy + 61, "click", 1)
        time.sleep(0.6)
        xdo(d, "key", "Escape")
        wait_for_steps(out, 4, timeout=90)
        rec.proc.send_signal(signal.SIGINT)
        output = rec.finish()
    finally:
        if rec.proc.poll() is None:
            rec.proc.kill()
        browser.evaluate("document.getElementById('t1').value = ''")
    assert rec.proc.returncode == 0, output
    assert value not in output
    demo = load_demo(out)
    assert [s.args for s in demo.steps if s.action == "type_text"] == [{"string_to_type": "{PIN}"}], output
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) >= 9 and all(value.encode() not in p.read_bytes() for p in files)
    for path in files:
        if path.suffix == ".png":
            with Image.open(path) as im:
                image = im.convert("RGB")
            read = ppocr.read(image, [(0, 0, image.width, image.height)], ["text_area"])[0].text
            assert "Orchid" not in read and "7731" not in read, (path.name, read)


def test_clear_errors(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from caap.cli import app

    runner = CliRunner()
    existing = tmp_path / "d.json"
    existing.write_text("{}")
    result = runner.invoke(app, ["record", "--task", "t", "--out", str(existing), "--no-observe"])
    assert result.exit_code == 2 and "--force" in result.output
    result = runner.invoke(app, ["record", "--task", "t", "--out", str(tmp_path / "x.json"), "--region", "1,2,3",
                                 "--no-observe"])
    assert result.exit_code == 2 and "region must be" in result.output
    monkeypatch.delenv("DISPLAY", raising=False)
    result = runner.invoke(app, ["record", "--task", "t", "--out", str(tmp_path / "x.json"), "--no-observe"])
    assert result.exit_code == 2 and "no display" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["record", "--task", "t", "--out", str(existing / "x.json"), "--no-observe"])
    assert result.exit_code == 2 and "cannot write" in result.output
    # Missing models name the way out; checked before the display is opened.
    result = runner.invoke(app, ["record", "--task", "t", "--out", str(tmp_path / "y.json")],
                           env={"DISPLAY": ":93", "CAAP_OBSERVE__DETECTOR": str(tmp_path / "none.pt")})
    assert result.exit_code == 2 and "--no-observe" in result.output and "Traceback" not in result.output


@live
def test_window_not_found_is_a_clear_error(xvfb, tmp_path):
    from typer.testing import CliRunner

    from caap.cli import app

    result = CliRunner().invoke(app, ["record", "--task", "t", "--out", str(tmp_path / "w.json"), "--no-observe",
                                      "--window", "no such window 4711"], env={"DISPLAY": xvfb.name})
    assert result.exit_code == 2 and "no visible window" in result.output, result.output
    assert list(tmp_path.iterdir()) == []  # nothing left behind to block the next try


@live
def test_typed_line_breaks_and_tabs_are_the_enter_and_tab_keys(xvfb, monkeypatch):
    """xdotool types "\\n" as the Linefeed keysym, which pynput reports as a bare key code: it was
    dropped, and a demonstration that submitted with Enter lost its last step (guess-number)."""
    monkeypatch.setenv("DISPLAY", xvfb.name)  # pynput binds to a display when imported
    keyboard = pytest.importorskip("pynput.keyboard", reason="needs the screen extra (pynput)")
    from caap.record.recorder import key_event

    for code in (keyboard.KeyCode.from_vk(0xFF0A), keyboard.KeyCode.from_vk(0xFF0D), keyboard.KeyCode.from_char("\n"),
                 keyboard.KeyCode.from_char("\r"), keyboard.Key.enter):
        assert key_event(code, True, 1.0) == Key(1.0, "enter", True, None), code
    assert key_event(keyboard.KeyCode.from_char("\t"), False, 2.0) == Key(2.0, "tab", False, None)
    assert key_event(keyboard.KeyCode.from_char("\x01"), True, 3.0).key == "a"  # Ctrl+A as some backends send it
    steps, _ = run([*keys(0, "4"), Key(0.2, "enter", True), Key(0.21, "enter", False)])
    assert steps == [("type_text", {"string_to_type": "4"}, None), ("press_key", {"key": "enter"}, None)]
