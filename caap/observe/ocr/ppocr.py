"""PP-OCR (PP-OCRv6 small, from the ``rapidocr`` wheel) as a text source for UI element crops.

What it does: given a screenshot and the boxes of the UI elements found on it, ``PPOCR.read`` returns
the text of each element. Single-line elements are cut out, tightened to their ink, scaled to the
recogniser's input height and recognised together in a few batched calls; elements that hold more
than one line (a text area, or a crop whose pixels show several rows of text) go through the text
detector inside the crop first; pieces of one line are joined with a space, left to right, and
lines with ``LINE_SEPARATOR``, top to bottom, as the labels and the reader write them. For
checkboxes and radio buttons the control (the square or circle at the left) is cut away so that only
the label is read.

Why: caap's own reader is trained from scratch on MiniWoB++ screens. A pretrained OCR is the peer
it is measured against, and a fallback text source for screens it never saw (desktop apps, other
web pages).

Models: the ONNX files ship inside the ``rapidocr`` wheel (``rapidocr/models/``). This module opens
them itself with onnxruntime and passes nothing to rapidocr's own model resolver, so nothing is ever
downloaded; a missing or unreadable file is an ``OcrError`` naming its path. Only rapidocr's
pre/post-processing helpers are used (the DB box extraction of the detector and the CTC decoder).

Blank crops (no pixel that differs from the crop's background) are not sent to the recogniser and
read as ``OcrText("", 0.0)``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
from PIL import Image

from caap.observe.memo import memo_of, pixel_key
from caap.observe.onnx_session import session_options
from caap.observe.primitives import background_colour, face_colour, ink_mask, rgb_pixels
from caap.observe.read.lines import LINE_SEPARATOR

DET_MODEL = "PP-OCRv6_det_small.onnx"
REC_MODEL = "PP-OCRv6_rec_small.onnx"
INSTALL_HINT = "pip install 'caap[vision]'"
REC_HEIGHT = 48  # the recogniser's fixed input height

_CONTROL_TYPES = frozenset({"checkbox", "radio"})
_MULTILINE_TYPES = frozenset({"text_area"})
_CARET_TYPES = frozenset({"input_field", "text_area"})
_PASSWORD_TYPES = frozenset({"input_field"})
_SCROLLBAR = 16  # px: the strip at a box's right edge where a scroll bar sits (Chromium's is 15 wide)
_SPACES = re.compile(r"\s+")


class OcrError(RuntimeError):
    """PP-OCR cannot run: the package is not installed or a model file is missing or unreadable."""


# PP-OCR's recogniser knows Chinese too, and reads a lone symbol drawn large (a calculator's keys)
# as the ideograph of the same shape. caap reads Latin-script screens: where no other CJK character
# is in the text, these are the symbols.
_TWINS = {"十": "+", "一": "-", "二": "=", "土": "±", "丨": "|"}
_CJK = re.compile(r"[\u3000-\u9fff\uf900-\ufaff]")


def latin_twins(text: str) -> str:
    """``text`` with the ideographs that are shape twins of symbols (``十`` for ``+``) written as
    the symbols, unless other CJK text shows it is Chinese."""
    if not _CJK.search(text):
        return text
    swapped = "".join(_TWINS.get(ch, ch) for ch in text)
    return swapped if not _CJK.search(swapped) else text


@dataclass(frozen=True)
class OcrText:
    text: str
    confidence: float  # 0..1: the recogniser's mean character score (mean over lines when multi-line)


@dataclass(frozen=True)
class _Tuning:
    """Cropping and resizing choices (chosen by measurement on MiniWoB++ screens; see the report)."""

    ink_threshold: int = 60        # a pixel is ink when a channel differs this much from the background
    margin: float = 0.15           # blank border above/below the tight ink box, as a fraction of its height
    margin_x: float = 0.25         # blank border left/right, as a fraction of the box's height
    min_margin: int = 2
    interpolation: str = "linear"  # upscaling to the recogniser's height
    gray_pad: int = 16             # zero (mid-grey) columns after every crop, batched or not
    batch: int = 16                # crops of one padded width per recogniser call
    cut_control: bool = True       # drop the checkbox/radio control before reading the label
    frame_fraction: float = 0.85   # an edge row/column with this much ink is a frame line
    context: int = 2               # pixels of screenshot around the box to look for clipped ink
    det_scale: float = 3.0         # the detector's input scale for multi-line crops
    det_box_thresh: float = 0.5
    det_unclip: float = 1.6
    light_on_dark: bool = True     # light text on a fill redrawn as dark on white (_dark_on_light)
    faint_ink: int = 30            # where little is ink at ink_threshold: a greyed label's ink
    faint_share: float = 0.3       # ink at ink_threshold under this share of the faint ink: a greyed label
                                   # (Qt's validation screens: greyed 0.05 median, 76 % under it; others 0.7 %)
    faint_min_alnum: int = 2       # letters or digits a faint reading needs to stand (else blank)


_TUNING = _Tuning()

_INTERPOLATION = {
    "nearest": Image.Resampling.NEAREST,
    "linear": Image.Resampling.BILINEAR,
    "cubic": Image.Resampling.BICUBIC,
    "lanczos": Image.Resampling.LANCZOS,
}


def _models_dir() -> Path:
    try:
        import rapidocr
    except ImportError as exc:
        raise OcrError(f"PP-OCR needs the rapidocr package, which is not installed ({exc}): {INSTALL_HINT}") from None
    return Path(rapidocr.__file__).resolve().parent / "models"


def model_paths() -> dict[str, Path]:
    """The detector and recogniser files inside the installed rapidocr wheel."""
    root = _models_dir()
    return {"det": root / DET_MODEL, "rec": root / REC_MODEL}


def _session(path: Path, threads: int | None, gpu: bool = False) -> Any:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise OcrError(f"PP-OCR needs onnxruntime, which is not installed ({exc}): {INSTALL_HINT}") from None
    providers = ["CPUExecutionProvider"]
    if gpu:
        if "CUDAExecutionProvider" not in ort.get_available_providers():
            raise OcrError("PP-OCR on a GPU needs ONNX Runtime's CUDA build (onnxruntime-gpu), not installed: "
                           "tools/setup.sh gpu, or pip install 'caap[gpu]' after pip uninstall onnxruntime")
        providers.insert(0, "CUDAExecutionProvider")
    if not path.is_file():
        raise OcrError(f"{path}: PP-OCR model file is missing (reinstall rapidocr: {INSTALL_HINT})")
    opts = session_options(threads)
    try:
        return ort.InferenceSession(str(path), sess_options=opts, providers=providers)
    except Exception as exc:  # onnxruntime raises its own exception types for unreadable models
        raise OcrError(f"{path}: not a readable ONNX model ({type(exc).__name__}: {exc})") from None


def normalise(text: str) -> str:
    """Runs of whitespace to one space, stripped."""
    return _SPACES.sub(" ", text).strip()


class PPOCR:
    """PP-OCRv6 small on the CPU, or on an NVIDIA GPU (``device``: ``cuda``, ``cuda:N``, ``N``;
    ONNX Runtime's CUDA build). ``threads``: onnxruntime intra-op threads (None: its default)."""

    def __init__(self, *, threads: int | None = None, memo: int = 0, device: str = "cpu") -> None:
        paths = model_paths()
        try:
            from rapidocr.ch_ppocr_det.utils import DBPostProcess
            from rapidocr.ch_ppocr_rec.utils import CTCLabelDecode
        except ImportError as exc:
            raise OcrError(f"PP-OCR needs the rapidocr package, which is not importable ({exc}): {INSTALL_HINT}") \
                from None
        gpu = device != "cpu"
        self._det = _session(paths["det"], threads, gpu)
        self._rec = _session(paths["rec"], threads, gpu)
        meta = self._rec.get_modelmeta().custom_metadata_map
        if "character" not in meta:  # rapidocr would go and download a dictionary; we never do
            raise OcrError(f"{paths['rec']}: the recogniser carries no character list (not a PP-OCR rec model?)")
        self._decode = CTCLabelDecode(character=meta["character"].splitlines())
        self._rec_input = self._rec.get_inputs()[0].name
        self._det_input = self._det.get_inputs()[0].name
        self._db_post = DBPostProcess
        self.tuning = _TUNING
        # Readings of element crops seen before (caap.observe.memo): a box's text depends only on the
        # screenshot within ``tuning.context`` px of it, its type and the tuning, which the key holds.
        self.memo = memo_of(memo)

    # --- public -----------------------------------------------------------------------------------
    def read(self, image: Image.Image, boxes: Sequence[Sequence[int]],
             types: Sequence[str | None] | None = None) -> list[OcrText]:
        """One ``OcrText`` per box, in order. ``types``: the elements' types (``caap.taxonomy``), or None."""
        if types is not None and len(types) != len(boxes):
            raise ValueError(f"{len(types)} types for {len(boxes)} boxes")
        rgb = rgb_pixels(image)
        kinds = [None if types is None or types[i] is None else str(types[i]) for i in range(len(boxes))]
        if self.memo is None:
            return self._read(rgb, boxes, kinds)
        keys = [self._memo_key(rgb, box, kind) for box, kind in zip(boxes, kinds, strict=True)]
        return self.memo.read_through(keys, lambda todo: self._read(rgb, [boxes[i] for i in todo],
                                                                    [kinds[i] for i in todo]))

    def _memo_key(self, rgb: np.ndarray, box: Sequence[int], kind: str | None) -> bytes:
        """What a box's reading depends on: its pixels and ``tuning.context`` px around them, where
        the box lies in that window, its type and the tuning."""
        h, w = rgb.shape[:2]
        x1, y1, x2, y2 = (int(v) for v in box)
        c = self.tuning.context
        ex1, ey1, ex2, ey2 = max(0, x1 - c), max(0, y1 - c), min(w, x2 + c), min(h, y2 + c)
        window = rgb[max(0, ey1):max(0, ey2), max(0, ex1):max(0, ex2)]
        return pixel_key(window, (x1 - ex1, y1 - ey1, x2 - ex1, y2 - ey1), kind, self.tuning)

    def _read(self, rgb: np.ndarray, boxes: Sequence[Sequence[int]], kinds: Sequence[str | None]) -> list[OcrText]:
        """``read`` through the models for every box."""
        lines: list[np.ndarray] = []        # every crop to recognise, ready for the recogniser
        owner: list[tuple[int, int]] = []   # the box and the visual line each crop belongs to
        texts: list[list[tuple[int, str]]] = [[] for _ in boxes]
        scores: list[list[float]] = [[] for _ in boxes]
        faint: set[int] = set()  # boxes with no ink but at the faint ink threshold
        for i, box in enumerate(boxes):
            lines_of, read_faint = self._lines_of(rgb, box, kinds[i])
            if read_faint == "only":
                faint.add(i)
            for row, crop in lines_of:
                if isinstance(crop, str):  # read from the pixels alone (password bullets)
                    texts[i].append((row, crop))
                    scores[i].append(1.0)
                else:
                    lines.append(crop)
                    owner.append((i, row))
        for (i, row), (text, score) in zip(owner, self._recognise(lines), strict=True):
            texts[i].append((row, text))
            scores[i].append(score)
        out = []
        for i, (kind, t, s) in enumerate(zip(kinds, texts, scores, strict=True)):
            rows: dict[int, list[str]] = {}
            for row, piece in t:
                rows.setdefault(row, []).append(piece)
            text = LINE_SEPARATOR.join(line for words in rows.values() if (line := normalise(" ".join(words))))
            if kind == "button" and text in ("x", "X"):  # a close button's "×": PP-OCR reads a Latin x
                text = "×"
            text = latin_twins(text)
            if i in faint and sum(c.isalnum() for c in text) < self.tuning.faint_min_alnum:
                text, s = "", []  # faint specks (a blank field's shading, greyed steppers) are no label
            out.append(OcrText(text, float(np.mean(s)) if s else 0.0))
        return out

    # --- cropping ---------------------------------------------------------------------------------
    def _lines_of(self, rgb: np.ndarray, box: Sequence[int],
                  kind: str | None) -> tuple[list[tuple[int, np.ndarray | str]], str | None]:
        """The crops of one element in reading order, each with its visual line's number and scaled
        for the recogniser (or the text itself where the pixels alone tell it); and whether they
        were found at the faint ink threshold: ``only`` there (nothing was ink at the usual one),
        ``mostly`` (a few pixels were), None."""
        t = self.tuning
        h, w = rgb.shape[:2]
        x1, y1, x2, y2 = (int(v) for v in box)
        x1, y1, x2, y2 = max(0, x1), max(0, y1), min(w, x2), min(h, y2)
        if x2 - x1 < 2 or y2 - y1 < 2:
            return [], None
        # A few pixels of context: labelled and detected boxes often clip a descender or the last
        # glyph's edge; only ink that lies mostly inside the box is kept (below).
        c = t.context
        ex1, ey1, ex2, ey2 = max(0, x1 - c), max(0, y1 - c), min(w, x2 + c), min(h, y2 + c)
        crop = rgb[ey1:ey2, ex1:ex2]
        inner = (x1 - ex1, y1 - ey1, x2 - ex1, y2 - ey1)
        bg = face_colour(crop[inner[1]:inner[3], inner[0]:inner[2]])
        if (flat := _flatten_two_tone(crop, inner)) is not None:
            crop, bg = flat, np.full(3, 255, np.uint8)
        elif t.light_on_dark and (dark := _dark_on_light(crop, bg, t.ink_threshold)) is not None:
            crop, bg = dark, np.full(3, 255, np.uint8)
        outer = inner
        faint: str | None = None
        raw, inner, ink = self._ink(crop, bg, outer, kind, t.ink_threshold)
        # The text's ink at the faint threshold is part of all the ink there: where the usual ink
        # reaches the share of that, the label is no greyed one (most crops, without the full look).
        if t.faint_ink < t.ink_threshold and \
                ink.sum() < t.faint_share * ink_mask(crop, bg, t.faint_ink, reduce="max").sum():
            # A greyed label (an insensitive button's, 190 on a 245 face) is fainter than ink, or
            # only its darkest pixels reach it (fragments read as `-` or `P`): read it as the ink it
            # is, stretched to black on white for the recogniser.
            faint_raw, faint_inner, faint_ink = self._ink(crop, bg, outer, kind, t.faint_ink)
            if faint_ink.any() and ink.sum() < t.faint_share * faint_ink.sum():
                faint = "mostly" if ink.any() else "only"
                raw, inner, ink = faint_raw, faint_inner, faint_ink
                crop, bg = _stretched(crop, bg, raw), np.full(3, 255, np.uint8)
        framed = inner != outer
        if not ink.any():
            return [], None
        if kind in _MULTILINE_TYPES or len(_bands(ink)) > 1:
            found = self._detect_lines(crop, ink, bg)
            if framed:  # a scrolling box (a text area): its scroll bar, and lines it scrolled part-way
                found = [(r, g) for r, g in found if not _scrollbar_part(_tight(g), inner)]
                # A line cut by the frame is not part of the text: the ground truth holds the lines
                # wholly in view (a line's ink touching the frame is cut, or nearly).
                found = [(r, g) for r, g in found if inner[1] < _tight(g)[1] and _tight(g)[3] < inner[3]] or found
        else:
            found = [(0, ink)]
        if kind in _CARET_TYPES:
            found = [(r, _drop_caret(g)) for r, g in found]
        if kind in _PASSWORD_TYPES and len(found) == 1 and (n := _bullets(crop, bg, found[0][1])):
            return [(0, "•" * n)], None
        return [(r, self._line(crop, bg, g)) for r, g in found if g.any()], faint

    def _ink(self, crop: np.ndarray, bg: np.ndarray, outer: tuple[int, int, int, int], kind: str | None,
             threshold: int) -> tuple[np.ndarray, tuple[int, int, int, int], np.ndarray]:
        """The crop's ink at ``threshold`` (all of it), the box inside any frame lines, and the
        text's ink in it (frame lines, and a check box's control, left out)."""
        raw = ink_mask(crop, bg, threshold, reduce="max")
        inner, lines = _borders(raw, outer, self.tuning.frame_fraction)
        ink = _text_ink(raw, inner, lines)
        if kind in _CONTROL_TYPES and self.tuning.cut_control:
            ink = _drop_control(ink)
        return raw, inner, ink

    def _line(self, crop: np.ndarray, bg: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """One line: the tight box of its ink ``keep`` on a margin of background, at the recogniser's
        height (uint8 RGB)."""
        t = self.tuning
        x1, y1, x2, y2 = _tight(keep)
        text = crop[y1:y2, x1:x2].copy()
        m = max(t.min_margin, round(t.margin * (y2 - y1)))
        mx = max(t.min_margin, round(t.margin_x * (y2 - y1)))
        canvas = np.empty((y2 - y1 + 2 * m, x2 - x1 + 2 * mx, 3), np.uint8)
        canvas[:] = bg
        canvas[m:m + y2 - y1, mx:mx + x2 - x1] = text
        scale = REC_HEIGHT / canvas.shape[0]
        width = max(1, round(canvas.shape[1] * scale))
        resized = Image.fromarray(canvas).resize((width, REC_HEIGHT), _INTERPOLATION[t.interpolation])
        return np.asarray(resized)

    def find_lines(self, crop: np.ndarray, bg: np.ndarray, scale: float) -> list[tuple[float, float, float, float]]:
        """PP-OCR's text detector on an RGB array enlarged ``scale`` times (UI text is smaller than
        the text it learned from), padded with ``bg`` to the multiple of 32 the network needs: the box
        of each line of text it sees, in the array's pixels."""
        t = self.tuning
        ch, cw = crop.shape[:2]
        dh, dw = max(32, math.ceil(ch * scale / 32) * 32), max(32, math.ceil(cw * scale / 32) * 32)
        scaled = Image.fromarray(crop).resize((round(cw * scale), round(ch * scale)), Image.Resampling.BICUBIC)
        canvas = np.empty((dh, dw, 3), np.uint8)  # pad (not stretch)
        canvas[:] = bg
        canvas[:scaled.height, :scaled.width] = np.asarray(scaled)
        x = (canvas[:, :, ::-1].astype(np.float32) / 127.5 - 1.0).transpose(2, 0, 1)[None]  # BGR, [-1, 1]
        pred = self._det.run(None, {self._det_input: x})[0]
        post = self._db_post(thresh=0.3, box_thresh=t.det_box_thresh, max_candidates=1000,
                             unclip_ratio=t.det_unclip, use_dilation=True, score_mode="fast")
        quads, _ = post(pred, (dh, dw))
        return [(float(q[:, 0].min()) / scale, float(q[:, 1].min()) / scale,
                 float(q[:, 0].max()) / scale, float(q[:, 1].max()) / scale) for q in quads]

    def region_lines(self, rgb: np.ndarray, regions: Sequence[Sequence[int]],
                     scale: float) -> list[list[tuple[float, float, float, float]]]:
        """The lines of text ``find_lines`` sees in each region of a screenshot (each on its own, so a
        region's lines depend on its pixels alone), in the region's pixels; remembered by the
        region's pixels where the engine keeps a memo."""
        crops = [rgb[int(y1):int(y2), int(x1):int(x2)] for x1, y1, x2, y2 in regions]

        def detect(todo: list[int]) -> list[list[tuple[float, float, float, float]]]:
            return [self.find_lines(crops[i], background_colour(crops[i]), scale) for i in todo]

        if self.memo is None:
            return detect(list(range(len(crops))))
        keys = [pixel_key(crop, "lines", scale, self.tuning) for crop in crops]
        return self.memo.read_through(keys, detect)

    def _detect_lines(self, crop: np.ndarray, ink: np.ndarray, bg: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """The text lines inside a crop, in reading order, as masks of ``ink``: the detector finds the
        lines, and each glyph (connected component) goes to the line whose box holds its centre
        (the nearest one vertically where boxes overlap), so a line never takes its neighbours'
        ascenders or descenders."""
        import cv2  # a rapidocr dependency

        boxes = self.find_lines(crop, bg, self.tuning.det_scale)
        n, labels, _, centres = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
        owner = np.full(n, -1)
        for k in range(1, n):
            cx, cy = centres[k]
            holding = [i for i, (bx1, by1, bx2, by2) in enumerate(boxes) if bx1 <= cx <= bx2 and by1 <= cy <= by2]
            if holding:
                owner[k] = min(holding, key=lambda i: abs((boxes[i][1] + boxes[i][3]) / 2 - cy))
        found = [owner[labels] == i for i in range(len(boxes))]
        found = [g for g in found if g.any()]
        if not found:  # the detector saw no text where the pixels show some: read the ink bands instead
            found = []
            for a, b in _bands(ink):
                g = np.zeros_like(ink)
                g[a:b] = ink[a:b]
                found.append(g)
        return _reading_order(found)

    # --- recognition ------------------------------------------------------------------------------
    def _recognise(self, crops: list[np.ndarray]) -> list[tuple[str, float]]:
        """Batched recognition of crops already at the recogniser's height. Every crop gets exactly
        ``gray_pad`` columns of padding and a batch holds crops of one width only, so a crop reads
        the same whatever else is read with it (the recogniser mixes along the whole padded line:
        padding a crop to another crop's width changed a doubtful reading; rounding widths up to
        32 px read 0.5 % fewer texts exactly outside the 67) and a narrow crop never pays for a wide one."""
        t = self.tuning
        out: list[tuple[str, float]] = [("", 0.0)] * len(crops)
        widths = [c.shape[1] + t.gray_pad for c in crops]
        groups: dict[int, list[int]] = {}
        for i in sorted(range(len(crops)), key=lambda i: widths[i]):
            groups.setdefault(widths[i], []).append(i)
        batches = [idx[k:k + t.batch] for idx in groups.values() for k in range(0, len(idx), t.batch)]
        for idx in batches:
            width = widths[idx[0]]
            batch = np.zeros((len(idx), 3, REC_HEIGHT, width), np.float32)
            for row, i in enumerate(idx):
                c = crops[i]
                x = c[:, :, ::-1].astype(np.float32) / 127.5 - 1.0  # BGR in [-1, 1], as PaddleOCR trained
                batch[row, :, :, :c.shape[1]] = x.transpose(2, 0, 1)
            preds = self._rec.run(None, {self._rec_input: batch})[0]
            decoded, _ = self._decode(preds)
            for i, (text, score) in zip(idx, decoded, strict=True):
                out[i] = (text, float(score))
        return out


# --- pixel helpers ------------------------------------------------------------------------------------
def _flatten_two_tone(crop: np.ndarray, box: tuple[int, int, int, int]) -> np.ndarray | None:
    """A crop on two backgrounds side by side (text partly selected: white on the selection's blue,
    black beside it) redrawn as dark ink on white, each column against its own background; None for
    a crop on one background. PP-OCR reads such a line only up to where the colours change."""
    x1, y1, x2, y2 = box
    if y2 - y1 < 4:
        return None
    flat = crop[y1:y2, x1:x2].reshape(-1, 3).astype(np.int32)
    packed = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    if values.size < 2:
        return None
    top = np.argsort(counts)[::-1][:2]
    if counts[top[1]] < 0.04 * packed.size:
        return None
    colours = [np.array([(v >> 16) & 255, (v >> 8) & 255, v & 255], np.int16) for v in values[top].tolist()]
    near = [np.abs(crop.astype(np.int16) - c).max(axis=2) for c in colours]
    for d in near:  # each background fills most of its columns over a run (a glyph's stroke does not)
        full = ((d[y1:y2, x1:x2] <= 16).mean(axis=0) > 0.5).astype(np.int8)
        runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], full, [0]]))))[::2]
        if runs.size == 0 or runs.max() < 4:
            return None
    # A column's background is the one in the box's top and bottom rows, which text seldom reaches
    # (a selection spans the whole line); a column where text does reach both follows its left side.
    edges = [y1, y1 + 1, y2 - 2, y2 - 1]
    votes = (near[0][edges] <= 16).sum(axis=0) - (near[1][edges] <= 16).sum(axis=0)
    first = np.empty(crop.shape[1], bool)
    for x in range(crop.shape[1]):
        first[x] = votes[x] > 0 if votes[x] != 0 else (first[x - 1] if x else True)
    first = np.convolve(first.astype(np.int8), np.ones(3, np.int8), "same") >= 2  # a lone odd column
    d = np.where(first[None, :], near[0], near[1]).astype(np.float32)
    grey = (255 - np.clip(d * 1.25, 0, 255)).astype(np.uint8)
    return np.repeat(grey[:, :, None], 3, axis=2)


