"""Letters the readers confuse, told apart by how they are drawn: an ``i`` from an ``I`` by its dot,
a ``c o s v w x z`` from its capital by its height.

Both readers confuse the pairs on desktop fonts. An ``I`` there is a plain bar: the reader reads
``getInt()`` as ``getint()`` and ``GUI`` as ``GUi``, PP-OCR ``Size`` as ``SIze``, and settling the
pair by the reader's frames (``text_choice.resolve_lookalikes``) cannot fix what the frames
themselves confuse. Seven letters are drawn alike in both cases but for their size, and PP-OCR
reads ``Olga`` as ``olga``, ``Copy`` as ``copy``. The pixels tell: an ``i`` is a short stem under a
dot with a blank gap between, an ``I`` (and an ``l``) one unbroken bar; a capital ``O`` stands as
tall over the baseline as a capital, 1.3-1.4 times the line's other small letters, an ``o`` as
they do.

``letter_shapes_text`` finds a one-line text's glyphs as runs of inked columns and aligns them with
its letters (``_pairs``): one glyph per letter, a thin glyph for a thin letter (``i l I | ! . , : ;
'``), a wide one for a wide letter, and two letters that touch may make one glyph. A letter is
looked at only where every alignment of least cost gives it the same glyph; where no alignment
holds (ink that is no glyph of the text, a thin letter touching its neighbour) the text stays as
read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.primitives import baseline_row, difference, face_colour, frame_lines, rgb_pixels, true_runs
from caap.taxonomy import TEXT, ElementType, attributes_of

THIN_CHARS = frozenset("iIl|!.,:;'")  # the characters drawn as one thin stroke or dots
WIDE_CHARS = frozenset("ABCDEGHKMNOPQRSUVWXYZabcdeghkmnopqsuvwxyz0234689@#%&$?*+=<>~")  # never one thin stroke
SIZED = frozenset("cosvwxz")  # drawn alike in both cases but for their height
SMALL_REFERENCE = frozenset("aemnrugpqy")  # small letters whose top is the line's x-height
INK = 80               # largest channel difference from the face that counts as ink ...
FAINT = 0.5            # ... or this share of the crop's strongest one (a greyed label)
THIN = 0.22            # a glyph at most this many line heights wide (at least 2 px) is thin
MIN_LINE_PX = 8        # px: the least height of a line's capitals to look at
FRAME_DEPTH = 3        # px from the crop's side where a frame's or focus ring's line lies
FRAME_SHARE = 0.8      # of a side's length inked: a frame's line (a row of letters inks less)
DOT_MAX = 0.35         # a dot is at most this share of the glyph's height
BAR_MIN = 0.8          # an I's bar spans at least this share of the line's height ...
BAR_TOP = 1            # ... and starts this close to its top, at most (a capital's top; an l's is a px higher)
BAR_EVEN = 0.7         # ... and no row of it is drawn weaker than this share of its middle row's strength
                       # (nor stronger than its inverse)
SIZE_RATIO = (1.12, 1.24)  # a glyph's height over the small letters': small at most, capital at least (UI
                       # fonts' capitals stand 1.3-1.4 times their x-height; round letters overshoot it by a px)
TINY_LINE_PX = 5      # px: a line's capitals this tall at least have their l and i told apart ...
TINY_DOT = 0.85        # ... below MIN_LINE_PX, by a top row at most this share of the stem's strength
POINT_HEIGHT = 0.4     # of the line's height: a period's or comma's dot starts this close over the baseline
TAIL = 40              # a comma's faint tail under the baseline differs from the face this much at least
WORD_GAP = 0.3         # of the line's height: a gap between glyphs this wide is a space (letters stand 1-2 px apart)
TEXT_TYPES = frozenset(t for t in ElementType if TEXT in attributes_of(t)) - {ElementType.TEXT_AREA}


@dataclass(frozen=True)
class _Line:
    """One line of text's ink in a box: ``band`` (its rows), the baseline and top rows in it, each
    glyph's columns, and whether the box cuts the letters' tops off."""

    band: np.ndarray
    strength: np.ndarray  # the band's difference from the face, per pixel
    baseline: int
    glyphs: list[tuple[int, int]]
    thin: list[bool]
    cut: bool
    under: np.ndarray | None = None  # the row right under the baseline, its difference from the face (no frame line)

    def top(self, glyph: int) -> int:
        a, b = self.glyphs[glyph]
        return int(np.flatnonzero(self.band[:, a:b + 1].any(axis=1))[0])


def _line(rgb: np.ndarray, box: Sequence[int], least: int = MIN_LINE_PX) -> _Line | None:
    """The one line of text drawn in ``box``, its capitals ``least`` px tall at least, or None (too
    small, two lines, nothing)."""
    x1, y1, x2, y2 = (int(v) for v in box)
    h, w = rgb.shape[:2]
    x1, y1, x2, y2 = max(x1, 0), max(y1, 0), min(x2, w), min(y2, h)
    if x2 - x1 < 4 or y2 - y1 < least:
        return None
    crop = rgb[y1:y2, x1:x2]
    diff = difference(crop, face_colour(crop), "max")
    ink = diff > min(INK, FAINT * int(diff.max()))
    # A frame's or focus ring's lines: rows along the top and bottom inked most of the way across,
    # and, where the box is not tight round the text, columns along the sides inked most of the
    # way down (in a tight box the first letter's stem is as tall as the box).
    frame_rows, _ = frame_lines(ink, FRAME_DEPTH, FRAME_SHARE)
    ink[frame_rows] = False
    lines = true_runs(ink.any(axis=1))
    if not lines:
        return None
    if len(lines) > 1:
        # A dot above its stem is a run of rows of its own; anything taller is another line.
        tallest = max(lines, key=lambda r: r[1] - r[0])
        if any(r != tallest and r[1] - r[0] + 1 > (tallest[1] - tallest[0] + 1) * DOT_MAX for r in lines):
            return None
    if ink.shape[0] >= lines[-1][1] - lines[0][0] + 1 + 2 * FRAME_DEPTH:
        _, frame_cols = frame_lines(ink, FRAME_DEPTH, FRAME_SHARE)
        ink[:, frame_cols] = False
    top, bottom = lines[0][0], lines[-1][1]
    band = ink[top:bottom + 1]
    baseline = baseline_row(band)
    if baseline is None or baseline + 1 < least:
        return None
    glyphs = true_runs(band.any(axis=0))
    thin = [b - a + 1 <= max(2, THIN * (baseline + 1)) for a, b in glyphs]
    row = top + baseline + 1
    under = diff[row] if row < diff.shape[0] and row not in set(frame_rows.tolist()) else None
    return _Line(band, diff[top:bottom + 1], baseline, glyphs, thin, cut=top == 0, under=under)


def _pairs(text: str, thin: list[bool]) -> tuple[dict[int, int], int] | None:
    """Each of ``text``'s look-alike and reference letters (by index) that has one glyph in every
    alignment of least cost, with that glyph (``thin``: per glyph, left to right, whether it is
    thin), and that cost (the letters that touch); None where no alignment holds.

    The glyphs are aligned with the characters (spaces aside) one to one, a thin character to a
    thin glyph, a wide one (``WIDE_CHARS``) to a wide glyph, any other to either; two characters
    that are not thin may touch and make one wide glyph, at a cost of one."""
    at = [k for k, c in enumerate(text) if not c.isspace()]
    chars = [text[k] for k in at]
    n, m = len(chars), len(thin)
    inf = n + m + 1

    def fits(c: str, g: int) -> bool:
        return thin[g] if c in THIN_CHARS else (not thin[g]) if c in WIDE_CHARS else True

    def merges(i: int, g: int) -> bool:  # characters i and i + 1 as glyph g
        return not thin[g] and chars[i] not in THIN_CHARS and chars[i + 1] not in THIN_CHARS

    # fwd[i][g]: least cost of the first i characters as the first g glyphs; bwd[i][g]: of the rest
    fwd = [[inf] * (m + 1) for _ in range(n + 1)]
    fwd[0][0] = 0
    for i in range(n + 1):
        for g in range(m + 1):
            if i and g and fits(chars[i - 1], g - 1):
                fwd[i][g] = min(fwd[i][g], fwd[i - 1][g - 1])
            if i > 1 and g and merges(i - 2, g - 1):
                fwd[i][g] = min(fwd[i][g], fwd[i - 2][g - 1] + 1)
    if fwd[n][m] >= inf:
        return None
    bwd = [[inf] * (m + 1) for _ in range(n + 1)]
    bwd[n][m] = 0
    for i in range(n, -1, -1):
        for g in range(m, -1, -1):
            if i < n and g < m and fits(chars[i], g):
                bwd[i][g] = min(bwd[i][g], bwd[i + 1][g + 1])
            if i < n - 1 and g < m and merges(i, g):
                bwd[i][g] = min(bwd[i][g], bwd[i + 2][g + 1] + 1)
    best = fwd[n][m]
    # the characters that touch a neighbour in some alignment of least cost have no glyph of their own
    shared = {j for i in range(n - 1) for g in range(m)
              if merges(i, g) and fwd[i][g] + 1 + bwd[i + 2][g + 1] == best for j in (i, i + 1)}
    pairs = {}
    for i, c in enumerate(chars):
        if i in shared or (c not in "iIl." and c.lower() not in SIZED and c not in SMALL_REFERENCE):
            continue  # touching, or neither looked at nor measured against
        glyphs = [g for g in range(m) if fits(c, g) and fwd[i][g] + bwd[i + 1][g + 1] == best]
        if len(glyphs) == 1:
            pairs[at[i]] = glyphs[0]
    return pairs, best


def _shape(ink: np.ndarray, strength: np.ndarray, baseline: int) -> str | None:
    """``dotted`` (a short run of rows over a longer one, a blank gap between), ``bar`` (one run of
    rows from the line's top to its baseline, as strong all the way: an i whose dot the
    anti-aliasing joined to its stem fades between them) or None, for one thin glyph's ink columns
    and their difference from the face."""
    rows = true_runs(np.asarray(ink.any(axis=1)))
    if len(rows) == 2:
        (a0, a1), (b0, b1) = rows
        whole = b1 - a0 + 1
        if a1 - a0 + 1 <= DOT_MAX * whole and b1 - b0 + 1 >= 2 * (a1 - a0 + 1) and b1 >= baseline - 1:
            return "dotted"
        return None
    if len(rows) == 1:
        r0, r1 = rows[0]
        if r1 >= baseline - 1 and r0 <= BAR_TOP and r1 - r0 + 1 >= BAR_MIN * (baseline + 1):
            profile = strength[r0:r1 + 1].max(axis=1).astype(np.float32)
            inner, middle = profile[1:-1], float(np.median(profile))  # the ends are anti-aliased in any bar
            # no waist (an i whose dot touches its stem), no crossbar (a t as thin as a bar)
            if inner.size and BAR_EVEN * middle <= inner.min() and inner.max() <= middle / BAR_EVEN:
                return "bar"
    return None


def _word_gaps(line: _Line) -> int:
    """How many gaps between the line's glyphs are as wide as a space (``WORD_GAP`` of its height)."""
    gap = WORD_GAP * (line.baseline + 1)
    return sum(b0 - a1 - 1 >= gap for (_, a1), (b0, _) in zip(line.glyphs, line.glyphs[1:], strict=False))


