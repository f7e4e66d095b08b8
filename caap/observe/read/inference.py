"""The element reader: Pix2Struct with a CTC text head, reading one semi-masked element crop per
detected box into a short structured record (CAAP §3.1, "UI element understanding").

Input: the screenshot semi-masked around the element (``caap.observe.read.semimask``: the element
untouched, a frame just outside its box, everything else darkened), cropped to the element plus a
few px of context and cut at native resolution into narrow patches (``caap.observe.read.patches``).
Output, from one encoder pass over all elements of a screen:

* the **text**, from the CTC head (``caap.observe.read.modeling``): one greedy pass over the
  encoder's columns, which cannot loop, with a confidence per element. Where the checkpoint
  directory holds a character language model (``char-lm.json``, ``caap.observe.read.charlm``), the
  texts the greedy pass is unsure of are searched again with it (``caap.observe.read.ctc.beam_decode``);
  the confidence stays the greedy pass's. A text area is cut into its lines first
  (``caap.observe.read.lines``) and the lines are read the same way. A text chooser in the directory
  (``text-choice.json``, ``caap.observe.text_choice``) is loaded for the observer's ``auto`` source;
* the **record** — type, checked/focused/highlighted, subtype — written by the decoder in the
  target format below (version 1), text field left out unless the checkpoint's decoder was trained
  to write it (``decoder_text``).

Target format (version 1)::

    TYPE(|KEY=VALUE)*

    TYPE   an ``ElementType`` value: button, text, icon, ...
    KEY    one letter per attribute: c=checked  f=focused  h=highlighted  e=expanded  s=subtype  t=text
    VALUE  booleans 0/1; subtype a taxonomy name; text escaped (below)

    button|f=0|t=Submit            checkbox|c=1|t=Remember me       icon|c=0|s=important
    text|h=1|t=a\\|b\\=c\\nd        scrollbar                        text_area|f=1|t=

Fields come in the fixed order c, f, h, s, t — text last, so a generation cut short loses only the
end of the text. Only the attributes the type carries (``taxonomy.TYPE_ATTRIBUTES``) appear, and
only when known: a null attribute is omitted, an empty text is ``t=``. In text, ``\\`` ``|`` ``=``
newline, carriage return and tab are written ``\\\\`` ``\\|`` ``\\=`` ``\\n`` ``\\r`` ``\\t``; every
other character is written as itself — the tokenizer is byte-level.

Decoding never raises on a generation: one whose first field is not a type name becomes
``Element(type=unknown, text=<the raw generation>)``; unknown keys, attributes the type does not
carry, booleans other than 0/1, subtypes outside the taxonomy and repeated keys (after the first)
are dropped; an unknown escape ``\\x`` reads as ``x`` and a trailing ``\\`` as itself.

Checkpoint directory (format 2): ``save_pretrained`` output of ``ReaderModel`` plus
``caap-reader.json`` (patch size, CTC alphabet, semi-mask settings, generation length, whether the
decoder writes the text). The byte-level tokenizer (``ByT5Tokenizer(extra_ids=0)``) and the
alphabet are rebuilt from it — nothing is ever downloaded.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.files import read_json
from caap.geometry import Box, as_box
from caap.observe.memo import ReadingMemo, memo_of, pixel_key
from caap.observe.primitives import rgb_pixels
from caap.observe.read.charlm import LM_FILE, CharLM, CharLMError
from caap.observe.read.colour import box_colours
from caap.observe.read.lines import LINE_SEPARATOR, text_lines
from caap.observe.read.semimask import semi_mask
from caap.observe.text_choice import CHOICE_FILE, TextChoiceError, TextChooser
from caap.taxonomy import (
    BOOLEAN_ATTRIBUTES,
    CHECKED,
    EXPANDED,
    FOCUSED,
    HIGHLIGHTED,
    SUBTYPE,
    TEXT,
    ElementType,
    attributes_of,
    subtypes_of,
)

# Never reach for the model hub unless the user explicitly allows it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_FORMAT = 1
CHECKPOINT_FORMAT = 2
CHECKPOINT_FILE = "caap-reader.json"
DEFAULT_MASK: dict[str, Any] = {"darken": 0.5, "outline_px": 2, "outline_rgb": [255, 0, 0], "context": 4}
DEFAULT_PATCH = (16, 4)  # patch height, width (px): a 4 px column per CTC step pair

# Attribute → key letter, in the order fields are written (text last).
KEYS: dict[str, str] = {CHECKED: "c", FOCUSED: "f", HIGHLIGHTED: "h", EXPANDED: "e", SUBTYPE: "s", TEXT: "t"}
_ATTR_OF_KEY = {v: k for k, v in KEYS.items()}
_ESCAPE = {"\\": "\\\\", "|": "\\|", "=": "\\=", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPE = {"\\": "\\", "|": "|", "=": "=", "n": "\n", "r": "\r", "t": "\t"}
_TYPES = {t.value: t for t in ElementType}


class ReaderError(RuntimeError):
    """A reader checkpoint, dataset or setting that cannot be used; the message names the file or field."""


# --- target strings -----------------------------------------------------------------------------


def escape_text(text: str) -> str:
    return "".join(_ESCAPE.get(ch, ch) for ch in text)


def encode_target(element: Element) -> str:
    """The target string of an element (see the module docstring)."""
    parts = [element.type.value]
    carried = attributes_of(element.type)
    for name, key in KEYS.items():
        if name not in carried:
            continue
        value = getattr(element, name)
        if value is None:
            continue
        if name in BOOLEAN_ATTRIBUTES:
            parts.append(f"{key}={int(bool(value))}")
        elif name == TEXT:
            parts.append(f"{key}={escape_text(value)}")
        else:
            parts.append(f"{key}={value}")
    return "|".join(parts)


def _split_fields(text: str) -> list[tuple[str, str | None]]:
    """Unescaped fields as ``(before '=', after '=' or None)``, splitting on unescaped ``|`` and ``=``."""
    fields: list[tuple[str, str | None]] = []
    key: list[str] = []
    value: list[str] | None = None
    i, n = 0, len(text)
    while i <= n:
        ch = text[i] if i < n else "|"  # a virtual separator closes the last field
        if ch == "\\" and i < n:
            if i + 1 < n:
                nxt = text[i + 1]
                (key if value is None else value).append(_UNESCAPE.get(nxt, nxt))
                i += 2
                continue
            (key if value is None else value).append("\\")  # a trailing lone backslash is itself
        elif ch == "|":
            fields.append(("".join(key), None if value is None else "".join(value)))
            key, value = [], None
        elif ch == "=" and value is None:
            value = []
        else:
            (key if value is None else value).append(ch)
        i += 1
    return fields


def decode_target(text: str, bbox: Sequence[int]) -> Element:
    """An element from a generated target string; never raises on the string (see the module
    docstring). ``bbox`` must be a valid box (``geometry.as_box``) — that is the caller's part."""
    box = as_box(bbox)
    raw = text if isinstance(text, str) else str(text)
    fields = _split_fields(raw)  # not stripped: spaces at the end of a text are part of it
    head, head_value = fields[0]
    element_type = _TYPES.get(head)
    if element_type is None or head_value is not None:
        return Element(type=ElementType.UNKNOWN, bbox=box, text=raw or None)
    carried = attributes_of(element_type)
    values: dict[str, Any] = {}
    for key, value in fields[1:]:
        name = _ATTR_OF_KEY.get(key)
        if name is None or value is None or name not in carried or name in values:
            continue
        if name in BOOLEAN_ATTRIBUTES:
            if value in ("0", "1"):
                values[name] = value == "1"
        elif name == SUBTYPE:
            if value in subtypes_of(element_type):
                values[name] = value
        else:
            values[name] = value
    try:
        return Element(type=element_type, bbox=box, **values)
    except ValueError:  # cannot happen with the checks above; belt and braces for "never raises"
        return Element(type=ElementType.UNKNOWN, bbox=box, text=raw or None)


