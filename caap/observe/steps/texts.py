"""The texts the observer reports, after the reader: PP-OCR's reading where the reader is unsure
(and the text chooser where the two disagree), a spin box's number, a calculator key's operator,
single letters in small icons, and a row's closing chevron left out.

Texts come from the ``text_source`` (``[observe]``): ``reader`` (the reader's CTC head alone, none
of PP-OCR's steps run), ``ocr`` (PP-OCR, from the ``rapidocr`` wheel, reads every element that
carries text) or ``auto`` (the reader's text, except where its confidence is below
``ocr_threshold``: those elements — few on screens like the ones the reader was trained on, many on
screens it never saw — go to PP-OCR in one batch, and where the two disagree the reader's text
chooser, ``caap.observe.text_choice``, picks one; a reader without a chooser gives way to PP-OCR).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

import numpy as np
from PIL import Image

from caap.elements import NUMBER, Element
from caap.geometry import grow
from caap.observe.pipeline import Look, Parts
from caap.observe.primitives import rgb_pixels
from caap.observe.read.ctc import normalise
from caap.observe.read.inference import Readings
from caap.observe.steps.figures import LETTER_MAX_SIDE, lone_letter, may_be_letter, solid_figure
from caap.observe.steps.symbols import MIN_MATCH, SYMBOLS, Glyph, lone_glyph
from caap.observe.text_choice import resolve_lookalikes
from caap.taxonomy import TEXT, TEXT_ELEMENT_TYPES, ElementType, attributes_of

# A submenu's or a next page's arrow drawn right after a label: an icon beside the text, not part of
# it (no labelled text on the test and validation screens ends in one; click-menu read "Marietta>").
_TRAILING_CHEVRON = re.compile(r"(?<=\w)\s*[>›»]$")


def without_chevron(text: str) -> str:
    """A row's text with a closing chevron taken off its end; a ``>`` closing an angle bracket the
    text opened (``Andy <andy@example.com>``) is the text's own."""
    if text.endswith(">") and text.rfind("<") > text.rfind(">", 0, len(text) - 1):
        return text
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


_LINE_MARKS = frozenset({"Pd", "Pi", "Pf", "Po"})  # dashes, quotes, ellipses and the like
ICON_BEFORE_MIN = 3  # letters of the name the two readings end with


def _icon_ink(text: str) -> bool:
    """What PP-OCR writes for an icon or a box before a name: marks outside ASCII (□ ☑ ▶ 田), but
    not dashes, quotes or ellipses (a frame's line through its title reads as a dash)."""
    return bool(text) and all(not c.isspace() and not c.isascii() and unicodedata.category(c) not in _LINE_MARKS
                              for c in text)


def _foreign(text: str) -> bool:
    """The reader's writing for an icon: a letter, digit or symbol from outside ASCII (名 ロ ë)."""
    return any(not c.isascii() and unicodedata.category(c)[0] in "LSN" for c in text)


def _name(text: str) -> bool:
    return text[:1].isupper() and sum(c.isalpha() for c in text) >= ICON_BEFORE_MIN


def icon_before(reader_text: str, ocr_text: str, ocr_confidence: float) -> str | None:
    """A desktop name without the icon each reader read before it its own way: a tree row's
    expander, check box or icon comes out as ``名`mDisplay`` from the reader and ``□Display`` from
    PP-OCR. The name is the end both readings share, where what PP-OCR reads before it is icon
    ink (``_icon_ink``), or nothing where the reader's is foreign writing; or else PP-OCR's text
    after its icon ink, where PP-OCR is sure (``GLYPH_BEFORE_OCR``) and the reader misread the name
    too (``▶Tasks`` against ``^Tesks``). Marks both read are written there (words in another
    script, ``ログイン City``): not an icon. A name starts with a capital and holds
    ``ICON_BEFORE_MIN`` letters. None: the rule does not apply."""
    mine, theirs = normalise(reader_text).strip(), normalise(ocr_text).strip()
    n = 0  # the length of the end both share
    while n < min(len(mine), len(theirs)) and mine[-1 - n] == theirs[-1 - n]:
        n += 1
    name = mine[len(mine) - n:].lstrip()
    before_mine = mine[:len(mine) - len(name)].strip()
    before_theirs = theirs[:len(theirs) - len(name)].strip()
    # Where both read some of the same marks, they are written there: words in another script.
    if _name(name) and before_mine and not set(before_theirs) & set(before_mine) \
            and (_icon_ink(before_theirs) if before_theirs else _foreign(before_mine)):
        return name
    ink, name = _split_ink(theirs)
    if ocr_confidence >= GLYPH_BEFORE_OCR and _icon_ink(ink) and _name(name) and name != mine \
            and not set(ink) & set(_split_ink(mine)[0]):
        return name
    return None


