"""The visual observer: detector boxes, then every element read by the reader in one batch.

Both models are loaded once when the observer is built and reused for every screen. Without a
reader the observer still works, reporting the detector's class as the type and no attributes
(useful to check the detector alone).

Texts come from ``text_source``: ``reader`` (the reader's CTC head), ``ocr`` (PP-OCR from the
``rapidocr`` wheel, ``caap.observe.ocr.ppocr``, for every element that carries text) or ``auto`` (the
reader's text, except where its confidence is below ``ocr_threshold``: those elements — few on
screens like the ones the reader was trained on, many on screens it never saw — go to PP-OCR in
one batch, and where the two disagree the reader's text chooser (``caap.observe.text_choice``)
picks one; a reader without a chooser gives way to PP-OCR).
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

import numpy as np
from PIL import Image

from caap.config import ObserveConfig
from caap.elements import Element
from caap.geometry import Box
from caap.observe.detect.detector import Detector
from caap.observe.primitives import one_screen, rgb_pixels
from caap.observe.read.colour import dominant_colour, on_page_colour
from caap.observe.read.ctc import normalise
from caap.observe.steps.field_ink import blank_placeholders, reading_boxes, without_foreign_ink
from caap.observe.steps.figures import (
    bars_as_letters,
    control_kinds,
    lone_glyphs,
    lone_letter,
    may_be_letter,
    page_difference,
    page_ink,
    small_figures,
    solid_figure,
    solid_figures,
    thin_bars,
)
from caap.observe.steps.framed_icons import framed_icons
from caap.observe.steps.grips import resize_grips
from caap.observe.steps.missed_text import missed_lines
from caap.observe.steps.scrollbars import arrow_scrollbars, trough_scrollbars
from caap.observe.steps.segments import drawn_lines
from caap.observe.steps.switches import toggle_switches
from caap.observe.steps.symbols import lone_symbol
from caap.observe.steps.text_areas import framed_text_areas
from caap.observe.text_choice import resolve_lookalikes
from caap.taxonomy import SUBTYPE, TEXT, TEXT_ELEMENT_TYPES, ElementType, attributes_of

REPO_ROOT = Path(__file__).resolve().parents[2]
# The detector for any application (desktop toolkits, web pages, every screen size) is the default;
# the MiniWoB++ benchmark keeps the detector fine-tuned on MiniWoB alone, as the paper's agent did:
# on the 67 tasks it reads a few screens better (133 vs 129 of 134 episodes, models/detector/MODEL_CARD.md).
DEFAULT_DETECTOR = REPO_ROOT / "models" / "detector" / "caap-yolov8n-any.pt"
MINIWOB_DETECTOR = REPO_ROOT / "models" / "detector" / "caap-yolov8n-miniwob.pt"
DEFAULT_READER = REPO_ROOT / "models" / "reader"


def miniwob_observe(cfg: ObserveConfig) -> ObserveConfig:
    """The ``[observe]`` section as the MiniWoB++ benchmark uses it: the MiniWoB detector unless one is named."""
    return cfg if cfg.detector is not None else cfg.model_copy(update={"detector": MINIWOB_DETECTOR})


TYPE_SOURCES = ("reader", "detector")
TEXT_SOURCES = ("reader", "ocr", "auto")
# The config is the one place defaults live.
_OBSERVE = ObserveConfig.model_fields
DEFAULT_TYPE_SOURCE: str = _OBSERVE["type_source"].default
DEFAULT_TEXT_SOURCE: str = _OBSERVE["text_source"].default
DEFAULT_OCR_THRESHOLD: float = _OBSERVE["ocr_threshold"].default
DEFAULT_MEMO: int = _OBSERVE["memo"].default


def merge_reading(detected: Element, read: Element, type_source: str = DEFAULT_TYPE_SOURCE) -> Element:
    """One element from the detector's box and class and the reader's record of it.

    ``reader`` (the paper): the reader's type and attributes; an unreadable generation keeps the
    detector's class. The box is the detector's (the reader may have read a narrower one,
    ``reading_boxes``). ``detector``: the detector's class wins a disagreement, and the reader's
    attributes are kept where that class carries them too (text, checked, focused, highlighted;
    the subtype only when both agree on the type) — for a reader whose type accuracy is below the
    detector's.
    """
    if read.type == ElementType.UNKNOWN and not read.text:
        read = read.model_copy(update={"type": detected.type})
    if type_source == "reader" or read.type == detected.type or detected.type == ElementType.UNKNOWN:
        return read.model_copy(update={"score": detected.score, "bbox": detected.bbox})
    carried = set(attributes_of(detected.type)) & set(attributes_of(read.type)) - {SUBTYPE}
    values = {name: getattr(read, name) for name in carried if getattr(read, name) is not None}
    return Element(type=detected.type, bbox=detected.bbox, score=detected.score, id=read.id, **values)


def plain_rows_unhighlighted(image: Image.Image, elements: list[Element]) -> list[Element]:
    """A table or list row the reader calls highlighted while its background is the page's own
    colour is not highlighted: a selected row is filled with a colour of its own. The reader's
    colour statistics see a list's focus outline around its first row and call that row
    selected, and an agent that toggles selections then deselects it again and again. On the
    labelled test screens every highlighted row has a fill of its own (138 of 138), and 1,311 of
    1,399 plain rows sit on the page colour."""
    suspects = [i for i, e in enumerate(elements) if e.highlighted and e.type == ElementType.TABLED_TEXT]
    if not suspects:
        return elements
    rgb = rgb_pixels(image)
    page = dominant_colour(rgb, step=max(1, max(rgb.shape[:2]) // 256))
    out = list(elements)
    for i in suspects:
        if on_page_colour(rgb, out[i].bbox, page):
            out[i] = out[i].model_copy(update={"highlighted": False})
    return out


# A submenu's or a next page's arrow drawn right after a label: an icon beside the text, not part of
# it (no labelled text on the test and validation screens ends in one; click-menu read "Marietta>").
_TRAILING_CHEVRON = re.compile(r"(?<=\w)\s*[>›»]$")


def without_chevron(text: str) -> str:
    """A row's text with a closing chevron taken off its end."""
    return _TRAILING_CHEVRON.sub("", text)


