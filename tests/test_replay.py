"""`caap replay`: recorded steps found again on a screen where things moved, then executed.

Unit tests use a file-based screen, a scripted observer and the recording executor; the live tests
replay on Xvfb + Chromium through xdotool, with the page's DOM standing in for the vision models
(test-side only, as in test_live) and the page content shifted after "recording"."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from live_marks import live
from PIL import Image
from typer.testing import CliRunner

from caap.act.executor import RecordingExecutor
from caap.act.secrets import Secrets
from caap.agent.replay import ReplayOptions, replay
from caap.cli import app
from caap.decide.demos import Demonstration, DemoStep, save_demo
from caap.elements import Element
from caap.observe.capture.screen import ImageScreen
from caap.observe.observation import Observation

SUBMIT = Element(id=2, type="button", bbox=[10, 10, 90, 40], text="Submit", focused=False)
NAME = Element(id=1, type="input_field", bbox=[10, 50, 150, 70], text="", focused=False)
HANDLE = Element(id=3, type="draggable_text", bbox=[10, 100, 50, 120], text="drag me")
CANCEL = Element(id=4, type="button", bbox=[100, 10, 180, 40], text="Cancel", focused=False)


def moved(e: Element, dx: int, dy: int, **update) -> Element:
    x1, y1, x2, y2 = e.bbox
    return e.model_copy(update={"id": None, "bbox": (x1 + dx, y1 + dy, x2 + dx, y2 + dy), **update})


class ScriptedObserver:
    """Returns the given screens one per call (the last one repeats)."""

    def __init__(self, *screens: list[Element]) -> None:
        self.screens = list(screens)
        self.calls = 0

    def observe(self, image):
        screen = self.screens[min(self.calls, len(self.screens) - 1)]
        self.calls += 1
        return Observation([e.model_copy() for e in screen])


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def blank() -> ImageScreen:
    return ImageScreen(Image.new("RGB", (300, 200), "white"))


def demo_of(*steps: DemoStep) -> Demonstration:
    return Demonstration(task="Fill in the form and submit it.", steps=list(steps))


def run(demo, observer, **opts):
    clock = FakeClock()
    executor = RecordingExecutor()
    lines = []
    result = replay(demo, blank(), observer, executor, ReplayOptions(**opts), on_step=lines.append,
                    sleep=clock.sleep, clock=clock)
    return result, executor.calls, lines, clock


def test_clicks_land_on_the_moved_elements_and_other_steps_run_as_recorded():
    demo = demo_of(
        DemoStep(action="click_element", args={"element_id": 1}, element=NAME),
        DemoStep(action="type_text", args={"string_to_type": "Ada"}),
        DemoStep(action="press_key", args={"key": "tab"}),
        DemoStep(action="drag_mouse_hold_down", args={"x": 20, "y": 110}, element=HANDLE),
        DemoStep(action="drag_mouse_move", args={"x": 200, "y": 150}),
        DemoStep(action="drag_mouse_release"),
        DemoStep(action="scroll", args={"direction": "down", "element_id": 9}),
        DemoStep(action="click_element", args={"element_id": 2}, element=SUBMIT),
        DemoStep(action="done"),
    )
    now = [moved(CANCEL, 0, 0), moved(SUBMIT, 40, 100), moved(NAME, 30, 20), moved(HANDLE, 25, -5)]
    observer = ScriptedObserver(now)
    result, calls, lines, _ = run(demo, observer)
    assert result.status == "done", result.message
    assert calls == [
        ("click", {"x": 110, "y": 80, "button": "left", "count": 1, "modifiers": []}),  # NAME's new centre
        ("type_text", {"text": "Ada"}),
        ("press_keys", {"keys": ["tab"]}),
        ("mouse_down", {"x": 45, "y": 105, "button": "left"}),  # the grab point moved with its element
        ("move", {"x": 200, "y": 150}),  # a bare point: as recorded
        ("mouse_up", {"button": "left"}),
        ("scroll", {"x": 150, "y": 100, "dx": 0, "dy": 3}),  # no element recorded: the middle of the screen
        ("click", {"x": 90, "y": 125, "button": "left", "count": 1, "modifiers": []}),  # SUBMIT's new centre
    ]
    assert observer.calls == 3  # only the steps that aim at an element observe
    assert [s.status for s in lines] == ["done"] * 8 + ["end"]
    submit = lines[7]
    assert submit.planned.element.text == "Submit" and submit.displacement == (40, 100)
    assert submit.planned.args == {"element_id": submit.planned.element.id}


def test_an_ocr_typo_still_matches_but_another_word_does_not():
    demo = demo_of(DemoStep(action="click_element", args={"element_id": 2}, element=SUBMIT))
    result, calls, lines, _ = run(demo, ScriptedObserver([moved(SUBMIT, 5, 5, text="Subm1t"), moved(CANCEL, 0, 50)]))
    assert result.status == "done" and calls[0][1]["x"] == 55
    assert 0.75 <= lines[0].found.text_similarity < 1.0

    result, calls, _, _ = run(demo, ScriptedObserver([moved(CANCEL, 0, 50)]))
    assert result.status == "missing" and calls == []


def test_waits_for_a_loading_screen_then_stops_with_a_clear_message():
    demo = demo_of(
        DemoStep(action="click_element", args={"element_id": 1}, element=NAME),
        DemoStep(action="click_element", args={"element_id": 2}, element=SUBMIT),
    )
    # NAME shows up on the third look; SUBMIT never does.
    observer = ScriptedObserver([], [moved(CANCEL, 0, 0)], [moved(NAME, 0, 0), moved(CANCEL, 0, 0)])
    result, calls, lines, clock = run(demo, observer, max_wait_s=2.0, retry_interval_s=0.5)
    assert lines[0].status == "done" and lines[0].observations == 3 and lines[0].waited_s == 1.0
    assert result.status == "missing" and len(calls) == 1
    assert result.message == (
        "step 2 (click_element): the recorded element is not on the screen after 2.0s: "
        "no button reads like 'Submit' (on screen: 'Cancel')")
    assert lines[1].observations == 5 and clock.now == 3.0


def test_masked_text_is_refused_unless_a_secret_is_given():
    demo = demo_of(
        DemoStep(action="click_element", args={"element_id": 1}, element=NAME),
        DemoStep(action="type_text", args={"string_to_type": "******"}, masked=True),
        DemoStep(action="press_key", args={"key": "enter"}),
    )
    observer = ScriptedObserver([moved(NAME, 0, 0)])
    result, calls, _, _ = run(demo, observer)
    assert result.status == "masked" and "step 2 (type_text)" in result.message and "--secret" in result.message
    assert [c[0] for c in calls] == ["click"]  # stopped before typing anything

    result, calls, lines, _ = run(demo, observer, secrets=Secrets.parse(["PW=hunter2"], environ={}))
    assert result.status == "done"
    assert calls[1] == ("type_text", {"text": "hunter2"}) and calls[2][0] == "press_keys"
    assert "hunter2" not in json.dumps([s.to_json() for s in lines])  # the secret is never reported
    assert lines[1].planned is not None and lines[1].planned.args["string_to_type"] == "{PW}"

    two = Secrets.parse(["PW=hunter2", "PIN=4711"], environ={})
    result, calls, _, _ = run(demo, observer, secrets=two)  # which one the recording hid is unknown
    assert result.status == "masked" and "was given 2" in result.message and len(calls) == 1


def test_a_step_that_types_a_named_secret_needs_it_and_types_its_value():
    demo = demo_of(
        DemoStep(action="click_element", args={"element_id": 1}, element=NAME),
        DemoStep(action="type_text", args={"string_to_type": "{PIN}\n"}),
    )
    observer = ScriptedObserver([moved(NAME, 0, 0)])
    result, calls, _, _ = run(demo, observer, secrets=Secrets.parse(["PW=hunter2"], environ={}))
    assert result.status == "masked" and "--secret PIN=VALUE" in result.message and len(calls) == 1
    result, calls, lines, _ = run(demo, observer, secrets=Secrets.parse(["PIN=4711"], environ={}))
    assert result.status == "done" and calls[1] == ("type_text", {"text": "4711\n"})
    assert "4711" not in json.dumps([s.to_json() for s in lines])


def test_dry_run_plans_every_step_and_executes_nothing():
    demo = demo_of(
        DemoStep(action="click_element", args={"element_id": 1}, element=NAME),
        DemoStep(action="type_text", args={"string_to_type": "***"}, masked=True),
        DemoStep(action="click_element", args={"element_id": 2}, element=SUBMIT),
        DemoStep(action="click_element", args={"element_id": 4}, element=CANCEL.model_copy(update={"text": "Later"})),
    )
    observer = ScriptedObserver([moved(NAME, 10, 0), moved(SUBMIT, 0, 30)])
    result, calls, lines, clock = run(demo, observer, dry_run=True)
    assert calls == [] and clock.now == 0 and observer.calls == 1  # one look, no waiting
    assert result.status == "dry_run" and result.ok
    assert [s.status for s in lines] == ["planned", "masked", "planned", "missing"]
    assert lines[0].planned.point == (90, 60) and lines[2].planned.point == (50, 55)
    assert "no button reads like 'Later'" in lines[3].message


def test_stop_event_halts_before_the_next_step():
    import threading

    stop = threading.Event()
    demo = demo_of(DemoStep(action="press_key", args={"key": "tab"}), DemoStep(action="press_key", args={"key": "enter"}))
    executor = RecordingExecutor()
    result = replay(demo, blank(), ScriptedObserver([]), executor, on_step=lambda s: stop.set(), stop=stop)
    assert result.status == "stopped" and len(executor.calls) == 1


def test_cli_bad_file_and_missing_display_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"task": "x"}))
    result = CliRunner().invoke(app, ["replay", str(bad), "--elements", str(bad)])
    assert result.exit_code == 2 and "bad.json: steps: Field required" in result.output
    good = tmp_path / "demo.json"
    save_demo(demo_of(DemoStep(action="press_key", args={"key": "tab"})), good)
    els = tmp_path / "els.json"
    els.write_text(json.dumps({"elements": []}))
    result = CliRunner().invoke(app, ["replay", str(good), "--elements", str(els), "--dry-run"])
    assert result.exit_code == 2 and "no display" in result.output


# --- live: Xvfb + Chromium + xdotool -------------------------------------------------------------

SHIFT = (37, 23)


@pytest.fixture(scope="module")
def live_page():
    from caap.bench.browser import Chromium
    from caap.bench.display import VirtualDisplay

    page = Path(__file__).parent / "pages" / "actions.html"
    with VirtualDisplay(1024, 768) as display, Chromium(page.as_uri(), display=display.name, window_pos=(40, 30),
                                                        window_size=(520, 420)) as browser:
        ox, oy = browser.content_origin()
        yield display, browser, (ox, oy, 400, 300)


def dom_elements(browser) -> list[Element]:
    """The test page's elements from its DOM (test-side only; caap never reads the DOM)."""
    rects = browser.evaluate("""[...document.querySelectorAll('#wrap > *')].map(e => {
        const r = e.getBoundingClientRect(); return [e.id, r.left, r.top, r.right, r.bottom]; })""")
    types = {"btn": "button", "hover": "text", "t1": "input_field", "t2": "input_field", "drag": "draggable_text",
             "scroller": "text_area"}
    return [Element(id=n, type=types[eid], bbox=[round(x1), round(y1), round(x2), round(y2)], text=eid)
            for n, (eid, x1, y1, x2, y2) in enumerate(rects, start=1)]


