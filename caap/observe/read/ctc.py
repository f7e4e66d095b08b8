"""The reader's CTC alphabet and decoding.

The CTC head (``caap.observe.read.modeling``) emits, for every frame of an element's left-to-right
sequence, a distribution over ``blank`` + the alphabet. Greedy decoding (best label per frame,
repeats collapsed, blanks dropped) is one pass and cannot loop, unlike an autoregressive decoder.

The alphabet is a list of characters stored in the checkpoint (``caap-reader.json``), built from
the training labels plus a fixed coverage set, so it is constructed offline and identical at
training and inference. Id 0 is the CTC blank, id 1 stands for any character outside the alphabet
(it decodes to U+FFFD, so an unreadable glyph shows as such instead of vanishing).
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

BLANK = 0
UNKNOWN = 1
UNKNOWN_CHAR = "\ufffd"

# Characters every alphabet holds, whether or not the training labels show them.
COVERAGE = (string.ascii_letters + string.digits + string.punctuation + " "
            + "•×▲▼–—‘’“”…éèêëáàâäíìîïóòôöúùûüçñßÉÜÖÄ€£¥°©®™±÷¶§¿¡")


class AlphabetError(ValueError):
    """An alphabet that cannot be used (empty, duplicated or reserved characters)."""


@dataclass(frozen=True)
class Alphabet:
    """Characters the CTC head can write; ids are positions + 2 (0 blank, 1 unknown)."""

    chars: str

    def __post_init__(self) -> None:
        if not self.chars:
            raise AlphabetError("the alphabet is empty")
        if len(set(self.chars)) != len(self.chars):
            raise AlphabetError("the alphabet repeats characters")
        if UNKNOWN_CHAR in self.chars:
            raise AlphabetError("U+FFFD is reserved for unknown characters")

    @classmethod
    def build(cls, texts: Iterable[str], extra: str = COVERAGE) -> Alphabet:
        """The coverage set plus every character of ``texts`` (newlines and tabs become spaces
        when read, so they are not characters of their own), in a stable order."""
        seen = dict.fromkeys(extra)
        for text in texts:
            seen.update(dict.fromkeys(normalise(text)))
        seen.pop(UNKNOWN_CHAR, None)
        return cls("".join(sorted(seen)))

    @property
    def size(self) -> int:
        """Output classes of the CTC head: blank, unknown and the characters."""
        return len(self.chars) + 2

    def encode(self, text: str) -> list[int]:
        index = self._index
        return [index.get(ch, UNKNOWN) for ch in normalise(text)]

    def decode_ids(self, ids: Iterable[int]) -> str:
        chars = self.chars
        return "".join(UNKNOWN_CHAR if i == UNKNOWN else chars[i - 2] for i in ids if i >= UNKNOWN)

    @property
    def _index(self) -> dict[str, int]:
        cached = self.__dict__.get("_index_cache")
        if cached is None:
            cached = {ch: i + 2 for i, ch in enumerate(self.chars)}
            object.__setattr__(self, "_index_cache", cached)
        return cached


def normalise(text: str) -> str:
    """Text as the CTC head writes it: one line, whitespace runs as one space, no edge spaces."""
    return " ".join(text.split())


@dataclass(frozen=True)
class CtcReading:
    """A greedy CTC reading of one element: the text and how sure the head was of it."""

    text: str
    confidence: float  # the lowest probability among the characters written (1.0 for an empty text)


def greedy_decode(log_probs: torch.Tensor, lengths: Sequence[int], alphabet: Alphabet) -> list[CtcReading]:
    """Best path per element: ``log_probs`` (batch, frames, classes), ``lengths`` valid frames each.

    The confidence is the smallest peak probability among the frames that wrote a character — a
    single doubtful glyph makes the whole text doubtful, which is what a fallback needs to know."""
    import torch

    best, ids = log_probs.max(dim=-1)
    out = []
    for b, n in enumerate(lengths):
        path = ids[b, :n].tolist()
        peaks = best[b, :n]
        chars: list[int] = []
        keep: list[int] = []
        previous = BLANK
        for t, label in enumerate(path):
            if label != BLANK and label != previous:
                chars.append(label)
                keep.append(t)
            previous = label
        confidence = float(torch.exp(peaks[keep].min())) if keep else 1.0
        out.append(CtcReading(alphabet.decode_ids(chars), round(confidence, 4)))
    return out


_LOG2 = math.log(2.0)


def _logaddexp(x: float, y: float) -> float:
    """``numpy.logaddexp`` of two floats, the same formula, without a ufunc call per pair: the
    beam search makes thousands of them per element, and on Python floats this is several times
    faster."""
    if x == y:
        return x + _LOG2
    d = x - y
    if d > 0:
        return x + math.log1p(math.exp(-d))
    if d <= 0:
        return y + math.log1p(math.exp(d))
    return x + y  # a NaN stays one


def beam_decode(log_probs: Sequence[Sequence[float]] | Any, length: int, alphabet: Alphabet, lm: Any, *,
                weight: float, bonus: float, beam: int = 8, prune: float = 1e-3,
                skip_blank: float = 0.999, top: int | None = 20) -> str:
    """The most likely text of one element under the CTC head *and* a character language model
    (``lm.log_prob(context, char)``, ``lm.end_log_prob(text)``: ``caap.observe.read.charlm.CharLM``): a
    CTC prefix beam search whose prefixes are scored ``log P_ctc + weight * log P_lm + bonus * chars``
    (shallow fusion; the bonus offsets the model's cost per character, which would otherwise favour
    dropping letters).

    ``log_probs``: (frames, classes) array of one element. Per frame only the classes above
    ``prune`` are followed, at most the ``top`` likeliest of them (None: all), and a frame whose
    blank is above ``skip_blank`` only closes the beams (most frames: the glyphs sit between them),
    which keeps the search at about a millisecond per element of UI text. ``top`` bounds the search
    where the head is unsure of everything (a model early in training spreads each frame over
    all its classes: 187 followed per beam instead of a handful)."""
    import numpy as np

    lp = np.asarray(log_probs, dtype=np.float64)[:length]
    neg = -math.inf
    chars = alphabet.chars
    log_prune, log_skip = math.log(prune), math.log(skip_blank)
    # prefix -> [log p ending in blank, log p ending in a character]
    beams: dict[tuple[int, ...], list[float]] = {(): [0.0, neg]}
    fused: dict[tuple[int, ...], float] = {(): 0.0}  # weight * log P_lm + bonus * len, per prefix
    texts: dict[tuple[int, ...], str] = {(): ""}

    def extend(prefix: tuple[int, ...], label: int) -> tuple[int, ...]:
        new = (*prefix, label)
        if new not in fused:
            ch = UNKNOWN_CHAR if label == UNKNOWN else chars[label - 2]
            texts[new] = texts[prefix] + ch
            fused[new] = fused[prefix] + weight * lm.log_prob(texts[prefix], ch) + bonus
        return new

    for row, frame in zip(lp, lp.tolist(), strict=True):  # the row for the array test, its floats for the rest
        blank = frame[BLANK]
        if blank > log_skip:
            beams = {p: [_logaddexp(b, nb) + blank, neg] for p, (b, nb) in beams.items()}
            continue
        candidates = [int(c) for c in np.flatnonzero(row > log_prune) if c != BLANK]
        if top is not None and len(candidates) > top:
            likeliest = set(sorted(candidates, key=lambda c: -frame[c])[:top])
            candidates = [c for c in candidates if c in likeliest]
        nxt: dict[tuple[int, ...], list[float]] = {}
        for prefix, (pb, pnb) in beams.items():
            total = _logaddexp(pb, pnb)
            slot = nxt.setdefault(prefix, [neg, neg])
            slot[0] = _logaddexp(slot[0], total + blank)
            last = prefix[-1] if prefix else None
            for c in candidates:
                new = extend(prefix, c)
                slot_new = nxt.setdefault(new, [neg, neg])
                if c == last:
                    slot[1] = _logaddexp(slot[1], pnb + frame[c])  # a repeat without a blank collapses
                    slot_new[1] = _logaddexp(slot_new[1], pb + frame[c])
                else:
                    slot_new[1] = _logaddexp(slot_new[1], total + frame[c])
        ranked = sorted(nxt.items(), key=lambda kv: -(_logaddexp(kv[1][0], kv[1][1]) + fused[kv[0]]))
        beams = dict(ranked[:beam])
    best = max(beams, key=lambda p: _logaddexp(beams[p][0], beams[p][1]) + fused[p]
               + weight * lm.end_log_prob(texts[p]))
    return texts[best]
