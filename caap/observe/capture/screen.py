"""The screen and observer interfaces the agent loop depends on, and their file-based forms.

Live capture (mss) and the vision models implement the same interfaces; the loop never knows which
one it has.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError


class ScreenError(RuntimeError):
    """The screen cannot be captured; the message says why."""


class Screen(ABC):
    """Something that yields screenshots of the area the agent acts on."""

    # How the last ``settle`` went (frames taken, milliseconds, whether it timed out); traced per action.
    last_settle: Mapping[str, Any] = MappingProxyType({})

    @abstractmethod
    def capture(self) -> Image.Image:
        """The current screen as an RGB image; its pixels are the coordinate space of actions."""

    def settle(self, previous: Image.Image) -> Image.Image:
        """The screen after an action once it stopped changing. Live screens wait for consecutive
        equal frames; a static screen has nothing to wait for."""
        return self.capture()

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the capture backend."""


def load_image(path: str | Path) -> Image.Image:
    path = Path(path)
    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except FileNotFoundError:
        raise ScreenError(f"{path}: no such image file") from None
    except (UnidentifiedImageError, OSError) as exc:
        raise ScreenError(f"{path}: not a readable image ({exc})") from None


class ImageScreen(Screen):
    """A screenshot file standing in for the screen (``caap run --screenshot``)."""

    def __init__(self, image: Image.Image) -> None:
        self.image = image

    def capture(self) -> Image.Image:
        return self.image


CARET_WIDTH = 3  # px: a change no wider than this, in one column run, is a text caret blinking
LOCAL_CHANGE_MARGIN_PX = 4  # px around an element that still belong to it (focus ring, hover border)


def change_mask(a: Image.Image, b: Image.Image) -> np.ndarray | None:
    """Which pixels differ between two frames of one size (``None`` when the sizes differ).

    A text caret blinks on its own (about twice a second in Chromium and GTK): a change that lies
    wholly within one run of at most ``CARET_WIDTH`` columns is that caret, not something an
    action did, and counts as no change. At a large font size the caret alone is over 30 px, so
    without this a focused field made every action look like it changed the screen."""
    if a.size != b.size:
        return None
    diff = np.asarray(a.convert("RGB"), dtype=np.int16) - np.asarray(b.convert("RGB"), dtype=np.int16)
    changed = np.abs(diff).max(axis=2) > 8
    cols = np.flatnonzero(changed.any(axis=0))
    if cols.size and cols[-1] - cols[0] < CARET_WIDTH:
        changed[:] = False
    return changed


class FrameChange:
    """Where two frames differ (``change_mask``), computed once and counted as often as needed:
    in all, or outside some boxes. A size change counts as every pixel changed."""

    def __init__(self, a: Image.Image, b: Image.Image) -> None:
        self.mask = change_mask(a, b)
        self.everything = max(a.width * a.height, b.width * b.height)

    def total(self) -> int:
        return self.everything if self.mask is None else int(np.count_nonzero(self.mask))

    def outside(self, boxes: list[tuple[int, int, int, int]], margin: int = LOCAL_CHANGE_MARGIN_PX) -> int:
        if self.mask is None:
            return self.everything
        mask = self.mask.copy()
        h, w = mask.shape
        for x1, y1, x2, y2 in boxes:
            mask[max(0, y1 - margin):min(h, y2 + margin), max(0, x1 - margin):min(w, x2 + margin)] = False
        return int(np.count_nonzero(mask))


POPUP_MIN_SIDES = (32, 16)  # px (width, height): smaller changes (a caret, a spinner, a clock's digit) are no pop-up
_CELL = 8  # px: changed pixels this close together are one region


def appeared_regions(a: Image.Image, b: Image.Image) -> list[tuple[int, int, int, int]]:
    """The boxes of the regions that differ between two frames of one size and are at least
    ``POPUP_MIN_SIDES`` large: what a dialog, a pop-up or a notification drawn in between covers.
    Changed pixels are gathered in cells of ``_CELL`` px, and touching cells are one region. (The
    partial look's ``changed_boxes`` groups with OpenCV, which the vision extra brings; the live
    screen needs only the screen extra, and a blinking caret is no region here.)"""
    if a.size == b.size and a.tobytes() == b.tobytes():  # the usual case, on every step: nothing drawn
        return []
    mask = change_mask(a, b)
    if mask is None or not mask.any():
        return []
    h, w = mask.shape
    padded = np.zeros((-(-h // _CELL) * _CELL, -(-w // _CELL) * _CELL), bool)
    padded[:h, :w] = mask
    cells = np.asarray(padded.reshape(padded.shape[0] // _CELL, _CELL, -1, _CELL).any(axis=(1, 3)))
    seen = np.zeros_like(cells)
    boxes = []
    for cy, cx in zip(*(v.tolist() for v in np.nonzero(cells)), strict=True):
        if seen[cy, cx]:
            continue
        stack, seen[cy, cx] = [(cy, cx)], True
        y1, x1, y2, x2 = cy, cx, cy, cx
        while stack:
            y, x = stack.pop()
            y1, x1, y2, x2 = min(y1, y), min(x1, x), max(y2, y), max(x2, x)
            for ny in (y - 1, y, y + 1):
                for nx in (x - 1, x, x + 1):
                    if 0 <= ny < cells.shape[0] and 0 <= nx < cells.shape[1] and cells[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((ny, nx))
        inside = mask[y1 * _CELL:(y2 + 1) * _CELL, x1 * _CELL:(x2 + 1) * _CELL]
        rows, cols = np.nonzero(inside.any(axis=1))[0], np.nonzero(inside.any(axis=0))[0]
        box = (x1 * _CELL + int(cols[0]), y1 * _CELL + int(rows[0]),
               x1 * _CELL + int(cols[-1]) + 1, y1 * _CELL + int(rows[-1]) + 1)
        if box[2] - box[0] >= POPUP_MIN_SIDES[0] and box[3] - box[1] >= POPUP_MIN_SIDES[1]:
            boxes.append(box)
    return boxes


def changed_outside(a: Image.Image, b: Image.Image, boxes: list[tuple[int, int, int, int]],
                    margin: int = LOCAL_CHANGE_MARGIN_PX) -> int:
    """How many pixels differ between two frames outside ``boxes`` (each grown by ``margin`` for
    a focus ring or hover border drawn around an element). A click that ticks a checkbox or text
    typed into a field changes its own element only; a page that moved on changes elsewhere."""
    return FrameChange(a, b).outside(boxes, margin)


def changed_within(a: Image.Image, b: Image.Image, box: tuple[int, int, int, int],
                   margin: int = LOCAL_CHANGE_MARGIN_PX) -> int:
    """How many pixels differ between two frames inside ``box`` (grown by ``margin``): whether
    what an action aims at still looks as it did when the screen was read. Only the box is
    compared (this runs before every pointer action, on screens of any size)."""
    if a.size != b.size:
        return max(a.width * a.height, b.width * b.height)
    x1, y1, x2, y2 = box
    region = (max(0, x1 - margin), max(0, y1 - margin), min(a.width, x2 + margin), min(a.height, y2 + margin))
    if region[2] <= region[0] or region[3] <= region[1]:
        return 0
    mask = change_mask(a.crop(region), b.crop(region))
    return 0 if mask is None else int(np.count_nonzero(mask))
