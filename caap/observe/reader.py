"""The element reader: a Pix2Struct model that turns one semi-masked screenshot per element into a
short structured record (CAAP §3.1, "UI element understanding").

Target format (version 1) — what the model learns to generate, byte by byte::

    TYPE(|KEY=VALUE)*

    TYPE   an ``ElementType`` value: button, text, icon, ...
    KEY    one letter per attribute: c=checked  f=focused  h=highlighted  s=subtype  t=text
    VALUE  booleans 0/1; subtype a taxonomy name; text escaped (below)

    button|f=0|t=Submit            checkbox|c=1|t=Remember me       icon|c=0|s=important
    text|h=1|t=a\\|b\\=c\\nd        scrollbar                        text_area|f=1|t=

Fields come in the fixed order c, f, h, s, t — text last, so a generation cut short by
``max_new_tokens`` loses only the end of the text. Only the attributes the type carries
(``taxonomy.TYPE_ATTRIBUTES``) appear, and only when known: a null attribute is omitted, an empty
text is ``t=``. In text, ``\\`` ``|`` ``=`` newline, carriage return and tab are written ``\\\\``
``\\|`` ``\\=`` ``\\n`` ``\\r`` ``\\t``; every other character (any Unicode) is written as itself —
the tokenizer is byte-level, so there is no out-of-vocabulary text.

Decoding never raises on a generation: one whose first field is not a type name becomes
``Element(type=unknown, text=<the raw generation>)``; unknown keys, attributes the type does not
carry, booleans other than 0/1, subtypes outside the taxonomy and repeated keys (after the first)
are dropped; an unknown escape ``\\x`` reads as ``x`` and a trailing ``\\`` as itself.

Checkpoint directory: ``save_pretrained`` output of ``Pix2StructForConditionalGeneration`` plus
``caap-reader.json`` (format version, max_patches, semi-mask settings, max_new_tokens). The
tokenizer (``ByT5Tokenizer(extra_ids=0)``) and the image processor are rebuilt from those settings
by ``build_processing`` — nothing is ever downloaded.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PIL import Image

from caap.elements import Element
from caap.files import read_json
from caap.geometry import Box, as_box
from caap.observe.semimask import semi_mask
from caap.taxonomy import (
    BOOLEAN_ATTRIBUTES,
    CHECKED,
    FOCUSED,
    HIGHLIGHTED,
    SUBTYPE,
    TEXT,
    ElementType,
    attributes_of,
    subtypes_of,
)

if TYPE_CHECKING:
    import torch

# Never reach for the model hub unless the user explicitly allows it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

TARGET_FORMAT = 1
CHECKPOINT_FORMAT = 1
CHECKPOINT_FILE = "caap-reader.json"
DEFAULT_MASK: dict[str, Any] = {"darken": 0.5, "outline_px": 2, "outline_rgb": [255, 0, 0], "context": None}

# Attribute → key letter, in the order fields are written (text last).
KEYS: dict[str, str] = {CHECKED: "c", FOCUSED: "f", HIGHLIGHTED: "h", SUBTYPE: "s", TEXT: "t"}
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


def same_record(a: Element, b: Element) -> bool:
    """Whether two elements agree on type and every attribute their type carries (the exact-match metric)."""
    return a.type == b.type and all(getattr(a, n) == getattr(b, n) for n in attributes_of(a.type))


# --- tokenizer, image processor, generation -----------------------------------------------------


def build_processing(max_patches: int) -> tuple[Any, Any]:
    """The byte-level tokenizer and the Pix2Struct image processor; one function for training and
    inference, both built offline."""
    if not isinstance(max_patches, int) or max_patches < 1:
        raise ReaderError(f"max_patches must be a positive integer, got {max_patches!r}")
    try:
        from transformers import ByT5Tokenizer, Pix2StructImageProcessor
    except ImportError:
        raise ReaderError("the reader needs transformers and torchvision: pip install 'caap[vision]'") from None
    # extra_ids=0: no sentinel tokens (we never mask spans); vocab = pad, eos, unk + 256 bytes.
    tokenizer = ByT5Tokenizer(extra_ids=0)
    processor = Pix2StructImageProcessor(is_vqa=False, max_patches=max_patches,
                                         patch_size={"height": 16, "width": 16})
    return tokenizer, processor


def prepare_images(images: Sequence[Image.Image], processor: Any, max_patches: int) -> dict[str, torch.Tensor]:
    """``flattened_patches`` and ``attention_mask`` for a batch of (already semi-masked) images."""
    batch = processor(images=list(images), return_tensors="pt", max_patches=max_patches)
    return {"flattened_patches": batch["flattened_patches"], "attention_mask": batch["attention_mask"]}


def generate_texts(model: Any, tokenizer: Any, inputs: dict[str, torch.Tensor], max_new_tokens: int) -> list[str]:
    """Greedy generation for a batch; the decoded (unparsed) target strings."""
    import torch

    device = next(model.parameters()).device
    with torch.inference_mode():
        out = model.generate(
            flattened_patches=inputs["flattened_patches"].to(device),
            attention_mask=inputs["attention_mask"].to(device),
            max_new_tokens=max_new_tokens, do_sample=False, num_beams=1, use_cache=True,
        )
    return tokenizer.batch_decode(out.cpu().tolist(), skip_special_tokens=True)


def resolve_device(device: str | None) -> str:
    """``None``/``"auto"`` → cuda when present, else cpu; ``"0"`` → ``"cuda:0"``; anything else as given."""
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if str(device).isdigit():
        return f"cuda:{device}"
    return str(device)


# --- checkpoints --------------------------------------------------------------------------------


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


def save_checkpoint(model: Any, directory: str | Path, *, max_patches: int, mask: dict[str, Any],
                    max_new_tokens: int, extra: dict[str, Any] | None = None) -> Path:
    """Write a reader checkpoint directory (model + ``caap-reader.json``)."""
    from caap import __version__

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    with quiet_transformers():
        model.save_pretrained(directory)
    meta = {"format": CHECKPOINT_FORMAT, "target_format": TARGET_FORMAT, "caap_version": __version__,
            "tokenizer": "byt5-extra_ids0", "max_patches": int(max_patches), "semi_mask": dict(mask),
            "max_new_tokens": int(max_new_tokens), **(extra or {})}
    tmp = directory / f".{CHECKPOINT_FILE}.tmp"
    tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
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
                          f"(this caap reads {CHECKPOINT_FORMAT}/{TARGET_FORMAT})")
    for field, kind in (("max_patches", int), ("max_new_tokens", int), ("semi_mask", dict)):
        if not isinstance(meta.get(field), kind) or isinstance(meta.get(field), bool):
            raise ReaderError(f"{path}: {field}: missing or not a{'n integer' if kind is int else ' mapping'}")
    unknown = set(meta["semi_mask"]) - set(DEFAULT_MASK)
    if unknown:
        raise ReaderError(f"{path}: semi_mask: unknown settings {sorted(unknown)} (known: {sorted(DEFAULT_MASK)})")
    return meta


def load_model(directory: str | Path, device: str = "cpu") -> Any:
    """The Pix2Struct model of a checkpoint (or a base model directory), in eval mode."""
    try:
        from transformers import Pix2StructForConditionalGeneration
    except ImportError:
        raise ReaderError("the reader needs transformers: pip install 'caap[vision]'") from None
    import torch
    import transformers

    # Always compute in float32 (shipped weights may be stored in float16 to halve their size);
    # transformers renamed the argument in 4.56.
    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    dtype = {"dtype": torch.float32} if (major, minor) >= (4, 56) else {"torch_dtype": torch.float32}
    try:
        with quiet_transformers():
            model = Pix2StructForConditionalGeneration.from_pretrained(str(directory), local_files_only=True,
                                                                       **dtype)
    except Exception as exc:  # OSError, safetensors and JSON errors of every kind for a corrupt directory
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ReaderError(
            f"{directory}: not a loadable Pix2Struct checkpoint ({type(exc).__name__}: {first})") from None
    return model.to(device).eval()


def token_budget(box: Sequence[int]) -> int:
    """The most bytes a generation for ``box`` can usefully take: the record's fields plus as many
    characters as fit in the box at a tiny font (2.5 px per character, 8 px per line), twice over for
    multi-byte UTF-8. A batch stops at the largest budget of its boxes, so a generation that loops
    (a weak or confused model) cannot cost more than the screen's text could."""
    width, height = max(int(box[2]) - int(box[0]), 1), max(int(box[3]) - int(box[1]), 1)
    return 24 + 2 * math.ceil(width / 2.5) * math.ceil(height / 8)