def _split_ink(text: str) -> tuple[str, str]:
    """A text cut before its first ASCII letter or digit: (what comes before, stripped; the rest)."""
    start = next((i for i, c in enumerate(text) if c.isascii() and c.isalnum()), len(text))
    return text[:start].strip(), text[start:]


def _gaps(text: str) -> set[int]:
    """The indices, among the text's non-space characters, that a space comes before."""
    gaps, k = set(), 0
    for c in text.strip():
        if c == " ":
            gaps.add(k)
        else:
            k += 1
    return gaps


def spaced_as(ocr_text: str, reader_text: str) -> str:
    """PP-OCR's text with a space wherever the reader's has one, where the two differ in spaces
    alone: PP-OCR drops the narrow spaces of small UI fonts (``CaseInsensitive``, ``4KB``), which
    the reader keeps. Not between two digits (``1 1`` is the reader splitting ``11``)."""
    chars = ocr_text.replace(" ", "")
    if chars != reader_text.replace(" ", "") or ocr_text == reader_text:
        return ocr_text
    theirs = _gaps(ocr_text)
    gaps = theirs | {k for k in _gaps(reader_text) if not (chars[k - 1].isdigit() and chars[k].isdigit())}
    return "".join((" " + c) if k in gaps else c for k, c in enumerate(chars))


# The reader reads a desktop font's ``a`` as ``e`` (``Lerge``, ``Tomés``, ``Drefts``); PP-OCR does
# not read ``e`` as ``a``. On desktop-val14's texts that differ in that alone, PP-OCR's text was the
# right one 139 times and the reader's never (6 neither).
_A_READ_AS_E = frozenset({("e", "a"), ("é", "á"), ("è", "à"), ("ê", "â")})


def a_read_as_e(reader_text: str, ocr_text: str) -> bool:
    """The two texts differ only where the reader has ``e`` (accented alike) and PP-OCR ``a``."""
    return len(reader_text) == len(ocr_text) and reader_text != ocr_text and all(
        (mine, theirs) in _A_READ_AS_E for mine, theirs in zip(reader_text, ocr_text, strict=True) if mine != theirs)


# A reading the reader is sure of may still be ``e`` for ``a``: where its frames that read ``e`` give
# ``a`` at least this log-probability, PP-OCR reads it too, and only ``a_read_as_e`` may take its
# text. On desktop-val15's labelled texts the reader was sure of: 13 of its 17 sure a-for-e misreadings
# and 4 of its 2,700 other readings with an e reach it (PP-OCR never reads an e as a).
A_IN_DOUBT_LOG_P = -8.0


def a_in_doubt(log_probs: Any, alphabet: Any) -> bool:
    """Whether a CTC reading's frames that read ``e`` (or ``é``) give ``a`` (``á``) at least
    ``A_IN_DOUBT_LOG_P``."""
    lp = np.asarray(log_probs, dtype=np.float32)
    if lp.ndim != 2 or lp.shape[0] == 0:
        return False
    pairs = [(alphabet.encode(e), alphabet.encode(a)) for e, a in (("e", "a"), ("é", "á"))]
    best = lp.argmax(axis=1)
    for e_ids, a_ids in pairs:
        if len(e_ids) != 1 or len(a_ids) != 1 or min(e_ids[0], a_ids[0]) < 2:
            continue  # a character the alphabet lacks
        at = best == e_ids[0]
        if at.any() and float(lp[at, a_ids[0]].max()) >= A_IN_DOUBT_LOG_P:
            return True
    return False


# The reader reads three periods (``Print...``, as Qt, Tk and zenity write them) as the one-glyph
# ellipsis its generated pages draw. The two look alike in a desktop font (dots 4-5 px apart in
# both), but on desktop windows PP-OCR reads periods where the reader reads the ellipsis, and the
# training apps write periods: on desktop-val14's texts that differ in that alone, PP-OCR's text
# was right all 16 times (no training app's label has the ellipsis). The generated pages, which
# write the ellipsis, lose by it: on synth-val8 PP-OCR reads 30 of their ellipses as periods.
ELLIPSIS = "\u2026"


