"""A desktop task's environment: a private desktop (Xvfb, D-Bus and the AT-SPI bus of
``caap.bench.desktop.session``) that outlives many episodes, and per episode the task's application
started afresh with the seed's parameters and a fresh home folder.

The agent sees the whole virtual screen (the application's main window at its top-left corner,
dialogs where the toolkit puts them) and acts on it through xdotool; the episode is scored by the
task's checks on the application's final state (``FinalState``), read after the agent has
finished. The accessibility tree (Tk: its own introspection) is read only to score, and by the
oracle observer (``caap.bench.desktop.oracle``) that measures the planner with perfect perception.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from caap.bench.desktop.checks import FinalState, verify_all
from caap.bench.desktop.session import DesktopError, DesktopSession, XWindow, atspi_missing
from caap.bench.desktop.task import DesktopTask
from caap.bench.desktop.tasks import TASKS
from caap.bench.miniwob import Region

SCREEN = (1024, 768)  # the virtual screen: every application's window fits, and a first look stays short
WINDOW_TIMEOUT_S = 20.0
TREE_TIMEOUT_S = 15.0
EXIT_WAIT_S = 2.0  # for an application that ends on the agent's last click (a dialog answered)


class ClickToFocus:
    """An executor on the private desktop that does what a window manager does there is none of:
    a press in a window gives that window the keyboard focus (the topmost top-level window under
    the pointer; X's own stacking order). Keys typed into a dialog then reach the dialog. Every
    other call goes to the executor as it is."""

    def __init__(self, executor: Any, session: DesktopSession, origin: tuple[int, int] = (0, 0)) -> None:
        self._executor, self._session, self._origin = executor, session, origin

    def __getattr__(self, name: str) -> Any:
        return getattr(self._executor, name)

    def _focus(self, x: int, y: int) -> None:
        px, py = x + self._origin[0], y + self._origin[1]
        under = [w for w in self._session.windows() if not w.override_redirect
                 and w.box[0] <= px < w.box[2] and w.box[1] <= py < w.box[3]]
        if not under:
            return
        with contextlib.suppress(DesktopError):  # a window that went away: the press still goes
            # Focused already (the main window from the start, a dialog that took it): left alone,
            # since focusing a window again makes some toolkits redraw it.
            if self._session.xdotool("getwindowfocus").strip() != str(under[-1].id):
                self._session.xdotool("windowfocus", str(under[-1].id))

    def click(self, x: int, y: int, **kwargs: Any) -> None:
        self._focus(x, y)
        self._executor.click(x, y, **kwargs)

    def mouse_down(self, x: int, y: int, **kwargs: Any) -> None:
        self._focus(x, y)
        self._executor.mouse_down(x, y, **kwargs)


class DesktopEnv:
    """The environment ``caap bench desktop`` runs episodes in (the interface of ``MiniWoBEnv`` the
    benchmark harness uses: ``open``, ``reset``, ``utterance``, ``region``, ``display``, ``reward``,
    ``done``, ``restart``, ``close``)."""

    def __init__(self, *, display: str | None = None, size: tuple[int, int] = SCREEN) -> None:
        del display  # each environment runs its own display (the session's Xvfb)
        missing = atspi_missing()
        if missing is not None:
            raise DesktopError(f"the desktop benchmark needs the accessibility bus: {missing} "
                               "(bash tools/setup.sh --system desktop)")
        self.size = size
        self.session = DesktopSession(*size).start()
        self._task: DesktopTask | None = None
        self._params: dict[str, str] = {}
        self._proc: subprocess.Popen[bytes] | None = None
        self._tk: Any = None
        self._output: Path | None = None
        self.failures: list[str] = []  # what the checks found wrong at the last reward()

    # --- what the harness reads -----------------------------------------------------------------
    @property
    def display(self) -> str:
        return self.session.display.name

    @property
    def region(self) -> Region:
        return Region(0, 0, self.size[0], self.size[1])

    @property
    def task(self) -> str | None:
        return self._task.name if self._task else None

    @property
    def current(self) -> DesktopTask:
        if self._task is None:
            raise DesktopError("no task is open")
        return self._task

    @property
    def params(self) -> dict[str, str]:
        return dict(self._params)

    @property
    def pid(self) -> int | None:
        if self._tk is not None:
            return int(self._tk.pid)
        return self._proc.pid if self._proc is not None else None

    @property
    def tk(self) -> Any:
        """The Tk demo's driver (``caap.bench.desktop.tk.TkDemo``) for a Tk task, else None."""
        return self._tk

    def open(self, task: str) -> None:
        if task not in TASKS:
            raise DesktopError(f"no desktop task {task!r}")
        self._task = TASKS[task]

    def utterance(self) -> str:
        return self.current.instruction_for(self._params)

    def secrets(self) -> dict[str, str]:
        """The episode's secrets (a password the task gives), by name."""
        return self.current.secrets_for(self._params)

    # --- an episode -------------------------------------------------------------------------------
    def reset(self, seed: int) -> None:
        """The task's application, started afresh for ``seed`` in a fresh home folder, its window at
        the top-left corner and its accessibility tree on the bus."""
        task = self.current
        self._stop_app()
        self._fresh_home()
        self._params = task.params_for(seed)
        home = self.session.home
        for rel, text in task.files.items():
            target = home / rel.format(**self._params)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text.format(**self._params), encoding="utf-8")
        argv = task.command(self._params, str(home))
        if task.toolkit == "tk":
            from caap.bench.desktop import tk

            self._tk = tk.TkDemo(self.session)
            if argv[0] != "widget":
                self._tk.ask({"cmd": "demo", "name": argv[0]})
            for script in task.tcl:
                self._tk.tcl(script.format(**self._params))
        else:
            self._output = home.parent / "app-output.txt"
            self._output.unlink(missing_ok=True)
            self._proc = self._launch(argv, self._output)
        windows = self.session.wait_for_windows(WINDOW_TIMEOUT_S)
        if not windows:
            raise DesktopError(f"{task.app} showed no window in {WINDOW_TIMEOUT_S:.0f} s: "
                               f"{self.session.log_of(argv[0]) or 'no output'}")
        self._place(windows)
        if task.toolkit != "tk":
            self._wait_for_tree()
        self.session.settle((0, 0, *self.size), timeout=3.0)
        self.failures = []

    def _launch(self, argv: list[str], output: Path) -> subprocess.Popen[bytes]:
        """The application with its stdout kept (zenity answers there), stderr to the session's log."""
        env = self.session.env()
        log = open(self.session.home.parent / f"{Path(argv[0]).name}.log", "ab")  # noqa: SIM115 - the child holds it
        out = open(output, "wb")  # noqa: SIM115
        try:
            return subprocess.Popen(argv, env=env, cwd=str(self.session.home), stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=log, start_new_session=True)
        except OSError as exc:
            raise DesktopError(f"could not start {argv[0]}: {exc}") from None
        finally:
            log.close()
            out.close()

    def _place(self, windows: list[XWindow]) -> None:
        """The main window (the largest) at the top-left corner, with the keyboard focus (no window
        manager gives it), the pointer out of the way (no tooltip)."""
        regular = [w for w in windows if not w.override_redirect]
        main = max(regular, key=lambda w: (w.box[2] - w.box[0]) * (w.box[3] - w.box[1]), default=None)
        if main is None:
            return
        if main.box[:2] != (0, 0):
            self.session.xdotool("windowmove", str(main.id), "0", "0")
        if self.current.size is not None:
            self.session.xdotool("windowsize", str(main.id), *map(str, self.current.size))
        self.session.xdotool("windowfocus", str(main.id))
        self.session.xdotool("mousemove", str(self.size[0] - 1), str(self.size[1] - 1))
        time.sleep(0.2)

    def _wait_for_tree(self) -> None:
        deadline = time.monotonic() + TREE_TIMEOUT_S
        while time.monotonic() < deadline and self._proc is not None and self._proc.poll() is None:
            nodes = self.session.walk(self._proc.pid, max_nodes=50, max_seconds=5).get("nodes", [])
            if any(n.get("depth") == 1 and n.get("box") for n in nodes):
                return
            time.sleep(0.3)
        raise DesktopError(f"{self.current.app} never showed its window on the accessibility bus")

    def executor(self, executor: Any) -> ClickToFocus:
        """``executor`` with this desktop's click-to-focus (``ClickToFocus``)."""
        region = self.region
        return ClickToFocus(executor, self.session, (region.left, region.top))

    def final_state(self) -> FinalState:
        """What the checks read, once the agent has finished (an application that ends on the last
        click is given ``EXIT_WAIT_S`` to do so)."""
        state = FinalState(home=self.session.home)
        if self._tk is not None:
            state.tcl = self._tk.tcl
            state.windows = [w.name for w in self.session.windows()]
            return state
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=EXIT_WAIT_S) if self.current.output else None
            state.exit_code = proc.poll()
            if state.exit_code is None:
                with contextlib.suppress(DesktopError):
                    state.nodes = self.session.walk(proc.pid).get("nodes", [])
        if self._output is not None and self._output.exists():
            state.output = self._output.read_text(encoding="utf-8", errors="replace")
        state.windows = [w.name for w in self.session.windows()]
        return state

    def reward(self) -> float:
        """1 when every check holds on the final state, else 0 (``failures`` says why)."""
        self.failures = verify_all(self.current.checks_for(self._params), self.final_state())
        return 0.0 if self.failures else 1.0

    def done(self) -> bool:
        """A desktop episode ends when the agent says so (or runs out of steps), never by itself."""
        return False

    def restart(self) -> None:
        """After a failed episode: the application stopped; a dead display started again."""
        self._stop_app()
        if not self.session.display.alive:
            with contextlib.suppress(Exception):
                self.session.close()
            self.session = DesktopSession(*self.size).start()

    def _stop_app(self) -> None:
        if self._tk is not None:
            with contextlib.suppress(Exception):
                self._tk.close()
            self._tk = None
        if self._proc is not None:
            DesktopSession.stop(self._proc)
            self._proc = None
        # Anything the application left on the screen (a helper's window) goes with it.
        deadline = time.monotonic() + 3.0
        while self.session.windows() and time.monotonic() < deadline:
            time.sleep(0.1)

    def _fresh_home(self) -> None:
        from caap.bench.desktop.session import _seed_home

        home = self.session.home
        if home.exists():
            shutil.rmtree(home)
        _seed_home(home)

    def close(self) -> None:
        self._stop_app()
        self.session.close()

    def __enter__(self) -> DesktopEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
