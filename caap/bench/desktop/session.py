"""A private desktop for real applications: an Xvfb display, a D-Bus session bus and the AT-SPI
accessibility bus, with the X-side helpers the generator needs (top-level windows in stacking
order, xdotool input, mss capture) and the accessibility-tree walker run under the system Python.

No window manager runs: windows sit where the applications (or we, with xdotool) put them, with
the decorations the toolkit draws itself (GTK's client-side title bars) and none from a WM, so
what is captured is what the toolkit drew.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from PIL import Image

from caap.bench.display import DisplayError, VirtualDisplay, _die_with_parent, _stop_process
from caap.geometry import Box

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, where python3-pyatspi installs pyatspi and gi
BUS_LAUNCHERS = ("/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher")
WALKER = Path(__file__).with_name("atspi_walk.py")
# Variables that would keep the applications off the accessibility bus, point them at the
# caller's own session, or at another Qt: opencv-python (imported by ultralytics) sets
# QT_QPA_PLATFORM_PLUGIN_PATH and QT_QPA_FONTDIR to its own Qt's plugins in this process, and a
# Debian Qt 5 app started with them cannot load its xcb platform plugin.
_SCRUBBED = ("NO_AT_BRIDGE", "GTK_A11Y", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "WAYLAND_DISPLAY",
             "GTK_THEME", "QT_STYLE_OVERRIDE", "GDK_BACKEND", "QT_QPA_PLATFORM", "SESSION_MANAGER",
             "QT_QPA_PLATFORM_PLUGIN_PATH", "QT_QPA_FONTDIR", "QT_PLUGIN_PATH")


class DesktopError(RuntimeError):
    """The private desktop (display, buses, an application) could not be started or used."""


@dataclass(frozen=True)
class XWindow:
    """A viewable top-level X window: its id, its box on the screen, and what it says about itself."""

    id: int
    box: Box  # x1, y1, x2, y2 in screen pixels
    name: str
    pid: int | None
    override_redirect: bool


def atspi_missing() -> str | None:
    """Why the AT-SPI walker cannot run here (the Debian packages to install), or None."""
    if not Path(SYSTEM_PYTHON).exists():
        return f"{SYSTEM_PYTHON} is missing (Debian package python3)"
    if not any(Path(p).exists() for p in BUS_LAUNCHERS):
        return "at-spi-bus-launcher is missing (Debian package at-spi2-core)"
    if shutil.which("dbus-daemon") is None:
        return "dbus-daemon is missing (Debian package dbus-daemon, pulled in by dbus-x11)"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import pyatspi"], capture_output=True, text=True, timeout=30,
                           env=_clean_env())
    if probe.returncode != 0:
        return "pyatspi does not import under /usr/bin/python3 (Debian package python3-pyatspi)"
    return None


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    # The system Python must not pick up caap's virtualenv.
    for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(name, None)
    return env


class DesktopSession:
    """Xvfb + session bus + accessibility bus, each a child process that dies with us.

    ``home`` becomes the applications' $HOME (a fresh temporary folder by default, so file dialogs
    and settings look the same on every run).
    """

    def __init__(self, width: int = 1280, height: int = 800, *, atspi: bool = True) -> None:
        self.width, self.height = width, height
        self.atspi = atspi
        self.display = VirtualDisplay(width, height)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.home = Path()
        self._children: list[subprocess.Popen[bytes]] = []
        self._bus: subprocess.Popen[bytes] | None = None
        self.bus_address = ""
        self._xdisplay: Any = None
        self._mss: Any = None

    # --- lifetime ---------------------------------------------------------------------------------
    def start(self) -> DesktopSession:
        self._tmp = tempfile.TemporaryDirectory(prefix="caap-desktop-")
        root = Path(self._tmp.name)
        self.home = root / "home"
        (root / "runtime").mkdir(mode=0o700)
        _seed_home(self.home)
        try:
            self.display.start()
        except DisplayError as exc:
            raise DesktopError(str(exc)) from None
        if self.atspi:
            self._start_buses()
        return self

    def _start_buses(self) -> None:
        daemon = shutil.which("dbus-daemon")
        if daemon is None:
            raise DesktopError("no D-Bus: dbus-daemon is missing (Debian package dbus-x11 pulls it in)")
        read_fd, write_fd = os.pipe()
        try:
            self._bus = subprocess.Popen(
                [daemon, "--session", "--nofork", "--nopidfile", f"--print-address={write_fd}"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(write_fd,), start_new_session=True, preexec_fn=_die_with_parent(), env=self.env())
        finally:
            os.close(write_fd)
        with os.fdopen(read_fd, "rb") as pipe:
            address = pipe.readline().decode().strip()
        if not address:
            raise DesktopError("no D-Bus session bus: dbus-daemon --session printed no address")
        self.bus_address = address
        launcher = next((p for p in BUS_LAUNCHERS if Path(p).exists()), None)
        if launcher is None:
            raise DesktopError("no AT-SPI bus: at-spi-bus-launcher is missing (Debian package at-spi2-core)")
        self._children.append(self._spawn([launcher, "--launch-immediately"], self.env(), "at-spi-bus-launcher"))
        # The launcher registers org.a11y.Bus on the session bus; applications ask it for the
        # accessibility bus at start, so wait until it answers.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            probe = subprocess.run(
                ["dbus-send", "--session", "--print-reply", "--dest=org.a11y.Bus", "/org/a11y/bus",
                 "org.a11y.Bus.GetAddress"], env=self.env(), capture_output=True, text=True, timeout=10)
            if probe.returncode == 0 and "unix:" in probe.stdout:
                return
            time.sleep(0.1)
        raise DesktopError("no AT-SPI bus: at-spi-bus-launcher did not answer on the session bus within 15 s")

    def close(self) -> None:
        for proc in reversed(self._children):
            _stop_process(proc, group=True, grace=2.0)
        self._children.clear()
        if self._bus is not None:
            _stop_process(self._bus, group=True, grace=2.0)
            self._bus = None
        if self._mss is not None:
            with contextlib.suppress(Exception):
                self._mss.close()
            self._mss = None
        if self._xdisplay is not None:
            with contextlib.suppress(Exception):
                self._xdisplay.close()
            self._xdisplay = None
        self.display.close()
        if self._tmp is not None:
            _stop_strays(self._tmp.name)
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> DesktopSession:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # --- processes --------------------------------------------------------------------------------
    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = _clean_env()
        env.update(DISPLAY=self.display.name, HOME=str(self.home), XDG_RUNTIME_DIR=str(self.home.parent / "runtime"),
                   XDG_CONFIG_HOME=str(self.home / ".config"), XDG_DATA_HOME=str(self.home / ".local/share"),
                   XDG_CACHE_HOME=str(self.home / ".cache"), LANG="C.UTF-8", LC_ALL="C.UTF-8",
                   # Qt only talks to AT-SPI when it believes a screen reader is on.
                   QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1", QT_ACCESSIBILITY="1",
                   # GTK's scrollbars stay drawn instead of showing only while the pointer moves.
                   GTK_OVERLAY_SCROLLING="0",
                   # GTK 4 draws with GL by default, which on Xvfb (llvmpipe) keeps its main loop so
                   # busy that it never gets round to joining the accessibility bus.
                   GSK_RENDERER="cairo")
        if self.bus_address:
            env["DBUS_SESSION_BUS_ADDRESS"] = self.bus_address
        env.update(extra or {})
        return env

    def _spawn(self, argv: Sequence[str], env: Mapping[str, str], name: str, cwd: str | None = None,
               log: IO[bytes] | None = None) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(list(argv), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL,
                                    stdout=log or subprocess.DEVNULL, stderr=log or subprocess.DEVNULL,
                                    start_new_session=True, preexec_fn=_die_with_parent())
        except OSError as exc:
            raise DesktopError(f"could not start {name} ({argv[0]}): {exc}") from None

    def launch(self, argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: str | None = None,
               stdin_pipe: bool = False) -> subprocess.Popen[bytes]:
        """Start an application on this desktop (in its own process group, so it goes with all its
        helpers). Its output goes to a log file next to $HOME (``log_of``)."""
        log = open(self.home.parent / f"{Path(argv[0]).name}.log", "ab")  # noqa: SIM115 - the child holds it
        try:
            if stdin_pipe:
                return subprocess.Popen(list(argv), env=self.env(env), cwd=cwd or str(self.home), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=log, start_new_session=True,
                                        preexec_fn=_die_with_parent())
            return self._spawn(argv, self.env(env), argv[0], cwd=cwd or str(self.home), log=log)
        except OSError as exc:
            raise DesktopError(f"could not start {argv[0]}: {exc}") from None
        finally:
            log.close()

    def log_of(self, argv0: str, max_chars: int = 600) -> str:
        path = self.home.parent / f"{Path(argv0).name}.log"
        try:
            return path.read_text(errors="replace")[-max_chars:].strip()
        except OSError:
            return ""

    @staticmethod
    def stop(proc: subprocess.Popen[bytes]) -> None:
        _stop_process(proc, group=True, grace=2.0)

    # --- X windows --------------------------------------------------------------------------------
    def _x(self) -> Any:
        if self._xdisplay is None:
            from Xlib import display as xdisplay

            self._xdisplay = xdisplay.Display(self.display.name)
        return self._xdisplay

    def windows(self) -> list[XWindow]:
        """The viewable top-level windows, bottom of the stack first (X's own stacking order)."""
        from Xlib import X
        from Xlib.error import XError

        d = self._x()
        root = d.screen().root
        pid_atom = d.intern_atom("_NET_WM_PID")
        found: list[XWindow] = []
        for win in root.query_tree().children:
            try:
                attrs = win.get_attributes()
                if attrs.map_state != X.IsViewable:
                    continue
                geo = win.get_geometry()
                if geo.width <= 2 or geo.height <= 2:
                    continue
                prop = win.get_full_property(pid_atom, X.AnyPropertyType)
                name = win.get_wm_name() or ""
            except XError:
                continue  # the window went away while we looked
            pid = int(prop.value[0]) if prop is not None and len(prop.value) else None
            found.append(XWindow(win.id, (geo.x, geo.y, geo.x + geo.width, geo.y + geo.height),
                                 name if isinstance(name, str) else name.decode(errors="replace"), pid,
                                 bool(attrs.override_redirect)))
        return found

    def wait_for_windows(self, timeout: float, *, settle: float = 0.6) -> list[XWindow]:
        """The windows once at least one is viewable and the set stays the same for ``settle`` s;
        an empty list when none showed within ``timeout``."""
        deadline = time.monotonic() + timeout
        last: list[XWindow] = []
        since = time.monotonic()
        while time.monotonic() < deadline:
            now = self.windows()
            if now != last:
                last, since = now, time.monotonic()
            elif now and time.monotonic() - since >= settle:
                return now
            time.sleep(0.1)
        return last

    # --- input ------------------------------------------------------------------------------------
    def xdotool(self, *args: str) -> str:
        try:
            proc = subprocess.run(["xdotool", *args], env=self.env(), capture_output=True, text=True, timeout=20)
        except FileNotFoundError:
            raise DesktopError("xdotool is missing (Debian package xdotool)") from None
        except subprocess.TimeoutExpired:
            raise DesktopError(f"xdotool {' '.join(args[:2])} hung for 20 s") from None
        if proc.returncode != 0:
            raise DesktopError(f"xdotool {' '.join(args)} failed: {proc.stderr.strip() or proc.returncode}")
        return proc.stdout

    # --- pixels -----------------------------------------------------------------------------------
    def capture(self, box: Box) -> Image.Image:
        if self._mss is None:
            try:
                import mss
            except ImportError:
                raise DesktopError("capturing needs mss: pip install 'caap[screen]'") from None
            factory = getattr(mss, "MSS", None) or mss.mss  # mss 10 renamed the class
            self._mss = factory(display=self.display.name)
        x1, y1, x2, y2 = box
        shot = self._mss.grab({"left": x1, "top": y1, "width": x2 - x1, "height": y2 - y1})
        return Image.frombytes("RGB", shot.size, shot.bgra, "raw", "BGRX")

    def settle(self, box: Box, *, timeout: float = 4.0, interval: float = 0.15) -> Image.Image:
        """A frame of ``box`` once two consecutive frames are equal (or the last one at the timeout):
        animations (GTK's transitions, blinking cursors aside) have finished."""
        deadline = time.monotonic() + timeout
        frame = self.capture(box)
        while time.monotonic() < deadline:
            time.sleep(interval)
            nxt = self.capture(box)
            if nxt.tobytes() == frame.tobytes():
                return nxt
            frame = nxt
        return frame

    # --- accessibility tree -----------------------------------------------------------------------
    def walk(self, pid: int, *, max_nodes: int = 4000, max_seconds: float = 20.0) -> dict[str, Any]:
        """The application's accessibility tree as the walker prints it (``atspi_walk.py``)."""
        try:
            proc = subprocess.run([SYSTEM_PYTHON, str(WALKER), "--pid", str(pid), "--max-nodes", str(max_nodes),
                                   "--max-seconds", str(max_seconds)], env=self.env(), capture_output=True,
                                  text=True, timeout=max_seconds + 30)
        except FileNotFoundError:
            raise DesktopError(f"{SYSTEM_PYTHON} is missing: the AT-SPI walker needs Debian's python3 with "
                               "python3-pyatspi") from None
        except subprocess.TimeoutExpired:
            raise DesktopError(f"the AT-SPI walker hung for {max_seconds + 30:.0f} s (pid {pid})") from None
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            tail = (proc.stderr or proc.stdout).strip()[-400:]
            raise DesktopError(f"the AT-SPI walker failed (exit {proc.returncode}): {tail}") from None
        if not isinstance(data, dict) or "error" in data:
            raise DesktopError(f"the AT-SPI walker: {data.get('error') if isinstance(data, dict) else data}")
        return data


def _stop_strays(root: str) -> None:
    """Stop what still runs out of this session's private folder: the accessibility bus's own
    dbus-daemon is started by at-spi-bus-launcher in a session of its own and can outlive it."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if root.encode() in cmdline.read_bytes():
                os.kill(int(cmdline.parent.name), signal.SIGTERM)
        except (OSError, ValueError):
            continue


def _seed_home(home: Path) -> None:
    """A small, fixed home folder: what file choosers and recent-file lists show."""
    for sub in ("Documents", "Downloads", "Music", "Pictures", "Projects/caap", "Videos", ".config", ".cache"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    files = {"Documents/notes.txt": "meeting at 10\n", "Documents/report-2023.odt": "", "Documents/budget.csv": "a,b\n",
             "Pictures/holiday.png": "", "Projects/caap/README.md": "# caap\n", "todo.txt": "milk\n"}
    for rel, text in files.items():
        (home / rel).write_text(text)
    # No GTK animations: screens settle at once, and a window that never stops animating (the
    # widget factory's spinners) does not starve GTK 4's registration on the accessibility bus.
    for version in ("gtk-3.0", "gtk-4.0"):
        (home / ".config" / version).mkdir(parents=True, exist_ok=True)
        (home / ".config" / version / "settings.ini").write_text("[Settings]\ngtk-enable-animations=false\n")
