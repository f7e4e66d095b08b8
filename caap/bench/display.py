"""A private X display (Xvfb) for benchmark runs, plus the child-process helpers the browser shares.

Xvfb picks its own free display number (``-displayfd``), so parallel runs never race for ``:N``. Every child we
start dies with us (``PR_SET_PDEATHSIG``) and lives in its own session, so a terminal Ctrl-C reaches Python first
and Python closes the children cleanly.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = ["DisplayError", "VirtualDisplay"]


class DisplayError(RuntimeError):
    """The virtual X display could not be started or used."""


# --- helpers shared with caap.bench.browser -------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    return prctl


# Resolved once here: the child runs between fork and exec, where symbol look-ups (dlsym locks) are unsafe.
_PRCTL = _load_prctl()


def _die_with_parent(then: Callable[[], None] | None = None) -> Callable[[], None]:
    """A ``preexec_fn`` that makes the child receive SIGKILL when this process dies.

    The death signal is tied to the *thread* that forks the child: start children from a thread that outlives
    them (the main thread, normally).
    """
    parent = os.getpid()

    def preexec() -> None:
        if _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the parent died before the death signal was armed
                os._exit(1)
        if then is not None:
            then()

    return preexec


class _OutputTail:
    """Drains a child's output pipe on a thread (so the child never blocks on a full pipe), keeping the tail."""

    def __init__(self, stream: IO[bytes], name: str, lines: int = 60, ignore: tuple[str, ...] = ()) -> None:
        self._lines: deque[str] = deque(maxlen=lines)
        self._ignore = ignore
        self._thread = threading.Thread(target=self._drain, args=(stream,), name=name, daemon=True)
        self._thread.start()

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode(errors="replace").rstrip()
                if line and not any(noise in line for noise in self._ignore):
                    self._lines.append(line)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                stream.close()

    def text(self, wait: float = 0.0, max_chars: int = 2000) -> str:
        """The last lines, optionally waiting up to ``wait`` s for a dying child's final output."""
        if wait > 0:
            self._thread.join(wait)
        kept: list[str] = []
        size = 0
        for line in reversed(list(self._lines)):  # whole lines only, the newest first
            size += len(line) + 1
            if size > max_chars and kept:
                break
            kept.append(line[-max_chars:])
        return "\n".join(reversed(kept))


def _with_tail(message: str, tail: str) -> str:
    return f"{message}; its last output:\n{tail}" if tail else f"{message} (it printed nothing)"


def _stop_process(proc: subprocess.Popen[bytes], *, group: bool, grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after ``grace`` seconds; with ``group`` the whole process group (its own session)."""

    def signal_it(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if group:
                os.killpg(proc.pid, sig)
            elif proc.poll() is None:
                proc.send_signal(sig)

    if proc.poll() is None:
        signal_it(signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            signal_it(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
    if group:  # helpers (renderers, zygotes) may outlive the main process: leave none behind
        signal_it(signal.SIGKILL)
        deadline = time.monotonic() + grace  # SIGKILL is delivered at once but a process takes a moment to go
        while group_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)


def group_members(pgid: int) -> list[int]:
    """The processes of group ``pgid`` still running (zombies waiting to be reaped do not count)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(stat.parent.name))
    return members


# --- the display ---------------------------------------------------------------------------------------------


class VirtualDisplay:
    """An Xvfb server on a display number it picks itself. ``name`` (e.g. ``":7"``) is set by :meth:`start`."""

    def __init__(self, width: int = 1280, height: int = 800, depth: int = 24, xvfb: str = "Xvfb") -> None:
        self.width = width
        self.height = height
        self.depth = depth
        self.xvfb = xvfb
        self.name: str = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._tail: _OutputTail | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 15.0) -> VirtualDisplay:
        """Launch Xvfb and return once it accepts connections."""
        if self.alive:
            return self
        self.close()
        binary = shutil.which(self.xvfb)
        if binary is None:
            raise DisplayError(f"Xvfb not found ({self.xvfb!r} is not an executable file or on PATH): "
                               "install the Debian package xvfb")
        read_fd, write_fd = os.pipe()
        try:
            try:
                self._proc = subprocess.Popen(
                    [binary, "-displayfd", str(write_fd), "-screen", "0", f"{self.width}x{self.height}x{self.depth}",
                     "-nolisten", "tcp", "-noreset"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    pass_fds=(write_fd,), start_new_session=True, preexec_fn=_die_with_parent(),
                )
            except OSError as exc:
                raise DisplayError(f"could not start Xvfb ({binary}): {exc}") from None
            finally:
                os.close(write_fd)  # ours must be closed so that Xvfb dying reads as end-of-file
            assert self._proc.stderr is not None
            self._tail = _OutputTail(self._proc.stderr, "xvfb-stderr")
            number = self._read_display_number(read_fd, timeout)
        except BaseException:
            self.close()
            raise
        finally:
            os.close(read_fd)
        self.name = f":{number}"
        try:
            self._wait_for_socket(number, timeout=5.0)
        except BaseException:
            self.close()
            raise
        return self

    def _read_display_number(self, fd: int, timeout: float) -> int:
        """Xvfb writes the display number to ``-displayfd`` once it is ready for clients."""
        assert self._proc is not None and self._tail is not None
        data = b""
        deadline = time.monotonic() + timeout
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise DisplayError(_with_tail(f"Xvfb did not become ready within {timeout:.0f} s", self._tail.text()))
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(fd, 64)
            if not chunk:  # end of file: Xvfb exited before it was ready
                try:
                    code = self._proc.wait(2.0)
                except subprocess.TimeoutExpired:
                    code = None
                raise DisplayError(_with_tail(f"Xvfb exited at start (code {code})", self._tail.text(wait=1.0)))
            data += chunk
        try:
            return int(data.strip())
        except ValueError:
            raise DisplayError(f"Xvfb reported a strange display number {data!r}") from None

    def _wait_for_socket(self, number: int, timeout: float) -> None:
        """Belt and braces: connect to the server's unix socket (path or abstract) before declaring it up."""
        path = f"/tmp/.X11-unix/X{number}"
        deadline = time.monotonic() + timeout
        while True:
            for address in (path, "\0" + path):
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                    try:
                        sock.connect(address)
                        return
                    except OSError:
                        pass
            if not self.alive:
                assert self._proc is not None and self._tail is not None
                raise DisplayError(_with_tail(f"Xvfb exited at start (code {self._proc.returncode})",
                                              self._tail.text(wait=1.0)))
            if time.monotonic() > deadline:
                raise DisplayError(f"Xvfb reported display {self.name} but nothing listens on {path}")
            time.sleep(0.05)

    def close(self) -> None:
        """Stop the server. Safe to call twice and after the server died."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _stop_process(proc, group=False)

    def __enter__(self) -> VirtualDisplay:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.alive else "stopped"
        return f"VirtualDisplay({self.name or '?'} {self.width}x{self.height}x{self.depth}, {state})"
