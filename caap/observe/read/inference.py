"""The element reader: Pix2Struct with a CTC text head, reading one semi-masked element crop per
detected box into a short structured record (CAAP §3.1, "UI element understanding").

Input: the screenshot semi-masked around the element (``caap.observe.read.processing``: the element
untouched, a frame just outside its box, everything else darkened), cropped to the element plus a
few px of context and cut at native resolution into narrow patches (``caap.observe.read.processing``).
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

The record format is ``caap.observe.read.target``; the checkpoint directory and everything
inference must repeat from training, ``caap.observe.read.configuration``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.geometry import Box, as_box
from caap.observe.glyphs import GLYPH_FILE, GlyphBank, GlyphError
from caap.observe.memo import ReadingMemo, memo_of, pixel_key
from caap.observe.primitives import rgb_pixels
from caap.observe.read.charlm import LM_FILE, CharLM, CharLMError
from caap.observe.read.configuration import (
    CHECKPOINT_FILE,
    ReaderError,
    ReaderSpec,
    build_tokenizer,
    load_checkpoint_meta,
    load_model,
    resolve_device,
)
from caap.observe.read.generate import forced_greedy
from caap.observe.read.graph import RUNTIMES, GraphDecoder, GraphEncoder, decoder_pass, graph_for
from caap.observe.read.graph import available as graph_available
from caap.observe.read.lines import LINE_SEPARATOR, text_lines
from caap.observe.read.processing import box_colours, grid_size, patchify, semi_mask
from caap.observe.read.states import HEAD_FILE, StateHead, StateHeadError
from caap.observe.read.target import TYPES, RecordGrammar, _allowed, decode_target
from caap.observe.text_choice import CHOICE_FILE, TextChoiceError, TextChoosers
from caap.taxonomy import TEXT, ElementType, attributes_of


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


@dataclass
class Readings:
    """One ``Reader.read`` of a screen: per box, in the order given, the element it became and the
    reading it came from; each crop's CTC log-probabilities (frames × alphabet) where they were
    asked for (``log_probs``: one per box, then one per text-area line; empty otherwise); and the
    milliseconds spent preparing crops and in the models."""

    elements: list[Element]
    readings: list[Reading]
    log_probs: list[Any] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.elements)

    def frames(self, index: int) -> Any | None:
        """The CTC log-probabilities of box ``index``'s crop, None where they were not kept."""
        return self.log_probs[index] if index < len(self.log_probs) else None


