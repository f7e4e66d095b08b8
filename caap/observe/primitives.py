"""The pixels every observer step shares: one RGB array per screen, the background colour, ink,
and how far each pixel lies from the page.

One place defines these so that every step means the same thing by them:

* ``background_colour``: the most common colour of an array (the colour text is drawn on);
  ``dominant_colour``: the same, quantised to 8 levels a channel (anti-aliasing does not split it).
* ``difference``: how far each pixel lies from a colour, as the largest channel difference
  (``"max"``: any channel, so a saturated colour on white counts fully) or the summed one
  (``"sum"``: faint colour ink counts); ``ink_mask`` thresholds it. Each step keeps its own
  threshold, a named constant in its module.
* ``grey_ink``: ink by grey level (luminance), for line finding, where colour does not matter.
* ``page_difference`` / ``page_ink``: the whole screen against its page colour, computed once per
  screen (``caap.observe.pipeline.Look`` holds them).

A 1080p screenshot is 6 MB of RGB, and ``np.asarray(image.convert("RGB"))`` copies it twice (PIL's
convert, then its export to numpy): about 4 ms a time on this project's CPU. Inside ``one_screen``
(the pipeline runs every step inside one) every image is converted once and each step gets the same
read-only array; outside it ``rgb_pixels`` converts as before. The same goes for the 8-connected
pieces of a mask several steps look at (``components``: the page's ink, labelled for the
scrollbars' arrows and for the framed title buttons alike).

The images and masks met inside ``one_screen`` must not be changed in place (the observer makes a
new image for every change it makes, e.g. ``caap.observe.steps.field_ink.without_foreign_ink``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

import numpy as np
from PIL import Image

from caap.geometry import Box

# id(image or mask) -> (it, what was made of it); it is held so that its id is not reused inside the block.
_ARRAYS: ContextVar[dict[int, tuple[object, Any]] | None] = ContextVar("caap_screen_arrays", default=None)


@contextmanager
def one_screen() -> Iterator[None]:
    """A block in which each image's RGB array is made once (``rgb_pixels``); dropped at its end.
    Inside another such block it shares that block's arrays."""
    if _ARRAYS.get() is not None:
        yield
        return
    token = _ARRAYS.set({})
    try:
        yield
    finally:
        _ARRAYS.reset(token)


def rgb_pixels(image: Image.Image) -> np.ndarray:
    """``image`` as a read-only H × W × 3 uint8 array: inside ``one_screen``, the same array every
    time it is asked for."""
    arrays = _ARRAYS.get()
    if arrays is not None:
        held = arrays.get(id(image))
        if held is not None and held[0] is image:
            return held[1]
    rgb = np.asarray(image if image.mode == "RGB" else image.convert("RGB"))
    rgb.flags.writeable = False  # every caller sees the screen as it was taken
    if arrays is not None:
        arrays[id(image)] = (image, rgb)
    return rgb


def true_runs(mask: np.ndarray, gap: int = 0) -> list[tuple[int, int]]:
    """The runs of true in a 1-D mask, as (first, last), joined across gaps of up to ``gap``."""
    idx = np.flatnonzero(mask)
    if not len(idx):
        return []
    runs = [[int(idx[0]), int(idx[0])]]
    for i in idx[1:]:
        if i - runs[-1][1] <= gap + 1:
            runs[-1][1] = int(i)
        else:
            runs.append([int(i), int(i)])
    return [(a, b) for a, b in runs]