class DomObserver:
    def __init__(self, browser) -> None:
        self.browser = browser

    def observe(self, image):
        return Observation([e.model_copy(update={"id": None}) for e in dom_elements(self.browser)])


def events(browser, kind):
    return [e for e in browser.evaluate("window.log") if e["type"] == kind]


def recorded_demo(browser) -> Demonstration:
    """A demonstration 'recorded' on the unshifted page."""
    browser.evaluate("document.getElementById('wrap').style.margin = '0'; window.log = []; "
                     "document.getElementById('t1').value = ''")
    time.sleep(0.2)
    els = {e.text: e for e in dom_elements(browser)}
    drag = els["drag"]
    grab = (drag.bbox[0] + 10, drag.bbox[1] + 10)
    return Demonstration(task="Press the button, type into the first field, drag in the box.", steps=[
        DemoStep(action="click_element", args={"element_id": els["btn"].id}, element=els["btn"]),
        DemoStep(action="click_element", args={"element_id": els["t1"].id}, element=els["t1"]),
        DemoStep(action="type_text", args={"string_to_type": "replayed"}),
        DemoStep(action="drag_mouse_hold_down", args={"x": grab[0], "y": grab[1]}, element=drag),
        DemoStep(action="drag_mouse_release"),
    ])


def shift_page(browser) -> dict[str, Element]:
    browser.evaluate(f"document.getElementById('wrap').style.margin = '{SHIFT[1]}px 0 0 {SHIFT[0]}px'; "
                     "window.log = []")
    time.sleep(0.2)
    return {e.text: e for e in dom_elements(browser)}


