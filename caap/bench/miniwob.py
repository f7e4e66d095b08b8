"""MiniWoB++ tasks in a real Chromium window on a private X display, for benchmarking the vision-only agent.

The agent only sees pixels of :attr:`MiniWoBEnv.region` and acts with OS-level input on :attr:`MiniWoBEnv.display`.
Everything here that reads the page (reward, done, utterance) is for scoring and setup only.

Episodes are started the way the ``miniwob`` package does it (``core.endEpisode(0)``, ``Math.seedrandom(seed)``,
``core.startEpisodeReal()``), but without selenium, and by default without the episode time limit (the paper's
setting). One browser serves many tasks and episodes: :meth:`MiniWoBEnv.open` navigates it.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.util
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from caap.bench.browser import BrowserError, Chromium
from caap.bench.display import VirtualDisplay

__all__ = ["TASK_REGION", "MiniWoBEnv", "MiniWoBError", "Region", "list_tasks", "miniwob_html_dir"]

# Every MiniWoB task lives in #wrap, 160x210 CSS pixels at the page's (0, 0).
TASK_REGION = (160, 210)

# setTimeout treats delays above 2**31 - 1 ms as 1 ms, so "no time limit" is the largest delay it accepts (24.8 days).
_NO_TIME_LIMIT_MS = 2**31 - 1


class MiniWoBError(RuntimeError):
    """A MiniWoB task could not be found, loaded or started."""


@dataclass(frozen=True)
class Region:
    """A rectangle in screen coordinates on the environment's X display."""

    left: int
    top: int
    width: int
    height: int

    def as_mss(self) -> dict[str, int]:
        """The region as an mss grab argument."""
        return {"left": self.left, "top": self.top, "width": self.width, "height": self.height}


def miniwob_html_dir() -> Path:
    """The folder of the task pages (``<task>.html``) shipped in the ``miniwob`` package (which is not imported)."""
    spec = importlib.util.find_spec("miniwob")
    if spec is None or not spec.submodule_search_locations:
        raise MiniWoBError("the MiniWoB++ task pages come from the miniwob package, which is not installed: "
                           "pip install miniwob")
    folder = Path(next(iter(spec.submodule_search_locations))) / "html" / "miniwob"
    if not (folder.parent / "core" / "core.js").is_file():
        raise MiniWoBError(f"the miniwob package has no task pages at {folder} (a broken install?): "
                           "pip install --force-reinstall miniwob")
    return folder


def list_tasks() -> list[str]:
    """Names of all MiniWoB++ tasks, e.g. ``"click-button"``."""
    return sorted(path.stem for path in miniwob_html_dir().glob("*.html"))


