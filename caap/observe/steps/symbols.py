"""A key that holds one glyph (a calculator's ÷ × − + = ± or digit, a zoom button's +): its shape.

PP-OCR reads text lines; a lone operator in a big key is no line to it. It reads ``÷`` as ``+``
and ``.`` as ``8``, sure of itself, and the reader, which saw few such keys, reads them wrong. A
lone glyph is a few strokes whose layout says which it is: how many pieces, how they sit, how wide
against how tall. ``drawn_shapes`` draws each symbol of ``SYMBOLS`` in the system's fonts at the
sizes keys use (a calculator's are 8 px: ``÷``'s dots touch its bar), with digits and letters
beside them, once; ``lone_glyph`` matches a key's ink against those drawings and answers with the
closest. Which reading a key keeps is decided in ``caap.observe.steps.texts.key_text``.
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from caap.files import cache_dir
from caap.observe.primitives import INK_SUM, face_colour, ink_mask

SYMBOLS = "+-×÷=±.%/*"
# Drawn too, so that a digit, a letter or an arrow alone on a key is not taken for the symbol it is
# nearest (a pagination's ‹ for a comma, a close button's ✕ for ×).
OTHERS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz,:;<>‹›«»←→✕"
SIZES = (*range(9, 17), 18, 20, 22, 24, 27, 30, 34, 40)  # px: font sizes drawn
FONT_FILES = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
              "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
              "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
              "/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf")
GRID = 16  # px: each shape is compared as a GRID × GRID mask of its ink, its aspect kept
MIN_MATCH = 0.6  # the ink and the drawing must overlap this much (IoU of the soft masks)
MAX_SHARE = 0.5  # a lone symbol spans at most this share of the key's smaller side
ASPECT_TOLERANCE = 0.6  # |log(aspect) - log(drawn aspect)| above this: another symbol
MERGED_PIECES = 0.9  # a drawing with more pieces than the ink: its match counts this much
MARGIN_PX = 3  # the key's frame: this many pixels on each side are not looked at


@dataclass(frozen=True)
class Shape:
    pieces: int
    aspect: float  # width / height of the ink
    mask: np.ndarray  # GRID × GRID float32: the share of each cell inked, softened


def _pieces(ink: np.ndarray) -> int:
    import cv2

    count, _ = cv2.connectedComponents(ink.astype(np.uint8), connectivity=8)
    return int(count) - 1


def shape_of(ink: np.ndarray) -> Shape | None:
    """The shape of a mask holding one symbol's ink (None when there is no ink)."""
    ys, xs = np.nonzero(ink)
    if ys.size == 0:
        return None
    tight = ink[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    h, w = tight.shape
    side = max(h, w)
    square = np.zeros((side, side), bool)
    square[(side - h) // 2:(side - h) // 2 + h, (side - w) // 2:(side - w) // 2 + w] = tight
    # A share of ink per cell, softened by a cell each way: a stroke a pixel off still overlaps.
    grid = np.asarray(Image.fromarray(square.astype(np.uint8) * 255).resize((GRID, GRID), Image.Resampling.BOX))
    soft = np.asarray(Image.fromarray(grid).filter(ImageFilter.BoxBlur(1)), np.float32) / 255
    return Shape(_pieces(tight), w / h, np.maximum(grid.astype(np.float32) / 255, soft))


@dataclass(frozen=True)
class Drawings:
    chars: list[str]
    pieces: np.ndarray  # (N,)
    aspects: np.ndarray  # (N,)
    masks: np.ndarray  # (N, GRID * GRID) float32


def _cache_path(files: list[str]) -> Path:
    """The drawings' file in the cache, named for everything that shapes them."""
    import PIL

    key = repr((SYMBOLS, OTHERS, SIZES, GRID, INK_SUM, PIL.__version__,
                [(f, Path(f).stat().st_size) for f in files]))
    return cache_dir() / f"symbols-{hashlib.sha256(key.encode()).hexdigest()[:16]}.npz"


@lru_cache(maxsize=1)
def drawn_shapes() -> Drawings:
    """``SYMBOLS`` and ``OTHERS`` drawn at ``SIZES`` in each font there is (Pillow's own where none
    is), their ink taken as a screen's is (``INK_SUM``: anti-aliased edges count). Drawing
    them takes over a second, so they are kept in the cache (``cache_dir``) and read from there
    by later processes; an unreadable cache file is drawn again."""
    files = [f for f in FONT_FILES if Path(f).is_file()]
    path = _cache_path(files)
    try:
        with np.load(path) as kept:
            return Drawings(list(str(kept["chars"])), kept["pieces"], kept["aspects"], kept["masks"])
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        pass
    shapes: list[tuple[str, Shape]] = []
    for size in SIZES:
        fonts: list[ImageFont.FreeTypeFont | ImageFont.ImageFont] = [ImageFont.truetype(f, size) for f in files]
        fonts = fonts or [ImageFont.load_default(size=size)]
        for font in fonts:
            for char in SYMBOLS + OTHERS:
                image = Image.new("L", (3 * size, 3 * size), 0)
                ImageDraw.Draw(image).text((size, size // 2), char, fill=255, font=font)
                shape = shape_of(np.asarray(image) > INK_SUM // 3)
                if shape is not None:
                    shapes.append((char, shape))
    drawn = Drawings([c for c, _ in shapes], np.array([s.pieces for _, s in shapes]),
                     np.array([s.aspect for _, s in shapes]), np.stack([s.mask.ravel() for _, s in shapes]))
    try:  # a cache that cannot be written costs the drawing again next time, nothing else
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.npz")
        np.savez(tmp, chars=np.array("".join(drawn.chars)), pieces=drawn.pieces, aspects=drawn.aspects,
                 masks=drawn.masks)
        os.replace(tmp, path)
    except OSError:
        pass
    return drawn


@dataclass(frozen=True)
class Glyph:
    char: str  # the closest drawing
    score: float  # how well it matched (IoU of the masks)
    height: int  # px: the ink's height on the screen
    width: int  # px: and its width


def lone_glyph(crop: np.ndarray) -> Glyph | None:
    """The one character (symbol, digit or letter of the drawings) a key's crop (H × W × 3, the key's
    box) holds alone: the closest drawing, how well it matched and how tall the ink is; None: no ink,
    ink spanning too much of the key, or more than one glyph side by side."""
    inner = crop[MARGIN_PX:-MARGIN_PX, MARGIN_PX:-MARGIN_PX]
    if inner.shape[0] < 6 or inner.shape[1] < 6:
        return None
    ink = ink_mask(inner, face_colour(inner))  # against the key's face, shaded or flat
    ys, xs = np.nonzero(ink)
    if ys.size == 0:
        return None
    if max(ys.max() - ys.min() + 1, xs.max() - xs.min() + 1) > MAX_SHARE * min(inner.shape[:2]):
        return None  # a word, or the ink of a frame or a gradient
    if not ink[ys.min():ys.max() + 1, xs.min():xs.max() + 1].any(axis=0).all():
        return None  # a blank column between pieces: letters side by side (MC, 24), no one symbol
    seen = shape_of(ink)
    assert seen is not None
    drawn = drawn_shapes()
    mask = seen.mask.ravel()
    iou = np.minimum(drawn.masks, mask).sum(axis=1) / np.maximum(np.maximum(drawn.masks, mask).sum(axis=1), 1e-6)
    # Pieces only merge at a screen's small sizes (a ÷'s dot touching its bar), never split.
    iou[drawn.pieces != seen.pieces] *= MERGED_PIECES
    iou[(drawn.pieces < seen.pieces) | (np.abs(np.log(seen.aspect / drawn.aspects)) > ASPECT_TOLERANCE)] = 0.0
    best = int(iou.argmax())
    return Glyph(drawn.chars[best], float(iou[best]), int(ys.max() - ys.min() + 1), int(xs.max() - xs.min() + 1))