def components(mask: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """OpenCV's 8-connected components of a uint8 mask: their count, the label image and the
    stats; inside ``one_screen``, computed once per mask."""
    import cv2  # the vision extra's

    arrays = _ARRAYS.get()
    if arrays is not None:
        held = arrays.get(id(mask))
        if held is not None and held[0] is mask:
            return held[1]  # type: ignore[no-any-return]
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if arrays is not None:
        arrays[id(mask)] = (mask, (n, labels, stats))
    return n, labels, stats


def background_colour(pixels: np.ndarray) -> np.ndarray:
    """The most common colour of an RGB array (H × W × 3, or N × 3): the background text is drawn on."""
    flat = pixels.reshape(-1, 3).astype(np.int32)
    packed = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    v = int(values[counts.argmax()])
    return np.array([(v >> 16) & 255, (v >> 8) & 255, v & 255], np.uint8)


FLAT_SHARE = 0.2  # a face whose most common colour covers less than this share is a gradient


def face_colour(pixels: np.ndarray) -> np.ndarray:
    """The colour a control's face has where its text is drawn: the most common colour, or on a
    gradient face (a key shaded top to bottom, where no one colour covers much and the frame's
    colour can be the most common) the median colour, the gradient's middle."""
    bg = background_colour(pixels)
    flat = pixels.reshape(-1, 3)
    if flat.size and (flat == bg).all(axis=1).mean() >= FLAT_SHARE:
        return bg
    return np.median(flat, axis=0).astype(np.uint8)


SAME_COLOUR = 8  # per channel: two backgrounds this close are one colour (JPEG-free screenshots)


def dominant_colour(pixels: np.ndarray, step: int = 1) -> np.ndarray:
    """The most common colour of an H × W × 3 uint8 array (quantised to 8 levels a channel, so
    anti-aliasing does not split it), sampling every ``step``-th pixel of each row and column."""
    sample = pixels[::step, ::step].reshape(-1, 3) // 8
    if not len(sample):
        raise ValueError("no pixels to take a colour from")
    codes = (sample[:, 0].astype(np.int32) << 10) | (sample[:, 1].astype(np.int32) << 5) | sample[:, 2]
    top = int(np.bincount(codes, minlength=1 << 15).argmax())
    return np.array([(top >> 10) * 8 + 4, ((top >> 5) & 31) * 8 + 4, (top & 31) * 8 + 4], dtype=np.int16)


def on_page_colour(image: np.ndarray, box: Sequence[int], page: np.ndarray) -> bool:
    """Whether the middle half of ``box`` lies on the page's own background colour ``page``
    (``dominant_colour`` of the screen): a selected row is filled with a colour of its own."""
    height, width = image.shape[:2]
    x1, y1 = max(int(box[0]), 0), max(int(box[1]), 0)
    x2, y2 = min(int(box[2]), width), min(int(box[3]), height)
    if x2 <= x1 or y2 <= y1:
        return False
    h, w = y2 - y1, x2 - x1
    middle = image[y1 + h // 4: max(y1 + h // 4 + 1, y2 - h // 4), x1 + w // 4: max(x1 + w // 4 + 1, x2 - w // 4)]
    return bool(np.abs(dominant_colour(middle) - page).max() <= SAME_COLOUR)


def difference(pixels: np.ndarray, colour: np.ndarray,
               reduce: Literal["max", "sum"] = "sum") -> Any:
    """How far each pixel of ``pixels`` (… × 3) lies from ``colour``: the largest (``max``) or the
    summed (``sum``) absolute channel difference (an int32 array of the pixels' shape less the
    channels; typed ``Any`` as numpy's own reductions are, so callers index and compare it freely)."""
    d = np.abs(pixels.astype(np.int32) - np.asarray(colour).astype(np.int32))
    return d.max(axis=-1) if reduce == "max" else d.sum(axis=-1)


INK_SUM = 60  # summed |RGB| difference from the background that counts as drawn (colour ink)


def ink_mask(pixels: np.ndarray, background: np.ndarray | None = None, threshold: int = INK_SUM,
             reduce: Literal["max", "sum"] = "sum") -> Any:
    """What is drawn on an RGB array: pixels whose ``difference`` from ``background`` (default: the
    array's ``background_colour``) exceeds ``threshold``."""
    bg = background_colour(pixels) if background is None else background
    return difference(pixels, bg, reduce) > threshold


def frame_lines(ink: np.ndarray, depth: int, share: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """The rows and the columns of an ink mask, within ``depth`` px of one of its sides, inked
    along at least ``share`` of their length: a frame's, a bevel's, a grid's or a focus ring's
    lines round what is drawn inside."""
    h, w = ink.shape
    rows = np.flatnonzero(ink.mean(axis=1) >= share) if w else np.zeros(0, int)
    cols = np.flatnonzero(ink.mean(axis=0) >= share) if h else np.zeros(0, int)
    return (rows[(rows < depth) | (rows >= h - depth)], cols[(cols < depth) | (cols >= w - depth)])


BODY_SHARE = 0.35  # a row inked over this share of the most inked row's pixels is in the letters' body


def baseline_row(ink: np.ndarray) -> int | None:
    """The baseline of a line of text's ink mask: the lowest row that the letters' bodies reach (a
    row inked over ``BODY_SHARE`` of the most inked row; below it only descenders go), or None
    where nothing is inked."""
    counts = ink.sum(axis=1)
    if counts.size == 0 or counts.max() == 0:
        return None
    return int(np.flatnonzero(counts >= BODY_SHARE * counts.max())[-1])


def grey_ink(grey: np.ndarray, threshold: int) -> np.ndarray:
    """Ink by grey level: pixels of a luminance array more than ``threshold`` levels from its most
    common level."""
    values, counts = np.unique(grey, return_counts=True)
    return np.abs(grey.astype(np.int16) - int(values[counts.argmax()])) > threshold


FAINT_INK = 12  # a channel this far from the page colour is faintly drawn (GTK's light-grey troughs differ by ~20)
PAGE_INK = 60  # a channel this far from the page colour is drawn on (``page_ink``'s default)


def page_colour(image: Image.Image) -> np.ndarray:
    """The page's background colour (a screen's, sampled on a 64 × 64 grid), uint8 RGB."""
    rgb = rgb_pixels(image)
    h, w = rgb.shape[:2]
    return background_colour(rgb[:: max(1, h // 64), :: max(1, w // 64)]).astype(np.uint8)


def page_difference(image: Image.Image, page: np.ndarray | None = None) -> np.ndarray:
    """How far each pixel is from its page's background colour (``page``; None: ``page_colour`` of
    the image; a cut-out of a screen takes the screen's): the largest channel difference (uint8,
    H × W). The page's ink masks are thresholds of it, so a screen computes it once."""
    import cv2  # the vision extra's

    rgb = rgb_pixels(image)
    bg = page_colour(image) if page is None else page
    # uint8 arithmetic in OpenCV: this runs on every screen, full-size ones included.
    d = cv2.absdiff(np.ascontiguousarray(rgb), (int(bg[0]), int(bg[1]), int(bg[2]), 0))  # type: ignore[call-overload]  # a scalar: no full-size copy
    return np.maximum(np.maximum(d[:, :, 0], d[:, :, 1]), d[:, :, 2])


def page_ink(image: Image.Image, threshold: int = PAGE_INK, difference: np.ndarray | None = None) -> np.ndarray:
    """Where the screenshot differs from its page's background colour by more than ``threshold`` in
    some channel (uint8 0/1, H × W). ``difference``: the screen's ``page_difference`` where the
    caller has it."""
    d = page_difference(image) if difference is None else difference
    return (d > threshold).astype(np.uint8)


RIGHT_PAD = 1  # labelled text boxes end one px past the last ink column (the glyph's advance)


def ink_extent(ink: np.ndarray, box: Box, pad: int) -> Box | None:
    """The box round the ink of ``box``'s crop, ``pad`` px around and inside ``box``; None: no ink."""
    x1, y1, x2, y2 = box
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return None
    return (max(x1, x1 + int(cols[0]) - pad), max(y1, y1 + int(rows[0]) - pad),
            min(x2, x1 + int(cols[-1]) + 1 + pad), min(y2, y1 + int(rows[-1]) + 1 + pad))


def fit_to_ink(rgb: np.ndarray, box: Box) -> Box | None:
    """``box`` fitted to the ink inside it (against its most common colour), ending 1 px past the
    ink on the right and below as the snapped text boxes do (``RIGHT_PAD``)."""
    x1, y1, x2, y2 = box
    tight = ink_extent(ink_mask(rgb[y1:y2, x1:x2]), box, 0)
    if tight is None:
        return None
    return (tight[0], tight[1], min(rgb.shape[1], tight[2] + RIGHT_PAD), min(rgb.shape[0], tight[3] + RIGHT_PAD))
