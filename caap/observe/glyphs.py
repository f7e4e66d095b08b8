"""Icons named by example: a bank of small glyphs drawn pixel for pixel, found again on a screen.

A web page's toolbar and menu glyphs (jQuery UI's sprite: a floppy disk for Save, magnifiers for
Zoom In and Zoom Out, the player's controls) are drawn from one picture at one size, so a glyph
seen once is the same grey pattern wherever it is drawn again: only its colour changes (dark on a
plain row, white on a highlighted one, faded where its item is disabled). Such a pattern needs no
network to be told apart: ``GlyphBank`` keeps each labelled glyph's grey pattern, cut tight to its
ink, and ``find`` looks for every pattern over the whole screen by normalised cross-correlation,
whose absolute value is the same for any contrast and for the colours swapped.

The bank is built from labelled screenshots (``caap train glyphs``: the icons whose subtype is one
of ``GLYPH_ICON_SUBTYPES``) and stored beside the reader (``glyphs.json`` in its checkpoint
directory), so a user adds their own app's glyphs by labelling a few screens. The observer's step
``name_glyph_icons`` (``caap.observe.steps.glyph_icons``) gives each glyph found an icon element of
its subtype: a task that names a menu item by its picture ("the item with the [magnifier] icon")
can then be matched to the item drawn with the same picture.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import numpy as np
from PIL import Image

from caap.config import Screens
from caap.files import read_json, write_atomic
from caap.geometry import Box
from caap.observe.primitives import components
from caap.taxonomy import GLYPH_ICON_SUBTYPES

SCREENS: tuple[str, ...] = get_args(Screens)
GLYPH_FILE = "glyphs.json"
FORMAT = "caap-glyphs/1"
INK = 24          # grey levels: a pixel this far from the glyph cell's border colour is the glyph's
MIN_SIDE = 5      # px: a smaller glyph is too plain to tell from a letter's strokes
MAX_SIDE = 32     # px: a bigger one is a picture, not a glyph
SAME = 0.98       # two cut patterns of one subtype correlating this much are one pattern (kept once)
MIN_SCORE = 0.9   # |correlation| a place on the screen must reach with a pattern to hold its glyph
RIVAL_ERROR = 0.5  # ... and fall short of 1 by at most this share of what the best other subtype there does
FIT = 2           # px an island may exceed a pattern's size by on each axis and still be tried with it


class GlyphError(ValueError):
    """A glyph bank that cannot be loaded or built; the message names the file."""


@dataclass(frozen=True)
class Glyph:
    """One glyph's grey pattern (H × W, 0-255), cut to its ink, and the icon subtype it shows."""

    subtype: str
    pattern: np.ndarray


@dataclass(frozen=True)
class Found:
    """A glyph drawn on the screen: its subtype, tight box and the correlation it reached."""

    subtype: str
    box: Box
    score: float


def cut_glyph(grey: np.ndarray) -> np.ndarray | None:
    """``grey`` (a labelled glyph's cell) cut to its ink and a pixel round it: the ink is the pixels
    that differ from the cell's most common border value by more than ``INK``, less the pieces
    touching the cell's border (a line of text just above or below it). None where no ink is left or
    it is too small or too big to be a glyph."""
    border = np.concatenate([grey[0], grey[-1], grey[:, 0], grey[:, -1]])
    values, counts = np.unique(border, return_counts=True)
    ink = (np.abs(grey.astype(np.int16) - int(values[np.argmax(counts)])) > INK).astype(np.uint8)
    _, labels, stats = components(ink)
    h, w = ink.shape
    inner = [i for i, (x, y, bw, bh, _) in enumerate(stats) if i and x > 0 and y > 0 and x + bw < w and y + bh < h]
    keep = np.isin(labels, inner)
    rows, cols = np.flatnonzero(keep.any(axis=1)), np.flatnonzero(keep.any(axis=0))
    if not len(rows):
        return None
    # With a pixel of the background round it: a plain square (a player's Stop) is a pattern only so.
    cut = grey[rows[0] - 1:rows[-1] + 2, cols[0] - 1:cols[-1] + 2]
    if min(cut.shape) < MIN_SIDE or max(cut.shape) > MAX_SIDE or float(cut.std()) < 1.0:
        return None
    return cut