def periods_read_as_ellipsis(reader_text: str, ocr_text: str) -> bool:
    """The two texts differ only where the reader has an ellipsis and PP-OCR three periods."""
    return ELLIPSIS in reader_text and "..." in ocr_text and reader_text.replace(ELLIPSIS, "...") == ocr_text


LOST_CAPITAL_OCR = 0.9  # PP-OCR's confidence, at least, for its capital to stand


def lost_capital(reader_text: str, ocr_text: str, ocr_confidence: float) -> bool:
    """PP-OCR's text is the reader's with a capital letter or digit before it, and the reader's
    starts in lower case or with a digit: the reader lost the first glyph (``tem``: ``Item``)."""
    return (ocr_confidence >= LOST_CAPITAL_OCR and len(ocr_text) == len(reader_text) + 1 >= 2
            and ocr_text[1:] == reader_text and (reader_text[0].islower() or reader_text[0].isdigit())
            and (ocr_text[0].isupper() or ocr_text[0].isdigit()))


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
    if NUMBER.fullmatch(mine):
        lost_minus = theirs[:1] in "-−" and mine[:1] not in "-−" and theirs[1:] == mine.lstrip("+")
        return theirs if lost_minus else None
    if NUMBER.fullmatch(theirs):
        return theirs
    for text in (theirs, mine):
        if text and NUMBER.fullmatch(digits := text.translate(_DIGIT_LOOKALIKES)):
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


KEY_CHARS = 2  # a button read as this many characters or fewer may be a key holding one glyph
SHAPE_MIN_PX = 6  # an operator's ink at least this tall is told by its shape (smaller ones blur into others)
KEY_OCR = 0.9  # PP-OCR reading one letter or digit this sure is right on a key (drawn keys: 1.0 on digits)
LETTER_MIN_PX = 5  # a digit or letter's ink is at least this tall on a screen


def key_glyph(image: Image.Image, element: Element) -> Glyph | None:
    """The one glyph a key holds alone, told by its shape (``caap.observe.steps.symbols``); None
    where the key holds more than one glyph or none."""
    x1, y1, x2, y2 = (int(v) for v in element.bbox)
    box = (max(x1, 0), max(y1, 0), min(x2, image.width), min(y2, image.height))
    crop = np.asarray(image.crop(box).convert("RGB"))
    return lone_glyph(crop)


def may_be_key(element: Element) -> bool:
    """A button read blank or as one or two characters: a calculator's or a keypad's key."""
    return element.type == ElementType.BUTTON and len((element.text or "").strip()) <= KEY_CHARS


def key_text(mine: str, theirs: str, their_confidence: float, glyph: Glyph | None) -> str | None:
    """What a key that holds one glyph says, from three readings of it: the reader's (``mine``),
    PP-OCR's (``theirs``) and its shape's (``glyph``). The reader saw few keys and reads most lone
    glyphs wrong, sure of itself (a digit as ``g``). An operator drawn large enough is told by its
    shape: PP-OCR reads ``÷`` as ``+``, ``*`` as ``1`` and ``×`` as ``K``, sure of itself. A digit or
    letter is PP-OCR's where it is sure and the ink is a letter's height (it reads a lone dot as
    ``8``). A small operator's shape comes next, then PP-OCR's reading where the shape agrees. None:
    no one glyph, or nothing better than the reader's reading."""
    if glyph is None:
        return None
    symbol = glyph.char in SYMBOLS and glyph.score >= MIN_MATCH
    if symbol and max(glyph.height, glyph.width) >= SHAPE_MIN_PX:
        return glyph.char
    said = theirs.strip()
    if len(said) == 1 and said.isalnum() and their_confidence >= KEY_OCR and glyph.height >= LETTER_MIN_PX:
        return said
    if symbol:
        return glyph.char
    return said if len(said) == 1 and said == glyph.char and said != mine.strip() else None


def reads_nothing(element: Element) -> bool:
    """The reader read no text where there must be some: a large glyph (identify-shape's letter)
    comes out blank and sure of it, or as a figure's symbol (an ``A`` read ``▲``; a figure drawn
    as a text is told by its pixels, ``solid_figures``). PP-OCR reads it, and its text stands."""
    text = (element.text or "").strip()
    return element.type in TEXT_ELEMENT_TYPES and (
        not text or (element.type == ElementType.TEXT and text in FIGURE_SYMBOLS))


