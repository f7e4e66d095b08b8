"""Choosing between the reader's text and PP-OCR's when they disagree (``text_source = auto``).

The two read differently: the reader's CTC head drops narrow glyphs (``Sagitis``) and is sure of
it, PP-OCR turns ``i`` into ``l`` (``Harrlet``) and loses a final letter on tight crops. Replacing
the reader's text by PP-OCR's whenever the reader's confidence is low ignores what each is good
at: on the validation screens the better of the two is right for 0.977 of the texts, the
confidence rule for 0.956. A logistic regression over what both sides say about their own text and
the other's — confidences, how likely the reader's CTC frames and the character model find each
candidate, how the two differ (length, edits, only ``I``/``l``) and the element type — picks one
(``TextChooser``). It is fitted on validation screens by ``caap train text-choice`` and stored
beside the reader (``CHOICE_FILE``); a reader without that file keeps the confidence rule.

The file holds one chooser per kind of screen (``SCREENS``, ``[observe] screens``), as
``TextChoosers``: web pages and desktop windows are drawn differently (a browser's grey-scale
anti-aliasing and one font; each toolkit's own fonts, icons beside labels, sub-pixel text), so the
two sources fail differently on them, and one chooser fitted on both kinds cost MiniWoB what it won
on desktop apps (``models/reader/HISTORY.md``). A kind the file has no chooser for uses the other's.

Before the choice, two kinds of PP-OCR's look-alike glyphs are settled by the reader's own frames
(``resolve_lookalikes``): ``O`` / ``0`` (a password ``0sav`` read ``Osav``) and ``I`` / ``i``, which
the reader tells apart by width and dot. On the validation disagreements that changes 16 of
PP-OCR's texts to the right one and none to a wrong one. ``l`` is left as PP-OCR reads it: with
``l`` in the sets, 28 texts were put right and 18 wrong (the reader's frames are no surer of
``i`` / ``l`` / ``I`` than PP-OCR is).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from caap.config import Screens
from caap.files import read_json, write_atomic
from caap.observe.read.ctc import UNKNOWN
from caap.taxonomy import ElementType

CHOICE_FILE = "text-choice.json"
FORMAT = "caap-text-choice/1"  # one chooser (a file of this format serves every kind of screen)
SET_FORMAT = "caap-text-choice/2"  # one chooser per kind of screen
SCREENS: tuple[str, ...] = get_args(Screens)  # what is observed: application windows, or web pages
_TYPES = [t.value for t in ElementType]
FEATURES = [
    "log_reader_conf", "log_ocr_conf", "reader_conf", "ocr_conf",
    "ctc_gain",            # log P_ctc(ocr text) - log P_ctc(reader text), /10, floored at -3
    "ctc_ocr_per_char",    # log P_ctc(ocr text) per character, /5, floored at -6
    "lm_gain_per_char",    # character model: log P per character, ocr - reader
    "lm_gain",             # the same in total, /10
    "length_gain", "length_change",  # (len ocr - len reader) / 3 and its size
    "only_homoglyphs",     # the two differ only in I / l / 1 / |
    "edits",               # Levenshtein distance / 3
    "ocr_unknown_chars",   # PP-OCR wrote a character the reader cannot
    "ocr_empty", "reader_empty", "reader_length",
    *(f"type={t}" for t in _TYPES),
]
_HOMOGLYPHS = str.maketrans({"I": "l", "1": "l", "|": "l"})
LOOKALIKES = ("O0", "Ii")  # PP-OCR's look-alikes the reader's frames settle (module docstring)


def screens_of(kind: str) -> str:
    """The kind of screen (``SCREENS``) a labelled screen of dataset kind ``kind`` is read as:
    MiniWoB's are web pages; desktop apps' are windows, and so are generated UIs (drawn by a
    browser to look like application windows; the desktop chooser is fitted on them too)."""
    return "web" if kind == "miniwob" else "desktop"


class TextChoiceError(ValueError):
    """A choice file that cannot be used; the message names it."""


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions) between two strings."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            row.append(min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = row
    return previous[-1]


def ctc_log_likelihood(log_probs: Any, text: str, alphabet: Any) -> float:
    """log P(text | frames) under a CTC head's (frames, classes) log-probabilities (blank 0);
    -1e9 where no alignment exists (more characters than the frames can hold)."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    lp = np.asarray(log_probs, dtype=np.float32)
    ids = alphabet.encode(text)
    if lp.shape[0] == 0:
        return 0.0 if not ids else -1e9
    if not ids:
        return float(lp[:, 0].sum())
    loss = F.ctc_loss(torch.from_numpy(np.ascontiguousarray(lp)).unsqueeze(1), torch.tensor([ids]),
                      torch.tensor([lp.shape[0]]), torch.tensor([len(ids)]), blank=0, reduction="sum")
    value = -float(loss)
    return value if math.isfinite(value) else -1e9


