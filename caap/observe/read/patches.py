"""Native-resolution patches for the element reader, in Pix2Struct's ``flattened_patches`` layout.

Pix2Struct's own image processor rescales every image until it fills ``max_patches`` square
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
input — so every image also gets a few colour statistics measured before it
(``caap.observe.read.colour``), which the reader hands to its decoder beside the encoder's output.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from caap.observe.read.colour import crop_colour

if TYPE_CHECKING:
    import torch


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