def blank_button(element: Element) -> bool:
    """A button read as blank: a large key holding one to four small characters (a calculator's)
    comes out blank and sure of it, as the reader never saw such keys; a lone operator is told
    by its shape (``key_text``), the rest PP-OCR reads."""
    return element.type == ElementType.BUTTON and not (element.text or "").strip()


# auto: PP-OCR reads the texts the reader is less sure of than this, where the config leaves
# ``ocr_threshold`` unset. Desktop windows: 0.98 (models/reader/HISTORY.md). Web pages: every text
# (1.0). There the reader drops a glyph and is sure of it (``Gorgena`` at 0.996, ``Feale`` at
# 0.9996); on the MiniWoB validation screens (seeds 2800-2999, 633 screens) PP-OCR on every text,
# the chooser deciding, put 15 texts right and none wrong (text exact 0.9747 -> 0.9776) for about
# 11 ms more per first look (PP-OCR already read a third of them).
SCREENS_OCR_THRESHOLD = {"web": 1.0, "desktop": 0.98}


def ocr_limit(parts: Parts, element: Element, threshold: float | None = None) -> float:
    """auto: texts less confident than this go to PP-OCR, and every text at 1 (``threshold``,
    default the parts' ``ocr_threshold``, else the kind of screen's own; text areas: the chooser's
    own limit below it)."""
    threshold = parts.ocr_threshold if threshold is None else threshold
    if threshold is None:
        threshold = SCREENS_OCR_THRESHOLD[parts.screens]
    chooser = parts.chooser
    if chooser is not None and element.type == ElementType.TEXT_AREA:
        return min(threshold, chooser.text_area_below)
    return threshold


def chosen_text(parts: Parts, readings: Readings | None, element: Element, ocr_text: str, ocr_confidence: float,
                index: int) -> str | None:
    """PP-OCR's text where the chooser prefers it to the reader's, None where the reader's stands
    (``index``: the element's place in ``readings``, whose CTC log-probabilities the reader kept).
    On desktop windows, where the two differ only in the reader's ``e`` for PP-OCR's ``a``
    (``a_read_as_e``), PP-OCR's text.
    A short first word the reader read before PP-OCR's whole text is a control's glyph
    (``glyph_before``): PP-OCR's text. PP-OCR's look-alike glyphs are first settled by those
    frames (``resolve_lookalikes``). Multi-line text areas, read line by line, have no single frame
    sequence to weigh PP-OCR's text against: sent to PP-OCR below the chooser's
    ``text_area_below`` only, PP-OCR's text stands as it reads."""
    reader, chooser = parts.reader, parts.chooser
    assert reader is not None and chooser is not None  # auto with a chooser
    frames = readings.frames(index) if readings is not None else None
    mine, theirs = normalise(element.text or ""), normalise(ocr_text)
    if mine == theirs:
        return None
    if reads_nothing(element):
        return ocr_text
    if ocr_confidence >= GLYPH_BEFORE_OCR and glyph_before(element.text or "", ocr_text):
        return ocr_text
    if element.type == ElementType.TEXT_AREA or frames is None:
        return ocr_text
    theirs = resolve_lookalikes(theirs, frames, reader.alphabet, reader.lm)
    if mine == theirs:
        return None
    if parts.screens == "desktop" and (a_read_as_e(mine, theirs) or periods_read_as_ellipsis(mine, theirs)):
        return theirs
    wins = chooser.choose(mine, element.text_confidence or 0.0, theirs, ocr_confidence, frames, reader.alphabet,
                          reader.lm, element.type.value)
    return spaced_as(theirs, mine) if wins else None


# --- the steps ------------------------------------------------------------------------------------