def check_landed(browser, now: dict[str, Element], recorded: Demonstration) -> None:
    clicks = events(browser, "click")
    assert [c["id"] for c in clicks[:2]] == ["btn", "t1"], clicks
    for click, name in zip(clicks, ("btn", "t1"), strict=False):
        cx, cy = now[name].centre
        assert abs(click["x"] - cx) <= 1 and abs(click["y"] - cy) <= 1, (click, now[name])
    assert browser.evaluate("document.getElementById('t1').value") == "replayed"
    down = events(browser, "mousedown")[-1]
    x, y = recorded.steps[3].args["x"] + SHIFT[0], recorded.steps[3].args["y"] + SHIFT[1]
    assert (down["id"], down["x"], down["y"]) == ("drag", x, y)


@live
def test_live_replay_follows_the_moved_page(live_page, monkeypatch):
    from caap.act.backends import make_executor
    from caap.observe.capture.live import CaptureTarget, LiveScreen

    display, browser, region = live_page
    monkeypatch.setenv("DISPLAY", display.name)
    demo = recorded_demo(browser)
    now = shift_page(browser)
    screen = LiveScreen(CaptureTarget(kind="region", region=region))
    executor = make_executor("xdotool", lambda: screen.mapping)
    result = replay(demo, screen, DomObserver(browser), executor, ReplayOptions(max_wait_s=2.0))
    screen.close()
    assert result.status == "done", result.message
    assert result.steps[0].displacement == SHIFT
    check_landed(browser, now, demo)