def _correlation(grey: np.ndarray, pattern: np.ndarray) -> np.ndarray:
    """|normalised cross-correlation| of ``pattern`` at every place it fits in ``grey`` (0 on a plain
    patch, where it is undefined)."""
    import cv2  # the vision extra's

    scores = cv2.matchTemplate(grey.astype(np.float32), pattern.astype(np.float32), cv2.TM_CCOEFF_NORMED)
    return np.nan_to_num(np.abs(scores), nan=0.0, posinf=0.0, neginf=0.0)


class GlyphBank:
    """The labelled glyphs, looked for together (``find``) on the kinds of screen they were cut from
    (``screens``, of ``text_choice.SCREENS``: the observer looks for them on those only)."""

    def __init__(self, glyphs: Sequence[Glyph], screens: Sequence[str] = ("web",)) -> None:
        unknown = sorted({g.subtype for g in glyphs} - set(GLYPH_ICON_SUBTYPES))
        if unknown:
            raise GlyphError(f"glyph subtypes {unknown} are not among {GLYPH_ICON_SUBTYPES}")
        if not screens or set(screens) - set(SCREENS):
            raise GlyphError(f"a glyph bank's screens are some of {SCREENS}, not {list(screens)}")
        self.glyphs = list(glyphs)
        self.screens = tuple(screens)

    def __len__(self) -> int:
        return len(self.glyphs)

    @property
    def subtypes(self) -> list[str]:
        return sorted({g.subtype for g in self.glyphs})

    def add(self, subtype: str, pattern: np.ndarray) -> bool:
        """Keep ``pattern`` unless one of the same size and subtype correlates ``SAME`` with it; whether
        it was kept."""
        for g in self.glyphs:
            if g.subtype == subtype and g.pattern.shape == pattern.shape \
                    and float(_correlation(pattern, g.pattern).max()) >= SAME:
                return False
        self.glyphs.append(Glyph(subtype, pattern.astype(np.uint8)))
        return True

    def find(self, image: Image.Image) -> list[Found]:
        """Every glyph of the bank drawn on ``image``: where a pattern correlates at least
        ``MIN_SCORE`` and clearly better than any other subtype's there (``RIVAL_ERROR``: two
        magnifiers differ by the plus sign's few pixels, 1.0 against 0.97), the best place round each
        of the screen's small islands of edges (``islands``) the size of some pattern; a search of the
        whole screen costs a second on a 1080p one."""
        if not self.glyphs:
            return []
        grey = np.asarray(image.convert("L"))
        found: list[Found] = []
        for x1, y1, x2, y2 in islands(grey):
            # The edges reach a pixel past the ink on one side; a pattern is tried where it covers the island.
            wx1, wy1, wx2, wy2 = max(0, x1 - 1), max(0, y1 - 1), min(grey.shape[1], x2 + 1), min(grey.shape[0], y2 + 1)
            window = grey[wy1:wy2, wx1:wx2]
            best: dict[str, tuple[float, Box]] = {}
            for g in self.glyphs:
                h, w = g.pattern.shape
                if not (window.shape[0] - 3 - FIT <= h <= window.shape[0]
                        and window.shape[1] - 3 - FIT <= w <= window.shape[1]):
                    continue
                scores = _correlation(window, g.pattern)
                y, x = np.unravel_index(int(np.argmax(scores)), scores.shape)
                score = float(scores[y, x])
                if score > best.get(g.subtype, (-1.0, (0, 0, 0, 0)))[0]:
                    # The pattern holds a pixel of background round the ink: the box is the ink's.
                    best[g.subtype] = (score, (wx1 + int(x) + 1, wy1 + int(y) + 1,
                                               wx1 + int(x) + w - 1, wy1 + int(y) + h - 1))
            if not best:
                continue
            ranked = sorted(best.items(), key=lambda kv: -kv[1][0])
            subtype, (score, box) = ranked[0]
            rival = ranked[1][1][0] if len(ranked) > 1 else 0.0
            if score >= MIN_SCORE and 1.0 - score <= RIVAL_ERROR * (1.0 - max(rival, 0.0)):
                found.append(Found(subtype, box, score))
        return sorted(found, key=lambda f: (f.box[1], f.box[0]))

    # -- files ----------------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "screens": list(self.screens),
                "glyphs": [{"subtype": g.subtype, "pattern": g.pattern.tolist()} for g in self.glyphs]}

    def save(self, path: str | Path) -> None:
        write_atomic(Path(path), json.dumps(self.to_json(), separators=(",", ":")) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> GlyphBank:
        path = Path(path)
        data = read_json(path, GlyphError, missing="missing", unreadable="unreadable")
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("glyphs"), list):
            raise GlyphError(f"{path}: not a glyph bank (format {FORMAT!r} with a 'glyphs' list)")
        glyphs = []
        for i, g in enumerate(data["glyphs"]):
            try:
                pattern = np.asarray(g["pattern"], dtype=np.int64)
                if pattern.ndim != 2 or min(pattern.shape) < MIN_SIDE or max(pattern.shape) > MAX_SIDE \
                        or pattern.min() < 0 or pattern.max() > 255:
                    raise ValueError("a pattern is a grid of grey levels 0-255, "
                                     f"{MIN_SIDE}-{MAX_SIDE} px a side")
                glyphs.append(Glyph(str(g["subtype"]), pattern.astype(np.uint8)))
            except (KeyError, TypeError, ValueError) as exc:
                raise GlyphError(f"{path}: glyph {i} is broken ({exc})") from None
        try:
            return cls(glyphs, screens=data.get("screens", ("web",)))
        except (GlyphError, TypeError) as exc:
            raise GlyphError(f"{path}: {exc}") from None