class RecordGrammar:
    """Every record the target format allows, as a trie of decoder tokens, for constrained
    generation: the decoder only chooses among valid continuations, so a record is always
    parseable and never runs past its end. A byte-level decoder that cannot tell ``but|t`` from
    ``butt|o`` (measured: 0.51 against 0.49 after 700k samples) still writes ``button``, because no
    type name continues ``buttt``.

    The records are produced by ``encode_target`` itself over every type and every combination of
    the attribute values the taxonomy allows (``None`` included), so the grammar cannot drift from
    the format. With ``text``, the node after ``t=`` is free: any token may follow until the end.
    ``allowed(..., element_type)`` keeps to the records of one type (the detector's class, when the
    observer takes the type from the detector: the decoder then writes that class's attributes)."""

    def __init__(self, tokenizer: Any, *, text: bool) -> None:
        from itertools import product

        self.eos = int(tokenizer.eos_token_id)
        self.vocab = len(tokenizer)
        self._root: dict[Any, Any] = {}
        self._roots: dict[ElementType, dict[Any, Any]] = {}
        self._memo: dict[tuple[Any, ...], list[int]] = {}
        box = (0, 0, 1, 1)
        for element_type in ElementType:
            if element_type is ElementType.UNKNOWN:
                continue
            carried = [n for n in KEYS if n in attributes_of(element_type) and n != TEXT]
            choices = [(None, *((False, True) if n in BOOLEAN_ATTRIBUTES else subtypes_of(element_type)))
                       for n in carried]
            texts = (None, "") if text and TEXT in attributes_of(element_type) else (None,)
            for values in product(*choices, texts):
                fields = dict(zip([*carried, TEXT], values, strict=True))
                record = encode_target(Element(type=element_type, bbox=box, **fields))
                for node in (self._root, self._roots.setdefault(element_type, {})):
                    for token in tokenizer(record, add_special_tokens=False).input_ids:
                        node = node.setdefault(int(token), {})
                    node[self.eos] = {}
                    if fields[TEXT] == "":
                        node["free"] = True
        self.longest = self._depth(self._root)

    def _depth(self, node: dict[Any, Any]) -> int:
        return max((1 + self._depth(child) for key, child in node.items() if key != "free"), default=0)

    def allowed(self, generated: Sequence[int], element_type: ElementType | None = None) -> list[int]:
        """The tokens that may follow ``generated`` (the decoder's output after its start token) in
        a record of any type, or of ``element_type``."""
        key = (element_type, *generated)
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        root = self._root if element_type is None else self._roots.get(element_type)
        node: dict[Any, Any] | None = root if root is not None else self._root
        for token in key[1:]:
            assert node is not None  # the walk stops where it leaves the grammar
            if node.get("free"):
                break
            node = node.get(token)
            if node is None or token == self.eos:
                node = None
                break
        if node is None:
            out = [self.eos]  # finished (or off the grammar, which constrained generation cannot reach)
        elif node.get("free"):
            out = list(range(self.vocab))
        else:
            out = [k for k in node if k != "free"]
        if len(self._memo) < 100_000:
            self._memo[key] = out
        return out


