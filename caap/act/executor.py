"""The executor interface: the OS-input primitives every action is built from.

Coordinates given to an executor are captured-image pixels (see ``caap.geometry``); a real
backend maps them to OS input coordinates through the screen mapping. Keeping the primitives
small means every backend (pyautogui, xdotool, dry-run) implements the whole action set.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Executor(Protocol):
    def move(self, x: int, y: int) -> None: ...

    def click(
        self, x: int, y: int, *, button: str = "left", count: int = 1, modifiers: Sequence[str] = ()
    ) -> None: ...

    def mouse_down(self, x: int, y: int, *, button: str = "left") -> None: ...

    def mouse_up(self, *, button: str = "left") -> None: ...

    def type_text(self, text: str) -> None: ...

    def press_keys(self, keys: Sequence[str]) -> None:
        """Press a key combination: modifiers first, released in reverse (e.g. ["ctrl", "a"])."""
        ...

    def scroll(self, x: int, y: int, *, dx: int = 0, dy: int = 0) -> None:
        """Scroll at (x, y) by wheel clicks; positive dy scrolls down, positive dx right."""
        ...

    def wait(self, seconds: float) -> None: ...


@dataclass
class RecordingExecutor:
    """Performs nothing and records every primitive call, in order.

    This is the dry-run backend: ``caap run --dry-run`` and tests use it to see exactly which OS
    events an action would produce, without touching the real mouse and keyboard.
    """

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    sleep: bool = False
    pointer: tuple[int, int] | None = None

    def _log(self, name: str, **kwargs: Any) -> None:
        self.calls.append((name, kwargs))

    def move(self, x: int, y: int) -> None:
        self.pointer = (x, y)
        self._log("move", x=x, y=y)

    def click(
        self, x: int, y: int, *, button: str = "left", count: int = 1, modifiers: Sequence[str] = ()
    ) -> None:
        self.pointer = (x, y)
        self._log("click", x=x, y=y, button=button, count=count, modifiers=list(modifiers))

    def mouse_down(self, x: int, y: int, *, button: str = "left") -> None:
        self.pointer = (x, y)
        self._log("mouse_down", x=x, y=y, button=button)

    def mouse_up(self, *, button: str = "left") -> None:
        self._log("mouse_up", button=button)

    def type_text(self, text: str) -> None:
        self._log("type_text", text=text)

    def press_keys(self, keys: Sequence[str]) -> None:
        self._log("press_keys", keys=list(keys))

    def scroll(self, x: int, y: int, *, dx: int = 0, dy: int = 0) -> None:
        self.pointer = (x, y)
        self._log("scroll", x=x, y=y, dx=dx, dy=dy)

    def wait(self, seconds: float) -> None:
        self._log("wait", seconds=seconds)
        if self.sleep:
            time.sleep(seconds)
