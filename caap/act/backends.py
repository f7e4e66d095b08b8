"""OS-level executor backends: pyautogui (default, cross-platform) and xdotool (Linux/X11).

Both implement every primitive of ``caap.act.executor.Executor``; coordinates arrive as
captured-image pixels and go through the screen's ``ScreenMapping`` (the only place where image
pixels become OS coordinates), read at each call because a window may move between frames.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from caap.geometry import ScreenMapping


class ExecutorError(RuntimeError):
    """The OS input backend cannot act; the message says why."""


MappingSource = Callable[[], ScreenMapping]

# caap key names (see caap.act.actions.KEYS/MODIFIERS) → each backend's names.
UNICODE_KEY_PAUSE_S = 0.04  # after each character typed through a temporarily bound key (see type_text)
KEYMAP_SETTLE_S = 0.15  # for applications to re-read the keymap after keys are bound or unbound
_PYAUTOGUI_KEYS = {"escape": "esc", "meta": "win", "pageup": "pageup", "pagedown": "pagedown"}
_XDOTOOL_KEYS = {
    "enter": "Return", "tab": "Tab", "escape": "Escape", "backspace": "BackSpace", "delete": "Delete",
    "space": "space", "up": "Up", "down": "Down", "left": "Left", "right": "Right", "home": "Home", "end": "End",
    "pageup": "Prior", "pagedown": "Next", "ctrl": "ctrl", "shift": "shift", "alt": "alt", "meta": "super",
    **{f"f{i}": f"F{i}" for i in range(1, 13)},
}
_XDOTOOL_BUTTONS = {"left": "1", "middle": "2", "right": "3"}


def _require_display(display: str | None) -> None:
    if sys.platform.startswith("linux") and not (display or os.environ.get("DISPLAY")):
        raise ExecutorError("no display: $DISPLAY is not set (start an X server, or run under Xvfb)")


class PyAutoGUIExecutor:
    """Mouse and keys through pyautogui; text through pynput, whose X11/Win32/macOS backends type
    any Unicode character (pyautogui's ``write`` only knows ASCII).

    pyautogui binds to the display named by $DISPLAY when it is first imported, so one process
    drives one display with it; use the xdotool backend to drive several.
    """

    def __init__(self, mapping: MappingSource, *, failsafe: bool = True, pause_s: float = 0.0,
                 click_interval_s: float = 0.06) -> None:
        _require_display(None)
        try:
            import pyautogui
            from pynput.keyboard import Controller
        except ImportError as exc:
            raise ExecutorError(
                f"the pyautogui backend needs pyautogui and pynput: pip install 'caap[screen]' ({exc})"
            ) from None
        except Exception as exc:  # Xlib.error.DisplayConnectionError and friends
            raise ExecutorError(f"pyautogui cannot reach the display {os.environ.get('DISPLAY')}: {exc}") from None
        self._gui = pyautogui
        pyautogui.FAILSAFE = failsafe  # slam the pointer into a screen corner to abort
        pyautogui.PAUSE = pause_s
        self._keyboard = Controller()
        self._mapping = mapping
        self.click_interval_s = click_interval_s

    @property
    def failsafe_exception(self) -> type[BaseException]:
        return self._gui.FailSafeException

    def _os(self, x: int, y: int) -> tuple[int, int]:
        return self._mapping().to_os(x, y)

    @staticmethod
    def _key(name: str) -> str:
        return _PYAUTOGUI_KEYS.get(name, name)

    def move(self, x: int, y: int) -> None:
        self._gui.moveTo(*self._os(x, y))

    def click(self, x: int, y: int, *, button: str = "left", count: int = 1, modifiers: Sequence[str] = ()) -> None:
        ox, oy = self._os(x, y)
        self._gui.moveTo(ox, oy)
        for m in modifiers:
            self._gui.keyDown(self._key(m))
        try:
            # pyautogui sleeps `interval` after every click, the last one too: only pause between clicks.
            self._gui.click(ox, oy, clicks=count, interval=self.click_interval_s if count > 1 else 0.0,
                            button=button)
        finally:
            for m in reversed(modifiers):
                self._gui.keyUp(self._key(m))

    def mouse_down(self, x: int, y: int, *, button: str = "left") -> None:
        ox, oy = self._os(x, y)
        self._gui.moveTo(ox, oy)
        self._gui.mouseDown(ox, oy, button=button)

    def mouse_up(self, *, button: str = "left") -> None:
        self._gui.mouseUp(button=button)

    def type_text(self, text: str) -> None:
        if text.isascii():
            self._keyboard.type(text)
            return
        # pynput types a character missing from the keymap by remapping one spare key for it, once per
        # character: when the application reads a keystroke after the next remap it gets the wrong
        # character (seen with Chromium on a busy CPU: "–" arrived as the "ß" typed just before). So
        # every such character gets its own key for the whole string, bound once before typing, and
        # that key is pressed directly (XTest); pynput types the rest.
        with _keysyms_bound(os.environ.get("DISPLAY"), text) as keys:
            for ch in text:
                if not keys.tap(_keysym(ch)):
                    self._keyboard.type(ch)
                if not ch.isascii():
                    time.sleep(UNICODE_KEY_PAUSE_S)

    def press_keys(self, keys: Sequence[str]) -> None:
        self._gui.hotkey(*(self._key(k) for k in keys))

    def scroll(self, x: int, y: int, *, dx: int = 0, dy: int = 0) -> None:
        ox, oy = self._os(x, y)
        self._gui.moveTo(ox, oy)
        if dy:
            self._gui.scroll(-dy, x=ox, y=oy)  # pyautogui: positive scrolls up
        if dx:
            self._gui.hscroll(dx, x=ox, y=oy)

    def wait(self, seconds: float) -> None:
        time.sleep(seconds)


class XdotoolExecutor:
    """Mouse and keyboard through the xdotool command (X11). Each call names its display, so one
    process can drive several virtual screens (one per benchmark worker)."""

    def __init__(self, mapping: MappingSource, *, display: str | None = None, type_delay_ms: int = 12,
                 unicode_type_delay_ms: int = 40, click_delay_ms: int = 60, binary: str = "xdotool") -> None:
        if shutil.which(binary) is None:
            raise ExecutorError("the xdotool backend needs xdotool: install the Debian package xdotool")
        _require_display(display)
        self._mapping = mapping
        self._binary = binary
        self._env = dict(os.environ, **({"DISPLAY": display} if display else {}))
        self.type_delay_ms = type_delay_ms
        self.unicode_type_delay_ms = unicode_type_delay_ms
        self.click_delay_ms = click_delay_ms

    def _run(self, *args: str) -> None:
        try:
            proc = subprocess.run([self._binary, *args], env=self._env, capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            raise ExecutorError(f"xdotool {' '.join(args[:2])} hung for 30 s") from None
        if proc.returncode != 0:
            raise ExecutorError(f"xdotool {' '.join(args)} failed: {proc.stderr.strip() or proc.returncode}")

    def _os(self, x: int, y: int) -> list[str]:
        ox, oy = self._mapping().to_os(x, y)
        # No --sync: it waits ~15 s when the pointer is already there, and the X server applies our
        # motion before the button events that follow on the same connection anyway.
        return ["mousemove", str(ox), str(oy)]

    @staticmethod
    def _key(name: str) -> str:
        return _XDOTOOL_KEYS.get(name, name)

    def move(self, x: int, y: int) -> None:
        self._run(*self._os(x, y))

    def click(self, x: int, y: int, *, button: str = "left", count: int = 1, modifiers: Sequence[str] = ()) -> None:
        args: list[str] = []
        for m in modifiers:
            args += ["keydown", self._key(m)]
        args += self._os(x, y)
        # xdotool waits --delay (default 100 ms) after every click, the last one too.
        delay = self.click_delay_ms if count > 1 else 0
        args += ["click", "--repeat", str(count), "--delay", str(delay), _XDOTOOL_BUTTONS[button]]
        for m in reversed(modifiers):
            args += ["keyup", self._key(m)]
        self._run(*args)

    def mouse_down(self, x: int, y: int, *, button: str = "left") -> None:
        self._run(*self._os(x, y), "mousedown", _XDOTOOL_BUTTONS[button])

    def mouse_up(self, *, button: str = "left") -> None:
        self._run("mouseup", _XDOTOOL_BUTTONS[button])

    def type_text(self, text: str) -> None:
        if text.isascii():
            self._run("type", "--delay", str(self.type_delay_ms), "--", text)
            return
        # xdotool types a character missing from the keymap by remapping a spare key just for that
        # keystroke; applications that read the key after the mapping is restored drop the character
        # (seen with Chromium). So bind every such character to a spare key first, give clients time
        # to see the new keymap, type, and restore.
        with _keysyms_bound(self._env.get("DISPLAY"), text):
            self._run("type", "--delay", str(self.unicode_type_delay_ms), "--", text)

    def press_keys(self, keys: Sequence[str]) -> None:
        self._run("key", "--clearmodifiers", "+".join(self._key(k) for k in keys))

    def scroll(self, x: int, y: int, *, dx: int = 0, dy: int = 0) -> None:
        args = self._os(x, y)
        if dy:
            args += ["click", "--repeat", str(abs(dy)), "--delay", "30", "5" if dy > 0 else "4"]
        if dx:
            args += ["click", "--repeat", str(abs(dx)), "--delay", "30", "7" if dx > 0 else "6"]
        self._run(*args)

    def wait(self, seconds: float) -> None:
        time.sleep(seconds)


def _keysym(char: str) -> int:
    code = ord(char)
    return code if 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xFF else 0x01000000 + code


class _BoundKeys:
    """Keys bound to characters for one string (see _keysyms_bound); ``tap`` presses one of them."""

    def __init__(self, display: Any = None, keycodes: dict[int, int] | None = None) -> None:
        self._display = display
        self.keycodes = keycodes or {}

    def tap(self, keysym: int) -> bool:
        """Press and release the key bound to ``keysym``; False if none is bound to it."""
        keycode = self.keycodes.get(keysym)
        if keycode is None:
            return False
        from Xlib import X
        from Xlib.ext import xtest

        xtest.fake_input(self._display, X.KeyPress, keycode)
        xtest.fake_input(self._display, X.KeyRelease, keycode)
        self._display.sync()
        return True


@contextlib.contextmanager
def _keysyms_bound(display: str | None, text: str, settle_s: float = KEYMAP_SETTLE_S) -> Iterator[_BoundKeys]:
    """Temporarily map the characters of ``text`` that have no key to unused keycodes (python-xlib).
    Clients get ``settle_s`` to read the new keymap before typing, and again before it is restored.
    Without python-xlib, or without enough free keycodes, nothing is bound and the typing tool's own
    remapping is used."""
    try:
        from Xlib import display as xdisplay
    except ImportError:
        yield _BoundKeys()
        return
    try:
        d = xdisplay.Display(display)
    except Exception:
        yield _BoundKeys()
        return
    keycodes: dict[int, int] = {}
    try:
        first = d.display.info.min_keycode
        count = d.display.info.max_keycode - first + 1
        table = d.get_keyboard_mapping(first, count)
        free = [first + i for i, syms in enumerate(table) if not any(syms)]
        missing = sorted({_keysym(c) for c in text if not c.isascii()} - {0}, reverse=True)
        missing = [k for k in missing if d.keysym_to_keycode(k) == 0]
        if missing and len(missing) <= len(free):
            for keysym, keycode in zip(missing, free, strict=False):
                d.change_keyboard_mapping(keycode, [(keysym, keysym, keysym, keysym)])
                keycodes[keysym] = keycode
            d.sync()
            time.sleep(settle_s)
        yield _BoundKeys(d, keycodes)
    finally:
        if keycodes:
            time.sleep(settle_s)  # the last keystrokes may still be queued in the application
            for keycode in keycodes.values():
                d.change_keyboard_mapping(keycode, [(0, 0, 0, 0)])
            d.sync()
        d.close()


BACKENDS = ("pyautogui", "xdotool")


def make_executor(backend: str, mapping: MappingSource, *, display: str | None = None, failsafe: bool = True,
                  **kwargs: Any) -> PyAutoGUIExecutor | XdotoolExecutor:
    if backend == "pyautogui":
        if display and display != os.environ.get("DISPLAY"):
            raise ExecutorError("the pyautogui backend drives $DISPLAY only; use xdotool for another display")
        return PyAutoGUIExecutor(mapping, failsafe=failsafe, **kwargs)
    if backend == "xdotool":
        return XdotoolExecutor(mapping, display=display, **kwargs)
    raise ExecutorError(f"unknown executor backend {backend!r} (choose {', '.join(BACKENDS)})")
