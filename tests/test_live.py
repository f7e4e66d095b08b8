"""caap on a real X screen: Xvfb, Chromium, mss capture, OS input through pyautogui and xdotool.

The tests may read the page's DOM to know where targets are and what happened; caap itself never
does. They start their own Xvfb (CI has no display) and skip, naming the package, only if Xvfb or
Chromium is not installed.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

import pytest
from live_marks import LIVE
from typer.testing import CliRunner

from caap.act.actions import ScreenState, execute, plan
from caap.act.backends import ExecutorError, XdotoolExecutor, make_executor
from caap.act.calibrate import calibrate
from caap.agent.loop import Agent
from caap.config import AgentConfig
from caap.decide.llm import LLMReply, Usage
from caap.decide.prompter import CaapPrompter, PromptOptions
from caap.elements import Element
from caap.observe.capture.live import CaptureTarget, LiveScreen, SettleOptions
from caap.observe.capture.screen import ScreenError
from caap.observe.observation import StaticObserver

pytestmark = LIVE

PAGE = Path(__file__).parent / "pages" / "actions.html"
BACKENDS = ["xdotool", "pyautogui"]


@pytest.fixture(scope="session")
def xvfb():
    from caap.bench.display import VirtualDisplay

    with VirtualDisplay(1024, 768) as display:
        yield display


@pytest.fixture(autouse=True)
def _display_env(monkeypatch, xvfb):
    # pyautogui binds to $DISPLAY when first imported: every test in the session uses this one.
    monkeypatch.setenv("DISPLAY", xvfb.name)


@pytest.fixture(scope="module")
def page(xvfb):
    from caap.bench.browser import Chromium

    with Chromium(PAGE.as_uri(), display=xvfb.name, window_pos=(40, 30), window_size=(520, 420)) as browser:
        ox, oy = browser.content_origin()
        yield browser, (ox, oy, 400, 300)


def dom_elements(browser) -> list[Element]:
    rects = browser.evaluate("""[...document.querySelectorAll('#wrap > *')].map(e => {
        const r = e.getBoundingClientRect(); return [e.id, r.left, r.top, r.right, r.bottom]; })""")
    types = {"btn": "button", "hover": "text", "t1": "input_field", "t2": "input_field", "drag": "text",
             "scroller": "text_area"}
    out = []
    for n, (eid, x1, y1, x2, y2) in enumerate(rects, start=1):
        out.append(Element(id=n, type=types[eid], bbox=[round(x1), round(y1), round(x2), round(y2)], text=eid))
    return out


def by_text(elements, text):
    return next(e for e in elements if e.text == text)


def events(browser, kind=None):
    log = browser.evaluate("window.log")
    return [e for e in log if kind is None or e["type"] == kind]


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_action_lands_where_intended(page, backend):
    browser, region = page
    screen = LiveScreen(CaptureTarget(kind="region", region=region))
    frame = screen.capture()
    assert frame.size == (400, 300)
    executor = make_executor(backend, lambda: screen.mapping, failsafe=False)
    els = dom_elements(browser)
    state = ScreenState(els, 400, 300)
    browser.evaluate("window.log = []; document.getElementById('t1').value = ''; "
                     "document.getElementById('t2').value = ''; document.getElementById('scroller').scrollTo(0, 0)")

    def act(name, **args):
        action = plan(name, args, state)
        execute(action, executor)
        time.sleep(0.15)
        return action

    def reset_log():
        browser.evaluate("window.log = []")

    btn = by_text(els, "btn")
    a = act("click_element", element_id=btn.id)
    click = events(browser, "click")[-1]
    assert (click["id"], click["button"], click["detail"], click["ctrl"]) == ("btn", 0, 1, False)
    assert abs(click["x"] - a.point[0]) <= 1 and abs(click["y"] - a.point[1]) <= 1, (click, a.point)

    reset_log()
    act("control_click_element", element_id=btn.id)
    assert events(browser, "click")[-1]["ctrl"] is True

    reset_log()
    act("double_click_element", element_id=btn.id)
    assert len(events(browser, "dblclick")) == 1

    reset_log()
    act("right_click_element", element_id=btn.id)
    assert events(browser, "contextmenu")[-1]["button"] == 2

    reset_log()
    act("point_element", element_id=by_text(els, "hover").id)
    assert any(e["id"] == "hover" for e in events(browser, "mouseover"))
    assert not events(browser, "click")

    text = "héllo wörld ß – ok"
    act("click_element", element_id=by_text(els, "t1").id)
    act("type_text", string_to_type=text)
    assert browser.evaluate("document.getElementById('t1').value") == text

    act("press_control_A")
    assert browser.evaluate("[document.activeElement.id, document.activeElement.selectionStart, "
                            "document.activeElement.selectionEnd]") == ["t1", 0, len(text)]
    act("press_control_C")
    act("click_element", element_id=by_text(els, "t2").id)
    act("press_control_V")
    assert browser.evaluate("document.getElementById('t2').value") == text

    reset_log()
    act("press_key", key="shift+tab")
    assert browser.evaluate("document.activeElement.id") == "t1"
    act("press_key", key="enter")
    assert events(browser, "keydown")[-1]["key"] == "Enter"

    reset_log()
    drag = by_text(els, "drag")
    start, end = (drag.bbox[0] + 10, drag.bbox[1] + 10), (drag.bbox[0] + 200, drag.bbox[1] + 40)
    act("drag_mouse_hold_down", x=start[0], y=start[1])
    act("drag_mouse_move", x=(start[0] + end[0]) // 2, y=(start[1] + end[1]) // 2)
    act("drag_mouse_move", x=end[0], y=end[1])
    act("drag_mouse_release")
    down, up = events(browser, "mousedown")[-1], events(browser, "mouseup")[-1]
    assert (down["x"], down["y"]) == start and (up["x"], up["y"]) == end
    moves = events(browser, "mousemove")
    assert moves and all(m["buttons"] & 1 for m in moves) and (moves[-1]["x"], moves[-1]["y"]) == end

    scroller = by_text(els, "scroller")
    act("scroll", direction="down", element_id=scroller.id)
    act("scroll", direction="right", amount=2, element_id=scroller.id)
    top, left = browser.evaluate("[document.getElementById('scroller').scrollTop, "
                                 "document.getElementById('scroller').scrollLeft]")
    assert top > 0 and left > 0
    act("scroll", direction="up", amount=10, element_id=scroller.id)
    deadline = time.monotonic() + 3  # Chromium scrolls smoothly: give the animation time to end
    while browser.evaluate("document.getElementById('scroller').scrollTop") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert browser.evaluate("document.getElementById('scroller').scrollTop") == 0
    screen.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_calibration_error_is_at_most_one_pixel(backend):
    screen = LiveScreen()
    screen.capture()
    result = calibrate(screen, make_executor(backend, lambda: screen.mapping, failsafe=False), grid=3)
    screen.close()
    assert len(result.points) == 9
    assert result.max_error <= 1.0, result.points
    assert screen.mapping.scale == 1.0


@pytest.mark.parametrize("scale", [1.25, 1.5, 2.0])
def test_calibration_at_device_scale_factors(scale):
    """A window drawn as a HiDPI application draws it (grown by the factor) is clicked as exactly."""
    screen = LiveScreen()
    screen.capture()
    result = calibrate(screen, make_executor("xdotool", lambda: screen.mapping, failsafe=False), grid=3,
                       scale=scale)
    screen.close()
    assert len(result.points) == 9
    spread = max(p["expected_os"][0] for p in result.points) - min(p["expected_os"][0] for p in result.points)
    assert spread == pytest.approx((420 - 40) * scale, abs=2)  # the markers did move apart with the factor
    assert result.max_error <= 1.0, result.points


def test_calibrate_command(xvfb):
    from caap.cli import app

    result = CliRunner().invoke(app, ["calibrate", "--backend", "xdotool", "--json"], env={"DISPLAY": xvfb.name})
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["ok"] and payload["max_error_px"] <= 1.0 and len(payload["points"]) == 9


def test_settle_waits_for_the_screen_to_stop_changing(page):
    browser, region = page
    screen = LiveScreen(CaptureTarget(kind="region", region=region))
    before = screen.capture()
    # Something moves on every frame for ~300 ms after the "action".
    browser.evaluate("""(() => { const b = document.getElementById('hover'); const t0 = performance.now();
        const step = (t) => { b.style.left = (100 + Math.floor((t - t0) / 10)) + 'px';
                              if (t - t0 < 300) requestAnimationFrame(step); };
        requestAnimationFrame(step); })()""")
    after = screen.settle(before)
    info = screen.last_settle
    assert not info["timed_out"] and info["frames"] >= 3 and info["ms"] >= 200, info
    assert screen.capture().tobytes() == after.tobytes()
    browser.evaluate("document.getElementById('hover').style.left = '100px'")
    screen.close()


def test_settle_waits_for_an_app_slow_to_start_reacting_and_counts_quiet_from_the_last_change(page):
    browser, region = page
    screen = LiveScreen(CaptureTarget(kind="region", region=region),
                        settle=SettleOptions(min_wait_s=0.15, interval_s=0.04, timeout_s=3.0, poll_s=0.01))
    before = screen.capture()
    nothing = screen.settle(before)  # nothing happens: taken as unchanged once min_wait + interval are over
    assert nothing.tobytes() == before.tobytes()
    assert screen.last_settle["changed"] is False and screen.last_settle["ms"] >= 190, screen.last_settle
    # The app draws 100 ms after the "action": the settle must not take the frame before it.
    browser.evaluate("setTimeout(() => { document.getElementById('hover').style.left = '160px'; }, 100)")
    after = screen.settle(before)
    info = screen.last_settle
    assert after.tobytes() != before.tobytes() and info["changed"] and not info["timed_out"], info
    assert screen.capture().tobytes() == after.tobytes()
    browser.evaluate("document.getElementById('hover').style.left = '100px'")
    screen.settle(after)
    screen.close()


class OnePlanner:
    def __init__(self, text):
        self.text = text

    def complete(self, prompt, tools=None):
        return LLMReply(content=self.text, tool_calls=[], usage=Usage(1, 1), latency_s=0, cost_usd=0.0, retries=0,
                        model="x")


def test_stop_hotkey_halts_a_running_loop(page, xvfb):
    from caap.act.safety import StopHotkey

    browser, region = page
    browser.evaluate("document.activeElement.blur()")  # no caret to vanish when the canvas is clicked
    screen = LiveScreen(CaptureTarget(kind="region", region=region))
    stop = threading.Event()
    executor = XdotoolExecutor(lambda: screen.mapping, display=xvfb.name)
    clicks = []
    original = executor.click

    def click(*a, **kw):
        clicks.append(time.monotonic())
        original(*a, **kw)
        if len(clicks) == 2:  # the user presses the hotkey while the agent is working
            subprocess.run(["xdotool", "key", "ctrl+alt+x"], env={"DISPLAY": xvfb.name}, check=True)
            time.sleep(0.3)

    # Park the pointer on the canvas first: leaving an element an earlier test hovered would repaint it
    # on the first click, and a changed screen rightly ends the batch early.
    executor.move(350, 250)
    time.sleep(0.3)
    executor.click = click
    # Each answer asks for three clicks on empty canvas: nothing changes, so all would run.
    answer = "\n".join(f"Action_{n}=(Action: functions.click_new_point, Argument: {{x: 350, y: {250 + n}}})"
                       for n in range(2, 5))
    agent = Agent(screen=screen, observer=StaticObserver(dom_elements(browser)), executor=executor,
                  planner=OnePlanner(answer), prompter=CaapPrompter(PromptOptions(mode="text")),
                  config=AgentConfig(max_steps=10), stop=stop)
    with StopHotkey(stop):
        result = agent.run("keep clicking")
    screen.close()
    assert result.status == "stopped"
    assert len(clicks) == 2  # the third planned click never reached the OS
    assert result.steps == 1, agent.steps


def test_confirmation_gate_denies_a_live_click_by_default(page, xvfb):
    from caap.act.safety import ConfirmationGate, terminal_ask

    browser, region = page
    browser.evaluate("window.log = []; document.getElementById('btn').textContent = 'Delete'")
    screen = LiveScreen(CaptureTarget(kind="region", region=region))
    els = [e.model_copy(update={"text": "Delete"}) if e.text == "btn" else e for e in dom_elements(browser)]
    btn = next(e for e in els if e.text == "Delete")
    answers = [f"Action_2=(Action: functions.click_element, Argument: {{element_id: {btn.id}}})",
               "Action_2=(Action: functions.fail, Argument: {reason: \"not allowed\"})"]

    class Planner:
        def __init__(self):
            self.prompts = []

        def complete(self, prompt, tools=None):
            self.prompts.append(prompt)
            return OnePlanner(answers.pop(0)).complete(prompt)

    import io
    planner = Planner()
    agent = Agent(screen=screen, observer=StaticObserver(els), executor=XdotoolExecutor(lambda: screen.mapping),
                  planner=planner, prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig(),
                  approve=ConfirmationGate(ask=terminal_ask(5, stream_in=io.StringIO(""), stream_out=io.StringIO())))
    result = agent.run("Delete the item")
    screen.close()
    browser.evaluate("document.getElementById('btn').textContent = 'Button'")
    assert result.status == "failed"
    assert events(browser, "click") == []  # nothing reached the page
    assert "the user did not allow click_element" in planner.prompts[1]


def test_live_caap_run_acts_through_the_os(page, xvfb, tmp_path):
    from caap.cli import app
    from caap.testing.llm_server import Reply, ScriptedLLMServer

    browser, region = page
    browser.evaluate("window.log = []")
    els = dom_elements(browser)
    elements_file = tmp_path / "els.json"
    elements_file.write_text(json.dumps({"elements": [e.to_json() for e in els]}))
    btn = by_text(els, "btn")
    script = [Reply(tool_calls=[("click_element", {"element_id": btn.id})]),
              Reply(tool_calls=[("done", {"reason": "clicked"})])]
    with ScriptedLLMServer(script, models=["gpt-4o"]) as server:
        result = CliRunner().invoke(app, [
            "run", "Click the button", "--elements", str(elements_file), "--region", ",".join(map(str, region)),
            "--backend", "xdotool", "--trace-dir", str(tmp_path / "runs"), "--json"],
            env={"DISPLAY": xvfb.name, "OPENAI_BASE_URL": server.base_url})
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output.strip().splitlines()[-1])
    assert payload["status"] == "done" and payload["actions"][0]["name"] == "click_element"
    assert payload["actions"][0]["settle"]["frames"] >= 2
    clicks = events(browser, "click")
    assert len(clicks) == 1 and clicks[0]["id"] == "btn"
    assert "Ctrl+Alt+X" in result.output  # the stop hotkey is announced at start


def test_missing_display_and_bad_backend_are_clear_errors(monkeypatch):
    monkeypatch.delenv("DISPLAY")
    with pytest.raises(ScreenError, match="no display"):
        LiveScreen().capture()
    with pytest.raises(ScreenError, match="cannot open display :93"):
        LiveScreen(display=":93").capture()
    with pytest.raises(ExecutorError, match="no display"):
        XdotoolExecutor(lambda: None)
    with pytest.raises(ExecutorError, match="unknown executor backend"):
        make_executor("telepathy", lambda: None)
    monkeypatch.setenv("DISPLAY", ":93")
    ex = XdotoolExecutor(lambda: LiveScreen().mapping)
    with pytest.raises(ExecutorError, match="xdotool"):
        ex.move(1, 1)


def test_window_capture_by_title(page):
    screen = LiveScreen(CaptureTarget(kind="window", window="caap executor test page"))
    image = screen.capture()
    assert image.width >= 400 and image.height >= 300
    with pytest.raises(ScreenError, match="no visible window"):
        LiveScreen(CaptureTarget(kind="window", window="no such window title 123")).capture()
    screen.close()


def _click_button_target(env) -> Element:
    """Test-side DOM oracle: the button the utterance names, as the element the observer would report."""
    import re

    name = re.fullmatch(r'Click on the "(.+)" button\.', env.utterance()).group(1)
    x1, y1, x2, y2 = env.browser.evaluate(
        "(() => { const b = [...document.querySelectorAll('#area button')].find(b => b.textContent === "
        f"{json.dumps(name)}); const r = b.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }})()")
    return Element(id=1, type="button", bbox=[round(x1), round(y1), round(x2), round(y2)], text=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_click_button_episodes_earn_reward_through_the_os_executor(xvfb, backend):
    from caap.bench.miniwob import MiniWoBEnv

    with MiniWoBEnv(display=xvfb.name) as env:
        env.open("click-button")
        r = env.region
        screen = LiveScreen(CaptureTarget(kind="region", region=(r.left, r.top, r.width, r.height)))
        executor = make_executor(backend, lambda: screen.mapping, failsafe=False)
        for seed in (0, 1, 2):
            env.reset(seed)
            frame = screen.capture()
            assert frame.size == (160, 210)
            target = _click_button_target(env)
            action = plan("click_element", {"element_id": 1}, ScreenState([target], 160, 210))
            execute(action, executor)
            screen.settle(frame)
            assert env.done() and env.reward() > 0.99, (seed, env.utterance(), target)
        screen.close()