def ctc_log_likelihoods(log_probs: Any, texts: Sequence[str], alphabet: Any) -> list[float]:
    """``ctc_log_likelihood`` of each of ``texts`` under the same frames, in one batch."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    lp = np.asarray(log_probs, dtype=np.float32)
    ids = [alphabet.encode(t) for t in texts]
    if not texts or lp.shape[0] == 0 or not all(ids):
        return [ctc_log_likelihood(lp, t, alphabet) for t in texts]
    frames = torch.from_numpy(np.ascontiguousarray(lp)).unsqueeze(1).expand(-1, len(texts), -1)
    loss = F.ctc_loss(frames, torch.tensor([i for x in ids for i in x]), torch.full((len(texts),), lp.shape[0]),
                      torch.tensor([len(x) for x in ids]), blank=0, reduction="none")
    return [-float(v) if math.isfinite(float(v)) else -1e9 for v in loss]


def resolve_lookalikes(text: str, log_probs: Any, alphabet: Any, lm: Any) -> str:
    """``text`` with each look-alike glyph (``LOOKALIKES``) replaced by the member of its set the
    reader's CTC frames and the character model (at its fusion weight) find most likely, left to
    right, each choice kept for the next. Unchanged where nothing scores higher or the frames
    cannot hold the text at all."""
    import numpy as np

    lp = np.asarray(log_probs, dtype=np.float32)
    if not text or lp.shape[0] == 0:
        return text
    weight = lm.fusion.weight if lm is not None else 0.0
    chars = list(text)
    for pos, ch in enumerate(text):
        group = next((g for g in LOOKALIKES if ch in g), None)
        if group is None:
            continue
        options = [c for c in group if UNKNOWN not in alphabet.encode(c)]
        if len(options) < 2 or ch not in options:
            continue
        candidates = ["".join([*chars[:pos], c, *chars[pos + 1:]]) for c in options]
        scores = [ll + (weight * lm.score(c) if weight else 0.0)
                  for ll, c in zip(ctc_log_likelihoods(lp, candidates, alphabet), candidates, strict=True)]
        best = max(range(len(candidates)), key=lambda k: scores[k])
        if scores[best] > -1e9 and scores[best] > scores[options.index(ch)]:
            chars[pos] = options[best]
    return "".join(chars)


def features(reader_text: str, reader_conf: float, ocr_text: str, ocr_conf: float, log_probs: Any,
             alphabet: Any, lm: Any, element_type: str) -> list[float]:
    """The ``FEATURES`` of one disagreement (texts as the CTC head writes them: one line)."""
    b, o = reader_text, ocr_text
    cb, co = ctc_log_likelihood(log_probs, b, alphabet), ctc_log_likelihood(log_probs, o, alphabet)
    lb, lo = (lm.score(b), lm.score(o)) if lm is not None else (0.0, 0.0)
    nb, no = max(len(b), 1), max(len(o), 1)
    return [
        math.log(max(reader_conf, 1e-4)), math.log(max(ocr_conf, 1e-4)), reader_conf, ocr_conf,
        max(-30.0, co - cb) / 10, max(-30.0, co / no) / 5, lo / no - lb / nb, (lo - lb) / 10,
        (len(o) - len(b)) / 3, abs(len(o) - len(b)) / 3,
        float(o.translate(_HOMOGLYPHS) == b.translate(_HOMOGLYPHS)), levenshtein(b, o) / 3,
        float(UNKNOWN in alphabet.encode(o)),
        float(o == ""), float(b == ""), len(b) / 20,
        *(float(element_type == t) for t in _TYPES),
    ]


@dataclass
class TextChooser:
    """P(PP-OCR's text is the right one | the two disagree): a logistic regression over
    standardised ``FEATURES``."""

    weights: list[float]
    bias: float
    mean: list[float]
    scale: list[float]
    # Multi-line text areas are read line by line (no one frame sequence to weigh PP-OCR's text
    # against): PP-OCR's text replaces the reader's below this confidence, chosen on validation.
    text_area_below: float = 0.9
    fitted: dict[str, Any] = field(default_factory=dict)  # what it was fitted on, and how it scored

    def __post_init__(self) -> None:
        n = len(FEATURES)
        if not (len(self.weights) == len(self.mean) == len(self.scale) == n):
            raise TextChoiceError(f"a text chooser needs {n} weights, means and scales (one per feature)")
        if any(s <= 0 for s in self.scale):
            raise TextChoiceError("feature scales must be positive")

    def prob_ocr(self, row: Sequence[float]) -> float:
        z = self.bias + sum(w * (x - m) / s for w, x, m, s in zip(self.weights, row, self.mean, self.scale,
                                                                      strict=True))
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def choose(self, reader_text: str, reader_conf: float, ocr_text: str, ocr_conf: float, log_probs: Any,
               alphabet: Any, lm: Any, element_type: str) -> bool:
        """True: take PP-OCR's text (the two texts differ)."""
        row = features(reader_text, reader_conf, ocr_text, ocr_conf, log_probs, alphabet, lm, element_type)
        return self.prob_ocr(row) > 0.5

    @classmethod
    def fit(cls, rows: Sequence[Sequence[float]], ocr_right: Sequence[bool], *, l2: float = 1e-2) -> TextChooser:
        """Maximum likelihood with an L2 penalty (L-BFGS)."""
        import torch

        x = torch.tensor([list(r) for r in rows], dtype=torch.float64)
        if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] != len(FEATURES):
            raise TextChoiceError(f"fitting needs at least 2 rows of {len(FEATURES)} features")
        y = torch.tensor([float(v) for v in ocr_right], dtype=torch.float64)
        mean = x.mean(0)
        scale = x.std(0).clamp(min=1e-6)
        z = (x - mean) / scale
        coef = torch.zeros(x.shape[1], dtype=torch.float64, requires_grad=True)
        bias = torch.zeros((), dtype=torch.float64, requires_grad=True)
        opt = torch.optim.LBFGS([coef, bias], max_iter=500, line_search_fn="strong_wolfe")

        def closure() -> torch.Tensor:
            opt.zero_grad()
            logits = z @ coef + bias
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y) + l2 * (coef ** 2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        return cls([round(float(v), 6) for v in coef.detach()], round(float(bias.detach()), 6),
                   [round(float(v), 6) for v in mean], [round(float(v), 6) for v in scale])

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "features": FEATURES, "weights": self.weights, "bias": self.bias,
                "mean": self.mean, "scale": self.scale, "text_area_below": self.text_area_below,
                "fitted": self.fitted}

    @classmethod
    def from_json(cls, data: Any, path: str | Path) -> TextChooser:
        """The chooser ``to_json`` wrote (``path``: where it was read from, for the messages)."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TextChoiceError(f"{path}: not a text chooser ({FORMAT}); refit it with caap train text-choice")
        saved = data.get("features")
        # A chooser fitted before the taxonomy grew lacks the new types' columns; it saw no element
        # of them, so they weigh nothing (weight 0, mean 0, scale 1). Any other difference is a refit.
        if not isinstance(saved, list) or any(f not in FEATURES for f in saved) or any(
                f not in saved and not f.startswith("type=") for f in FEATURES):
            raise TextChoiceError(f"{path}: fitted on other features than this caap computes; "
                                  "refit it with caap train text-choice")
        try:
            columns = {f: i for i, f in enumerate(saved)}

            def widen(values: list[Any], fill: float) -> list[float]:
                if len(values) != len(saved):
                    raise ValueError(f"{len(values)} values for {len(saved)} features")
                return [float(values[columns[f]]) if f in columns else fill for f in FEATURES]

            return cls(widen(data["weights"], 0.0), float(data["bias"]), widen(data["mean"], 0.0),
                       widen(data["scale"], 1.0), float(data["text_area_below"]), dict(data.get("fitted") or {}))
        except KeyError as exc:
            raise TextChoiceError(f"{path}: broken text chooser (no {exc} field); "
                                  "refit it with caap train text-choice") from None
        except (TypeError, ValueError) as exc:
            raise TextChoiceError(f"{path}: broken text chooser ({exc}); "
                                  "refit it with caap train text-choice") from None


@dataclass
class TextChoosers:
    """A reader's choosers, one per kind of screen (``SCREENS``) it was fitted on (module docstring)."""

    by_screens: dict[str, TextChooser]

    def __post_init__(self) -> None:
        unknown = set(self.by_screens) - set(SCREENS)
        if unknown or not self.by_screens:
            raise TextChoiceError(f"text choosers are kept for the kinds of screen {SCREENS}, "
                                  f"not {sorted(unknown) or 'none'}")

    def for_screens(self, screens: str) -> TextChooser:
        """The chooser for ``screens``; the other kind's where none was fitted for it."""
        if screens not in SCREENS:
            raise TextChoiceError(f"screens must be one of {SCREENS}, not {screens!r}")
        return self.by_screens.get(screens) or next(self.by_screens[k] for k in SCREENS if k in self.by_screens)

    def with_chooser(self, screens: str, chooser: TextChooser) -> TextChoosers:
        """These choosers with ``screens``'s replaced by ``chooser``. A kind that had none of its own
        keeps what it used (the replaced one) rather than taking the new one unasked."""
        kept = {k: self.for_screens(k) for k in SCREENS}
        return TextChoosers({**kept, screens: chooser})

    def to_json(self) -> dict[str, Any]:
        return {"format": SET_FORMAT, "screens": {k: self.by_screens[k].to_json() for k in SCREENS
                                                  if k in self.by_screens}}

    def save(self, path: str | Path) -> None:
        write_atomic(path, json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> TextChoosers:
        """The choosers in ``path``: a file of one per kind (``SET_FORMAT``), or of one chooser
        (``FORMAT``), which serves every kind."""
        data = read_json(path, TextChoiceError, missing="no such text chooser file",
                         unreadable="not a readable text chooser")
        if isinstance(data, dict) and data.get("format") == FORMAT:
            return cls({SCREENS[0]: TextChooser.from_json(data, path)})
        if not isinstance(data, dict) or data.get("format") != SET_FORMAT:
            raise TextChoiceError(f"{path}: not a text chooser ({SET_FORMAT}); refit it with caap train text-choice")
        screens = data.get("screens")
        if not isinstance(screens, dict) or not screens or set(screens) - set(SCREENS):
            raise TextChoiceError(f"{path}: broken text chooser (its 'screens' must map some of {SCREENS} "
                                  "to choosers); refit it with caap train text-choice")
        return cls({k: TextChooser.from_json(v, f"{path} [{k}]") for k, v in screens.items()})