# --- the reader ---------------------------------------------------------------------------------


class Reader:
    """A reader checkpoint loaded once; ``read`` reads every element of a screen in one batched
    ``generate`` call (split into chunks of ``chunk_size`` only on crowded screens)."""

    def __init__(self, checkpoint: str | Path, *, device: str | None = "cpu", chunk_size: int = 64) -> None:
        self.path = Path(checkpoint)
        self.meta = load_checkpoint_meta(self.path)
        self.max_patches: int = self.meta["max_patches"]
        self.max_new_tokens: int = self.meta["max_new_tokens"]
        self.mask: dict[str, Any] = {**DEFAULT_MASK, **self.meta["semi_mask"]}
        if chunk_size < 1:
            raise ReaderError(f"chunk_size must be at least 1, got {chunk_size}")
        self.chunk_size = chunk_size
        self.device = resolve_device(device)
        self.tokenizer, self.processor = build_processing(self.max_patches)
        self.model = load_model(self.path, self.device)
        self.last_timings_ms: dict[str, float] = {}

    def read(self, image: Image.Image, boxes: Sequence[Sequence[int] | Element],
             type_hints: Sequence[ElementType | str | None] | None = None) -> list[Element]:
        """One element per box, in the given order, with the box kept and the attributes read.

        ``boxes`` are ``[x1, y1, x2, y2]`` in ``image`` pixels, or detector ``Element``s (their box,
        score and id are kept and their type is the hint). ``type_hints`` (one per box, or None)
        are used only when a generation is unreadable: the element then gets the hinted type with
        its attributes unknown instead of ``unknown``.
        """
        start = time.perf_counter()
        if type_hints is not None and len(type_hints) != len(boxes):
            raise ReaderError(f"type_hints: {len(type_hints)} hints for {len(boxes)} boxes")
        rgb = image.convert("RGB")
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
        texts: list[str] = []
        prepare_s = generate_s = 0.0
        for lo in range(0, len(plain), self.chunk_size):
            t0 = time.perf_counter()
            chunk = plain[lo:lo + self.chunk_size]
            masked = [semi_mask(rgb, box, **self.mask) for box in chunk]
            inputs = prepare_images(masked, self.processor, self.max_patches)
            t1 = time.perf_counter()
            budget = min(self.max_new_tokens, max(token_budget(box) for box in chunk))
            texts.extend(generate_texts(self.model, self.tokenizer, inputs, budget))
            prepare_s += t1 - t0
            generate_s += time.perf_counter() - t1
        elements = []
        for i, (box, text) in enumerate(zip(plain, texts, strict=True)):
            element = decode_target(text, box)
            if element.type is ElementType.UNKNOWN and hints[i] not in (None, ElementType.UNKNOWN):
                element = Element(type=hints[i], bbox=box)
            src = boxes[i]
            if isinstance(src, Element):
                element.score, element.id = src.score, src.id
            elements.append(element)
        self.last_texts = texts  # raw generations of the last call, for debugging and evaluation
        self.last_timings_ms = {"prepare": round(prepare_s * 1000, 2), "generate": round(generate_s * 1000, 2),
                                "total": round((time.perf_counter() - start) * 1000, 2)}
        return elements