def reread_doubtful_texts(look: Look, elements: list[Element]) -> list[Element]:
    """PP-OCR's text for the elements the text source gives to it (all texts, or the doubtful ones,
    and every spin box's value), weighed against the reader's."""
    parts = look.parts
    assert parts.ocr is not None  # the step needs PP-OCR
    image = look.image
    spins = spin_boxes(elements)
    doubtful = {i for i, e in enumerate(elements) if TEXT in attributes_of(e.type) and (
        parts.text_source == "ocr" or e.text_confidence is None or e.text_confidence < ocr_limit(parts, e)
        or ocr_limit(parts, e) >= 1.0
        or reads_nothing(e) or blank_button(e) or i in spins)}
    # A desktop name read starting in lower case may have lost its capital (``tem``, ``roup 1``):
    # PP-OCR reads it too, and its text stands only where it is the reader's with that capital.
    headless = {i for i, e in enumerate(elements) if parts.screens == "desktop" and e.type in ICON_TEXT_TYPES
                and (e.text or "")[:1].islower()} - doubtful
    # A key holding one glyph is read again though the reader is sure of it: it may be sure and wrong.
    glyphs = {i: key_glyph(image, e) for i, e in enumerate(elements) if may_be_key(e)}
    # So is a sure desktop reading whose frames half see an ``a`` where they read ``e``.
    readings, reader = look.readings, parts.reader
    a_or_e: set[int] = set()
    if parts.screens == "desktop" and reader is not None and readings is not None \
            and len(readings.log_probs) >= len(elements):
        a_or_e = {i for i, e in enumerate(elements) if TEXT in attributes_of(e.type) and e.type != ElementType.TEXT_AREA
                  and ("e" in (e.text or "") or "é" in (e.text or ""))
                  and a_in_doubt(readings.frames(i), reader.alphabet)} - doubtful - headless
    # A sure desktop reading with an ellipsis may be three periods: PP-OCR reads it too.
    dots = {i for i, e in enumerate(elements) if parts.screens == "desktop" and TEXT in attributes_of(e.type)
            and ELLIPSIS in (e.text or "")} - doubtful - headless - a_or_e
    wanted = sorted(doubtful | headless | a_or_e | dots | {i for i, g in glyphs.items() if g is not None})
    boxes = look.reading_boxes if look.reading_boxes is not None and len(look.reading_boxes) == len(elements) \
        else elements
    look.reading_boxes = None
    if not wanted:
        return elements
    got = parts.ocr.read(image, [boxes[i].bbox for i in wanted], [elements[i].type.value for i in wanted])
    chooser = parts.chooser
    out = list(elements)
    for i, reading in zip(wanted, got, strict=True):
        number = spin_value(out[i].text or "", reading.text) if i in spins else None
        # A row's submenu chevron is no part of its name: the two texts are weighed without it.
        theirs = without_chevron(reading.text) if out[i].type == ElementType.TABLED_TEXT else reading.text
        confidence = float(reading.confidence)
        glyph = glyphs.get(i)
        key = key_text(out[i].text or "", theirs, confidence, glyph)
        if number is not None:
            text: str | None = number
        elif key is not None and glyph is not None:
            text, confidence = key, (glyph.score if key == glyph.char else confidence)
        elif (i in headless or (i in doubtful and parts.screens == "desktop")) \
                and lost_capital(out[i].text or "", theirs, confidence):
            text = theirs
        elif parts.screens == "desktop" and (i in headless or i in doubtful) \
                and (name := icon_before(out[i].text or "", theirs, confidence)) is not None:
            text = name
        elif (i in a_or_e and a_read_as_e(normalise(out[i].text or ""), normalise(theirs))) \
                or (i in dots and periods_read_as_ellipsis(normalise(out[i].text or ""), normalise(theirs))):
            text = normalise(theirs)
        elif i not in doubtful:
            continue
        elif blank_button(out[i]):
            text = theirs if theirs.strip() and reading.confidence >= BLANK_BUTTON_OCR else None
        elif chooser is None:
            text = theirs
        else:
            text = chosen_text(parts, look.readings, out[i], theirs, confidence, i)
        if text is None:
            continue
        out[i] = out[i].model_copy(update={"text": text, "text_confidence": min(max(confidence, 0.0), 1.0)})
    return out


BLANK_ROOM = 4  # px of room round a text read as nothing, for PP-OCR to read it again