def _allowed(grammar: RecordGrammar, types: Sequence[ElementType | None], row: int, ids: Any) -> list[int]:
    """``generate``'s prefix_allowed_tokens_fn: ``ids`` starts with the decoder's start token."""
    return grammar.allowed(ids[1:].tolist(), types[row])


def same_record(a: Element, b: Element) -> bool:
    """Whether two elements agree on type and every attribute their type carries (the exact-match metric)."""
    return a.type == b.type and all(getattr(a, n) == getattr(b, n) for n in attributes_of(a.type))


# --- tokenizer, checkpoints ---------------------------------------------------------------------


def build_tokenizer() -> Any:
    """The decoder's byte-level tokenizer, built offline (vocab: pad, eos, unk + 256 bytes)."""
    try:
        from transformers import ByT5Tokenizer
    except ImportError:
        raise ReaderError("the reader needs transformers: pip install 'caap[vision]'") from None
    return ByT5Tokenizer(extra_ids=0)  # no sentinel tokens: we never mask spans


def resolve_device(device: str | None) -> str:
    """``None``/``"auto"`` → cuda when present, else cpu; ``"0"`` → ``"cuda:0"``; anything else as given."""
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).isdigit():
        return f"cuda:{device}"
    return str(device)


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """No per-file progress bars while saving and loading (restored afterwards)."""
    from transformers.utils import logging as hf_logging

    was = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was:
            hf_logging.enable_progress_bar()