def _size(line: _Line, text: str, pairs: dict[int, int], k: int) -> str | None:
    """``small`` or ``tall``: whether the glyph of ``text[k]`` stands as high as the line's small
    letters or as a capital, by its height over the baseline against theirs (``SMALL_REFERENCE``);
    None where the line has none of them or the glyph stands between ``SIZE_RATIO``'s two."""
    small = [line.baseline - line.top(g) + 1 for j, g in pairs.items() if text[j] in SMALL_REFERENCE]
    if not small or line.cut:
        return None
    ratio = (line.baseline - line.top(pairs[k]) + 1) / float(np.median(small))
    low, high = SIZE_RATIO
    return "tall" if ratio >= high else "small" if ratio <= low else None


def _point(line: _Line, glyph: int) -> str | None:
    """``,`` for a small mark on the baseline whose tail runs below it. A link's underline, a row
    inked most of the way across, is no part of it (``_line`` takes it away), and the comma's tail
    stops a row above it: the readers, which see the tail run into the underline, read ``justo,``
    as ``justo.``. The tail may be fainter than ink (``Lacus,.``: 46-71 levels off the face under
    a head of 129): a mark ending on the baseline with ``TAIL`` levels or more right under it is a
    comma too; a period leaves that row blank. None for a mark that ends on the baseline with
    nothing under it, or is not small (a ``;``, an ``i`` paired with a period): a comma read from a
    faint tail (a desktop font's) is not undone."""
    a, b = line.glyphs[glyph]
    rows = np.flatnonzero(line.band[:, a:b + 1].any(axis=1))
    if not rows.size or rows[0] < line.baseline - POINT_HEIGHT * (line.baseline + 1):
        return None
    if rows[-1] > line.baseline:
        return ","
    tail = line.under is not None and rows[-1] == line.baseline and int(line.under[a:b + 1].max()) >= TAIL
    return "," if tail else None


