"""The benchmark harness for real: Xvfb, Chromium over the DevTools pipe, MiniWoB episodes and OS-level clicks.

Every test starts its own X server; nothing here touches the developer's $DISPLAY.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from caap.bench.browser import BrowserError, Chromium, find_origin_marker, grab_display
from caap.bench.display import DisplayError, VirtualDisplay, group_members
from caap.bench.miniwob import TASK_REGION, MiniWoBEnv, MiniWoBError, Region, list_tasks

CHROMIUM = "/usr/bin/chromium"

needs_xvfb = pytest.mark.skipif(shutil.which("Xvfb") is None,
                                reason="Xvfb is not installed (Debian package xvfb)")
needs_chromium = pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                                    reason=f"Chromium is not installed at {CHROMIUM} (Debian package chromium)")
needs_xdotool = pytest.mark.skipif(shutil.which("xdotool") is None,
                                   reason="xdotool is not installed (Debian package xdotool)")
needs_miniwob = pytest.mark.skipif(importlib.util.find_spec("miniwob") is None,
                                   reason="the MiniWoB++ task pages are not installed (pip install miniwob)")

TEST_PAGE = ("data:text/html,<title>caap</title><body style='margin:0;background:white'>"
             "<p id='p'>hello</p></body>")


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --- the display -----------------------------------------------------------------------------------------------


@needs_xvfb
def test_virtual_display_starts_and_closes() -> None:
    display = VirtualDisplay(640, 480).start()
    pid = display.pid
    assert pid is not None
    try:
        assert re.fullmatch(r":\d+", display.name)
        assert display.alive
        assert grab_display(display.name).shape == (480, 640, 3)
    finally:
        display.close()
    assert not display.alive
    assert not _exists(pid)
    display.close()  # idempotent


@needs_xvfb
def test_two_displays_get_different_names() -> None:
    with VirtualDisplay(320, 240) as a, VirtualDisplay(320, 240) as b:
        assert a.name != b.name
        assert a.alive and b.alive


def test_missing_xvfb_binary_says_what_to_install() -> None:
    with pytest.raises(DisplayError, match="install the Debian package xvfb"):
        VirtualDisplay(xvfb="/nonexistent/Xvfb").start()


@needs_xvfb
def test_xvfb_dying_at_start_is_reported() -> None:
    with pytest.raises(DisplayError, match=r"Xvfb exited at start \(code \d+\)"):
        VirtualDisplay(depth=3).start()  # no such visual depth: the server refuses to start


# --- the browser -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def xdisplay():
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    with VirtualDisplay(800, 600) as display:
        yield display


@needs_chromium
def test_chromium_page_origin_and_evaluate(xdisplay: VirtualDisplay) -> None:
    with Chromium(TEST_PAGE, display=xdisplay.name, window_pos=(30, 40)) as browser:
        assert browser.alive
        origin = browser.content_origin()
        print("content origin of a window at (30, 40):", origin)
        assert 30 <= origin[0] <= 90 and 40 <= origin[1] <= 120
        # The marker is gone again and the page is back on screen: white where the body is (a spot
        # away from the text, whose glyphs depend on the installed fonts).
        assert browser.evaluate("document.getElementById('__caap_origin_marker')") is None
        browser.wait_for_paint()
        # requestAnimationFrame says the page painted, not that the X server shows it yet: poll.
        deadline = time.monotonic() + 3
        while (pixel := tuple(grab_display(xdisplay.name)[origin[1] + 2, origin[0] + 150])) != (255, 255, 255):
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert pixel == (255, 255, 255)

        assert browser.evaluate("1 + 2") == 3
        assert browser.evaluate("document.title") == "caap"
        assert browser.evaluate("document.getElementById('p').textContent") == "hello"
        assert browser.evaluate("({a: [1, 'x', null], b: true})") == {"a": [1, "x", None], "b": True}
        assert browser.evaluate("undefined") is None
        assert browser.evaluate("Promise.resolve(7)") == 7
        with pytest.raises(BrowserError, match="boom"):
            browser.evaluate("throw new Error('boom')")
        with pytest.raises(BrowserError, match="failed"):
            browser.send("No.suchMethod")
        assert browser.evaluate("40 + 2") == 42  # still usable after errors
        profile = browser._profile
    assert profile is not None and not os.path.exists(profile)


@needs_chromium
def test_chromium_killed_is_reported(xdisplay: VirtualDisplay) -> None:
    browser = Chromium(TEST_PAGE, display=xdisplay.name).start()
    try:
        pid = browser.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(BrowserError, match=r"Chromium exited \(code -9"):
            browser.evaluate("1")
        assert not browser.alive
    finally:
        browser.close()
    browser.close()
    assert group_members(pid) == []


@pytest.mark.parametrize("at", [(0, 0), (37, 11), (92, 52)])
def test_find_origin_marker_in_synthetic_screens(at: tuple[int, int]) -> None:
    import numpy as np

    screen = np.zeros((60, 100, 3), dtype=np.uint8)
    screen[30:38, 60:64] = (255, 0, 255)  # a distractor: magenta without the cyan half
    x, y = at
    screen[y:y + 8, x:x + 4] = (255, 0, 255)
    screen[y:y + 8, x + 4:x + 8] = (0, 255, 255)
    assert find_origin_marker(screen) == at
    screen[y + 7, x + 5] = (0, 254, 255)  # one wrong pixel: not the marker any more
    assert find_origin_marker(screen) is None


def test_missing_chromium_binary_says_what_to_install() -> None:
    with pytest.raises(BrowserError, match="Chromium not found at /nonexistent/chromium: install the Debian package "
                                           "chromium"):
        Chromium(TEST_PAGE, display=":0", binary="/nonexistent/chromium").start()


# --- MiniWoB ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def env():
    if shutil.which("Xvfb") is None:
        pytest.skip("Xvfb is not installed (Debian package xvfb)")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (Debian package chromium)")
    if importlib.util.find_spec("miniwob") is None:
        pytest.skip("the MiniWoB++ task pages are not installed (pip install miniwob)")
    with MiniWoBEnv(chromium=CHROMIUM) as env:
        env.open("click-button")
        yield env


@needs_miniwob
def test_list_tasks() -> None:
    tasks = list_tasks()
    assert "click-button" in tasks and "enter-text" in tasks
    assert len(tasks) > 100


def test_open_unknown_task_is_a_clear_error(env: MiniWoBEnv) -> None:
    with pytest.raises(MiniWoBError, match=r"unknown MiniWoB task 'click-buton'.*click-button"):
        env.open("click-buton")
    with pytest.raises(MiniWoBError, match="unknown MiniWoB task 'no-such-task'"):
        env.open("no-such-task")
    assert env.task == "click-button"  # the open task is untouched


def _layout(env: MiniWoBEnv) -> list[str]:
    assert env.browser is not None
    return env.browser.evaluate("[...document.querySelectorAll('#area > *')].map(e => e.tagName + ':' + "
                                "e.textContent + ':' + (e.style.width || ''))")


def test_reset_is_seeded(env: MiniWoBEnv) -> None:
    env.reset(3)
    first, first_layout = env.utterance(), _layout(env)
    env.reset(3)
    assert env.utterance() == first
    assert _layout(env) == first_layout
    env.reset(4)
    assert (env.utterance(), _layout(env)) != (first, first_layout)
    assert env.reward() == 0.0
    assert env.done() is False
    assert re.fullmatch(r'Click on the ".+" button\.', env.utterance())


def test_reset_leaves_nothing_of_the_previous_episode(env: MiniWoBEnv) -> None:
    """An autocomplete menu opened in one episode (it lives outside MiniWoB's episode area) is gone
    after the next reset."""
    env.open("use-autocomplete")
    env.reset(43)
    env.browser.evaluate("$('#tags').val('Ma').autocomplete('search', 'Ma'); true")
    deadline = time.monotonic() + 3
    while not env.browser.evaluate("$('.ui-autocomplete:visible').length") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert env.browser.evaluate("$('.ui-autocomplete:visible').length") == 1
    env.reset(44)
    assert env.browser.evaluate("$('.ui-autocomplete:visible').length") == 0
    assert env.browser.evaluate("$('#tags').val()") == ""
    env.open("click-button")


def test_reset_returns_once_the_episodes_images_are_painted(env: MiniWoBEnv) -> None:
    """email-inbox draws its search, star and trash icons as CSS images of elements its script
    builds: the first look after a reset must find them on the screen (an inbox without them has no
    way to search)."""
    import mss
    import numpy as np

    env.open("email-inbox")
    try:
        for seed in (10, 11):
            env.reset(seed)
            with (getattr(mss, "MSS", None) or mss.mss)(display=env.display) as sct:
                shot = sct.grab(env.region.as_mss())
            pixels = np.frombuffer(shot.rgb, dtype=np.uint8).reshape(shot.height, shot.width, 3)
            header = np.all(pixels == (0xF9, 0x25, 0x25), axis=2)  # the inbox's red header bar
            rows = np.flatnonzero(header.sum(axis=1) > 100)
            assert rows.size, "no inbox header on the screen"
            right = int(np.flatnonzero(header[rows].any(axis=0)).max())  # the bar ends at the list's scroll bar
            bar = pixels[rows[0]:rows[-1] + 1, 100:right + 1]  # where the search icon sits (all red when hidden)
            assert not np.all(bar == (0xF9, 0x25, 0x25)), f"seed {seed}: the search icon is not painted"
            assert env.browser.wait_for_images() >= 3  # search, star, trash (at least)
    finally:
        env.open("click-button")


def test_region_shows_the_task(env: MiniWoBEnv) -> None:
    import numpy as np

    env.reset(5)
    region = env.region
    assert isinstance(region, Region)
    assert (region.width, region.height) == TASK_REGION
    import mss

    with (getattr(mss, "MSS", None) or mss.mss)(display=env.display) as sct:
        shot = sct.grab(region.as_mss())
    assert shot.size == (160, 210)
    pixels = np.frombuffer(shot.rgb, dtype=np.uint8).reshape(210, 160, 3)
    yellow = np.all(pixels[:3] == (255, 255, 0), axis=2)  # the query bar, above its text
    assert yellow.all()
    white = np.all(pixels[50:] == (255, 255, 255), axis=2)
    assert white.mean() > 0.6
    # Just outside the region is the page's grey background, not the task.
    assert tuple(grab_display(env.display)[region.top + 220, region.left + 10]) == (0x55, 0x55, 0x55)


@needs_xdotool
def test_click_correct_button_with_real_input(env: MiniWoBEnv) -> None:
    env.reset(11)
    target = re.fullmatch(r'Click on the "(.+)" button\.', env.utterance())
    assert target is not None
    assert env.browser is not None
    # Test side only: the DOM tells us where the right button is; the click itself is a real X pointer event.
    rect = env.browser.evaluate(
        f"(() => {{ const b = [...document.querySelectorAll('#area button')].find(b => b.textContent === "
        f"{target.group(1)!r}); const r = b.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }})()")
    x = env.region.left + round(rect[0] + rect[2] / 2)
    y = env.region.top + round(rect[1] + rect[3] / 2)
    subprocess.run(["xdotool", "mousemove", "--sync", str(x), str(y), "click", "1"],
                   env={**os.environ, "DISPLAY": env.display}, check=True, timeout=10)
    deadline = time.monotonic() + 5
    while not env.done() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert env.done()
    assert env.reward() > 0.9  # no time limit, so practically the full reward
    env.reset(12)
    assert not env.done()


@needs_miniwob
def test_close_leaves_no_processes_and_recovers_from_a_dead_browser() -> None:
    if shutil.which("Xvfb") is None or not os.access(CHROMIUM, os.X_OK):
        pytest.skip("needs Xvfb and Chromium (Debian packages xvfb and chromium)")
    env = MiniWoBEnv(chromium=CHROMIUM, window_pos=(0, 0))
    try:
        env.open("click-link")
        assert env.region == Region(0, 0, *TASK_REGION)
        assert env.browser is not None and env.browser.pid is not None
        os.kill(env.browser.pid, signal.SIGKILL)
        with pytest.raises(BrowserError, match="Chromium exited"):
            env.reset(1)
        env.open("click-link")  # a dead browser is replaced
        env.reset(1)
        assert not env.done()
        assert env._own_display is not None and env.browser is not None
        xvfb_pid, chromium_pid = env._own_display.pid, env.browser.pid
        assert xvfb_pid is not None and chromium_pid is not None
    finally:
        env.close()
    assert not _exists(xvfb_pid)
    assert group_members(chromium_pid) == []
    env.close()  # twice is fine
    with pytest.raises(MiniWoBError, match="no task is open"):
        env.reset(2)


CTRL_C_CHILD = """
import sys, time
from caap.bench.miniwob import MiniWoBEnv
with MiniWoBEnv(chromium=sys.argv[1]) as env:
    env.open("click-button")
    env.reset(0)
    print(env._own_display.pid, env.browser.pid, flush=True)
    time.sleep(60)
"""


@needs_miniwob
def test_ctrl_c_shuts_browser_and_display_down() -> None:
    if shutil.which("Xvfb") is None or not os.access(CHROMIUM, os.X_OK):
        pytest.skip("needs Xvfb and Chromium (Debian packages xvfb and chromium)")
    import sys

    # Started as from a terminal: a test run launched in the background (`cmd &` in a script)
    # inherits SIGINT ignored, and Python then never turns Ctrl-C into KeyboardInterrupt.
    child = subprocess.Popen([sys.executable, "-c", CTRL_C_CHILD, CHROMIUM], stdout=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        xvfb_pid, chromium_pid = (int(p) for p in child.stdout.readline().split())
        child.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C delivers
        child.wait(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
    deadline = time.monotonic() + 5
    while (_exists(xvfb_pid) or group_members(chromium_pid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _exists(xvfb_pid)
    assert group_members(chromium_pid) == []


def test_a_natural_language_task_gives_its_sentence_not_its_answer(env: MiniWoBEnv) -> None:
    # The -turk pages' core.getUtterance() returns {utterance, fields}; the fields are the answer.
    env.open("email-inbox-nl-turk")
    env.reset(0)
    text = env.utterance()
    assert text and "fields" not in text and not text.startswith("{")
    assert env.browser is not None
    assert text == env.browser.evaluate("core.getUtterance().utterance")
    env.open("click-button")
