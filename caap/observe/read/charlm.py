"""A character n-gram language model for the reader's CTC beam search.

The CTC head reads glyph by glyph and knows nothing of words: most of its misreadings on the 67
tasks are one character off a word it has seen many times ("Selet", "Austn", "laculis"). A small
character model of the texts the reader was trained on, added to the CTC scores during a beam
search (shallow fusion, as in speech recognition), prefers the spelling it knows when the pixels
leave the choice open, and leaves clear pixels alone (its weight is small).

Interpolated Witten-Bell smoothing over orders 1..N, with a uniform floor over the alphabet, so
every string has a probability (random passwords included). Counts come from each distinct text
once (an instruction repeated on a thousand screens does not outweigh the rest). Stored as JSON
beside the reader's weights (``char-lm.json``).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from caap.files import read_json, write_atomic
from caap.observe.read.ctc import normalise

BOS = "\x02"  # text start (contexts are padded with it)
EOS = "\x03"  # text end (scored once the text is complete)
FORMAT = "caap-char-lm/1"


LM_FILE = "char-lm.json"  # in a reader checkpoint directory: used by the reader when present


class CharLMError(ValueError):
    """A model file that cannot be used; the message names it."""


@dataclass(frozen=True)
class Fusion:
    """How the reader combines the model with its CTC head (``caap.observe.read.ctc.beam_decode``),
    chosen on validation elements by ``caap train reader-lm``."""

    weight: float = 0.3  # times log P_lm
    bonus: float = 1.0  # per character written
    beam: int = 8
    below: float = 1.0  # only texts whose greedy CTC confidence is below this are searched


class CharLM:
    def __init__(self, order: int, counts: dict[str, dict[str, int]], vocabulary: int,
                 fusion: Fusion | None = None) -> None:
        if order < 1:
            raise CharLMError(f"order must be >= 1, got {order}")
        self.order = order
        self.fusion = fusion or Fusion()
        self.counts = counts  # context (0..order-1 chars) -> next char -> count
        self.vocabulary = max(vocabulary, 1)
        self._totals = {c: sum(n.values()) for c, n in counts.items()}
        self._cache: dict[tuple[str, str], float] = {}

    @classmethod
    def train(cls, texts: Iterable[str], order: int = 6, *, prune: int = 0) -> CharLM:
        """Counts of every context of up to order-1 characters in ``texts`` (each distinct text
        once); contexts of two or more characters seen ``prune`` times or fewer are dropped
        (random strings leave many such contexts that back off to shorter ones just as well)."""
        counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        chars: set[str] = set()
        for text in dict.fromkeys(normalise(t) for t in texts if t and t.strip()):
            padded = BOS * (order - 1) + text + EOS
            chars.update(text)
            for i in range(order - 1, len(padded)):
                for k in range(order):
                    counts[padded[i - k:i]][padded[i]] += 1
        kept = {c: dict(n) for c, n in counts.items() if len(c) < 2 or sum(n.values()) > prune}
        return cls(order, kept, len(chars) + 1)

    def prob(self, context: str, char: str) -> float:
        """P(char | the last order-1 characters of context), context padded with BOS."""
        context = (BOS * (self.order - 1) + context)[-(self.order - 1):] if self.order > 1 else ""
        key = (context, char)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        p = 1.0 / (self.vocabulary + 1)
        for k in range(0, self.order):
            ctx = context[len(context) - k:] if k else ""
            seen = self.counts.get(ctx)
            if not seen:
                continue
            total, types = self._totals[ctx], len(seen)
            p = (seen.get(char, 0) + types * p) / (total + types)
        if len(self._cache) < 500_000:
            self._cache[key] = p
        return p

    def log_prob(self, context: str, char: str) -> float:
        return math.log(self.prob(context, char))

    def end_log_prob(self, text: str) -> float:
        """log P(the text ends here | text)."""
        return self.log_prob(text, EOS)

    def score(self, text: str) -> float:
        """log P(text + end)."""
        total = 0.0
        for i, ch in enumerate(text + EOS):
            total += self.log_prob(text[:i], ch)
        return total

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "order": self.order, "vocabulary": self.vocabulary,
                "fusion": asdict(self.fusion), "counts": self.counts}

    def save(self, path: str | Path) -> None:
        write_atomic(Path(path), json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")))

    @classmethod
    def load(cls, path: str | Path) -> CharLM:
        path = Path(path)
        data = read_json(path, CharLMError, missing="no such language model file",
                         unreadable="not a readable language model")
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CharLMError(f"{path}: not a {FORMAT} file")
        order, vocabulary, counts = data.get("order"), data.get("vocabulary"), data.get("counts")
        if not isinstance(order, int) or not isinstance(vocabulary, int) or not isinstance(counts, dict) or not all(
                isinstance(n, dict) and all(isinstance(v, int) for v in n.values()) for n in counts.values()):
            raise CharLMError(f"{path}: order, vocabulary and counts must be integers and a context -> counts map")
        try:
            fusion = Fusion(**data.get("fusion", {}))
        except TypeError as exc:
            raise CharLMError(f"{path}: fusion: {exc}") from None
        return cls(order, counts, vocabulary, fusion)