class MiniWoBEnv:
    """A browser showing one MiniWoB task at a time on an X display, with seeded episodes.

    With ``display=None`` the environment starts (and owns) its own Xvfb. ``timer=True`` keeps MiniWoB's 10 s
    episode limit; by default there is none.
    """

    def __init__(self, *, display: str | None = None, chromium: str = "/usr/bin/chromium", timer: bool = False,
                 window_pos: tuple[int, int] = (50, 50)) -> None:
        self.chromium = chromium
        self.timer = timer
        self.window_pos = window_pos
        self._own_display: VirtualDisplay | None = None
        self._browser: Chromium | None = None
        self._task: str | None = None
        self._region: Region | None = None
        self._fresh = False  # the task page is newly loaded and no episode has run on it
        if display is None:
            self._own_display = VirtualDisplay().start()
            display = self._own_display.name
        self._display = display

    # --- what the harness may know ---------------------------------------------------------------------------

    @property
    def display(self) -> str:
        """The X display the task is shown on (for capture and input)."""
        return self._display

    @property
    def region(self) -> Region:
        """Where the task's 160x210 area is on the display; set by :meth:`open`."""
        if self._region is None:
            raise MiniWoBError("no task is open: call open(task) first")
        return self._region

    @property
    def task(self) -> str | None:
        return self._task

    @property
    def browser(self) -> Chromium | None:
        """The browser (setup and tests only: the agent must not read the page)."""
        return self._browser

    # --- tasks and episodes ----------------------------------------------------------------------------------

    def open(self, task: str) -> None:
        """Load ``task`` (starting a browser on first use, or if the last one died) and locate it on screen."""
        tasks = list_tasks()
        if task not in tasks:
            near = difflib.get_close_matches(task, tasks, n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else f"; list_tasks() gives all {len(tasks)}"
            raise MiniWoBError(f"unknown MiniWoB task {task!r}{hint}")
        url = (miniwob_html_dir() / f"{task}.html").as_uri()
        self._task = self._region = None
        browser = self._browser
        if browser is not None and not browser.alive:  # crashed or killed: replace it
            browser.close()
            browser = self._browser = None
        if browser is None:
            browser = Chromium(url, display=self._display, binary=self.chromium, window_pos=self.window_pos)
            browser.start()
            self._browser = browser
        else:
            browser.navigate(url)
        self._wait_for_core()
        left, top = browser.content_origin()
        self._region = Region(left, top, *TASK_REGION)
        self._task = task
        self._fresh = True

    def restart(self) -> None:
        """Replace the browser with a fresh one and reopen the current task (after a crash, say)."""
        task = self._task
        if self._browser is not None:
            self._browser.close()
            self._browser = None
        if task is not None:
            self.open(task)

    def reset(self, seed: int) -> None:
        """Start a new episode of the open task, generated from ``seed``, and return once it is on screen.

        The task page is loaded afresh first: widgets outside MiniWoB's episode area (a jQuery UI
        autocomplete menu, an open native dropdown, focus) otherwise survive into the next episode,
        and episodes must not depend on what the previous one left behind."""
        browser = self._page()
        if not self._fresh:  # open() has just loaded the page: no need to load it twice
            browser.navigate((miniwob_html_dir() / f"{self._task}.html").as_uri())
            self._wait_for_core()
        self._fresh = False
        setup = [
            "core.endEpisode(0);",  # a no-op unless an episode is running
            f"Math.seedrandom({int(seed)!r});",
            "" if self.timer else f"core.EPISODE_MAX_TIME = {_NO_TIME_LIMIT_MS};",
            "core.startEpisodeReal();",
            "true",
        ]
        try:
            browser.evaluate("\n".join(setup))
        except BrowserError as exc:
            if not browser.alive:
                raise
            raise MiniWoBError(f"task {self._task} could not start an episode: {exc}") from None
        deadline = time.monotonic() + 2.0
        while not browser.evaluate("WOB_TASK_READY === true"):  # some tasks load data before they are ready
            if time.monotonic() > deadline:
                raise MiniWoBError(f"task {self._task} did not become ready within 2 s after reset({seed})")
            time.sleep(0.02)
        # The episode's icons are CSS images fetched once its elements exist: an agent that looked
        # before they were painted saw an inbox without its search and row icons (1 of 1,340 episodes).
        browser.wait_for_images()
        browser.wait_for_paint()

    def _page(self) -> Chromium:
        if self._browser is None or self._task is None:
            raise MiniWoBError("no task is open: call open(task) first")
        return self._browser

    def _wait_for_core(self) -> None:
        """The page has loaded; make sure it is a MiniWoB page whose core is up."""
        assert self._browser is not None
        ok = self._browser.evaluate("typeof core === 'object' && typeof core.startEpisodeReal === 'function' "
                                    "&& typeof genProblem === 'function'")
        if not ok:
            raise MiniWoBError(f"{self._browser.url} loaded, but it is not a MiniWoB task page (no core.js?)")

    # --- scoring only: the agent never sees these ------------------------------------------------------------

    def reward(self) -> float:
        """The episode's reward as MiniWoB reports it (time-discounted only when ``timer`` is on)."""
        return float(self._page().evaluate("WOB_REWARD_GLOBAL"))

    def raw_reward(self) -> float:
        """The episode's reward before any time discount."""
        return float(self._page().evaluate("WOB_RAW_REWARD_GLOBAL"))

    def done(self) -> bool:
        return bool(self._page().evaluate("WOB_DONE_GLOBAL"))

    def secrets(self) -> dict[str, str]:
        """MiniWoB++'s tasks give no secret (a login task's password is part of its instruction)."""
        return {}

    def utterance(self) -> str:
        """The task's instruction, as the query bar shows it. The natural-language tasks (-nl, -turk)
        return an object from ``core.getUtterance()`` whose ``fields`` hold the answer: only its
        ``utterance`` text is the instruction."""
        return str(self._page().evaluate("""(() => {
            const u = typeof core.getUtterance === 'function' ? core.getUtterance() : null;
            if (u && typeof u === 'object') return String(u.utterance ?? '');
            if (typeof u === 'string') return u;
            return (document.getElementById('query')?.textContent || '').replace(/\\s+/g, ' ').trim(); })()"""))

    # --- shutdown --------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the browser, then the display if this environment started it. Safe to call twice."""
        browser, self._browser = self._browser, None
        display, self._own_display = self._own_display, None
        self._task = self._region = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if display is not None:
                display.close()

    def __enter__(self) -> MiniWoBEnv:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