def read_lone_letters(look: Look, elements: list[Element]) -> list[Element]:
    """Small icons and shapes that hold one letter or digit become texts of it where the reader's
    CTC head and PP-OCR read the same one (``caap.observe.steps.figures.lone_letter``); a small
    text read as nothing takes the one letter or digit PP-OCR reads, sure, in its box grown by
    ``BLANK_ROOM``."""
    parts, readings = look.parts, look.readings
    if parts.ocr is None or readings is None or len(readings.readings) != len(elements):
        return elements
    texts = [r.text or "" for r in readings.readings]
    # A text read as nothing may be one glyph the reader cannot see (identify-shape's yellow r on
    # white): PP-OCR reads it in a box with room round it, and alone decides.
    blank = {i for i, e in enumerate(elements) if e.type == ElementType.TEXT and not (e.text or "").strip()
             and max(e.bbox[2] - e.bbox[0], e.bbox[3] - e.bbox[1]) <= LETTER_MAX_SIDE}
    wanted = [i for i, e in enumerate(elements) if i in blank or may_be_letter(e, texts[i])]
    if not wanted:
        return elements
    rgb = rgb_pixels(look.image)
    wanted = [i for i in wanted if solid_figure(rgb, elements[i].bbox) is None]
    if not wanted:
        return elements
    boxes = [grow(elements[i].bbox, BLANK_ROOM, look.image.width, look.image.height) if i in blank
             else elements[i].bbox for i in wanted]
    got = parts.ocr.read(look.image, boxes, [ElementType.TEXT.value] * len(wanted))
    out = list(elements)
    for i, reading in zip(wanted, got, strict=True):
        letter = lone_letter(reading.text if i in blank else texts[i], reading.text, float(reading.confidence))
        if letter is not None:
            e = out[i]
            out[i] = Element(type=ElementType.TEXT, bbox=e.bbox, score=e.score, id=e.id, text=letter,
                             text_confidence=min(max(float(reading.confidence), 0.0), 1.0))
    return out


def trim_trailing_chevrons(look: Look, elements: list[Element]) -> list[Element]:
    return without_trailing_chevrons(elements)


# What desktop toolkits draw beside a label and both readers read into it. A window's texts are its
# accessible names, and none starts with such a glyph; a web page's may (``« Prev``, ``▼ Menu``), so
# these rules are for desktop windows only (``[observe] screens``).
# - an icon before the label: an expander's or a menu button's arrow, a close cross, a caret, or an
#   icon read as one CJK or kana character (``▶Tasks``, ``× Dismiss``, ``^ Cancel``, ``文 Dismiss``);
_LEADING_ICON = re.compile(r"^(?:[\u2190-\u21ff\u25a0-\u25ff\u2700-\u27bf×^©®]|[\u3040-\u30ff\u3400-\u9fff])"
                           r"\s?(?=[A-Za-z]{2})")
# - a check box's indicator drawn in a list or tree row, read as a bracket or bar (``] Ravi``,
#   ``[Sound``): no name opens with a closing bracket or a bar, nor with an opening one it never closes;
_LEADING_BRACKET = re.compile(r"^(?:[\]|]|\[(?=[^\]]*$))\s?(?=\w)")
# - a frame's line running into its title from either side (``—Fully Editable—``, ``Controls -``).
# (A spin box's steppers inside its field are no text: ``erase_foreign_ink`` paints them out.)
_FRAME_LINE = re.compile(r"^[-–—]+\s*(?=[A-Z])|(?<=[A-Za-z)])\s*[-–—]+$")
# - a menu entry's keyboard shortcut, drawn at the row's end and read onto its name (``SaveCtrl+S``,
#   ``Open…Ctrl+O``): an entry's name never ends in one.
_ACCELERATOR = re.compile(r"(?<=\S)\s*(?:(?:Ctrl|Shift|Alt|Meta|Super)\+)+\S{1,9}$")
# Typed values (fields, text views) may start with anything, and keep what they hold.
ICON_TEXT_TYPES = frozenset(t for t in ElementType if TEXT in attributes_of(t)) - {
    ElementType.INPUT_FIELD, ElementType.TEXT_AREA}
FRAME_TITLE_TYPES = frozenset({ElementType.TEXT, ElementType.CHECKBOX, ElementType.RADIO})


def without_drawn_marks(element_type: ElementType, text: str) -> str:
    """A desktop element's text without the icon or frame line its box shows beside it."""
    if element_type in ICON_TEXT_TYPES:
        # A name has no blank at its ends; one left there is where an icon was read as blank.
        text = _LEADING_BRACKET.sub("", _LEADING_ICON.sub("", text)).strip()
    if element_type in FRAME_TITLE_TYPES:
        text = _FRAME_LINE.sub("", text)
    if element_type == ElementType.TABLED_TEXT:
        text = _ACCELERATOR.sub("", text)
    return text


def trim_drawn_marks(look: Look, elements: list[Element]) -> list[Element]:
    if look.parts.screens != "desktop":
        return elements
    out = list(elements)
    for i, e in enumerate(out):
        if e.text and (text := without_drawn_marks(e.type, e.text)) != e.text:
            out[i] = e.model_copy(update={"text": text})
    return out
