"""The marks of tests that need a live X screen (they start their own Xvfb), xdotool and Chromium:
skipped, with the Debian package to install, where one is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

needs_xvfb = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (Debian package xvfb)")
needs_xdotool = pytest.mark.skipif(shutil.which("xdotool") is None, reason="needs xdotool (Debian package xdotool)")
needs_chromium = pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                    reason="needs Chromium (Debian package chromium)")
# A module of live tests: pytestmark = LIVE.
LIVE = [pytest.mark.display, needs_xvfb, needs_xdotool, needs_chromium]

T = TypeVar("T", bound=Callable[..., object])


def live(test: T) -> T:
    """One live test in a module whose other tests run anywhere."""
    for mark in reversed(LIVE):
        test = mark(test)
    return test


def window_shown(display: str, title: str, timeout: float = 10.0) -> bool:
    """Whether a window whose title matches shows on ``display`` within ``timeout`` s (xdotool)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", title], capture_output=True,
                               text=True, env={**os.environ, "DISPLAY": display})
        if found.stdout.strip():
            return True
        time.sleep(0.1)
    return False