def _end_pairs(text: str, thin: list[bool]) -> dict[int, int]:
    """Letters of ``text`` paired with glyphs from its end, one to one, as far as each thin letter
    meets a thin glyph and each other letter a wide one. On 5-7 px lines letters touch where no
    alignment of the whole text holds (``Loralie``: ``or`` one glyph, ``al`` another); the letters
    after the last touching pair still have glyphs of their own. (Paired from the start too, an l
    after a capital is taken for an i: its top stands lower than the capital's, ``Elvina``.)"""
    at = [k for k, c in enumerate(text) if not c.isspace()]
    if " " in text.strip():  # a word space would need its gap found: whole words only
        return {}
    pairs: dict[int, int] = {}
    for i, g in zip(range(len(at) - 1, -1, -1), range(len(thin) - 1, -1, -1), strict=False):
        if (text[at[i]] in THIN_CHARS) != thin[g]:
            break
        pairs[at[i]] = g
    return pairs


# Advance widths of a UI sans (Helvetica's metrics, per 1000 em; Arial and Liberation Sans share
# them): where letters stand along a line, to place a letter no glyph run can be paired with.
_ADVANCE = dict(zip("abcdefghijklmnopqrstuvwxyz", (556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833,
                                                   556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500),
                    strict=True))
_ADVANCE.update(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833,
                                                  722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611),
                    strict=True))
