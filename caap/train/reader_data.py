"""Training samples for the element reader: real screens (MiniWoB++) and synthetic text screens.

One sample per labelled element: the screenshot semi-masked around it (``caap.observe.read.processing``),
cut into native-resolution patches (``caap.observe.read.processing``), with two targets — the decoder's
record string (``caap.observe.read.inference.encode_target``, the text left out unless the decoder is to
write it too) and the CTC head's text (``caap.observe.read.ctc``).

Real datasets are split into train and validation by seed (``SplitRule``); synthetic datasets
(``source.kind == "synth"``) only ever train. A ``MixedStream`` draws each training batch from the
two pools in a fixed share, each pool in its own reshuffled order, and can be saved and restored
exactly, so a run cut off mid-epoch resumes with the same batches.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.elements import Element
from caap.observe.read.configuration import ReaderError
from caap.observe.read.ctc import Alphabet, normalise
from caap.observe.read.processing import box_colour, patchify, semi_mask
from caap.observe.read.target import encode_target
from caap.taxonomy import TEXT, ElementType, attributes_of

SYNTH_KIND = "synth"


@dataclass(frozen=True)
class Sample:
    """One labelled element: its screenshot, box and record."""

    image: str
    element: Element
    synthetic: bool = False
    ctc_only: bool = False  # a line of a text area: trains the CTC head, not the decoder (not an element)

    @property
    def bbox(self) -> tuple[int, int, int, int]:
        return tuple(self.element.bbox)  # type: ignore[return-value]


def ctc_text(element: Element) -> str | None:
    """The text the CTC head learns for an element, or None when the element must not train it.

    Types without text read as the empty text (nothing to write). A text area's words are joined
    from several visual lines, an order a single left-to-right frame sequence cannot follow, so a
    text area with text is left to the decoder loss only."""
    if TEXT not in attributes_of(element.type):
        return ""
    if element.text is None:
        return None
    if element.type == ElementType.TEXT_AREA and element.text.strip():
        return None
    return normalise(element.text)


# Fields whose label says "empty" while their box shows text: a placeholder (the label is the
# value), or a generated field whose drawn text the labeller did not take as its value. Trained to
# read them as nothing, the fine-tune for any application read use-spinner's `-1` as empty with
# confidence 1.0 (models/reader/HISTORY.md, stop 39), so they get no CTC target at all.
EMPTY_CAN_SHOW_TEXT = (ElementType.INPUT_FIELD, ElementType.TEXT_AREA)
INK_CONTRAST = 60  # grey levels from the field's own background
INK_COLUMNS = 4  # distinct columns of such pixels: more than a caret (1-2 px wide)


def shows_text(image: Image.Image, bbox: Sequence[int]) -> bool:
    """Whether the inside of a field's box (its border cut off) holds glyph-like ink: pixels far
    from the inside's median grey in at least ``INK_COLUMNS`` columns."""
    x1, y1, x2, y2 = (int(v) for v in bbox)
    inset = max(3, (y2 - y1) // 6)
    x1, y1, x2, y2 = x1 + inset, y1 + inset, x2 - inset, y2 - inset
    if x2 - x1 < INK_COLUMNS or y2 - y1 < 2:
        return False
    grey = np.asarray(image.crop((x1, y1, x2, y2)).convert("L"), dtype=np.int16)  # the box only, not the screen
    ink = np.abs(grey - int(np.median(grey))) > INK_CONTRAST
    return int(ink.any(axis=0).sum()) >= INK_COLUMNS


def record_target(element: Element, *, with_text: bool) -> str:
    """The decoder's target: the whole record, or the record without its text."""
    return encode_target(element if with_text else element.model_copy(update={"text": None}))


def load_samples(datasets: Sequence[str | Path], split: str) -> tuple[list[Sample], list[Sample], dict[str, Any]]:
    """Train and validation samples of several caap datasets (annotations read; images not opened).

    Real screens are split by ``split``; synthetic ones all train. Validation needs real screens."""
    from caap.data.export import SplitRule, load_items, split_of
    from caap.data.format import DatasetError
    from caap.seeds import format_seed_ranges

    try:
        rule = SplitRule.parse(split)
    except DatasetError as exc:
        raise ReaderError(str(exc)) from None
    train: list[Sample] = []
    val: list[Sample] = []
    counts: dict[str, Counter[str]] = {"train": Counter(), "val": Counter(), "synthetic": Counter()}
    seeds: dict[str, set[int]] = {"train": set(), "val": set()}
    for data in datasets:
        try:
            items = load_items(data)
        except DatasetError as exc:
            raise ReaderError(str(exc)) from None
        for item in items:
            synthetic = item.ann.source.kind == SYNTH_KIND
            side = "train" if synthetic else split_of(item.ann, rule)
            if not synthetic and item.ann.source.seed is not None:
                seeds[side].add(item.ann.source.seed)
            bucket = train if side == "train" else val
            for e in item.ann.elements:
                bucket.append(Sample(str(item.image_path), e, synthetic))
                counts["synthetic" if synthetic else side][e.type.value] += 1
    if not train:
        raise ReaderError(f"{', '.join(map(str, datasets))}: no labelled elements to train on")
    lines, unpaired = text_area_lines(train)
    train += lines
    if not val:
        raise ReaderError(f"{', '.join(map(str, datasets))}: split '{rule}' leaves no real labelled elements for "
                          f"validation (train seeds {format_seed_ranges(seeds['train'])})")
    info = {"split": str(rule), "datasets": [str(d) for d in datasets],
            "elements": {"train_real": sum(not s.synthetic and not s.ctc_only for s in train),
                         "train_synthetic": sum(s.synthetic and not s.ctc_only for s in train), "val": len(val)},
            "text_area_lines": {"lines": len(lines), "areas_not_paired": unpaired},
            "types": {k: dict(sorted(c.items())) for k, c in counts.items()}}
    return train, val, info


def text_area_lines(samples: Sequence[Sample]) -> tuple[list[Sample], int]:
    """CTC-only samples for the lines of labelled text areas: the label's lines (joined with "\n"
    by the labeller) paired, in order, with the bands of ink ``caap.observe.read.lines`` finds — the same
    cut the reader makes at inference. An area whose band count differs from its line count is not
    used (returned: how many)."""
    from caap.observe.read.lines import text_lines

    cache = ScreenCache()
    out: list[Sample] = []
    unpaired = 0
    for s in samples:
        text = s.element.text or ""
        if s.element.type != ElementType.TEXT_AREA or not text.strip():
            continue
        wanted = [line for line in text.split("\n") if line.strip()]
        bands = text_lines(cache.get(s.image), s.bbox)
        if len(bands) != len(wanted):
            unpaired += 1
            continue
        out += [Sample(s.image, Element(type=ElementType.TEXT, bbox=band, text=line), s.synthetic, ctc_only=True)
                for band, line in zip(bands, wanted, strict=True)]
    return out, unpaired


def spread(samples: list[Sample], k: int | None) -> list[Sample]:
    """An even spread of ``k`` samples: the same ones at every evaluation, so evaluations compare."""
    if not k or k >= len(samples):
        return samples
    step = len(samples) / k
    return [samples[int(i * step)] for i in range(k)]


def jitter_box(box: Sequence[int], jitter: int, width: int, height: int,
               rng: random.Random) -> tuple[int, int, int, int]:
    """``box`` with each side moved by a uniform integer in [-jitter, jitter], kept inside the image
    and at least one pixel wide and high — the error a detector box has against the true one."""
    x1, y1, x2, y2 = (int(v) + rng.randint(-jitter, jitter) for v in box)
    x1, y1 = min(max(x1, 0), width - 1), min(max(y1, 0), height - 1)
    return x1, y1, min(max(x2, x1 + 1), width), min(max(y2, y1 + 1), height)


class ScreenCache:
    """Decoded screenshots kept in memory: a MiniWoB screen is ~100 kB as pixels, and every one of
    its elements is a sample, so each file is decoded once per run instead of once per element."""

    def __init__(self) -> None:
        self._images: dict[str, Image.Image] = {}

    def get(self, path: str) -> Image.Image:
        image = self._images.get(path)
        if image is None:
            try:
                with Image.open(path) as im:
                    image = im.convert("RGB")
            except OSError as exc:
                raise ReaderError(f"{path}: not a readable image ({exc})") from None
            self._images[path] = image
        return image


class MixedStream:
    """An endless, reproducible order of training samples: each draw comes from the synthetic pool
    with probability ``synthetic_share`` (else the real pool), each pool walked through in a fresh
    random permutation per pass. ``state()`` / ``restore()`` capture the exact position."""

    def __init__(self, samples: Sequence[Sample], synthetic_share: float, seed: int) -> None:
        self.pools = [[i for i, s in enumerate(samples) if not s.synthetic],
                      [i for i, s in enumerate(samples) if s.synthetic]]
        share = synthetic_share if self.pools[1] else 0.0
        if not self.pools[0]:
            share = 1.0
        self.share, self.seed = share, seed
        self.rng = random.Random(f"{seed}:mix")
        self.position = [0, 0]
        self.passes = [0, 0]
        self.orders: list[list[int]] = [self._order(0), self._order(1)]

    def _order(self, pool: int) -> list[int]:
        order = list(self.pools[pool])
        random.Random(f"{self.seed}:{pool}:{self.passes[pool]}").shuffle(order)
        return order

    def next(self) -> int:
        pool = 1 if self.rng.random() < self.share else 0
        if self.position[pool] >= len(self.orders[pool]):
            self.passes[pool] += 1
            self.position[pool] = 0
            self.orders[pool] = self._order(pool)
        index = self.orders[pool][self.position[pool]]
        self.position[pool] += 1
        return index

    def batch(self, size: int) -> list[int]:
        return [self.next() for _ in range(size)]

    def state(self) -> dict[str, Any]:
        return {"rng": self.rng.getstate(), "position": list(self.position), "passes": list(self.passes)}

    def restore(self, state: dict[str, Any]) -> None:
        rng = state["rng"]
        self.rng.setstate((rng[0], tuple(rng[1]), rng[2]))
        self.position, self.passes = list(state["position"]), list(state["passes"])
        self.orders = [self._order(0), self._order(1)]

    @property
    def epochs(self) -> float:
        """Passes over the real pool so far (fractional)."""
        n = len(self.pools[0]) or len(self.pools[1])
        pool = 0 if self.pools[0] else 1
        return self.passes[pool] + self.position[pool] / max(n, 1)


class GroupedBatches:
    """Batches of samples with similar patch grids, drawn from a ``MixedStream``: each window of
    ``batch × window`` draws is sorted by ``costs`` (a sample's patch grid, ``patch_shape``) and cut
    into batches, which are then served in a shuffled order. A batch is padded to its largest grid:
    the encoder's whole-crop stem runs over rows × columns of the largest crop, so one tall list
    beside a line as wide as a 1080p screen made every crop of the batch hundreds of times its
    size (0.93 samples/s on the generated UIs, against 87 on MiniWoB's small screens)."""

    def __init__(self, stream: MixedStream, costs: Sequence[Any], batch: int, *, window: int = 32,
                 seed: int = 0) -> None:
        self.stream, self.costs, self.batch, self.window, self.seed = stream, costs, batch, window, seed
        self.pending: list[list[int]] = []
        self.refills = 0

    def next(self) -> list[int]:
        if not self.pending:
            drawn = sorted(self.stream.batch(self.batch * self.window), key=self.costs.__getitem__)
            self.pending = [drawn[i:i + self.batch] for i in range(0, len(drawn), self.batch)]
            random.Random(f"{self.seed}:group:{self.refills}").shuffle(self.pending)
            self.refills += 1
        return self.pending.pop()

    def state(self) -> dict[str, Any]:
        return {"stream": self.stream.state(), "pending": [list(b) for b in self.pending], "refills": self.refills}

    def restore(self, state: dict[str, Any]) -> None:
        self.stream.restore(state["stream"])
        self.pending = [list(b) for b in state["pending"]]
        self.refills = int(state["refills"])


def patch_shape(sample: Sample, patch: tuple[int, int], mask: dict[str, Any]) -> tuple[int, int]:
    """The (rows, columns) of patches a sample's crop becomes (the box plus its context on every
    side)."""
    from caap.observe.read.processing import grid_size

    margin = max(int(mask.get("context") or 0), int(mask.get("outline_px") or 0))
    x1, y1, x2, y2 = sample.bbox
    return grid_size(x2 - x1 + 2 * margin, y2 - y1 + 2 * margin, patch)


@dataclass(frozen=True)
class Batch:
    inputs: dict[str, Any]  # flattened_patches, attention_mask
    labels: Any  # decoder targets, -100 padded
    ctc_targets: Any  # concatenated CTC targets
    ctc_lengths: Any  # per element
    ctc_mask: Any  # 1.0 where the element trains the CTC head
    samples: list[Sample]


class Collate:
    """Samples → one model batch: crops semi-masked and patched, decoder and CTC targets built."""

    def __init__(self, tokenizer: Any, alphabet: Alphabet, *, patch: tuple[int, int], max_patches: int,
                 mask: dict[str, Any], max_target_tokens: int, decoder_text: bool, jitter: int = 0,
                 seed: int = 0, colour: str | None = None) -> None:
        """``colour``: the model's colour set (``caap.observe.read.processing``); ``box`` is measured on the
        screenshot around the (jittered) box, anything else on the crop."""
        self.tokenizer, self.alphabet = tokenizer, alphabet
        self.colour = colour
        self.patch, self.max_patches, self.mask = patch, max_patches, mask
        self.max_tokens, self.decoder_text, self.jitter, self.seed = max_target_tokens, decoder_text, jitter, seed
        self.cache = ScreenCache()

    def crop(self, sample: Sample, rng: random.Random | None) -> tuple[np.ndarray, np.ndarray | None]:
        """The semi-masked crop and, for the ``box`` colour set, its colour statistics."""
        image = self.cache.get(sample.image)
        box = sample.bbox
        if rng is not None and self.jitter:
            box = jitter_box(box, self.jitter, image.width, image.height, rng)
        colour = box_colour(np.asarray(image), box) if self.colour == "box" else None
        return np.asarray(semi_mask(image, box, **self.mask)), colour

    def __call__(self, samples: list[Sample], step: int | None = None) -> Batch:
        """``step``: the training step (box jitter differs per step and sample); None: no jitter."""
        import torch

        crops: list[np.ndarray] = []
        colours: list[np.ndarray] = []  # one per crop for the "box" colour set, else none
        for i, s in enumerate(samples):
            rng = random.Random(f"{self.seed}:{step}:{i}") if step is not None else None
            crop, colour = self.crop(s, rng)
            crops.append(crop)
            if colour is not None:
                colours.append(colour)
        grid = patchify(crops, self.patch, self.max_patches,
                        np.stack(colours) if self.colour == "box" else None)
        eos = self.tokenizer.eos_token_id
        ids = []
        for s in samples:
            x = self.tokenizer(record_target(s.element, with_text=self.decoder_text)).input_ids
            ids.append(x if len(x) <= self.max_tokens else [*x[: self.max_tokens - 1], eos])
        labels = torch.full((len(ids), max(len(x) for x in ids)), -100, dtype=torch.long)
        for row, (x, s) in enumerate(zip(ids, samples, strict=True)):
            if not s.ctc_only:  # a text-area line is no element: the decoder learns nothing from it
                labels[row, : len(x)] = torch.tensor(x, dtype=torch.long)
        targets: list[int] = []
        lengths, weights = [], []
        for s in samples:
            text = ctc_text(s.element)
            if text == "" and s.element.type in EMPTY_CAN_SHOW_TEXT and shows_text(
                    self.cache.get(s.image), s.bbox):
                text = None  # drawn text labelled empty: teach nothing rather than "nothing here"
            encoded = self.alphabet.encode(text) if text is not None else []
            targets += encoded
            lengths.append(len(encoded))
            weights.append(0.0 if text is None else 1.0)
        return Batch({"flattened_patches": grid.flattened_patches, "attention_mask": grid.attention_mask,
                      "colour": grid.colour}, labels,
                     torch.tensor(targets, dtype=torch.long), torch.tensor(lengths, dtype=torch.long),
                     torch.tensor(weights), list(samples))


# One process's collating state, inherited by the workers through fork (set just before the pool
# starts): the samples and the Collate, which keeps its own screen cache in each worker.
_WORKER_STATE: tuple[Sequence[Sample], Collate] | None = None


def _worker_start() -> None:
    import torch

    torch.set_num_threads(1)  # each worker is one of many; the main process keeps the cores it asked for


def _collate_in_worker(indices: list[int], step: int) -> Batch:
    assert _WORKER_STATE is not None
    samples, collate = _WORKER_STATE
    return collate([samples[i] for i in indices], step)


class BatchPrefetch:
    """The training batches in order, collated ``workers`` processes ahead of the model.

    Cutting, semi-masking and patching the crops runs on the CPU; one process did it at ~390
    samples/s on a lent H100 while the GPU waited. Each batch is the same as the serial one
    (``Collate`` seeds its box jitter by step and position, not by process). ``state()`` is the
    stream's position after the last batch handed out, not after the ones collated ahead, so a
    checkpoint resumes where the model stopped. ``workers`` 0 collates in this process."""

    def __init__(self, stream: GroupedBatches, samples: Sequence[Sample], collate: Collate, *, step: int,
                 rank: int = 0, batch: int, workers: int = 0, ahead: int = 2) -> None:
        self.stream, self.samples, self.collate = stream, samples, collate
        self.step, self.rank, self.batch = step, rank, batch
        self._consumed: dict[str, Any] | None = None  # with workers: the position after the last batch handed out
        self._pending: list[tuple[list[int], Any, dict[str, Any]]] = []
        self._pool: Any = None
        if workers:
            import multiprocessing

            self._consumed = stream.state()

            global _WORKER_STATE
            _WORKER_STATE = (samples, collate)
            # fork: the workers share the parent's sample list without pickling it; they never touch CUDA.
            self._pool = multiprocessing.get_context("fork").Pool(workers, initializer=_worker_start)
            self._depth = max(1, workers * ahead)

    def _draw(self) -> tuple[list[int], int]:
        indices = self.stream.next()[self.rank * self.batch:(self.rank + 1) * self.batch]
        step = self.step
        self.step += 1
        return indices, step

    def next(self) -> tuple[list[int], Batch]:
        """The next batch's sample indices and the collated batch."""
        if self._pool is None:
            indices, step = self._draw()
            return indices, self.collate([self.samples[i] for i in indices], step)
        while len(self._pending) < self._depth:
            indices, step = self._draw()
            self._pending.append((indices, self._pool.apply_async(_collate_in_worker, (indices, step)),
                                  self.stream.state()))
        indices, result, state = self._pending.pop(0)
        self._consumed = state
        return indices, result.get()

    def state(self) -> dict[str, Any]:
        return self.stream.state() if self._consumed is None else self._consumed

    def close(self) -> None:
        """Stop the workers. The batches still being collated are waited for first (a few seconds):
        Python 3.11's ``Pool.terminate`` can fail with results outstanding ("Cannot have cache with
        result_hander not alive")."""
        if self._pool is not None:
            for _, result, _ in self._pending:
                result.wait(timeout=60)
            self._pool.terminate()
            self._pool.join()
            self._pool = None
            self._pending = []
