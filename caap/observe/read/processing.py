"""What the reader's models see of an element: the semi-masked crop (``semi_mask``), its native-
resolution patches (``patchify``) and the colour statistics its decoder gets beside them
(``crop_colour``, ``box_colour``). One module, used by training and by inference alike, so the model
never sees a different input at run time than it learned from.

**Semi-masking** (CAAP §3.1): the reader's input is the screenshot with the target element outlined
and everything around it darkened, so the element keeps its own pixels *and* its spatial context
(unlike Pix2Struct's own masking, which hides the target behind an 'X').

**Patches.** Pix2Struct's own image processor rescales every image until it fills ``max_patches`` square
patches; a 12 px line of UI text then arrives blown up several times, and a 16 px patch spans two
or three characters. The reader instead cuts each (semi-masked) element crop, unscaled, into
narrow patches — by default 16 px high and 4 px wide — so that a line of text yields at least one
patch column per character, and the encoder's columns can be read left to right by a CTC head.

The layout is what ``Pix2StructVisionModel`` expects: one row per patch, ``[row, column, pixels...]``
with 1-based row/column ids, each image's patches in row-major order, then zero rows (masked out)
up to the batch's longest sequence — no image is padded to another image's width or height, so a
tall shape and a long line in one batch cost what they cost alone. The CTC head pools the encoder's
output per column using those ids. Pixels are standardised per image (mean 0, std 1 over the crop),
as Pix2Struct does, so light and dark themes look alike to the model's text reading. Standardising
also erases what a state can hang on — a row's pale hover tint and a white row become the same
input — so every image also gets a few colour statistics measured before it, which the reader
hands to its decoder beside the encoder's output.

**Colour statistics** (what per-crop standardising removes): a few numbers measured on the raw
pixels go to the decoder beside the encoder's output (``ReaderModel.decoder_memory``). Two sets
exist, named in the model's config (``config.ctc["colour"]``):

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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from caap.observe.primitives import rgb_pixels

if TYPE_CHECKING:
    import torch

# --- semi-masking ---------------------------------------------------------------------------------

Window = tuple[int, int, int, int]


def _span(lo: int, hi: int, margin: int, size: int) -> tuple[int, int]:
    """The interval [lo - margin, hi + margin) moved (not shrunk) to lie inside [0, size); only an
    interval longer than the image is cut to the whole image."""
    length = (hi - lo) + 2 * margin
    if length >= size:
        return 0, size
    start = min(max(lo - margin, 0), size - length)
    return start, start + length


def context_window(box: Sequence[int], width: int, height: int, context: int, outline_px: int = 0) -> Window:
    """The crop ``semi_mask`` takes for ``context``: the box grown by ``max(context, outline_px)`` px
    on every side (so the outline always fits), shifted back inside the image when it runs past an
    edge (an element in a corner gets the same amount of context, all of it on the inner side), and
    cut to the image only along an axis where the window is larger than the image itself."""
    margin = max(int(context), int(outline_px), 0)
    x1, x2 = _span(int(box[0]), int(box[2]), margin, width)
    y1, y2 = _span(int(box[1]), int(box[3]), margin, height)
    return x1, y1, x2, y2


def semi_mask(
    image: Image.Image | np.ndarray,
    box: Sequence[int],
    *,
    darken: float = 0.5,
    outline_px: int = 2,
    outline_rgb: Sequence[int] = (255, 0, 0),
    context: int | None = None,
) -> Image.Image:
    """The screenshot with ``box`` (``[x1, y1, x2, y2]``, x2/y2 exclusive) semi-masked.

    Every pixel outside the box is multiplied by ``darken`` (rounded; 1.0 leaves it, 0.0 blacks it
    out); a frame ``outline_px`` wide in ``outline_rgb`` is drawn just *outside* the box (the part
    of it past the image edge is dropped), so the element's own pixels are never touched. With
    ``context`` the result is cropped to ``context_window`` (see there) — more resolution per
    element for the same number of patches; ``None`` keeps the whole screen (the paper's input).
    The box is clipped to the image first; a box with nothing inside the image is a ValueError.
    Deterministic and never flipped or resized. ``image`` may be the screen's RGB array: a caller
    masking every element of a 1080p screen converts it once, not once per element.
    """
    rgb = image if isinstance(image, np.ndarray) else rgb_pixels(image)
    height, width = rgb.shape[:2]
    x1, y1 = max(int(box[0]), 0), max(int(box[1]), 0)
    x2, y2 = min(int(box[2]), width), min(int(box[3]), height)
    if x2 <= x1 or y2 <= y1:
        raise ValueError(f"box {list(box)} has no pixels inside the {width}x{height} image")
    if not 0.0 <= darken <= 1.0:
        raise ValueError(f"darken must lie in [0, 1], got {darken}")
    # Crop first: darkening only the window is less work than darkening the whole screen.
    wx1, wy1, wx2, wy2 = (0, 0, width, height) if context is None else context_window(
        (x1, y1, x2, y2), width, height, context, outline_px)
    window = rgb[wy1:wy2, wx1:wx2]
    lut = np.round(np.arange(256, dtype=np.float32) * darken).astype(np.uint8)  # exact, and faster than float maths
    out = lut[window]
    # Box and outline in window coordinates.
    bx1, by1, bx2, by2 = x1 - wx1, y1 - wy1, x2 - wx1, y2 - wy1
    h, w = out.shape[:2]
    o = max(int(outline_px), 0)
    if o:
        colour = np.asarray(outline_rgb, dtype=np.uint8)[:3]
        ox1, oy1, ox2, oy2 = max(bx1 - o, 0), max(by1 - o, 0), min(bx2 + o, w), min(by2 + o, h)
        out[oy1:by1, ox1:ox2] = colour  # top band (empty when the box touches the top edge)
        out[by2:oy2, ox1:ox2] = colour  # bottom band
        out[oy1:oy2, ox1:bx1] = colour  # left band
        out[oy1:oy2, bx2:ox2] = colour  # right band
    out[by1:by2, bx1:bx2] = window[by1:by2, bx1:bx2]  # the element itself, untouched
    return Image.fromarray(out, "RGB")


# --- colour statistics ----------------------------------------------------------------------------

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


# --- patches --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PatchGrid:
    """A batch of patched images: the model inputs plus each image's grid."""

    flattened_patches: torch.Tensor  # (batch, tokens, 2 + height * width * 3), float32
    attention_mask: torch.Tensor  # (batch, tokens), 1 for an image's own patches
    shapes: list[tuple[int, int]]  # (rows, cols) of every image
    colour: torch.Tensor  # (batch, features), float32: every image's colour statistics (caap.observe.read.colour)


def patch_values(height: int, width: int) -> int:
    """Pixel values in one flattened RGB patch (``patch_embed_hidden_size`` of the vision config)."""
    return height * width * 3


def grid_size(width: int, height: int, patch: tuple[int, int]) -> tuple[int, int]:
    """(rows, cols) of patches an image of ``width × height`` px needs (partial patches padded)."""
    ph, pw = patch
    return max(1, math.ceil(height / ph)), max(1, math.ceil(width / pw))


def patchify(images: Sequence[Image.Image | np.ndarray], patch: tuple[int, int],
             max_patches: int | None = None, colour: np.ndarray | None = None) -> PatchGrid:
    """Cut every image into ``patch = (height, width)`` patches at its own resolution.

    ``colour``: each image's colour statistics, measured by the caller on the screenshot
    (``caap.observe.read.colour.box_colour``); None: the ``crop`` statistics of the images themselves.

    ``max_patches`` bounds the grid of one image (rows × cols): a wider or taller image is scaled
    down just enough to fit (never up), so one huge element cannot exhaust memory or the vision
    model's position table."""
    import torch

    ph, pw = int(patch[0]), int(patch[1])
    if ph < 1 or pw < 1:
        raise ValueError(f"patch size must be positive, got {patch}")
    arrays = [_fit(np.asarray(im.convert("RGB") if isinstance(im, Image.Image) and im.mode != "RGB" else im),
                   (ph, pw), max_patches) for im in images]
    if not arrays:
        raise ValueError("patchify needs at least one image")
    shapes = [grid_size(a.shape[1], a.shape[0], (ph, pw)) for a in arrays]
    tokens = max(r * c for r, c in shapes)
    dim = patch_values(ph, pw)
    out = torch.zeros((len(arrays), tokens, 2 + dim), dtype=torch.float32)
    mask = torch.zeros((len(arrays), tokens), dtype=torch.float32)
    if colour is None:
        colour = np.stack([crop_colour(a) for a in arrays])
    elif len(colour) != len(arrays):
        raise ValueError(f"{len(colour)} colour rows for {len(arrays)} images")
    colour_rows = torch.as_tensor(np.asarray(colour, dtype=np.float32))
    for b, (a, (r, c)) in enumerate(zip(arrays, shapes, strict=True)):
        x = torch.from_numpy(np.array(a, dtype=np.float32))
        mean, std = x.mean(), x.std(unbiased=False)
        x = (x - mean) / torch.clamp(std, min=1.0 / math.sqrt(x.numel()))
        # Pad to whole patches with 0 (the image's mean after standardising).
        padded = torch.zeros((r * ph, c * pw, 3), dtype=torch.float32)
        padded[: a.shape[0], : a.shape[1]] = x
        # (r, ph, c, pw, 3) -> (r, c, ph, pw, 3) -> (r * c, ph * pw * 3): row-major patches,
        # each flattened row by row, channels last — the order Pix2Struct's processor uses.
        n = r * c
        out[b, :n, 2:] = padded.reshape(r, ph, c, pw, 3).permute(0, 2, 1, 3, 4).reshape(n, dim)
        out[b, :n, 0] = torch.arange(1, r + 1, dtype=torch.float32).repeat_interleave(c)
        out[b, :n, 1] = torch.arange(1, c + 1, dtype=torch.float32).repeat(r)
        mask[b, :n] = 1.0
    return PatchGrid(out, mask, shapes, colour_rows)


def patch_count(width: int, height: int, patch: tuple[int, int]) -> int:
    """Patches an image of ``width × height`` px becomes (without ``max_patches`` scaling)."""
    rows, cols = grid_size(width, height, patch)
    return rows * cols


def _fit(array: np.ndarray, patch: tuple[int, int], max_patches: int | None) -> np.ndarray:
    """The image, scaled down (aspect kept) only if its grid would exceed ``max_patches``."""
    if array.ndim != 3 or array.shape[2] != 3:
        raise ValueError(f"expected an RGB image, got an array of shape {array.shape}")
    if not max_patches:
        return array
    rows, cols = grid_size(array.shape[1], array.shape[0], patch)
    if rows * cols <= max_patches:
        return array
    scale = math.sqrt(max_patches / (rows * cols))
    while True:
        w, h = max(1, int(array.shape[1] * scale)), max(1, int(array.shape[0] * scale))
        r, c = grid_size(w, h, patch)
        if r * c <= max_patches:
            break
        scale *= 0.95
    return np.asarray(Image.fromarray(array).resize((w, h), Image.Resampling.BILINEAR))