_ADVANCE[" "] = 278
DOT_TRACE = 0.12   # of the line's strongest ink: a tiny i's faint column is traced this far down
STEM_REACH = 0.35  # of the line's height: how far from where a letter should stand its dotted stem may lie


def _dotted_stems(line: _Line) -> list[float]:
    """The middles of the line's tiny i's found column by column, whatever touches them: runs of
    columns inked from the line's top row down to the baseline, evenly below the top row and
    fainter in it (the dot, ``TINY_DOT``). A t's crossbar, an l's or a capital's stem, an h's
    ascender: none is fainter at its top."""
    top = line.strength[0].astype(np.float32)
    base = line.strength[1:line.baseline + 1].astype(np.float32)
    # A tiny dot and stem are drawn as faint columns beside their strong ones (both anti-aliased):
    # traced down to DOT_TRACE of the line's strongest ink, far fainter than ink counts.
    traced = line.strength >= DOT_TRACE * float(line.strength.max())
    inked = traced[0] & traced[1:line.baseline + 1].all(axis=0)
    middle = np.median(base, axis=0).astype(np.float32)
    even = (base.min(axis=0) >= BAR_EVEN * middle) & (base.max(axis=0) <= middle / BAR_EVEN)
    dotted = inked & even & (top <= TINY_DOT * middle)
    return [(a + b) / 2 for a, b in true_runs(dotted)]


def _letter_middles(text: str, first: int, last: int) -> list[float]:
    """Where each letter of ``text`` stands (its middle column) on a line inked from ``first`` to
    ``last``, by the letters' advance widths."""
    widths = [_ADVANCE.get(c, 556) for c in text]
    scale = (last - first + 1) / max(sum(widths), 1)
    ends = np.cumsum(widths)
    return [first + (end - w / 2) * scale - 0.5 for end, w in zip(ends.tolist(), widths, strict=True)]


def _stem_is(line: _Line, text: str, chars: list[str]) -> None:
    """Each ``l`` of ``text`` a dotted stem stands at set to ``i`` in ``chars``: the stem
    nearest to where the letter should stand, within ``STEM_REACH`` line heights, that no other
    thin letter stands nearer to (letters that touch leave no glyph run to pair: ``Jorle``,
    ``Allssa`` on drag-items-grid's 5 px names)."""
    if " " in text.strip():
        return
    columns = np.flatnonzero(line.band.any(axis=0))
    if not columns.size:
        return
    places = _letter_middles(text, int(columns[0]), int(columns[-1]))
    thin = [k for k, c in enumerate(text) if c in "iIlj"]
    reach = STEM_REACH * (line.baseline + 1)
    for stem in _dotted_stems(line):
        near = sorted(thin, key=lambda k: abs(places[k] - stem))
        if not near or abs(places[near[0]] - stem) > reach:
            continue
        if len(near) > 1 and abs(places[near[1]] - stem) <= reach:
            continue  # two thin letters could stand there
        if chars[near[0]] == "l":
            chars[near[0]] = "i"