LIGHTER_INK = 60  # luminance by which light text outshines its background (white on a menu's blue)
DARK_FILL = 170   # the most luminous fill light text is drawn on (a menu's blue is 104; yellow 226)


def _luminance(rgb: np.ndarray) -> np.ndarray:
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def _dark_on_light(crop: np.ndarray, bg: np.ndarray, threshold: int) -> np.ndarray | None:
    """A crop of light text on a darker fill (a hovered menu entry, a selected row, a coloured
    button's label) redrawn as dark ink on white, each pixel as dark as it differs from the fill;
    None for dark text. PP-OCR misreads thin light glyphs on a saturated fill (``Ewy`` for a
    hovered ``Evy``) and reads them redrawn."""
    # The fill must be dark both inside the box and round it (the crop's outer rows and columns): a
    # tight box round bold text holds more ink than background, and a ring may cross a list's border.
    ring = background_colour(np.concatenate([crop[0], crop[-1], crop[:, 0], crop[:, -1]])[None])
    fill = float(_luminance(bg.astype(np.float32)))
    if max(fill, float(_luminance(ring.astype(np.float32)))) > DARK_FILL:
        return None
    ink = ink_mask(crop, bg, threshold, reduce="max")
    if ink.sum() < 4 or float(_luminance(crop[ink].astype(np.float32)).mean()) < fill + LIGHTER_INK:
        return None
    d = np.abs(crop.astype(np.int16) - bg.astype(np.int16)).max(axis=2).astype(np.float32)
    grey = (255 - np.clip(d * 1.25, 0, 255)).astype(np.uint8)
    return np.repeat(grey[:, :, None], 3, axis=2)


