"""Colour statistics of an element for the reader's decoder: what per-crop standardising removes.

The reader standardises every crop's pixels (``caap.observe.read.patches``), so a hovered row's pale
tint and a white row reach the encoder as the same input; the states hang on exactly such
colours. A few numbers measured on the raw pixels go to the decoder beside the encoder's output
(``ReaderModel.decoder_memory``). Two sets exist, named in the model's config
(``config.ctc["colour"]``):

* ``crop`` (9 numbers, ``crop_colour``): mean and spread of each RGB channel over the whole
  semi-masked crop, and the median colour of its middle half. The crop holds the semi-mask's red
  frame, drawn exactly where Chromium draws a button's focus ring, and a selected neighbour's
  colour in its context.
* ``box`` (21 numbers, ``box_colour``): measured on the screenshot itself, before the semi-mask —
  mean and spread over the box, the median of its middle half, mean and spread of the 2 px ring
  just outside the box (a focus ring, under the red frame in the crop) and of the 2 px just inside
  it (a text field's focused border). Nothing outside that ring counts, so a neighbour's colour
  cannot leak into the element's state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

COLOUR_SETS = {"crop": 9, "box": 21}
RING_PX = 2  # the ring outside the box and the band inside it: a focus ring / border width


def colour_set(value: object) -> str | None:
    """The colour set a config names: None (no colour layers), ``crop`` (also written ``true``,
    the first release's spelling) or ``box``."""
    if value is None or value is False:
        return None
    if value is True:
        return "crop"
    if isinstance(value, str) and value in COLOUR_SETS:
        return value
    raise ValueError(f"colour must be one of {sorted(COLOUR_SETS)} (or true/false), got {value!r}")


def crop_colour(array: np.ndarray) -> np.ndarray:
    """``crop`` statistics of one semi-masked crop (H × W × 3, uint8), in [0, 1]."""
    x = array.astype(np.float32).reshape(-1, 3) / 255.0
    h, w = array.shape[:2]
    middle = array[h // 4: max(h // 4 + 1, h - h // 4), w // 4: max(w // 4 + 1, w - w // 4)]
    centre = np.median(middle.reshape(-1, 3), axis=0).astype(np.float32) / 255.0
    return np.concatenate([x.mean(axis=0), x.std(axis=0), centre]).astype(np.float32)


def _stats(pixels: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    if not len(pixels):  # a box on the screen's edge has no ring on that side: the box stands in
        pixels = fallback
    x = pixels.astype(np.float32) / 255.0
    return np.concatenate([x.mean(axis=0), x.std(axis=0)])


def box_colour(image: np.ndarray, box: Sequence[int]) -> np.ndarray:
    """``box`` statistics of ``box`` (x1, y1, x2, y2; x2/y2 exclusive) on the screenshot ``image``
    (H × W × 3, uint8), in [0, 1]: box mean+spread, middle-half median, outer ring mean+spread,
    inner band mean+spread. The box is clipped to the image; an empty one is a ValueError."""
    height, width = image.shape[:2]
    x1, y1 = max(int(box[0]), 0), max(int(box[1]), 0)
    x2, y2 = min(int(box[2]), width), min(int(box[3]), height)
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"box {list(box)} has no pixels inside the {width}x{height} image")
    inside = image[y1:y2, x1:x2].reshape(-1, 3)
    h, w = y2 - y1, x2 - x1
    middle = image[y1 + h // 4: max(y1 + h // 4 + 1, y2 - h // 4), x1 + w // 4: max(x1 + w // 4 + 1, x2 - w // 4)]
    centre = np.median(middle.reshape(-1, 3), axis=0).astype(np.float32) / 255.0
    r = RING_PX
    ox1, oy1, ox2, oy2 = max(x1 - r, 0), max(y1 - r, 0), min(x2 + r, width), min(y2 + r, height)
    ring = np.ones((oy2 - oy1, ox2 - ox1), dtype=bool)
    ring[y1 - oy1: y2 - oy1, x1 - ox1: x2 - ox1] = False
    band = np.ones((h, w), dtype=bool)
    band[r: max(r, h - r), r: max(r, w - r)] = False
    return np.concatenate([_stats(inside, inside), centre,
                           _stats(image[oy1:oy2, ox1:ox2][ring], inside),
                           _stats(image[y1:y2, x1:x2][band], inside)]).astype(np.float32)


def box_colours(image: np.ndarray, boxes: Sequence[Sequence[int]]) -> np.ndarray:
    """``box_colour`` of every box, stacked (len(boxes) × 21)."""
    return np.stack([box_colour(image, b) for b in boxes]) if boxes else np.zeros((0, COLOUR_SETS["box"]), np.float32)


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