@dataclass(frozen=True)
class ReaderSpec:
    """How a checkpoint sees and writes: everything inference must repeat exactly from training."""

    alphabet: str  # the CTC head's characters (``caap.observe.read.ctc.Alphabet``)
    patch: tuple[int, int] = DEFAULT_PATCH
    max_patches: int = 1024  # per element crop; larger crops are scaled down to fit
    mask: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_MASK))
    max_new_tokens: int = 32  # decoder generation length (the longest record seen in training)
    decoder_text: bool = False  # whether the decoder also writes the text field

    def to_meta(self) -> dict[str, Any]:
        return {"alphabet": self.alphabet, "patch": list(self.patch), "max_patches": self.max_patches,
                "semi_mask": dict(self.mask), "max_new_tokens": self.max_new_tokens,
                "decoder_text": self.decoder_text}

    @classmethod
    def from_meta(cls, meta: dict[str, Any]) -> ReaderSpec:
        return cls(alphabet=meta["alphabet"], patch=(int(meta["patch"][0]), int(meta["patch"][1])),
                   max_patches=int(meta["max_patches"]), mask={**DEFAULT_MASK, **meta["semi_mask"]},
                   max_new_tokens=int(meta["max_new_tokens"]), decoder_text=bool(meta["decoder_text"]))


def save_checkpoint(model: Any, directory: str | Path, spec: ReaderSpec, extra: dict[str, Any] | None = None) -> Path:
    """Write a reader checkpoint directory (model + ``caap-reader.json``); the JSON goes last, so
    a directory without it was never completely written."""
    from caap import __version__

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / CHECKPOINT_FILE).unlink(missing_ok=True)
    with quiet_transformers():
        model.save_pretrained(directory)
    meta = {"format": CHECKPOINT_FORMAT, "target_format": TARGET_FORMAT, "caap_version": __version__,
            "tokenizer": "byt5-extra_ids0", **spec.to_meta(), **(extra or {})}
    tmp = directory / f".{CHECKPOINT_FILE}.tmp"
    tmp.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, directory / CHECKPOINT_FILE)
    return directory


def load_checkpoint_meta(directory: str | Path) -> dict[str, Any]:
    """``caap-reader.json`` of a checkpoint, validated; ReaderError naming the path otherwise."""
    directory = Path(directory)
    if not directory.exists():
        raise ReaderError(f"{directory}: reader checkpoint not found")
    if not directory.is_dir():
        raise ReaderError(f"{directory}: a reader checkpoint is a directory (save_pretrained output), not a file")
    path = directory / CHECKPOINT_FILE
    meta = read_json(path, ReaderError, missing=f"missing — {directory} is not a caap reader checkpoint",
                     unreadable="unreadable")
    if not isinstance(meta, dict):
        raise ReaderError(f"{path}: expected a JSON object")
    if meta.get("format") != CHECKPOINT_FORMAT or meta.get("target_format") != TARGET_FORMAT:
        raise ReaderError(f"{path}: format {meta.get('format')}/{meta.get('target_format')} is not supported "
                          f"(this caap reads {CHECKPOINT_FORMAT}/{TARGET_FORMAT}; format 1 readers had no CTC "
                          "head: train a new one with `caap train reader`)")

    def bad(field_name: str, what: str) -> ReaderError:
        return ReaderError(f"{path}: {field_name}: missing or not {what}")

    for name in ("max_patches", "max_new_tokens"):
        if not isinstance(meta.get(name), int) or isinstance(meta.get(name), bool) or meta[name] < 1:
            raise bad(name, "a positive integer")
    if not isinstance(meta.get("semi_mask"), dict):
        raise bad("semi_mask", "a mapping")
    unknown = set(meta["semi_mask"]) - set(DEFAULT_MASK)
    if unknown:
        raise ReaderError(f"{path}: semi_mask: unknown settings {sorted(unknown)} (known: {sorted(DEFAULT_MASK)})")
    patch = meta.get("patch")
    if not (isinstance(patch, list) and len(patch) == 2 and all(isinstance(v, int) and v > 0 for v in patch)):
        raise bad("patch", "[height, width] in px")
    if not isinstance(meta.get("alphabet"), str) or not meta["alphabet"]:
        raise bad("alphabet", "a non-empty string")
    if not isinstance(meta.get("decoder_text"), bool):
        raise bad("decoder_text", "true or false")
    return meta


