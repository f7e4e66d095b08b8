"""Build the reader's character language model and choose how much to trust it.

``build`` counts the texts of the training split (the same split ``caap train reader`` uses, so the
validation screens stay unseen), then reads the validation elements once with the checkpoint's
CTC head and tries every weight x bonus of the fusion grid on the kept CTC outputs: the setting
with the best exact match is stored with the model in the checkpoint directory
(``caap.observe.read.charlm.LM_FILE``), where ``Reader`` picks it up. A grid whose best weight is 0 (the
model never helps) writes no file unless asked to.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from caap.observe.read.charlm import LM_FILE, CharLM, Fusion
from caap.observe.read.configuration import ReaderError
from caap.observe.read.ctc import beam_decode
from caap.observe.read.inference import Reader
from caap.train.reader_data import ctc_text, load_samples, spread

WEIGHTS = (0.0, 0.1, 0.15, 0.2, 0.3, 0.4, 0.6)
BONUSES = (0.0, 0.5, 1.0, 1.5, 2.0)
BELOW = (0.9, 0.99, 1.0)  # search only texts whose greedy confidence is below this (speed)


def training_texts(datasets: Sequence[str | Path], split: str, *, synthetic: bool = True) -> tuple[list[str], Any]:
    """The texts (one per line of a multi-line text) of the training split, and the validation samples."""
    train, val, _ = load_samples(datasets, split)
    texts: list[str] = []
    for s in train:
        if s.synthetic and not synthetic:
            continue
        for line in (s.element.text or "").split("\n"):
            if line.strip():
                texts.append(line)
    return texts, val


def ctc_outputs(reader: Reader, samples: Sequence[Any]) -> list[tuple[Any, Any, str]]:
    """(CTC log-probabilities, greedy reading, gold text) of each one-line sample, screen by screen."""
    by_image: dict[str, list[Any]] = defaultdict(list)
    for s in samples:
        by_image[s.image].append(s)
    out = []
    for image_path, group in by_image.items():
        with Image.open(image_path) as im:
            image = im.convert("RGB")
        crops = reader._crops(image, [s.bbox for s in group])
        readings, _, frames = reader.infer(crops, [False] * len(crops), 1, log_probs=True)
        for s, reading, lp in zip(group, readings, frames, strict=True):
            out.append((lp, reading, ctc_text(s.element) or ""))
    return out


def build(datasets: Sequence[str | Path], checkpoint: str | Path, *, split: str = "val:2800-2999", order: int = 6,
          val_max: int = 1500, beam: int = 8, weights: Sequence[float] = WEIGHTS,
          bonuses: Sequence[float] = BONUSES, below: Sequence[float] = BELOW, synthetic: bool = True,
          force: bool = False, tolerance: float = 0.003, prune: int = 1,
          out: str | Path | None = None) -> dict[str, Any]:
    """Count, tune, write; returns the report (elements, greedy and best exact match, the grid).
    ``tolerance``: score differences this small are noise on ~1,500 texts (0.003 = 4.5 texts);
    ``prune``: contexts of 2+ characters seen this many times or fewer are dropped (size)."""
    t0 = time.perf_counter()
    texts, val = training_texts(datasets, split, synthetic=synthetic)
    if not texts:
        raise ReaderError(f"{', '.join(map(str, datasets))}: no training texts to count")
    lm = CharLM.train(texts, order, prune=prune)
    reader = Reader(checkpoint, lm=False)
    wanted = spread([s for s in val if ctc_text(s.element) and "\n" not in (s.element.text or "")], val_max)
    outputs = ctc_outputs(reader, wanted)
    n = len(outputs)
    if not n:
        raise ReaderError("no one-line validation texts to tune on")
    greedy = sum(r.text == gold for _, r, gold in outputs) / n
    grid = []
    for weight in weights:
        for bonus in bonuses if weight else (0.0,):
            searched = [beam_decode(lp, len(lp), reader.alphabet, lm, weight=weight, bonus=bonus, beam=beam)
                        if weight else r.text for lp, r, _ in outputs]
            for limit in below if weight else (1.0,):
                hits = sum((text if r.confidence < limit else r.text) == gold
                           for text, (_, r, gold) in zip(searched, outputs, strict=True))
                grid.append({"weight": weight, "bonus": bonus, "below": limit, "exact_match": round(hits / n, 4),
                             "searched": round(sum(r.confidence < limit for _, r, _ in outputs) / n, 4)})
    # Settings within `tolerance` of the best score are as good as it on this many texts: of those,
    # the one that searches the fewest texts (the fastest), then the best scoring, then the lightest.
    top = max(g["exact_match"] for g in grid)
    near = [g for g in grid if g["exact_match"] >= top - tolerance]
    best = min(near, key=lambda g: (g["searched"], -g["exact_match"], g["weight"]))
    lm.fusion = Fusion(weight=best["weight"], bonus=best["bonus"], beam=beam, below=best["below"])
    target = Path(out) if out else Path(checkpoint) / LM_FILE
    written = best["weight"] > 0 or force
    if written:
        lm.save(target)
    return {"texts": len(set(texts)), "order": order, "contexts": len(lm.counts), "elements": n,
            "greedy_exact_match": round(greedy, 4), "best": best, "grid": grid,
            "written": str(target) if written else None, "seconds": round(time.perf_counter() - t0, 1)}