@live
def test_live_caap_replay_command(live_page, tmp_path, monkeypatch):
    display, browser, region = live_page
    monkeypatch.setenv("DISPLAY", display.name)
    demo = recorded_demo(browser)
    demo_file = tmp_path / "demo.json"
    save_demo(demo, demo_file)
    now = shift_page(browser)
    els = tmp_path / "els.json"  # the moved page's elements, fixed for the whole replay
    els.write_text(json.dumps({"elements": [e.to_json() for e in now.values()]}))
    args = ["replay", str(demo_file), "--elements", str(els), "--region", ",".join(map(str, region)),
            "--backend", "xdotool", "--max-wait", "1"]
    env = {"DISPLAY": display.name}

    dry = CliRunner().invoke(app, [*args, "--dry-run"], env=env)
    assert dry.exit_code == 0, dry.output
    assert "step 1/5 click_element → button" in dry.output and f"moved +{SHIFT[0]},+{SHIFT[1]}" in dry.output
    assert events(browser, "click") == [] and events(browser, "mousedown") == []

    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    assert "done: replayed 5 step(s)" in result.output and "Ctrl+Alt+X" in result.output
    check_landed(browser, now, demo)


def test_a_click_inside_a_line_of_text_lands_at_the_same_place_in_it():
    # A link inside a line of text is where the person clicked, not the line's centre; outside the
    # element (a recorded point that missed it) the centre is used.
    line = Element(id=3, type="text", bbox=[2, 63, 140, 74], text="aliquet feris et eris eram")
    demo = demo_of(DemoStep(action="click_element", args={"element_id": 3}, element=line, point=(92, 68)),
                   DemoStep(action="click_element", args={"element_id": 3}, element=line, point=(150, 90)))
    result, calls, _, _ = run(demo, ScriptedObserver([moved(line, 10, 20)]))
    assert result.status == "done", result.message
    assert [(c[1]["x"], c[1]["y"]) for c in calls] == [(102, 88), (81, 88)]