def _tiny_dots(line: _Line, text: str) -> str:
    """``text`` with each ``l`` drawn as an ``i`` set so, on a line whose capitals are 5-7 px tall
    (drag-items-grid's names, an inbox's dates). There an i's dot joins its stem: the readers read
    ``Harrie`` as ``Harrle``. The dot is drawn fainter than the stem, or lower than the line's
    top, where an l is as strong from a top as high as the capitals' (MiniWoB validation seeds
    2800-2999: 91 of 100 i's so drawn, 1 of 58 l's, and that one stronger at its top)."""
    if "l" not in text:
        return text
    aligned = _pairs(text, line.thin)
    pairs = aligned[0] if aligned is not None else _end_pairs(text, line.thin)
    chars = list(text)
    _stem_is(line, text, chars)
    for k, g in pairs.items():
        if chars[k] != "l":
            continue
        a, b = line.glyphs[g]
        strength = line.strength[:, a:b + 1].max(axis=1).astype(np.float32)
        rows = np.flatnonzero(line.band[:, a:b + 1].any(axis=1))
        if not rows.size:
            continue
        ratio = float(strength[rows[0]]) / max(float(np.median(strength[rows])), 1.0)
        if ratio <= TINY_DOT or (rows[0] >= 1 and ratio <= 1.0):
            chars[k] = "i"
    return "".join(chars)


def letter_shapes_text(rgb: np.ndarray, box: Sequence[int], text: str) -> str:
    """``text`` with each ``i``/``I``/``l`` set by its dot and each of ``c o s v w x z`` by its
    height as drawn in ``box`` (module docstring)."""
    if not any(c in "iIl." or c.lower() in SIZED for c in text):
        return text
    line = _line(rgb, box, TINY_LINE_PX)
    if line is None:
        return text
    if line.baseline + 1 < MIN_LINE_PX:
        return _tiny_dots(line, text)
    aligned = _pairs(text, line.thin)
    if aligned is None:
        return text
    # Thin glyphs pair with thin letters in order whatever touches. A letter's size is measured
    # only at the start of a word (where the readers' case errors are; inside one a misread
    # capital is rare and a wrong pairing is not), only where every glyph is one letter (which
    # wide glyph holds which letters is a guess) and the wide gaps between glyphs are the text's
    # spaces (an icon before the text, a glyph that touches another, and the count still right,
    # would pair every letter with its neighbour's glyph).
    pairs, touching = aligned
    sized = not touching and _word_gaps(line) == len(text.split()) - 1
    chars = list(text)
    for k, g in pairs.items():
        c = chars[k]
        if c in "iIl":
            a, b = line.glyphs[g]
            shape = _shape(line.band[:, a:b + 1], line.strength[:, a:b + 1], line.baseline)
            if shape == "dotted" and c in "Il":
                chars[k] = "i"
            elif shape == "bar" and c == "i" and not line.cut:  # a cut bar may be an i whose dot is gone
                chars[k] = "I"
        elif c == ".":
            chars[k] = _point(line, g) or c
        elif c.lower() in SIZED and sized and (k == 0 or text[k - 1].isspace()):
            size = _size(line, text, pairs, k)
            if size == "tall":
                chars[k] = c.upper()
            elif size == "small":
                chars[k] = c.lower()
    return "".join(chars)


def letter_shapes(image: Image.Image, elements: Sequence[Element]) -> list[Element]:
    """Every one-line text's look-alike letters set by how they are drawn (``letter_shapes_text``)."""
    rgb: np.ndarray | None = None
    out = list(elements)
    for n, e in enumerate(elements):
        if e.type not in TEXT_TYPES or not e.text or "\n" in e.text:
            continue
        if rgb is None:
            rgb = rgb_pixels(image)
        text = letter_shapes_text(rgb, e.bbox, e.text)
        if text != e.text:
            out[n] = e.model_copy(update={"text": text})
    return out