def without_trailing_chevrons(elements: list[Element]) -> list[Element]:
    """Menu and list rows with a closing chevron taken off the end of their text."""
    out = list(elements)
    for i, e in enumerate(out):
        if e.type == ElementType.TABLED_TEXT and e.text and _TRAILING_CHEVRON.search(e.text):
            out[i] = e.model_copy(update={"text": without_chevron(e.text)})
    return out


# Symbols the reader writes for a lone filled figure; a text element is made of letters.
FIGURE_SYMBOLS = frozenset("▲△▼▽◀▶◆◇●○■□★☆")
# A button the reader reads blank goes to PP-OCR; PP-OCR's text stands from this confidence up (a
# button may truly hold no text, where PP-OCR reads nothing or noise).
BLANK_BUTTON_OCR = 0.8
# The reader reads a control drawn before a label (a radio's ring, a tree's expander or icon) as a
# short first word: ``C Radio button 2``, ``ル Overlay``. PP-OCR finds its lines in the ink and
# leaves shapes out. Where PP-OCR reads the rest alone, this sure, its text stands.
GLYPH_BEFORE_OCR = 0.9
GLYPH_BEFORE_MAX = 3  # characters of the reader's first word


def glyph_before(reader_text: str, ocr_text: str) -> bool:
    """The reader's text is PP-OCR's after a first word of at most ``GLYPH_BEFORE_MAX`` characters."""
    head, _, rest = reader_text.strip().partition(" ")
    return len(ocr_text.strip()) >= 3 and rest.strip() == ocr_text.strip() and 1 <= len(head) <= GLYPH_BEFORE_MAX

_NUMBER = re.compile(r"^[-−+]?\d+(?:[.,]\d+)?$")
_STEPPERS = ({"▲", "▴", "⏶", "+"}, {"▼", "▾", "⏷", "-", "−"})


# Glyphs a digit is misread as when part of it is lost (the left side of an 8 under a focus ring reads B).
_DIGIT_LOOKALIKES = str.maketrans({"B": "8", "O": "0", "o": "0", "D": "0", "l": "1", "I": "1", "|": "1",
                                   "S": "5", "s": "5", "Z": "2", "z": "2", "g": "9", "q": "9", "G": "6", "b": "6"})