def test_a_replay_that_stops_mid_drag_lets_go_of_the_button():
    demo = demo_of(DemoStep(action="drag_mouse_hold_down", args={"x": 20, "y": 110}, element=HANDLE),
                   DemoStep(action="click_element", args={"element_id": 2}, element=SUBMIT))
    result, calls, _, _ = run(demo, ScriptedObserver([HANDLE]), max_wait_s=0.5)
    assert result.status == "missing"
    assert [name for name, _ in calls] == ["mouse_down", "mouse_up"]


BOX = Element(id=5, type="checkbox", bbox=[10, 130, 24, 144], text="Remember me", checked=False)


def test_a_saved_tests_expectations_are_checked_after_their_step():
    """A step that expects the box ticked passes once the screen shows it ticked, and the replay
    stops with status "check", naming what the screen shows, where it never does."""
    ticked = [BOX.model_copy(update={"checked": True}), SUBMIT]
    step = DemoStep(action="click_element", args={"element_id": 5}, element=BOX,
                    expect=[Element(type="checkbox", bbox=BOX.bbox, text="Remember me", checked=True)])
    demo = demo_of(step, DemoStep(action="done"))
    result, calls, lines, _ = run(demo, ScriptedObserver([BOX, SUBMIT], [BOX, SUBMIT], ticked))
    assert result.status == "done" and lines[0].observations == 3  # found it, then looked until it was ticked
    result, calls, lines, clock = run(demo, ScriptedObserver([BOX, SUBMIT]), max_wait_s=1.0)
    assert result.status == "check" and clock.now >= 1.0
    assert result.message == ("step 1 (click_element): expected checkbox 'Remember me' checked=True, the screen "
                              "shows checked=False")
    assert len(calls) == 1  # the click was made; what it should have done was not seen


def test_a_successful_run_becomes_a_test_with_the_changes_it_made():
    """The agent's steps (as the loop records them) become demonstration steps; the element an
    action changed is expected, as the next screen showed it; refused actions are left out."""
    from caap.agent.regression import as_test
    from caap.records import ActionRecord, Outcome, StepRecord

    def record(n, elements, *actions):
        return StepRecord(step=n, elements=[e.to_json() for e in elements], actions=list(actions))

    click = ActionRecord(name="click_element", args={"element_id": 5}, element=BOX.to_json(),
                         outcome=Outcome.CHANGED_WITHIN)
    denied = ActionRecord(name="click_element", args={"element_id": 2}, element=SUBMIT.to_json(),
                          outcome=Outcome.DENIED)
    submit = ActionRecord(name="click_element", args={"element_id": 2}, element=SUBMIT.to_json(),
                          outcome=Outcome.CHANGED)
    steps = [record(1, [BOX, SUBMIT], click, denied),
             record(2, [BOX.model_copy(update={"checked": True}), SUBMIT], submit),
             record(3, [SUBMIT], ActionRecord(name="done", outcome=Outcome.DONE))]
    test = as_test("Tick it and submit.", steps, screen=(300, 200), origin={"task": "t", "seed": 1})
    assert [(s.action, s.element.text if s.element else None) for s in test.steps] == [
        ("click_element", "Remember me"), ("click_element", "Submit")]
    assert [(e.type.value, e.text, e.checked) for e in test.steps[0].expect] == [("checkbox", "Remember me", True)]
    assert test.steps[1].expect is None  # the submit button looks the same after it
    assert test.origin == {"task": "t", "seed": 1} and test.screen == {"width": 300, "height": 200}