def load_model(directory: str | Path, device: str = "cpu") -> Any:
    """The ``ReaderModel`` of a checkpoint, in eval mode, computing in float32 (shipped weights may be
    stored in float16 to halve their size)."""
    try:
        import torch

        from caap.observe.read.modeling import ReaderModel
    except ImportError:
        raise ReaderError("the reader needs torch and transformers: pip install 'caap[vision]'") from None
    try:
        with quiet_transformers():
            model = ReaderModel.from_pretrained(str(directory), local_files_only=True, dtype=torch.float32)
    except Exception as exc:  # OSError, safetensors and JSON errors of every kind for a corrupt directory
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ReaderError(
            f"{directory}: not a loadable reader checkpoint ({type(exc).__name__}: {first})") from None
    # transformers decorates .to() with functools.wraps(nn.Module.to), which mypy reads as unbound
    return model.to(device).eval()  # type: ignore[arg-type]


def token_budget(box: Sequence[int]) -> int:
    """The most bytes a record with text for ``box`` can usefully take (decoder_text checkpoints):
    the fields plus as many characters as fit in the box at a tiny font (2.5 px per character, 8 px
    per line), twice over for multi-byte UTF-8 — a looping generation stops there."""
    width, height = max(int(box[2]) - int(box[0]), 1), max(int(box[3]) - int(box[1]), 1)
    return 24 + 2 * math.ceil(width / 2.5) * math.ceil(height / 8)


# --- the reader ---------------------------------------------------------------------------------


@dataclass
class Reading:
    """Everything one element's reading produced, before it becomes an ``Element``."""

    record: str  # the decoder's generation (target format)
    text: str | None  # the CTC text (lines joined for a text area); None if no line was found
    confidence: float  # the CTC confidence (lowest over lines)