def spin_value(reader_text: str, ocr_text: str) -> str | None:
    """A spin box's value from the reader's and PP-OCR's readings: the reader's where it is a
    number (None: it stands), else PP-OCR's where it is one, else the first that becomes one with
    digit look-alikes read as digits; None when neither is a number either way. One exception to
    the reader's number standing: PP-OCR's with a minus sign before the same digits. In a focused
    box the minus touches the focus ring, and a reader fine-tuned on many toolkits reads that
    stroke as the box's border (``9`` for ``-9``, sure of it); PP-OCR keeps it."""
    mine, theirs = normalise(reader_text), normalise(ocr_text)
    if _NUMBER.match(mine):
        lost_minus = theirs[:1] in "-−" and mine[:1] not in "-−" and theirs[1:] == mine.lstrip("+")
        return theirs if lost_minus else None
    if _NUMBER.match(theirs):
        return theirs
    for text in (theirs, mine):
        if text and _NUMBER.match(digits := text.translate(_DIGIT_LOOKALIKES)):
            return digits
    return None


def _at_right_end(field: Element, button: Element) -> bool:
    """Whether a button's middle lies against the right end of a field (within one and a half
    field heights inside it, one beyond it)."""
    _, y1, x2, y2 = field.bbox
    cx, cy = (button.bbox[0] + button.bbox[2]) / 2, (button.bbox[1] + button.bbox[3]) / 2
    return x2 - (y2 - y1) * 1.5 <= cx <= x2 + (y2 - y1) and y1 - 4 <= cy <= y2 + 4


def spin_boxes(elements: list[Element]) -> set[int]:
    """The text fields that are spin boxes: an up and a down button stacked against the field's
    right end (a number input, jQuery UI's spinner, a desktop toolkit's spin button). Their value
    is a number."""
    buttons = [e for e in elements if e.type == ElementType.BUTTON]
    ups = [b for b in buttons if (b.text or "").strip() in _STEPPERS[0]]
    downs = [b for b in buttons if (b.text or "").strip() in _STEPPERS[1]]
    if not ups or not downs:
        return set()
    return {i for i, f in enumerate(elements) if f.type == ElementType.INPUT_FIELD
            and any(u.bbox[1] < d.bbox[1] for u in ups if _at_right_end(f, u) for d in downs if _at_right_end(f, d))}


def scaled_box(box: Box, scale: float, width: int, height: int) -> Box:
    """A box found on a screen shrunk by ``scale``, in the full screen's pixels: grown outwards to
    whole pixels, clipped to the screen."""
    x1, y1, x2, y2 = box
    return (max(0, math.floor(x1 * scale)), max(0, math.floor(y1 * scale)),
            min(width, math.ceil(x2 * scale)), min(height, math.ceil(y2 * scale)))


