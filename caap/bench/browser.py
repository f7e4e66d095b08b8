"""Chromium in app mode on an X display, driven over the Chrome DevTools Protocol through ``--remote-debugging-pipe``.

No selenium, no websocket, no port: Chrome reads commands from its file descriptor 3 and writes responses and events
to its file descriptor 4, each message a JSON text terminated by a NUL byte. The browser renders for real (not
headless) so that the agent sees it the way a user would, through a screen grab.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import numpy as np

from caap.bench.display import _die_with_parent, _OutputTail, _stop_process, _with_tail

__all__ = ["BrowserError", "Chromium", "find_origin_marker", "grab_display"]


class BrowserError(RuntimeError):
    """Chromium could not be started, exited, or a DevTools command failed."""


# The flags the benchmark needs: a clean, quiet, deterministic browser that renders on the X display.
_BASE_FLAGS = (
    "--no-sandbox",  # we may run as root, where the sandbox refuses to start
    "--test-type",  # hides the "unsupported command-line flag" infobar that --no-sandbox would show
    "--disable-infobars",
    "--force-device-scale-factor=1",
    "--force-color-profile=srgb",  # exact colours on screen: the origin marker and the agent's pixels
    "--ozone-platform=x11",  # never pick Wayland, even if the caller's session has it
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-quic",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
    "--password-store=basic",
    "--use-mock-keychain",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--remote-debugging-pipe",
)

# Colours of the origin marker: pure magenta then pure cyan, which ordinary pages do not draw side by side.
# Harmless complaints of a browser without a desktop session; they would bury the lines that explain a crash.
_STDERR_NOISE = (":ERROR:dbus/", "Failed to connect to the bus", "org.freedesktop")

_MARKER_LEFT = (255, 0, 255)
_MARKER_RIGHT = (0, 255, 255)
_MARKER_SIZE = 8

_ADD_MARKER_JS = """(async () => {
  const old = document.getElementById('__caap_origin_marker');
  if (old) old.remove();
  const m = document.createElement('caap-origin-marker');  // a custom tag: no page stylesheet matches it
  m.id = '__caap_origin_marker';
  m.style.cssText = 'all:initial;display:block;position:fixed;left:0;top:0;width:8px;height:8px;margin:0;'
    + 'padding:0;border:0;z-index:2147483647;pointer-events:none;';
  for (const [x, colour] of [[0, 'rgb(255,0,255)'], [4, 'rgb(0,255,255)']]) {
    const half = document.createElement('caap-origin-marker');
    half.style.cssText = 'all:initial;display:block;position:absolute;top:0;width:4px;height:8px;left:' + x
      + 'px;background:' + colour + ';';
    m.appendChild(half);
  }
  document.documentElement.appendChild(m);
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  return true;
})()"""

_REMOVE_MARKER_JS = "document.getElementById('__caap_origin_marker')?.remove(), true"

_TWO_FRAMES_JS = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))"
# Every image the page shows, as <img> or as a CSS content/background URL, loaded and decoded (a
# rejected one counts as done: a broken image stays broken).
_IMAGES_DECODED_JS = """(async () => {
  const urls = new Set(Array.from(document.images, i => i.currentSrc || i.src).filter(Boolean));
  for (const el of document.querySelectorAll('body *')) {
    const style = getComputedStyle(el);
    for (const value of [style.content, style.backgroundImage]) {
      for (const m of (value || '').matchAll(/url\\(["']?([^"')]+)["']?\\)/g)) urls.add(m[1]);
    }
  }
  await Promise.all(Array.from(urls, u => { const i = new Image(); i.src = u; return i.decode().catch(() => null); }));
  return urls.size;
})()"""


def grab_display(display: str) -> np.ndarray:
    """The whole X display as an ``(height, width, 3)`` uint8 RGB numpy array."""
    try:
        import mss
    except ImportError:
        raise BrowserError("screen capture needs mss: pip install 'caap[screen]'") from None
    # mss >= 10.2 prefers the MSS class and deprecates the mss() factory; older versions only have the factory.
    factory = getattr(mss, "MSS", None) or mss.mss
    try:
        with factory(display=display) as sct:
            shot = sct.grab(sct.monitors[0])
    except Exception as exc:  # mss raises its own ScreenShotError, and ctypes errors
        raise BrowserError(f"cannot capture X display {display}: {exc}") from None
    bgra = np.frombuffer(shot.bgra, dtype=np.uint8).reshape(shot.height, shot.width, 4)
    return bgra[:, :, 2::-1]


def find_origin_marker(rgb: np.ndarray) -> tuple[int, int] | None:
    """Top-left pixel of the 8x8 origin marker (left half magenta, right half cyan) in an RGB array, if present."""
    n, half = _MARKER_SIZE, _MARKER_SIZE // 2
    left = np.all(rgb == np.array(_MARKER_LEFT, dtype=np.uint8), axis=2)
    right = np.all(rgb == np.array(_MARKER_RIGHT, dtype=np.uint8), axis=2)
    h, w = left.shape
    if h < n or w < n:
        return None
    # Cheap corner test first, then verify the whole block for the few candidates.
    cand = (left[: h - n + 1, : w - n + 1] & left[n - 1:, half - 1: w - n + half]
            & right[: h - n + 1, half: w - n + half + 1] & right[n - 1:, n - 1:])
    for y, x in zip(*np.nonzero(cand), strict=True):
        if left[y:y + n, x:x + half].all() and right[y:y + n, x + half:x + n].all():
            return int(x), int(y)
    return None


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "Chromium closed its DevTools pipe"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"Chromium exited (code {code}, killed by {signal.Signals(-code).name})"
    return f"Chromium exited (code {code})"


class _Pending:
    __slots__ = ("event", "response")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.response: dict[str, Any] | None = None


class Chromium:
    """One Chromium app window on ``display`` showing ``url``, controlled over the DevTools pipe.

    Use as a context manager, or call :meth:`start` and :meth:`close`.
    """

    def __init__(self, url: str, *, display: str, binary: str = "/usr/bin/chromium",
                 window_pos: tuple[int, int] = (50, 50), window_size: tuple[int, int] = (500, 400),
                 extra_args: Sequence[str] = ()) -> None:
        self.url = url
        self.display = display
        self.binary = binary
        self.window_pos = window_pos
        self.window_size = window_size
        self.extra_args = tuple(extra_args)
        self._proc: subprocess.Popen[bytes] | None = None
        self._tail: _OutputTail | None = None
        self._profile: str | None = None
        self._cmd_w: int | None = None
        self._resp_r: int | None = None
        self._reader: threading.Thread | None = None
        self._pipe_closed = threading.Event()
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._session: str | None = None
        self._crashed = False

    # --- process ---------------------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and not self._pipe_closed.is_set()

    def command_line(self) -> list[str]:
        x, y = self.window_pos
        w, h = self.window_size
        assert self._profile is not None
        return [self.binary, *_BASE_FLAGS, f"--window-position={x},{y}", f"--window-size={w},{h}",
                f"--user-data-dir={self._profile}", *self.extra_args, f"--app={self.url}"]

    def start(self, timeout: float = 30.0) -> Chromium:
        """Launch Chromium, attach to its page and wait until the page has loaded."""
        if self.alive:
            return self
        self.close()
        if shutil.which(self.binary) is None:
            raise BrowserError(f"Chromium not found at {self.binary}: install the Debian package chromium")
        self._pipe_closed = threading.Event()
        self._crashed = False
        self._profile = tempfile.mkdtemp(prefix="caap-chromium-")
        try:
            self._launch()
            self._attach(timeout)
        except BaseException:
            self.close()
            raise
        return self

    def _launch(self) -> None:
        env = dict(os.environ)
        env["DISPLAY"] = self.display
        env.pop("WAYLAND_DISPLAY", None)
        assert self._profile is not None
        # Chromium always runs a crash handler; keep its database in the throw-away profile, not in ~/.config.
        env["BREAKPAD_DUMP_LOCATION"] = os.path.join(self._profile, "crashpad")
        # Created before Popen creates its own pipes, so these take fds 3 and 4 if they are free; that keeps
        # Popen's internal error pipe off 3 and 4, which the child overwrites below.
        cmd_r, cmd_w = os.pipe()
        resp_r, resp_w = os.pipe()

        def remap() -> None:  # in the child: our pipe ends become its fds 3 (commands) and 4 (responses)
            high_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
            high_w = fcntl.fcntl(resp_w, fcntl.F_DUPFD_CLOEXEC, 10)
            os.dup2(high_r, 3)  # dup2 leaves the new fd inheritable
            os.dup2(high_w, 4)

        try:
            self._proc = subprocess.Popen(
                self.command_line(), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, close_fds=False, start_new_session=True,
                preexec_fn=_die_with_parent(then=remap),
            )
        except OSError as exc:
            for fd in (cmd_r, cmd_w, resp_r, resp_w):
                os.close(fd)
            raise BrowserError(f"could not start Chromium ({self.binary}): {exc}") from None
        os.close(cmd_r)  # the child's ends: ours must go so that its death reads as end-of-file
        os.close(resp_w)
        self._cmd_w, self._resp_r = cmd_w, resp_r
        assert self._proc.stderr is not None
        self._tail = _OutputTail(self._proc.stderr, "chromium-stderr", ignore=_STDERR_NOISE)
        self._reader = threading.Thread(target=self._read_loop, args=(resp_r,), name="chromium-cdp", daemon=True)
        self._reader.start()

    def _attach(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        page: dict[str, Any] | None = None
        while page is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium opened no page within {timeout:.0f} s")
            targets = self.send("Target.getTargets", timeout=left).get("targetInfos", [])
            page = next((t for t in targets if t.get("type") == "page"), None)
            if page is None:
                time.sleep(0.05)
        attached = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True},
                             timeout=max(1.0, deadline - time.monotonic()))
        self._session = attached["sessionId"]
        self.send("Page.enable", session_id=self._session)
        self.send("Inspector.enable", session_id=self._session)  # for Inspector.targetCrashed
        # The fresh window shows about:blank (already "complete") before --app's page commits.
        ready = "document.readyState === 'complete'"
        if self.url != "about:blank":
            ready += " && location.href !== 'about:blank'"
        self._wait_until(ready, deadline, f"the page {self.url}")

    def _wait_until(self, expression: str, deadline: float, what: str) -> None:
        """Poll a JavaScript condition; errors from a document being swapped out count as "not yet"."""
        last_error = ""
        while True:
            try:
                if self.evaluate(expression, timeout=max(0.5, deadline - time.monotonic())):
                    return
            except BrowserError as exc:
                if not self.alive or self._crashed:
                    raise
                last_error = f" (last error: {exc})"
            if time.monotonic() > deadline:
                raise BrowserError(f"timed out waiting for {what} to load{last_error}")
            time.sleep(0.02)

    # --- DevTools protocol -----------------------------------------------------------------------------------

    def _read_loop(self, fd: int) -> None:
        pending = bytearray()
        try:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    break
                if not chunk:
                    break
                start = 0
                while (end := chunk.find(b"\0", start)) >= 0:
                    pending += chunk[start:end]
                    self._dispatch(bytes(pending))
                    pending.clear()
                    start = end + 1
                pending += chunk[start:]
        finally:
            self._pipe_closed.set()
            with self._lock:
                for slot in self._pending.values():
                    slot.event.set()

    def _dispatch(self, raw: bytes) -> None:
        try:
            message = json.loads(raw)
        except ValueError:
            return
        if "id" in message:
            with self._lock:
                slot = self._pending.get(message["id"])
            if slot is not None:
                slot.response = message
                slot.event.set()
        elif message.get("method") == "Inspector.targetCrashed" and message.get("sessionId") == self._session:
            self._crashed = True
            with self._lock:  # nothing will answer the page's pending commands now
                for slot in self._pending.values():
                    slot.event.set()

    def _exit_error(self) -> BrowserError:
        code: int | None = None
        if self._proc is not None:
            try:
                code = self._proc.wait(1.0)  # the pipe closes a moment before the process is reaped
            except subprocess.TimeoutExpired:
                code = None
        tail = self._tail.text(wait=0.5, max_chars=1500) if self._tail is not None else ""
        return BrowserError(_with_tail(_describe_exit(code), tail))

    def send(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None,
             timeout: float = 10.0) -> dict[str, Any]:
        """Send one DevTools command and return its ``result``; raises :class:`BrowserError` on any failure."""
        if self._proc is None or self._cmd_w is None:
            raise BrowserError("Chromium is not running: call start() first")
        if not self.alive:
            raise self._exit_error()
        if self._crashed and session_id is not None and session_id == self._session:
            raise BrowserError(f"{method}: the page crashed (its renderer died); restart the browser")
        message_id = next(self._ids)
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session_id is not None:
            message["sessionId"] = session_id
        data = json.dumps(message).encode() + b"\0"
        slot = _Pending()
        with self._lock:
            self._pending[message_id] = slot
        try:
            try:
                with self._write_lock:
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self._cmd_w, view):]
            except OSError:  # broken pipe: Chromium is gone
                raise self._exit_error() from None
            deadline = time.monotonic() + timeout
            while not slot.event.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
                if self._proc.poll() is not None:
                    raise self._exit_error()
                if time.monotonic() >= deadline:
                    raise BrowserError(f"{method} got no answer from Chromium within {timeout:g} s")
        finally:
            with self._lock:
                self._pending.pop(message_id, None)
        response = slot.response
        if response is None:
            if self._crashed and session_id == self._session:
                raise BrowserError(f"{method}: the page crashed (its renderer died); restart the browser")
            raise self._exit_error()
        if "error" in response:
            error = response["error"]
            detail = f" ({error['data']})" if error.get("data") else ""
            raise BrowserError(f"{method} failed: {error.get('message', error)}{detail}")
        return response.get("result", {})

    # --- page ------------------------------------------------------------------------------------------------

    @property
    def session_id(self) -> str | None:
        """The flattened DevTools session of the page target, for :meth:`send`."""
        return self._session

    def evaluate(self, expression: str, timeout: float = 10.0) -> Any:
        """Evaluate JavaScript in the page (promises are awaited) and return its value as JSON data."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, session_id=self._session, timeout=timeout)
        details = result.get("exceptionDetails")
        if details is not None:
            exception = details.get("exception") or {}
            text = exception.get("description") or exception.get("value") or details.get("text") or "unknown error"
            raise BrowserError(f"JavaScript error: {text}")
        value = result.get("result", {})
        if "unserializableValue" in value:  # NaN, Infinity, -0, bigints
            raw = value["unserializableValue"]
            return int(raw[:-1]) if raw.endswith("n") else float(raw)
        return value.get("value")

    def navigate(self, url: str, timeout: float = 30.0) -> None:
        """Load ``url`` in the page and wait until its document is complete."""
        deadline = time.monotonic() + timeout
        # Tag the current document so that its own "complete" is not mistaken for the new one's.
        with contextlib.suppress(BrowserError):
            self.evaluate("window.__caapOldDocument = true", timeout=5.0)
        result = self.send("Page.navigate", {"url": url}, session_id=self._session, timeout=timeout)
        if result.get("errorText"):
            raise BrowserError(f"could not load {url}: {result['errorText']}")
        if "loaderId" not in result:  # same-document navigation (only the #fragment changed): nothing loads
            return
        self._wait_until("document.readyState === 'complete' && !window.__caapOldDocument", deadline, url)

    def wait_for_paint(self, timeout: float = 5.0) -> None:
        """Return after two animation frames, i.e. once the current DOM has been rendered."""
        self.evaluate(_TWO_FRAMES_JS, timeout=timeout)

    def wait_for_images(self, timeout: float = 5.0) -> int:
        """Return once every image the page shows (``<img>``, CSS ``content`` and background URLs)
        is loaded and decoded; the number of images. A page that builds its elements in script
        after loading (MiniWoB's episodes) fetches their images then, and paints them a moment
        later than the rest."""
        return int(self.evaluate(_IMAGES_DECODED_JS, timeout=timeout) or 0)

    def content_origin(self, timeout: float = 5.0) -> tuple[int, int]:
        """Screen coordinates, on this browser's X display, of the top-left CSS pixel of the page's viewport.

        Found by showing a marker of known colours at the viewport's (0, 0) and locating it in a grab of the
        whole display. Exact, but it briefly paints over the page: call it at setup, not during an episode.
        """
        deadline = time.monotonic() + timeout
        self.evaluate(_ADD_MARKER_JS, timeout=timeout)
        try:
            while True:
                found = find_origin_marker(grab_display(self.display))
                if found is not None:
                    return found
                if time.monotonic() > deadline:
                    raise BrowserError(
                        f"could not find the page on display {self.display}: the origin marker never appeared "
                        "on screen (is the window hidden, off-screen, or on another display?)")
                time.sleep(0.05)  # the compositor may not have pushed the frame to the X server yet
        finally:
            with contextlib.suppress(BrowserError):
                self.evaluate(_REMOVE_MARKER_JS, timeout=2.0)

    # --- shutdown --------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the browser and delete its profile. Safe to call twice and after Chromium died."""
        proc = self._proc
        if proc is not None:
            if self.alive:
                with contextlib.suppress(BrowserError):
                    self.send("Browser.close", timeout=3.0)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5.0)
            _stop_process(proc, group=True)
        if self._reader is not None:
            self._reader.join(2.0)  # the pipe reads end-of-file once the process group is gone
        reader_done = self._reader is None or not self._reader.is_alive()
        for fd in (self._cmd_w, self._resp_r if reader_done else None):  # never close an fd a thread still reads
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._proc = self._reader = None
        self._cmd_w = self._resp_r = None
        self._session = None
        if self._profile is not None:
            shutil.rmtree(self._profile, ignore_errors=True)
            self._profile = None

    def __enter__(self) -> Chromium:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = f"pid {self._proc.pid}" if self.alive and self._proc is not None else "stopped"
        return f"Chromium({self.url!r} on {self.display}, {state})"