class Reader:
    """A reader checkpoint loaded once; ``read`` reads every element of a screen with a few encoder
    passes over crops of similar size and one batched generation (``infer``; at most ``chunk_size``
    crops per batch, ``pad_waste``: see ``passes``; ``float("inf")``: one pass per ``chunk_size``).
    ``constrained``: the decoder writes only records of the target format (``RecordGrammar``)."""

    lm: CharLM | None  # the character model the CTC texts are searched with (charlm)
    choosers: TextChoosers | None  # pick the reader's or PP-OCR's text, one per kind of screen (text_choice)
    state_head: StateHead | None  # reads controls' states from their pixels (states)
    glyphs: GlyphBank | None  # names the icons drawn as glyphs it holds (caap.observe.glyphs)
    memo: ReadingMemo | None  # readings of crops seen before (caap.observe.memo)
    graph: GraphEncoder | None  # the encoder pass in ONNX Runtime (caap.observe.read.graph), else torch's
    decoder: Any  # one decoder pass over whole records: GraphDecoder, or decoder_pass (torch)
    runtime: str  # what runs the encoder pass: onnx or torch

    def __init__(self, checkpoint: str | Path, *, device: str | None = "cpu", chunk_size: int = 64,
                 constrained: bool = True, pad_waste: float = 1.25, lm: bool = True, chooser: bool = True,
                 memo: int = 0, runtime: str = "auto") -> None:
        if chunk_size < 1:
            raise ReaderError(f"chunk_size must be at least 1, got {chunk_size}")
        if runtime not in RUNTIMES:
            raise ReaderError(f"reader runtime must be one of {RUNTIMES}, not {runtime!r}")
        path = Path(checkpoint)
        meta = load_checkpoint_meta(path)
        device = resolve_device(device)
        self._bind(load_model(path, device), ReaderSpec.from_meta(meta), build_tokenizer(), path=path, device=device,
                   chunk_size=chunk_size, constrained=constrained, pad_waste=pad_waste, meta=meta)
        self._use_runtime(runtime)
        if lm and (path / LM_FILE).is_file():
            try:
                self.lm = CharLM.load(path / LM_FILE)
            except CharLMError as exc:
                raise ReaderError(str(exc)) from None
        if chooser and (path / CHOICE_FILE).is_file():
            try:
                self.choosers = TextChoosers.load(path / CHOICE_FILE)
            except TextChoiceError as exc:
                raise ReaderError(str(exc)) from None
        if (path / GLYPH_FILE).is_file():
            try:
                self.glyphs = GlyphBank.load(path / GLYPH_FILE)
            except GlyphError as exc:
                raise ReaderError(str(exc)) from None
        if (path / HEAD_FILE).is_file():
            try:
                self.state_head = StateHead.load(path)
            except StateHeadError as exc:
                raise ReaderError(str(exc)) from None
        if getattr(self.model, "ctc_classes", None) != self.alphabet.size:
            raise ReaderError(f"{self.path}: the CTC head has {getattr(self.model, 'ctc_classes', None)} classes "
                              f"but the alphabet in {CHECKPOINT_FILE} needs {self.alphabet.size}")
        # Only here, on a checkpoint's frozen weights: a model being trained reads differently each time.
        self.memo = memo_of(memo)

    def _use_runtime(self, runtime: str) -> None:
        """Run the encoder pass in ONNX Runtime (``caap.observe.read.graph``) where ``runtime`` asks
        for it, or on the CPU with ``auto`` where ONNX Runtime is installed; torch otherwise."""
        if runtime == "torch" or (runtime == "auto" and (self.device != "cpu" or not graph_available())):
            return
        if self.device != "cpu":
            raise ReaderError(f"the onnx reader runtime runs on the CPU, not on {self.device}: use runtime "
                              "'torch' (or 'auto') there")
        if not graph_available():
            raise ReaderError("the onnx reader runtime needs onnx and onnxruntime: pip install 'caap[vision]'")
        import torch

        threads = torch.get_num_threads()
        self.graph = GraphEncoder(graph_for(self.path, self.model, self.spec), threads=threads)
        self.decoder = GraphDecoder(graph_for(self.path, self.model, self.spec, part="decoder"), threads=threads)
        self.runtime = "onnx"

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
        self.lm = None
        self.choosers = None
        self.state_head = None
        self.glyphs = None
        self.memo = None
        self.graph = None
        self.decoder = decoder_pass(model)
        self.runtime = "torch"

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
              types: Sequence[ElementType | None] | None = None, colours: np.ndarray | None = None, *,
              log_probs: bool = False) -> tuple[list[Any], list[str | None], list[Any]]:
        """CTC readings for every crop and the decoder's generation for those with ``generate``
        set (None for the others): encoder passes over crops of similar size (``passes``), then
        one batched generation over all of them; ``types``: per crop, the type whose record the
        decoder must write (None: any type; needs the grammar); ``colours``: ``self.colours`` of
        the crops' boxes (needed to generate with a ``box`` colour set). With a ``memo``, crops
        read before (the same pixels, type and settings) take their earlier reading and only the
        others go through the model. The third list holds each crop's CTC log-probabilities
        where ``log_probs`` asks for them (None each otherwise)."""
        if self.memo is None:
            readings, records, kept = self._infer(crops, generate, max_new_tokens, types, colours, keep=log_probs)
            return readings, records, kept
        fusion = self.lm.fusion if self.lm is not None else None
        # Types matter only where the decoder writes a record (the hints may cover only those crops).
        wanted = [types[i] if types is not None and generate[i] else None for i in range(len(crops))]
        keep = log_probs  # the CTC frames are most of a reading's size: kept only where asked for
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
        return [entry[0] for entry in done], [entry[2] for entry in done], [entry[1] for entry in done]

    def _infer(self, crops: Sequence[Image.Image], generate: Sequence[bool], max_new_tokens: int,
               types: Sequence[ElementType | None] | None, colours: np.ndarray | None, *,
               keep: bool) -> tuple[list[Any], list[str | None], list[Any]]:
        """``infer`` through the model for every crop; also each crop's CTC log-probabilities
        where ``keep`` is set (None otherwise)."""
        import torch

        from caap.observe.read.ctc import CtcReading, beam_decode, greedy_decode

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
                memory: torch.Tensor | None
                if self.graph is not None:
                    memory, log_probs = self.graph(patches, mask, grid.colour, grid.shapes)
                    lengths = [cols * self.model.frames_per_column for _, cols in grid.shapes]
                else:
                    encoded = self.model.encode(patches, mask).last_hidden_state
                    memory = (self.model.decoder_memory(encoded, grid.colour) if any(generate[i] for i in group)
                              else None)
                    ctc, frames = self.model.ctc_log_probs(encoded, mask, patches)
                    log_probs, lengths = ctc.cpu(), frames.tolist()
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
            for chunk in self.generation_chunks({i: h.shape[0] for i, h in hidden.items()}):
                records_of = self._generate([hidden[i] for i in chunk],
                                            [types[i] if types is not None else None for i in chunk], max_new_tokens)
                for i, record in zip(chunk, records_of, strict=True):
                    records[i] = record
        return readings, records, kept

    def generation_chunks(self, lengths: dict[int, int]) -> list[list[int]]:
        """Crop indices (keys of ``lengths``, their encoder outputs' lengths) grouped into batched
        generations: sorted by length (a batch's cross-attention pads every crop to its longest),
        a batch closed where its padded memory would pass what ``chunk_size`` crops of the largest
        grid hold. Each generation costs about the same per step whatever its size (on a CPU the
        decoder's steps are small), so few large batches beat many: 67 records went in two
        generations of 64 and 3 before, one now."""
        budget = self.chunk_size * self.spec.max_patches
        chunks: list[list[int]] = []
        for i in sorted(lengths, key=lambda i: (lengths[i], i)):
            if chunks and (len(chunks[-1]) + 1) * max(lengths[i], 1) <= budget:
                chunks[-1].append(i)
            else:
                chunks.append([i])
        return chunks

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
        if self.grammar is not None and not self.spec.decoder_text:
            start = int(self.model.config.decoder_start_token_id)
            tokens = forced_greedy(self.decoder, batch, mask, self.grammar, types,
                                   min(max_new_tokens, self.grammar.longest), start)
            return self.tokenizer.batch_decode(tokens, skip_special_tokens=True)
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
             follow_hints: bool = False, log_probs: bool = False, states_by_head: bool = False) -> Readings:
        """One element per box, in the given order, with the box kept and the attributes read, and
        the readings behind them (``Readings``; ``log_probs``: with each crop's CTC frames).

        ``boxes`` are ``[x1, y1, x2, y2]`` in ``image`` pixels, or detector ``Element``s (their box,
        score and id are kept and their type is the hint). ``type_hints`` (one per box, or None):
        a hinted text area is read line by line; an unreadable record falls back to the hinted
        type with its attributes unknown instead of ``unknown``. ``follow_hints``: the decoder
        writes the record of the hinted type (the detector's class decides the type) instead of
        choosing one. ``states_by_head`` with ``follow_hints``: the state head reads the states
        afterwards (the observer's ``read_states`` step), so the decoder writes no record for a box
        whose type carries nothing but text and states the head reads (``record_free``): its
        element has the hinted type, the CTC text and no states until the head reads them.
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
            hints.append(TYPES.get(str(hint)) if hint else None)  # StrEnum: str() is the value
        t0 = time.perf_counter()
        lines = {i: text_lines(rgb, box) for i, box in enumerate(plain) if hints[i] == ElementType.TEXT_AREA}
        crop_boxes = list(plain) + [line for i in sorted(lines) for line in lines[i]]
        free = self.record_free() if follow_hints and states_by_head else frozenset()
        generate = [hints[i] not in free for i in range(len(plain))] + [False] * (len(crop_boxes) - len(plain))
        budget = self.spec.max_new_tokens
        if self.spec.decoder_text and plain:
            budget = min(max(token_budget(box) for box in plain), 4 * self.spec.max_new_tokens + 256)
        crops = self._crops(rgb, crop_boxes)
        t1 = time.perf_counter()
        forced = hints if follow_hints and self.grammar is not None else None
        ctc, records, frames = (self.infer(crops, generate, budget, forced, self.colours(rgb, crop_boxes),
                                           log_probs=log_probs) if crops else ([], [], []))
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
        timings = {"prepare": round((t1 - t0) * 1000, 2), "infer": round((t2 - t1) * 1000, 2),
                   "total": round((time.perf_counter() - start) * 1000, 2)}
        return Readings(elements, readings, list(frames) if log_probs else [], timings)

    def record_free(self) -> frozenset[ElementType]:
        """The types whose every attribute is the CTC text or a state the state head reads for that
        type: where the type is known and the head reads after, the decoder's record adds nothing.
        None without a state head, or where the decoder writes the text."""
        head = self.state_head
        if head is None or self.spec.decoder_text:
            return frozenset()
        return frozenset(t for t in ElementType if t != ElementType.UNKNOWN and attributes_of(t)
                         and all(a == TEXT or t.value in head.types_read.get(a, ()) for a in attributes_of(t)))

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