class Reader:
    """A reader checkpoint loaded once; ``read`` reads every element of a screen with a few encoder
    passes over crops of similar size and one batched generation (``infer``; at most ``chunk_size``
    crops per batch, ``pad_waste``: see ``passes``; ``float("inf")``: one pass per ``chunk_size``).
    ``constrained``: the decoder writes only records of the target format (``RecordGrammar``)."""

    lm: CharLM | None  # the character model the CTC texts are searched with (charlm)
    chooser: TextChooser | None  # picks the reader's or PP-OCR's text (text_choice)
    memo: ReadingMemo | None  # readings of crops seen before (caap.observe.memo)

    def __init__(self, checkpoint: str | Path, *, device: str | None = "cpu", chunk_size: int = 64,
                 constrained: bool = True, pad_waste: float = 1.25, lm: bool = True, chooser: bool = True,
                 memo: int = 0) -> None:
        if chunk_size < 1:
            raise ReaderError(f"chunk_size must be at least 1, got {chunk_size}")
        path = Path(checkpoint)
        meta = load_checkpoint_meta(path)
        device = resolve_device(device)
        self._bind(load_model(path, device), ReaderSpec.from_meta(meta), build_tokenizer(), path=path, device=device,
                   chunk_size=chunk_size, constrained=constrained, pad_waste=pad_waste, meta=meta)
        if lm and (path / LM_FILE).is_file():
            try:
                self.lm = CharLM.load(path / LM_FILE)
            except CharLMError as exc:
                raise ReaderError(str(exc)) from None
        if chooser and (path / CHOICE_FILE).is_file():
            try:
                self.chooser = TextChooser.load(path / CHOICE_FILE)
            except TextChoiceError as exc:
                raise ReaderError(str(exc)) from None
        if getattr(self.model, "ctc_classes", None) != self.alphabet.size:
            raise ReaderError(f"{self.path}: the CTC head has {getattr(self.model, 'ctc_classes', None)} classes "
                              f"but the alphabet in {CHECKPOINT_FILE} needs {self.alphabet.size}")
        # Only here, on a checkpoint's frozen weights: a model being trained reads differently each time.
        self.memo = memo_of(memo)

    @classmethod
    def in_memory(cls, model: Any, spec: ReaderSpec, tokenizer: Any, *, path: Path, device: str) -> Reader:
        """A reader around a model being trained, read through the same code as a checkpoint."""
        reader = cls.__new__(cls)
        reader._bind(model, spec, tokenizer, path=path, device=device)
        return reader

    def _bind(self, model: Any, spec: ReaderSpec, tokenizer: Any, *, path: Path, device: str,
              chunk_size: int = 64, constrained: bool = True, pad_waste: float = 1.25,
              meta: dict[str, Any] | None = None) -> None:
        from caap.observe.read.ctc import Alphabet

        self.path, self.spec, self.meta = path, spec, meta if meta is not None else spec.to_meta()
        self.alphabet = Alphabet(spec.alphabet)
        self.model, self.tokenizer, self.device = model, tokenizer, device
        self.chunk_size, self.pad_waste = chunk_size, pad_waste
        self.grammar = RecordGrammar(tokenizer, text=spec.decoder_text) if constrained else None
        self.last_timings_ms: dict[str, float] = {}
        self.last_readings: list[Reading] = []
        self.lm = None
        self.chooser = None
        self.keep_log_probs = False  # infer() keeps each crop's CTC log-probabilities (for tuning)
        self.last_log_probs: list[Any] = []
        self.memo = None

    # -- the model passes -------------------------------------------------------------------------

    def _crops(self, image: Image.Image, boxes: Sequence[Box]) -> list[Image.Image]:
        rgb = rgb_pixels(image)
        return [semi_mask(rgb, box, **self.spec.mask) for box in boxes]

    def passes(self, crops: Sequence[Image.Image]) -> list[list[int]]:
        """Crop indices grouped into encoder passes: sorted by patch grid, a pass closed where
        padding its crops to the largest would cost more than ``pad_waste`` times their own patches
        (or at ``chunk_size`` crops). One batch pads every crop to the largest grid of the screen
        — a text area or a wide line next to twenty small buttons: 2/3 of the encoder's work was
        padding on text-heavy screens (measured)."""
        from caap.observe.read.patches import grid_size

        limit = self.spec.max_patches
        shapes = [grid_size(c.width, c.height, self.spec.patch) for c in crops]
        order = sorted(range(len(crops)), key=lambda i: (shapes[i][0], shapes[i][1], i))
        groups: list[list[int]] = []
        rows = cols = real = 0
        for i in order:
            r, c = shapes[i]
            size = min(r * c, limit)
            if groups and len(groups[-1]) < self.chunk_size:
                grown = (len(groups[-1]) + 1) * min(max(rows, r) * max(cols, c), limit)
                if grown <= self.pad_waste * (real + size):
                    groups[-1].append(i)
                    rows, cols, real = max(rows, r), max(cols, c), real + size
                    continue
            groups.append([i])
            rows, cols, real = r, c, size
        return groups

    def colours(self, image: Image.Image, boxes: Sequence[Box]) -> np.ndarray | None:
        """The colour statistics ``infer`` hands the decoder, where the model's colour set is
        measured on the screenshot (``box``); None where it comes from the crops themselves."""
        if getattr(self.model, "colour_set", None) != "box":
            return None
        return box_colours(rgb_pixels(image), boxes)

    def infer(self, crops: Sequence[Image.Image], generate: Sequence[bool], max_new_tokens: int,
              types: Sequence[ElementType | None] | None = None,
              colours: np.ndarray | None = None) -> tuple[list[Any], list[str | None]]:
        """CTC readings for every crop and the decoder's generation for those with ``generate``
        set (None for the others): encoder passes over crops of similar size (``passes``), then
        one batched generation over all of them; ``types``: per crop, the type whose record the
        decoder must write (None: any type; needs the grammar); ``colours``: ``self.colours`` of
        the crops' boxes (needed to generate with a ``box`` colour set). With a ``memo``, crops
        read before (the same pixels, type and settings) take their earlier reading and only the
        others go through the model."""
        if self.memo is None:
            readings, records, kept = self._infer(crops, generate, max_new_tokens, types, colours,
                                                  keep=self.keep_log_probs)
            self.last_log_probs = kept if self.keep_log_probs else []
            return readings, records
        fusion = self.lm.fusion if self.lm is not None else None
        # Types matter only where the decoder writes a record (the hints may cover only those crops).
        wanted = [types[i] if types is not None and generate[i] else None for i in range(len(crops))]
        keep = self.keep_log_probs  # the CTC frames are most of a reading's size: kept only where asked for
        keys = [pixel_key(np.asarray(crop), crop.mode, generate[i], max_new_tokens if generate[i] else None,
                          wanted[i], colours[i] if colours is not None else None, id(self.lm), fusion, keep)
                for i, crop in enumerate(crops)]

        def read(todo: list[int]) -> list[tuple[Any, Any, str | None]]:
            readings, records, kept = self._infer(
                [crops[i] for i in todo], [generate[i] for i in todo], max_new_tokens,
                [wanted[i] for i in todo] if types is not None else None,
                colours[todo] if colours is not None else None, keep=keep)
            return list(zip(readings, kept, records, strict=True))

        done = self.memo.read_through(keys, read)
        self.last_log_probs = [entry[1] for entry in done] if keep else []
        return [entry[0] for entry in done], [entry[2] for entry in done]

    def _infer(self, crops: Sequence[Image.Image], generate: Sequence[bool], max_new_tokens: int,
               types: Sequence[ElementType | None] | None, colours: np.ndarray | None, *,
               keep: bool) -> tuple[list[Any], list[str | None], list[Any]]:
        """``infer`` through the model for every crop; also each crop's CTC log-probabilities
        where ``keep`` is set (None otherwise)."""
        import torch

        from caap.observe.read.ctc import CtcReading, beam_decode, greedy_decode
        from caap.observe.read.patches import patchify

        readings: list[Any] = [None] * len(crops)
        kept: list[Any] = [None] * len(crops)
        fusion = self.lm.fusion if self.lm is not None else None
        hidden: dict[int, torch.Tensor] = {}  # encoder output of each crop to generate for, unpadded
        if colours is None and any(generate) and getattr(self.model, "colour_set", None) == "box":
            raise ReaderError("this reader's decoder reads colours measured on the screenshot: pass "
                              "colours=reader.colours(image, boxes)")
        with torch.inference_mode():
            for group in self.passes(crops):
                grid = patchify([crops[i] for i in group], self.spec.patch, self.spec.max_patches,
                                None if colours is None else colours[group])
                patches = grid.flattened_patches.to(self.device)
                mask = grid.attention_mask.to(self.device)
                encoded = self.model.encode(patches, mask).last_hidden_state
                memory = self.model.decoder_memory(encoded, grid.colour) if any(generate[i] for i in group) else None
                log_probs, lengths = self.model.ctc_log_probs(encoded, mask, patches)
                log_probs, lengths = log_probs.cpu(), lengths.tolist()
                for row, (i, reading) in enumerate(zip(group, greedy_decode(log_probs, lengths, self.alphabet),
                                                       strict=True)):
                    if keep:
                        kept[i] = log_probs[row, : lengths[row]].numpy()
                    if fusion is not None and reading.confidence < fusion.below:
                        # The greedy confidence stays: it says how clear the pixels were.
                        text = beam_decode(log_probs[row].numpy(), lengths[row], self.alphabet, self.lm,
                                           weight=fusion.weight, bonus=fusion.bonus, beam=fusion.beam)
                        reading = CtcReading(text, reading.confidence)
                    readings[i] = reading
                for row, i in enumerate(group):
                    if generate[i]:
                        hidden[i] = memory[row, : int(mask[row].sum().item())]  # type: ignore[index]
            records: list[str | None] = [None] * len(crops)
            # Chunks of like lengths: a chunk's cross-attention pads every crop to its longest.
            wanted = sorted(hidden, key=lambda i: (hidden[i].shape[0], i))
            for lo in range(0, len(wanted), self.chunk_size):
                chunk = wanted[lo:lo + self.chunk_size]
                records_of = self._generate([hidden[i] for i in chunk],
                                            [types[i] if types is not None else None for i in chunk], max_new_tokens)
                for i, record in zip(chunk, records_of, strict=True):
                    records[i] = record
        return readings, records, kept

    def _generate(self, states: list[Any], types: list[ElementType | None], max_new_tokens: int) -> list[str]:
        """The decoder's records for encoder outputs of different lengths, in one batch."""
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        longest = max(s.shape[0] for s in states)
        batch = states[0].new_zeros(len(states), longest, states[0].shape[-1])
        mask = torch.zeros(len(states), longest, device=batch.device)
        for row, state in enumerate(states):
            batch[row, : state.shape[0]] = state
            mask[row, : state.shape[0]] = 1.0
        constrain = {}
        if self.grammar is not None:
            constrain["prefix_allowed_tokens_fn"] = partial(_allowed, self.grammar, types)
            if not self.spec.decoder_text:
                max_new_tokens = min(max_new_tokens, self.grammar.longest)
        out = self.model.generate(encoder_outputs=BaseModelOutput(last_hidden_state=batch), attention_mask=mask,
                                  max_new_tokens=max_new_tokens, do_sample=False, num_beams=1, use_cache=True,
                                  **constrain)
        return self.tokenizer.batch_decode(out.cpu().tolist(), skip_special_tokens=True)

    # -- reading a screen ---------------------------------------------------------------------------

    def read(self, image: Image.Image, boxes: Sequence[Sequence[int] | Element],
             type_hints: Sequence[ElementType | str | None] | None = None, *,
             follow_hints: bool = False) -> list[Element]:
        """One element per box, in the given order, with the box kept and the attributes read.

        ``boxes`` are ``[x1, y1, x2, y2]`` in ``image`` pixels, or detector ``Element``s (their box,
        score and id are kept and their type is the hint). ``type_hints`` (one per box, or None):
        a hinted text area is read line by line; an unreadable record falls back to the hinted
        type with its attributes unknown instead of ``unknown``. ``follow_hints``: the decoder
        writes the record of the hinted type (the detector's class decides the type) instead of
        choosing one.
        """
        start = time.perf_counter()
        if type_hints is not None and len(type_hints) != len(boxes):
            raise ReaderError(f"type_hints: {len(type_hints)} hints for {len(boxes)} boxes")
        rgb = image if image.mode == "RGB" else image.convert("RGB")
        plain: list[Box] = []
        hints: list[ElementType | None] = []
        for i, item in enumerate(boxes):
            try:
                box = item.bbox if isinstance(item, Element) else as_box(item)
            except (TypeError, ValueError) as exc:
                raise ReaderError(f"boxes[{i}]: {exc}") from None
            if box[0] >= rgb.width or box[1] >= rgb.height or box[2] <= 0 or box[3] <= 0:
                raise ReaderError(f"boxes[{i}]: {list(box)} lies outside the {rgb.width}x{rgb.height} image")
            plain.append(box)
            hint = type_hints[i] if type_hints is not None else (item.type if isinstance(item, Element) else None)
            hints.append(_TYPES.get(str(hint)) if hint else None)  # StrEnum: str() is the value
        t0 = time.perf_counter()
        lines = {i: text_lines(rgb, box) for i, box in enumerate(plain) if hints[i] == ElementType.TEXT_AREA}
        crop_boxes = list(plain) + [line for i in sorted(lines) for line in lines[i]]
        generate = [True] * len(plain) + [False] * (len(crop_boxes) - len(plain))
        budget = self.spec.max_new_tokens
        if self.spec.decoder_text and plain:
            budget = min(max(token_budget(box) for box in plain), 4 * self.spec.max_new_tokens + 256)
        crops = self._crops(rgb, crop_boxes)
        t1 = time.perf_counter()
        forced = hints if follow_hints and self.grammar is not None else None
        ctc, records = self.infer(crops, generate, budget, forced, self.colours(rgb, crop_boxes)) if crops else ([], [])
        t2 = time.perf_counter()
        readings = []
        at = len(plain)
        for i in range(len(plain)):
            record = records[i] or ""
            if i in lines:
                parts = ctc[at:at + len(lines[i])]
                at += len(lines[i])
                text = LINE_SEPARATOR.join(p.text for p in parts if p.text) if parts else ""
                confidence = min((p.confidence for p in parts), default=1.0)
            else:
                text, confidence = ctc[i].text, ctc[i].confidence
            readings.append(Reading(record, text, confidence))
        elements = [self._element(box, reading, hints[i], boxes[i]) for i, (box, reading) in
                    enumerate(zip(plain, readings, strict=True))]
        self.last_readings = readings
        self.last_timings_ms = {"prepare": round((t1 - t0) * 1000, 2), "infer": round((t2 - t1) * 1000, 2),
                                "total": round((time.perf_counter() - start) * 1000, 2)}
        return elements

    def _element(self, box: Box, reading: Reading, hint: ElementType | None, source: Any) -> Element:
        element = decode_target(reading.record, box)
        if element.type is ElementType.UNKNOWN:
            element = Element(type=hint or ElementType.UNKNOWN, bbox=box)
        if TEXT in attributes_of(element.type) and not (self.spec.decoder_text and element.text is not None):
            element.text = reading.text
        if element.text is not None:
            element.text_confidence = min(max(reading.confidence, 0.0), 1.0)
        if isinstance(source, Element):
            element.score, element.id = source.score, source.id
        return element