def islands(grey: np.ndarray) -> list[Box]:
    """The boxes of the screen's small islands of edges: 8-connected pieces of the pixels that differ
    by more than ``INK`` from their right or lower neighbour, at most ``MAX_SIDE`` + 1 px a side,
    pieces within a pixel of each other joined (a magnifier's plus inside its lens). A one-sided
    difference keeps a glyph 2 px under a line of text apart from it, where a 3 × 3 gradient joins
    them. Letters are islands too; a panel's outline is not."""
    import cv2  # the vision extra's

    g = grey.astype(np.int16)
    edges = np.zeros(grey.shape, np.uint8)
    edges[:, :-1] |= np.abs(np.diff(g, axis=1)) > INK
    edges[:-1, :] |= np.abs(np.diff(g, axis=0)) > INK
    _, _, stats, _ = cv2.connectedComponentsWithStats(edges, connectivity=8)
    limit = MAX_SIDE + 1
    boxes = sorted([int(x), int(y), int(x + w), int(y + h)] for x, y, w, h, _ in stats[1:]
                   if w <= limit and h <= limit)
    out: list[list[int]] = []
    for box in boxes:  # sorted by left side: a box joins the open islands it comes within a pixel of
        while True:
            near = next((o for o in out if o[2] + 1 >= box[0] and o[0] <= box[2] + 1
                         and o[1] <= box[3] + 1 and box[1] <= o[3] + 1
                         and max(o[2], box[2]) - min(o[0], box[0]) <= limit
                         and max(o[3], box[3]) - min(o[1], box[1]) <= limit), None)
            if near is None:
                break
            out.remove(near)
            box = [min(near[0], box[0]), min(near[1], box[1]), max(near[2], box[2]), max(near[3], box[3])]
        out.append(box)
    return [(b[0], b[1], b[2], b[3]) for b in out if min(b[2] - b[0], b[3] - b[1]) >= MIN_SIDE]


def build_bank(screens: Iterable[tuple[Image.Image, Sequence[tuple[str, Box]]]],
               kinds: Sequence[str] = ("web",)) -> tuple[GlyphBank, dict[str, int]]:
    """A bank of the labelled glyphs of ``screens`` (each an image and its icons' subtypes and boxes;
    icons of other subtypes are left out), for screens of ``kinds``, and how many labelled glyphs of
    each subtype were seen."""
    bank = GlyphBank([], screens=kinds)
    seen: dict[str, int] = {}
    for image, icons in screens:
        grey = None
        for subtype, box in icons:
            if subtype not in GLYPH_ICON_SUBTYPES:
                continue
            if grey is None:
                grey = np.asarray(image.convert("L"))
            cell = grey[max(0, box[1]):box[3], max(0, box[0]):box[2]]
            if cell.size == 0:
                continue
            cut = cut_glyph(cell)
            if cut is None:
                continue
            seen[subtype] = seen.get(subtype, 0) + 1
            bank.add(subtype, cut)
    return bank, seen