class VisionObserver:
    """Screenshot → elements. ``last_timings_ms`` holds detect/read(/ocr)/total of the latest screen."""

    def __init__(self, detector: Detector | None, reader: object | None = None, *,
                 type_source: str = DEFAULT_TYPE_SOURCE, text_source: str = DEFAULT_TEXT_SOURCE,
                 ocr: object | None = None, ocr_threshold: float = DEFAULT_OCR_THRESHOLD,
                 ui_scale: float = _OBSERVE["ui_scale"].default) -> None:
        if not 0.5 <= ui_scale <= 4.0:
            raise ValueError(f"ui_scale must lie in 0.5-4, not {ui_scale}")
        if type_source not in TYPE_SOURCES:
            raise ValueError(f"type_source must be one of {TYPE_SOURCES}, not {type_source!r}")
        if text_source not in TEXT_SOURCES:
            raise ValueError(f"text_source must be one of {TEXT_SOURCES}, not {text_source!r}")
        if text_source != "reader" and reader is not None and ocr is None:
            raise ValueError(f"text_source {text_source!r} needs an OCR engine (caap.observe.ocr.ppocr.PPOCR)")
        self.detector = detector
        self.reader = reader
        self.type_source = type_source
        self.text_source = text_source
        self.ocr = ocr
        self.ocr_threshold = ocr_threshold
        self.ui_scale = ui_scale
        self.chooser = getattr(reader, "chooser", None) if text_source == "auto" else None
        if self.chooser is not None:
            reader.keep_log_probs = True  # type: ignore[union-attr]  # the chooser weighs both texts by them
        self.last_timings_ms: dict[str, float] = {}

    @classmethod
    def load(cls, detector_weights: str | Path | None = None, reader_checkpoint: str | Path | None = None, *,
             use_reader: bool = True, conf: float = _OBSERVE["conf"].default, device: str = _OBSERVE["device"].default,
             snap: bool = _OBSERVE["snap_text_boxes"].default,
             type_source: str = DEFAULT_TYPE_SOURCE, text_source: str = DEFAULT_TEXT_SOURCE,
             ocr_threshold: float = DEFAULT_OCR_THRESHOLD, memo: int = DEFAULT_MEMO,
             max_side: int = _OBSERVE["detector_max_side"].default,
             runtime: str = _OBSERVE["detector_runtime"].default,
             ui_scale: float = _OBSERVE["ui_scale"].default) -> VisionObserver:
        """``memo``: readings of element crops the reader and PP-OCR each remember by their pixels
        (``caap.observe.memo``; 0: every element is read on every screen)."""
        detector = Detector(detector_weights or DEFAULT_DETECTOR, conf=conf, device=device, snap=snap,
                            max_side=max_side, runtime=runtime)
        reader = ocr = None
        if use_reader:
            from caap.observe.read.inference import Reader

            reader = Reader(reader_checkpoint or DEFAULT_READER, device=device, memo=memo)
            if text_source != "reader":
                from caap.observe.ocr.ppocr import PPOCR

                ocr = PPOCR(memo=memo)
        return cls(detector, reader, type_source=type_source, text_source=text_source, ocr=ocr,
                   ocr_threshold=ocr_threshold, ui_scale=ui_scale)

    @classmethod
    def from_config(cls, cfg: ObserveConfig, *, use_reader: bool = True) -> VisionObserver:
        """The observer the ``[observe]`` config section describes."""
        return cls.load(cfg.detector, cfg.reader, use_reader=use_reader, conf=cfg.conf, device=cfg.device,
                        snap=cfg.snap_text_boxes,
                        type_source=cfg.type_source, text_source=cfg.text_source, ocr_threshold=cfg.ocr_threshold,
                        memo=cfg.memo, max_side=cfg.detector_max_side,
                        runtime=cfg.detector_runtime, ui_scale=cfg.ui_scale)

    def forget(self) -> None:
        """Drop the readings the reader and PP-OCR remember: the next screen is read as if new."""
        for part in (self.reader, self.ocr):
            memo = getattr(part, "memo", None)
            if memo is not None:
                memo.clear()

    def observe(self, image: Image.Image) -> list[Element]:
        """The elements of a screenshot, boxes in its pixels. At a UI scale other than 1 the models
        look at the screen shrunk to the size they were trained at, and the boxes grow back."""
        if self.ui_scale == 1.0:
            return self._observe(image)
        t0 = time.perf_counter()
        small = image.resize((max(1, round(image.width / self.ui_scale)), max(1, round(image.height / self.ui_scale))),
                             Image.Resampling.BOX if self.ui_scale > 1 else Image.Resampling.BICUBIC)
        elements = [e.model_copy(update={"bbox": scaled_box(e.bbox, self.ui_scale, image.width, image.height)})
                    for e in self._observe(small)]
        self.last_timings_ms["total"] = round((time.perf_counter() - t0) * 1000, 2)
        return elements

    def _observe(self, image: Image.Image) -> list[Element]:
        with one_screen():  # each image's pixels made an array once for every step below
            return self._observe_screen(image)

    def _observe_screen(self, image: Image.Image) -> list[Element]:
        t0 = time.perf_counter()
        boxes = self.propose(image)
        t1 = time.perf_counter()
        timings: dict[str, float] = {}
        if self.reader is None or not boxes:
            elements = boxes
        else:
            image = without_foreign_ink(image, boxes)  # a field's value alone, not what shows through it
            read = self.reader.read(image, reading_boxes(image, boxes),  # type: ignore[attr-defined]
                                    type_hints=[b.type for b in boxes],
                                    follow_hints=self.type_source == "detector")
            elements = [merge_reading(det, got, self.type_source) for det, got in zip(boxes, read, strict=True)]
            elements = plain_rows_unhighlighted(image, elements)
            t2 = time.perf_counter()
            timings["read"] = round((t2 - t1) * 1000, 2)
            elements = self.texts(image, elements)
            if self.ocr is not None:
                timings["ocr"] = round((time.perf_counter() - t2) * 1000, 2)
            elements = self.rules(image, elements)
        t3 = time.perf_counter()
        self.last_timings_ms = {"detect": round((t1 - t0) * 1000, 2), "read": timings.get("read", 0.0),
                                **({"ocr": timings["ocr"]} if "ocr" in timings else {}),
                                "total": round((t3 - t0) * 1000, 2)}
        return elements

    def propose(self, image: Image.Image) -> list[Element]:
        """The boxes the reader reads: the detector's, and with a reader every large glyph standing
        alone, every small filled figure, every long thin bar (a progress bar; a box holding two
        bars is the two), every scrollbar shown by its two arrow buttons or by a slider in its
        trough, every small framed glyph (a dock's title buttons), every slanted line drawn
        between two points and every toggle switch's pill that no box holds; with PP-OCR,
        every line of text its detector finds where no box stands (``caap.observe.steps.missed_text``);
        last, every text area shown by the panel its lines stand on."""
        with one_screen():  # also where it is called alone (caap.train.eval_reader)
            return self._propose(image)

    def _propose(self, image: Image.Image) -> list[Element]:
        assert self.detector is not None  # made without one only for its text steps (caap.train.eval_reader)
        boxes = self.detector.detect(image)
        if self.reader is None:
            return boxes
        difference = page_difference(image)
        ink = page_ink(image, difference=difference)
        boxes = thin_bars(image, small_figures(image, lone_glyphs(image, boxes, ink), ink), difference)
        boxes = trough_scrollbars(image, arrow_scrollbars(image, boxes, ink), difference)
        boxes = drawn_lines(image, framed_icons(image, boxes, ink), ink)
        boxes = toggle_switches(image, boxes, difference)
        if self.ocr is not None:
            boxes = missed_lines(image, boxes, self.ocr)  # type: ignore[arg-type]
        return framed_text_areas(image, boxes)

    def texts(self, image: Image.Image, elements: list[Element]) -> list[Element]:
        """The texts the observer reports for read elements (in the order of the latest read): PP-OCR's
        where the text source gives them to it, small icons that hold one letter as that letter, and
        none for a field that shows only its placeholder."""
        if self.ocr is not None:
            elements = self.letters(image, self._ocr_texts(image, elements))
        return blank_placeholders(image, elements)

    @staticmethod
    def rules(image: Image.Image, elements: list[Element]) -> list[Element]:
        """Rules on the pixels around the networks' readings, each traced to benchmark failures."""
        elements = solid_figures(image, without_trailing_chevrons(elements))
        return resize_grips(image, control_kinds(image, bars_as_letters(image, elements)))

    def letters(self, image: Image.Image, elements: list[Element]) -> list[Element]:
        """Small icons and shapes that hold one letter or digit become texts of it where the reader's
        CTC head (in the latest read) and PP-OCR read the same one (``caap.observe.steps.figures.lone_letter``)."""
        readings = getattr(self.reader, "last_readings", [])
        if self.ocr is None or len(readings) != len(elements):
            return elements
        wanted = [i for i, e in enumerate(elements) if may_be_letter(e, readings[i].text)]
        if not wanted:
            return elements
        rgb = rgb_pixels(image)
        wanted = [i for i in wanted if solid_figure(rgb, elements[i].bbox) is None]
        if not wanted:
            return elements
        got = self.ocr.read(image, [elements[i].bbox for i in wanted],  # type: ignore[attr-defined]
                            [ElementType.TEXT.value] * len(wanted))
        out = list(elements)
        for i, reading in zip(wanted, got, strict=True):
            letter = lone_letter(readings[i].text, reading.text, float(reading.confidence))
            if letter is not None:
                e = out[i]
                out[i] = Element(type=ElementType.TEXT, bbox=e.bbox, score=e.score, id=e.id, text=letter,
                                 text_confidence=min(max(float(reading.confidence), 0.0), 1.0))
        return out

    def _ocr_texts(self, image: Image.Image, elements: list[Element]) -> list[Element]:
        """PP-OCR's text for the elements the text source gives to it (all texts, or the doubtful
        ones, and every spin box's value)."""
        spins = spin_boxes(elements)
        wanted = [i for i, e in enumerate(elements) if TEXT in attributes_of(e.type) and (
            self.text_source == "ocr" or e.text_confidence is None or e.text_confidence < self._limit(e)
            or self._read_nothing(e) or self._blank_button(e) or i in spins)]
        if not wanted:
            return elements
        assert self.ocr is not None  # observe() asks only when it has an OCR engine
        got = self.ocr.read(image, [elements[i].bbox for i in wanted],  # type: ignore[attr-defined]
                            [elements[i].type.value for i in wanted])
        out = list(elements)
        for i, reading in zip(wanted, got, strict=True):
            number = spin_value(out[i].text or "", reading.text) if i in spins else None
            # A row's submenu chevron is no part of its name: the two texts are weighed without it.
            theirs = without_chevron(reading.text) if out[i].type == ElementType.TABLED_TEXT else reading.text
            confidence = float(reading.confidence)
            symbol = self._key_symbol(image, out[i]) if self._blank_button(out[i]) else None
            if number is not None:
                text: str | None = number
            elif symbol is not None:
                text, confidence = symbol
            elif self._blank_button(out[i]):
                text = theirs if theirs.strip() and reading.confidence >= BLANK_BUTTON_OCR else None
            elif self.chooser is None:
                text = theirs
            else:
                text = self._chosen(out[i], theirs, confidence, i)
            if text is None:
                continue
            out[i] = out[i].model_copy(update={"text": text, "text_confidence": min(max(confidence, 0.0), 1.0)})
        return out

    @staticmethod
    def _key_symbol(image: Image.Image, element: Element) -> tuple[str, float] | None:
        """The operator a blank-read key holds alone, told by its shape (``caap.observe.steps.symbols``:
        PP-OCR reads ``÷`` as ``+`` and ``−`` as ``1``, unsure), with how well it matched."""
        x1, y1, x2, y2 = (int(v) for v in element.bbox)
        box = (max(x1, 0), max(y1, 0), min(x2, image.width), min(y2, image.height))
        crop = np.asarray(image.crop(box).convert("RGB"))
        return lone_symbol(crop)

    @staticmethod
    def _read_nothing(element: Element) -> bool:
        """The reader read no text where there must be some: a large glyph (identify-shape's letter)
        comes out blank and sure of it, or as a figure's symbol (an ``A`` read ``▲``; a figure drawn
        as a text is told by its pixels, ``solid_figures``). PP-OCR reads it, and its text stands."""
        text = (element.text or "").strip()
        return element.type in TEXT_ELEMENT_TYPES and (
            not text or (element.type == ElementType.TEXT and text in FIGURE_SYMBOLS))

    @staticmethod
    def _blank_button(element: Element) -> bool:
        """A button read as blank: a large key holding one to four small characters (a calculator's)
        comes out blank and sure of it, as the reader never saw such keys; a lone operator is told
        by its shape (``_key_symbol``), the rest PP-OCR reads."""
        return element.type == ElementType.BUTTON and not (element.text or "").strip()

    def _limit(self, element: Element, threshold: float | None = None) -> float:
        """auto: texts less confident than this go to PP-OCR (``threshold``, default
        ``ocr_threshold``; text areas: the chooser's own limit below it)."""
        threshold = self.ocr_threshold if threshold is None else threshold
        if self.chooser is not None and element.type == ElementType.TEXT_AREA:
            return min(threshold, self.chooser.text_area_below)
        return threshold

    def _chosen(self, element: Element, ocr_text: str, ocr_confidence: float, index: int) -> str | None:
        """PP-OCR's text where the chooser prefers it to the reader's, None where the reader's
        stands (``index``: the element's place in the latest read, whose CTC log-probabilities the
        reader kept). A short first word the reader read before PP-OCR's whole text is a control's
        glyph (``glyph_before``): PP-OCR's text. PP-OCR's look-alike glyphs are first settled by those frames
        (``resolve_lookalikes``). Multi-line text areas, read line by line, have no single frame
        sequence to weigh PP-OCR's text against: sent to PP-OCR below the chooser's
        ``text_area_below`` only, PP-OCR's text stands as it reads."""
        reader = self.reader
        log_probs = getattr(reader, "last_log_probs", [])
        mine, theirs = normalise(element.text or ""), normalise(ocr_text)
        if mine == theirs:
            return None
        if self._read_nothing(element):
            return ocr_text
        if ocr_confidence >= GLYPH_BEFORE_OCR and glyph_before(element.text or "", ocr_text):
            return ocr_text
        if element.type == ElementType.TEXT_AREA or index >= len(log_probs) or log_probs[index] is None:
            return ocr_text
        theirs = resolve_lookalikes(theirs, log_probs[index], reader.alphabet, reader.lm)  # type: ignore[union-attr]
        if mine == theirs:
            return None
        wins = self.chooser.choose(mine, element.text_confidence or 0.0, theirs, ocr_confidence,  # type: ignore[union-attr]
                                   log_probs[index], reader.alphabet, reader.lm, element.type.value)  # type: ignore[union-attr]
        return theirs if wins else None