def _stretched(crop: np.ndarray, bg: np.ndarray, ink: np.ndarray) -> np.ndarray:
    """The crop in grey, its background white and its darkest ink black: a faint label at the
    contrast the recogniser learned from."""
    distance = np.abs(crop.astype(np.int32) - bg.astype(np.int32)).max(axis=2)
    top = max(1, int(distance[ink].max())) if ink.any() else 1
    grey = 255 - np.clip(distance * 255 // top, 0, 255)
    return np.repeat(grey.astype(np.uint8)[:, :, None], 3, axis=2)


def _borders(ink: np.ndarray, box: tuple[int, int, int, int], fraction: float
             ) -> tuple[tuple[int, int, int, int], np.ndarray]:
    """Border lines inside ``box`` (crop pixels): the box within them and the lines' pixels.

    Lines are looked for in the box's outer 3 rows and columns; a line covers ``fraction`` of the
    box's side. A closed rectangle (lines on all four sides) is a frame: a button's, an input's. A
    line on one side only is a border (a list box's edge beside an option, a table rule) when it is
    much longer than the rest of the ink is wide or tall; a glyph's stroke or an underline is not."""
    x1, y1, x2, y2 = box
    lines = np.zeros_like(ink)
    if x2 - x1 < 6 or y2 - y1 < 6:
        return box, lines
    sub = ink[y1:y2, x1:x2]
    h, w = sub.shape
    rows, cols = sub.mean(axis=1), sub.mean(axis=0)
    depth = 3
    top = _run(rows, range(min(depth, h)), fraction, range(depth, h // 2))
    bottom = sorted(_run(rows, range(h - 1, h - depth - 1, -1), fraction, range(h - depth - 1, h // 2, -1)))
    if top and bottom and bottom[0] - top[-1] > 3:  # a side spans the rows between: corners may be round
        cols = sub[top[-1] + 1:bottom[0]].mean(axis=0)
    left = _run(cols, range(min(depth, w)), fraction, range(depth, w // 2))
    right = sorted(_run(cols, range(w - 1, w - depth - 1, -1), fraction, range(w - depth - 1, w // 2, -1)))
    if top and bottom and not (left and right):
        # A box wider than its frame (the detector's box a few px outside a focus ring): the sides
        # stand where the top and bottom lines begin and end.
        span = np.flatnonzero(sub[top[-1]] & sub[bottom[0]])
        if span.size:
            left = left or _run(cols, range(int(span[0]), min(int(span[0]) + 1, w)), fraction,
                                range(int(span[0]) + 1, w // 2))
            right = right or sorted(_run(cols, range(int(span[-1]), max(int(span[-1]) - 1, -1), -1), fraction,
                                         range(int(span[-1]) - 1, w // 2, -1)))
    # Lines along both the top and the bottom are a frame even where a side is missing (a spinner's
    # buttons cover a field's right side); no glyph spans the box twice.
    if not (top and bottom):
        rest = sub.copy()
        rest[top + bottom] = False
        rest[:, left + right] = False
        if not rest.any():
            return box, lines
        ys, xs = np.flatnonzero(rest.any(axis=1)), np.flatnonzero(rest.any(axis=0))
        if ys[-1] - ys[0] + 1 > h / 1.4:
            left = right = []
        if xs[-1] - xs[0] + 1 > w / 1.4:
            top = bottom = []
    for r in top + bottom:
        lines[y1 + r, x1:x2] = sub[r]
    for c in left + right:
        lines[y1:y2, x1 + c] = sub[:, c]
    inner_left, inner_right = (left[-1] + 1 if left else 0), (right[0] if right else w)
    if top and bottom and not (left and right):
        # An open side ends where the top and bottom lines end: past them lie the spinner buttons.
        span = np.flatnonzero(sub[top[-1]] & sub[bottom[0]])
        if span.size:
            inner_left = inner_left if left else int(span[0])
            inner_right = inner_right if right else int(span[-1]) + 1
    inner = (x1 + inner_left, y1 + (top[-1] + 1 if top else 0),
             x1 + inner_right, y1 + (bottom[0] if bottom else h))
    return inner, lines


def _run(fill: np.ndarray, edge: range, fraction: float, beyond: range) -> list[int]:
    """The rows (or columns) of a border line: those of ``edge`` (the box's outer ones, outermost
    first) filled over ``fraction``, and the filled ones right after them in ``beyond`` (a 2 to 3 px
    focus ring drawn a pixel inside the box)."""
    found = [i for i in edge if fill[i] >= fraction]
    if found and found[-1] == edge[-1]:
        for i in beyond:
            if fill[i] < fraction:
                break
            found.append(i)
    return found


def _text_ink(ink: np.ndarray, box: tuple[int, int, int, int], lines: np.ndarray) -> np.ndarray:
    """The ink that belongs to ``box``'s text, by connected components (8-neighbourhood), once the
    border lines are gone: specks left beside the lines (a rounded corner) go too; ink inside the box
    stays, and ink outside it stays when its component lies at least half inside (a descender the
    box clipped, not the neighbour's frame line it happens to touch)."""
    import cv2  # a rapidocr dependency

    x1, y1, x2, y2 = box
    ink = ink & ~lines
    n, labels = cv2.connectedComponents(ink.astype(np.uint8), connectivity=8)
    total = np.bincount(labels.ravel(), minlength=n)
    inside = np.bincount(labels[y1:y2, x1:x2].ravel(), minlength=n)
    keep = inside * 2 >= total
    if lines.any():
        near = cv2.dilate(lines.astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
        touching = np.zeros(n, bool)
        touching[np.unique(labels[near])] = True
        # A speck touching a line in a corner is the frame's rounded corner; one halfway along a side
        # is what is left of a glyph drawn over the line (a minus sign touching a focus ring).
        corner = np.zeros_like(ink)
        corner[y1:y1 + 3, :x1 + 3] = corner[y1:y1 + 3, x2 - 3:] = True
        corner[y2 - 3:y2, :x1 + 3] = corner[y2 - 3:y2, x2 - 3:] = True
        cornered = np.zeros(n, bool)
        cornered[np.unique(labels[corner & ink])] = True
        keep &= ~(touching & (total <= 4) & cornered)
    keep[0] = False
    out = keep[labels]
    out[y1:y2, x1:x2] |= ink[y1:y2, x1:x2] & (keep | (inside * 2 < total))[labels[y1:y2, x1:x2]]
    return out


CONTROL_GAP = 3  # blank columns between a checkbox's or radio's control and its label, at least


def _drop_control(ink: np.ndarray) -> np.ndarray:
    """Clear the checkbox/radio control: the first run of ink columns from the left, when it is about
    as wide as it is tall (a square or circle) and a gap of ``CONTROL_GAP`` columns or more
    separates it from what follows. Toolkits set the label 4-9 px off its control; a first letter
    (``O``, ``A``, ``S``, ``N``: as wide as tall) stands 1-2 px from the next one, and where the box
    holds no control it went with it (``Open`` read ``pen``)."""
    cols = cast(np.ndarray, ink.any(axis=0))  # numpy types any(axis=...) as bool | array
    xs = np.flatnonzero(cols)
    if xs.size == 0:
        return ink
    start = int(xs[0])
    end = start
    while end < cols.size and cols[end]:
        end += 1
    rows = np.flatnonzero(ink[:, start:end].any(axis=1))
    height = int(rows[-1] - rows[0] + 1)
    width = end - start
    after = np.flatnonzero(cols[end:])
    apart = after[0] >= CONTROL_GAP if after.size else end < cols.size  # a control with no label: blank after
    if width >= 5 and 0.6 <= width / height <= 1.6 and apart:
        ink = ink.copy()
        ink[:, :end] = False
    return ink


def _drop_caret(ink: np.ndarray) -> np.ndarray:
    """Clear a text caret at either end of a line of a field's text: a 1 px column of ink clearly
    taller than the rest of the line (a caret spans the line box; a final "l" only its ascender),
    with no ink beside it or reaching past the rest both above and below."""
    cols = np.flatnonzero(ink.any(axis=0))
    if cols.size < 3:
        return ink
    for c, beside in ((int(cols[-1]), int(cols[-1]) - 1), (int(cols[0]), int(cols[0]) + 1)):
        run = np.flatnonzero(ink[:, c])
        rest = ink.copy()
        rest[:, c] = False
        rows = np.flatnonzero(rest.any(axis=1))
        if rows.size == 0:
            continue
        # A caret touching the last glyph (a "3" whose right side fills the column beside it) still
        # passes both its top and its bottom; a letter's stem ("l", "d") stops at the baseline.
        clear = ink[run[0]:run[-1] + 1, beside].mean() < 0.5 or (run[0] < rows[0] and run[-1] > rows[-1])
        if run[-1] - run[0] + 1 >= 1.15 * (rows[-1] - rows[0] + 1) and clear:
            ink = rest
    return ink


def _bullets(crop: np.ndarray, bg: np.ndarray, keep: np.ndarray) -> int:
    """How many password bullets a line shows: only filled round dots of one size in a row (a hollow
    "o" or a small "." is not one); 0 when it is anything else. PP-OCR reads them as nothing. Dots
    are counted on their dark cores: at small sizes neighbouring bullets touch."""
    import cv2  # a rapidocr dependency

    core = ink_mask(crop, bg, 127, reduce="max") & keep
    n, _, stats, centres = cv2.connectedComponentsWithStats(core.astype(np.uint8), connectivity=4)
    if n < 2 or (keep & ~cv2.dilate(core.astype(np.uint8), np.ones((5, 5), np.uint8)).astype(bool)).any():
        return 0
    w, h, area = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_AREA]
    round_ = (w >= 3) & (np.abs(w - h) <= 1) & (area >= 0.6 * w * h)
    same = (w.max() - w.min() <= 1) & (np.ptp(centres[1:, 1]) <= 1.5)
    return int(n - 1) if bool(round_.all() and same) else 0


def _scrollbar_part(b: tuple[int, int, int, int], inner: tuple[int, int, int, int]) -> bool:
    """A scroll arrow, thumb or resize grip found as a "line": wholly inside the strip at the
    element's right edge where scroll bars sit (text in a box starts at its left)."""
    return b[0] >= inner[2] - _SCROLLBAR


def _tight(ink: np.ndarray) -> tuple[int, int, int, int]:
    ys = np.flatnonzero(ink.any(axis=1))
    xs = np.flatnonzero(ink.any(axis=0))
    return int(xs[0]), int(ys[0]), int(xs[-1] + 1), int(ys[-1] + 1)


def _bands(ink: np.ndarray) -> list[tuple[int, int]]:
    """Runs of rows holding ink (separated by at least one empty row), leaving out runs much lower
    than the tallest (an underline, the dot of an "i" the threshold cut off): rows of text."""
    rows = cast(np.ndarray, ink.any(axis=1))  # numpy types any(axis=...) as bool | array
    runs: list[tuple[int, int]] = []
    y = 0
    while y < rows.size:
        if rows[y]:
            s = y
            while y < rows.size and rows[y]:
                y += 1
            runs.append((s, y))
        else:
            y += 1
    if len(runs) <= 1:
        return runs
    tallest = max(b - a for a, b in runs)
    return [r for r in runs if r[1] - r[0] >= max(3, tallest // 3)] or runs


def _reading_order(masks: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
    """Top to bottom, then left to right within a line (masks whose boxes' vertical centres fall
    inside each other's extent share a line), each with its line's number."""
    boxes = [_tight(m) for m in masks]
    order = sorted(range(len(masks)), key=lambda i: (boxes[i][1] + boxes[i][3]) / 2)
    lines: list[list[int]] = []
    for i in order:
        b = boxes[i]
        centre = (b[1] + b[3]) / 2
        if lines and boxes[lines[-1][0]][1] <= centre < boxes[lines[-1][0]][3]:
            lines[-1].append(i)
        else:
            lines.append([i])
    return [(n, masks[i]) for n, line in enumerate(lines) for i in sorted(line, key=lambda i: boxes[i][0])]
