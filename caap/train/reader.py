"""Train the element reader (Pix2Struct) on a caap dataset.

One sample per labelled element: the screenshot semi-masked around it (``caap.observe.semimask``)
→ its target string (``caap.observe.reader``). Train/validation split by seed (``SplitRule``).
Images are loaded lazily, one sample at a time, by the DataLoader workers; the image processor runs
once per batch in the collate function.

Settings come from ``training/reader.yaml``; arguments override them. The run directory ``out``::

    best/               the checkpoint with the best validation exact match (a Reader loads it)
    last/               the latest checkpoint + trainer_state.pt (optimizer, epoch, best) for resume
    metrics.jsonl       one line per epoch: losses, exact match, type accuracy, lr, samples/s
    caap-train.json     the settings, data, sample counts, parameter count and command

``resume=True`` continues ``out`` from ``last/`` on the given data with the settings it was started
with (``epochs`` and ``device`` may be changed, e.g. to train longer; ``max_samples`` defaults to
the run's).

Speed: on a CPU shared with other work, set ``threads`` to the number of *free* cores — torch's
default of one thread per core slows to a crawl when one of them is busy.
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caap.observe.reader import (
    DEFAULT_MASK,
    ReaderError,
    build_processing,
    decode_target,
    encode_target,
    generate_texts,
    load_model,
    prepare_images,
    resolve_device,
    same_record,
    save_checkpoint,
)
from caap.observe.semimask import semi_mask

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = REPO_ROOT / "training" / "reader.yaml"
STATE_FILE = "trainer_state.pt"
PATCH_VALUES = 16 * 16 * 3  # flattened RGB patch size the image processor produces


# --- settings -----------------------------------------------------------------------------------


def load_settings(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """``training/reader.yaml`` (or ``path``) with the non-None ``overrides`` applied."""
    import yaml

    path = Path(path) if path else DEFAULT_CONFIG
    try:
        settings = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ReaderError(f"{path}: training config not found") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ReaderError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(settings, dict):
        raise ReaderError(f"{path}: expected a mapping of settings")
    settings.update({k: v for k, v in (overrides or {}).items() if v is not None})
    _check_settings(settings, str(path))
    return settings


def _check_settings(s: dict[str, Any], source: str) -> None:
    s.setdefault("log_every", 0)  # runs started before these settings existed
    s.setdefault("box_jitter", 0)
    s.setdefault("group_by_length", False)
    s.setdefault("position_bias_lr", 1.0)
    def need(key: str, ok: bool, what: str) -> None:
        if not ok:
            raise ReaderError(f"{source}: {key}: {what} (got {s.get(key)!r})")

    def is_int(v: Any, lo: int) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= lo

    def is_num(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    for key, lo in (("epochs", 1), ("batch", 1), ("max_patches", 1), ("max_target_tokens", 2), ("workers", 0),
                    ("val_max_samples", 0), ("seed", 0), ("log_every", 0), ("box_jitter", 0)):
        need(key, is_int(s.get(key), lo), f"must be an integer >= {lo}")
    for key in ("lr", "weight_decay", "grad_clip", "position_bias_lr"):
        need(key, is_num(s.get(key)) and s[key] >= 0, "must be a number >= 0")
    need("warmup", is_num(s.get("warmup")) and 0 <= s["warmup"] < 1, "must be a fraction in [0, 1)")
    need("schedule", s.get("schedule") in ("linear", "cosine"), "must be linear or cosine")
    need("split", isinstance(s.get("split"), str), "must be a split spec like val:2800-2999")
    need("group_by_length", isinstance(s.get("group_by_length"), bool), "must be true or false")
    need("threads", s.get("threads") is None or is_int(s.get("threads"), 1), "must be null or an integer >= 1")
    mask = s.get("semi_mask") or {}
    need("semi_mask", isinstance(mask, dict) and not set(mask) - set(DEFAULT_MASK),
         f"must be a mapping of {sorted(DEFAULT_MASK)}")
    if s.get("base") is None:
        models = s.get("models")
        need("models", isinstance(models, dict), "must map config names to {vision: ..., text: ...}")
        need("model", s.get("model") in models, f"must name one of the configs under models: {sorted(models)}")
        spec = models[s["model"]]
        need("model", isinstance(spec, dict) and isinstance(spec.get("vision"), dict)
             and isinstance(spec.get("text"), dict), "its config needs vision: {...} and text: {...}")


# --- samples ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One labelled element: where its screenshot is, its box and its target string."""

    image: str
    bbox: tuple[int, int, int, int]
    target: str


def build_samples(data: str | Path, split: str, *, max_samples: int | None = None, val_max_samples: int = 0,
                  seed: int = 0) -> tuple[list[Sample], list[Sample], dict[str, Any]]:
    """Train and validation samples of a caap dataset (annotations read; images not opened)."""
    from caap.data.export import SplitRule, format_seed_ranges, load_items, split_of
    from caap.data.format import DatasetError

    try:
        rule = SplitRule.parse(split)
        items = load_items(data)
    except DatasetError as exc:
        raise ReaderError(str(exc)) from None
    samples: dict[str, list[Sample]] = {"train": [], "val": []}
    types: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    seeds: dict[str, set[int]] = {"train": set(), "val": set()}
    for item in items:
        side = split_of(item.ann, rule)
        if item.ann.source.seed is not None:
            seeds[side].add(item.ann.source.seed)
        for e in item.ann.elements:
            samples[side].append(Sample(str(item.image_path), tuple(e.bbox), encode_target(e)))
            types[side][e.type.value] += 1
    for side in ("train", "val"):
        if not samples[side]:
            raise ReaderError(f"{data}: split '{rule}' leaves no labelled elements in the {side} split "
                              f"(train seeds {format_seed_ranges(seeds['train'])}, "
                              f"val seeds {format_seed_ranges(seeds['val'])})")
    train = _subset(samples["train"], max_samples, seed)
    caps = [v for v in (max_samples, val_max_samples) if v]
    val = _spread(samples["val"], min(caps) if caps else None)
    info = {"split": str(rule), "elements": {k: len(v) for k, v in samples.items()},
            "used": {"train": len(train), "val": len(val)},
            "types": {k: dict(sorted(c.items())) for k, c in types.items()}}
    return train, val, info


def _subset(samples: list[Sample], k: int | None, seed: int) -> list[Sample]:
    """A seeded random subset (all types mixed, not the first task alone), in dataset order."""
    if not k or k >= len(samples):
        return samples
    keep = sorted(random.Random(seed).sample(range(len(samples)), k))
    return [samples[i] for i in keep]


def _spread(samples: list[Sample], k: int | None) -> list[Sample]:
    """An even spread of ``k`` samples: the same ones every epoch, so epochs compare."""
    if not k or k >= len(samples):
        return samples
    step = len(samples) / k
    return [samples[int(i * step)] for i in range(k)]


def jitter_box(box: tuple[int, int, int, int], jitter: int, width: int, height: int,
               rng: random.Random) -> tuple[int, int, int, int]:
    """``box`` with each side moved by a uniform integer in [-jitter, jitter], kept inside the image
    and at least one pixel wide and high — the error a detector box has against the true one."""
    x1, y1, x2, y2 = (v + rng.randint(-jitter, jitter) for v in box)
    x1, y1 = min(max(x1, 0), width - 1), min(max(y1, 0), height - 1)
    return x1, y1, min(max(x2, x1 + 1), width), min(max(y2, y1 + 1), height)


class ElementDataset:
    """A map-style torch dataset: sample i → (semi-masked screenshot, target token ids).

    ``jitter`` (training only) moves every side of the box by up to that many pixels, differently
    each epoch (``epoch`` is set by the training loop), so the reader learns to read detector boxes,
    which are off by a pixel or two, and not only the exact labelled ones."""

    def __init__(self, samples: list[Sample], tokenizer: Any, mask: dict[str, Any], max_target_tokens: int,
                 *, jitter: int = 0, seed: int = 0) -> None:
        self.samples, self.tokenizer, self.mask, self.max_tokens = samples, tokenizer, mask, max_target_tokens
        self.jitter, self.seed, self.epoch = jitter, seed, 0

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> tuple[Any, list[int], Sample]:
        from PIL import Image, UnidentifiedImageError

        s = self.samples[index]
        try:
            with Image.open(s.image) as im:
                image = im.convert("RGB")
        except (OSError, UnidentifiedImageError) as exc:
            raise ReaderError(f"{s.image}: not a readable image ({exc})") from None
        ids = self.tokenizer(s.target).input_ids  # bytes + eos
        if len(ids) > self.max_tokens:
            ids = [*ids[: self.max_tokens - 1], self.tokenizer.eos_token_id]
        box = s.bbox
        if self.jitter:
            rng = random.Random(f"{self.seed}:{self.epoch}:{index}")
            box = jitter_box(box, self.jitter, image.width, image.height, rng)
        return semi_mask(image, box, **self.mask), ids, s


class Collate:
    """Batch: one image-processor call for all images, labels padded with -100 (ignored by the loss)."""

    def __init__(self, processor: Any, max_patches: int) -> None:
        self.processor, self.max_patches = processor, max_patches

    def __call__(self, batch: list[tuple[Any, list[int], Sample]]) -> dict[str, Any]:
        import torch

        images, ids, samples = zip(*batch, strict=True)
        inputs = prepare_images(images, self.processor, self.max_patches)
        width = max(len(x) for x in ids)
        labels = torch.full((len(ids), width), -100, dtype=torch.long)
        for row, x in enumerate(ids):
            labels[row, : len(x)] = torch.tensor(x, dtype=torch.long)
        return {**inputs, "labels": labels, "samples": list(samples)}


# --- the model ----------------------------------------------------------------------------------


def build_model(spec: dict[str, Any], *, vocab_size: int, max_patches: int) -> Any:
    """A from-scratch Pix2Struct model from a ``models:`` entry of the training config."""
    from transformers import (
        Pix2StructConfig,
        Pix2StructForConditionalGeneration,
        Pix2StructTextConfig,
        Pix2StructVisionConfig,
    )

    try:
        text = Pix2StructTextConfig(**{"dropout_rate": 0.1, **spec["text"], "vocab_size": vocab_size,
                                       "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
                                       "use_cache": True})
        vision = Pix2StructVisionConfig(**{**spec["vision"], "patch_embed_hidden_size": PATCH_VALUES,
                                           "seq_len": max(int(spec["vision"].get("seq_len", 0)), max_patches + 1)})
        config = Pix2StructConfig(text_config=text, vision_config=vision, is_vqa=False)
    except (TypeError, ValueError) as exc:
        raise ReaderError(f"model config: {exc}") from None
    return Pix2StructForConditionalGeneration(config)


def load_base(base: str, *, vocab_size: int, max_patches: int, pad: int, eos: int) -> Any:
    """Weights to fine-tune: a local directory or a hub id (only when the hub is allowed)."""
    path = Path(base).expanduser()
    offline = os.environ.get("HF_HUB_OFFLINE", "1").strip().lower() not in ("0", "false", "no", "off", "")
    if not path.exists() and offline:
        raise ReaderError(f"base {base!r}: no such local directory, and the model hub is off "
                          "(HF_HUB_OFFLINE=1); give a local checkpoint or set HF_HUB_OFFLINE=0 to download it")
    if path.exists():
        model = load_model(path)
    else:
        try:
            from transformers import Pix2StructForConditionalGeneration

            model = Pix2StructForConditionalGeneration.from_pretrained(base)
        except Exception as exc:
            raise ReaderError(f"base {base!r}: cannot load it from the hub ({type(exc).__name__}: {exc})") from None
    model.train()
    if model.config.text_config.vocab_size != vocab_size:
        # The byte tokenizer is the only one caap uses: a base with another vocabulary (e.g. the
        # original Pix2Struct's) keeps its encoder and decoder but gets fresh byte embeddings.
        print(f"note: base vocabulary {model.config.text_config.vocab_size} → byte vocabulary {vocab_size} "
              "(token embeddings re-learned)", file=sys.stderr)
        model.resize_token_embeddings(vocab_size)
        model.config.text_config.vocab_size = vocab_size
    seq_len = model.config.vision_config.seq_len
    if seq_len < max_patches + 1:
        raise ReaderError(f"base {base!r}: its vision seq_len {seq_len} cannot take max_patches {max_patches}")
    for cfg in (model.config, model.config.text_config, model.generation_config):
        cfg.pad_token_id, cfg.eos_token_id, cfg.decoder_start_token_id = pad, eos, pad
    return model


# --- metrics ------------------------------------------------------------------------------------


def validate(model: Any, tokenizer: Any, loader: Any, device: str, max_new_tokens: int) -> dict[str, Any]:
    """Teacher-forced loss, and the exact match / type accuracy of greedy generations."""
    import torch

    model.eval()
    loss_sum = exact = type_ok = n = 0
    with torch.inference_mode():
        for batch in loader:
            inputs = {k: batch[k].to(device) for k in ("flattened_patches", "attention_mask")}
            out = model(**inputs, labels=batch["labels"].to(device))
            loss_sum += float(out.loss) * len(batch["samples"])
            texts = generate_texts(model, tokenizer, inputs, max_new_tokens)
            for text, s in zip(texts, batch["samples"], strict=True):
                pred, gold = decode_target(text, s.bbox), decode_target(s.target, s.bbox)
                exact += same_record(pred, gold)
                type_ok += pred.type == gold.type
                n += 1
    model.train()
    return {"val_loss": round(loss_sum / max(n, 1), 5), "exact_match": round(exact / max(n, 1), 4),
            "type_accuracy": round(type_ok / max(n, 1), 4), "val_samples": n}


class LengthGroupedBatches:
    """Shuffled batches of samples with similar target lengths: each window of ``batch * window``
    shuffled samples is sorted by target length and cut into batches, and the batches are shuffled.
    Labels are padded to the longest target of a batch, so random batches waste much of the decoder's
    work on padding (targets run from ~10 to ~200 bytes). The order follows ``generator``, so a
    resumed run sees the same batches."""

    def __init__(self, samples: list[Sample], batch: int, generator: Any, window: int = 50) -> None:
        self.lengths = [len(s.target.encode("utf-8")) for s in samples]
        self.batch, self.generator, self.window = batch, generator, window

    def __len__(self) -> int:
        return math.ceil(len(self.lengths) / self.batch)

    def __iter__(self) -> Any:
        import torch

        order = torch.randperm(len(self.lengths), generator=self.generator).tolist()
        span = self.batch * self.window
        batches = []
        for lo in range(0, len(order), span):
            chunk = sorted(order[lo:lo + span], key=self.lengths.__getitem__)
            batches += [chunk[i:i + self.batch] for i in range(0, len(chunk), self.batch)]
        for i in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[i]


def param_groups(model: Any, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """AdamW groups: weight decay on weight matrices only (not norms, biases, or the decoder's
    relative position bias), and the position bias at ``position_bias_lr`` times the learning rate.

    Why the position bias gets its own rate: Pix2Struct's decoder knows token positions only
    through this one small table (buckets x heads), added to unscaled attention logits. Trained at
    the common rate from scratch it stayed near its initial values, and the decoder could not tell
    "but" from "butt": it wrote "buton" and looped on "tttt" (measured on the first CPU reader)."""
    scale = float(settings.get("position_bias_lr", 1.0))
    decay, no_decay, position = [], [], []
    for name, p in model.named_parameters():
        if "relative_attention_bias" in name and scale != 1.0:  # 1.0: the two groups of earlier runs
            position.append(p)
        elif p.ndim < 2 or "norm" in name.lower():
            no_decay.append(p)
        else:
            decay.append(p)
    lr = float(settings["lr"])
    groups = [{"params": decay, "weight_decay": float(settings["weight_decay"]), "lr": lr},
              {"params": no_decay, "weight_decay": 0.0, "lr": lr}]
    if position:
        groups.append({"params": position, "weight_decay": 0.0, "lr": lr * scale})
    return groups


def _loader(dataset: ElementDataset, collate: Collate, batch: int, workers: int, *, shuffle: bool,
            generator: Any = None, group_by_length: bool = False) -> Any:
    from torch.utils.data import DataLoader

    if shuffle and group_by_length:
        return DataLoader(dataset, batch_sampler=LengthGroupedBatches(dataset.samples, batch, generator),  # type: ignore[arg-type]
                          collate_fn=collate, num_workers=workers, persistent_workers=False)
    return DataLoader(dataset, batch_size=batch, shuffle=shuffle, generator=generator, collate_fn=collate,  # type: ignore[arg-type]
                      num_workers=workers, persistent_workers=False, drop_last=False)


def _clean(exc: Exception) -> str:
    """A ReaderError raised in a DataLoader worker arrives wrapped with the worker's traceback; keep its message."""
    lines = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else str(exc)
    return last.split("ReaderError: ", 1)[-1]


def _schedule(kind: str, warmup_steps: int, total_steps: int) -> Any:
    def factor(step: int) -> float:
        if warmup_steps and step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
        return 0.5 * (1 + math.cos(math.pi * progress)) if kind == "cosine" else 1.0 - progress

    return factor


def _continue(kind: str, start: float, steps: int) -> Any:
    """A schedule from ``start`` (a factor of the base learning rate) down to 0 over ``steps``."""
    def factor(step: int) -> float:
        progress = min(1.0, step / max(1, steps))
        return start * (0.5 * (1 + math.cos(math.pi * progress)) if kind == "cosine" else 1.0 - progress)

    return factor


# --- training -----------------------------------------------------------------------------------


def train(
    data: str | Path,
    *,
    config: str | Path | None = None,
    base: str | None = None,
    model_config: str | None = None,
    epochs: int | None = None,
    device: str | None = None,
    batch: int | None = None,
    split: str | None = None,
    out: str | Path = "runs/reader/train",
    resume: bool = False,
    max_samples: int | None = None,
) -> Path:
    """Train the reader; returns the run directory (the checkpoint to use is ``out/best``).

    ``base`` fine-tunes a checkpoint (local directory; a hub id only with HF_HUB_OFFLINE=0) instead
    of building ``model_config`` (a name under ``models:`` in the config) from scratch.
    ``max_samples`` caps the training elements (a seeded random subset) and the validation ones.
    """
    import torch

    out = Path(out)
    run_file, state_path = out / "caap-train.json", out / "last" / STATE_FILE
    if resume:
        if not state_path.is_file():
            raise ReaderError(f"nothing to resume: {state_path} does not exist")
        try:
            record = json.loads(run_file.read_text(encoding="utf-8"))
            settings = record["settings"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ReaderError(f"{run_file}: cannot resume without the run's settings ({exc})") from None
        settings.update({k: v for k, v in {"epochs": epochs, "device": device}.items() if v is not None})
        _check_settings(settings, str(run_file))
        if max_samples is None:
            max_samples = record.get("max_samples")  # the same subset as before
    else:
        if (out / "metrics.jsonl").exists() or (out / "last").exists():
            raise ReaderError(f"{out}: already holds a run (pass resume=True to continue it, or choose another out)")
        settings = load_settings(config, {"base": base, "model": model_config, "epochs": epochs, "device": device,
                                          "batch": batch, "split": split})
        record = {}
    if settings.get("threads"):
        torch.set_num_threads(int(settings["threads"]))
    dev = resolve_device(settings.get("device"))
    seed = int(settings["seed"])
    torch.manual_seed(seed)
    mask = {**DEFAULT_MASK, **(settings.get("semi_mask") or {})}
    max_patches = int(settings["max_patches"])
    tokenizer, processor = build_processing(max_patches)

    train_samples, val_samples, info = build_samples(data, settings["split"], max_samples=max_samples,
                                                     val_max_samples=int(settings["val_max_samples"]), seed=seed)
    longest = max(len(s.target.encode("utf-8")) + 1 for s in train_samples)  # bytes + eos
    max_new_tokens = min(longest, int(settings["max_target_tokens"]))

    # Model: the last checkpoint (resume), a base checkpoint, or a config from scratch.
    if resume:
        model = load_model(out / "last", dev).train()
    elif settings.get("base"):
        model = load_base(str(settings["base"]), vocab_size=len(tokenizer), max_patches=max_patches,
                          pad=tokenizer.pad_token_id, eos=tokenizer.eos_token_id).to(dev)
    else:
        model = build_model(settings["models"][settings["model"]], vocab_size=len(tokenizer),
                            max_patches=max_patches).to(dev)
    model.train()
    params = sum(p.numel() for p in model.parameters())

    train_set = ElementDataset(train_samples, tokenizer, mask, int(settings["max_target_tokens"]),
                               jitter=int(settings["box_jitter"]), seed=seed)
    val_set = ElementDataset(val_samples, tokenizer, mask, int(settings["max_target_tokens"]))
    collate = Collate(processor, max_patches)
    workers, bs = int(settings["workers"]), int(settings["batch"])
    shuffle_gen = torch.Generator()
    train_loader = _loader(train_set, collate, bs, workers, shuffle=True, generator=shuffle_gen,
                           group_by_length=bool(settings["group_by_length"]))
    val_loader = _loader(val_set, collate, bs, workers, shuffle=False)

    total_epochs = int(settings["epochs"])
    steps_per_epoch = math.ceil(len(train_set) / bs)
    total_steps = steps_per_epoch * total_epochs
    optimizer = torch.optim.AdamW(param_groups(model, settings), lr=float(settings["lr"]))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, _schedule(settings["schedule"], int(float(settings["warmup"]) * total_steps), total_steps))
    start_epoch, best = 0, {"exact_match": -1.0, "val_loss": math.inf}
    if resume:
        try:
            state = torch.load(state_path, map_location="cpu", weights_only=True)
            optimizer.load_state_dict(state["optimizer"])
            start_epoch, best = int(state["epoch"]), dict(state["best"])
        except Exception as exc:
            raise ReaderError(f"{state_path}: not a usable trainer state ({type(exc).__name__}: {exc})") from None
        if start_epoch >= total_epochs:
            raise ReaderError(f"{out}: already trained {start_epoch} of {total_epochs} epochs "
                              "(pass a larger epochs to train longer)")
        # The rest of the schedule is planned again: from the rate the (possibly new) plan has after
        # start_epoch epochs down to 0 over the steps still to run. So a resume may change epochs
        # (train longer: a warm restart) or max_samples (finish sooner) and still end annealed; with
        # nothing changed it is the original schedule.
        plan = _schedule(settings["schedule"], int(float(settings["warmup"]) * total_steps), total_steps)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, _continue(settings["schedule"], plan(start_epoch * steps_per_epoch),
                                 steps_per_epoch * (total_epochs - start_epoch)))

    out.mkdir(parents=True, exist_ok=True)
    record = {
        **record,
        "command": record.get("command") or " ".join(sys.argv),
        "data": str(data),
        "settings": settings,
        "max_samples": max_samples,
        "model": settings.get("base") or settings.get("model"),
        "params": params,
        "samples": info,
        "max_new_tokens": max_new_tokens,
        "device": dev,
        "started": record.get("started") or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if resume:
        record["resumed"] = [*record.get("resumed", []), {"epoch": start_epoch, "epochs": total_epochs,
                                                          "max_samples": max_samples,
                                                          "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                                          "command": " ".join(sys.argv)}]
    run_file.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    meta_extra = {"model": record["model"], "params": params, "trained_on": str(data)}
    print(f"reader: {params / 1e6:.2f}M params, {len(train_set)} train / {len(val_set)} val elements, "
          f"{steps_per_epoch} steps/epoch on {dev}", file=sys.stderr)

    grad_clip = float(settings["grad_clip"])
    log_every = int(settings["log_every"])
    try:
        for epoch in range(start_epoch, total_epochs):
            shuffle_gen.manual_seed(seed + epoch)  # the same order (and jitter) after a resume
            train_set.epoch = epoch
            t0, loss_sum, seen = time.perf_counter(), 0.0, 0
            for batch_data in train_loader:
                inputs = {k: batch_data[k].to(dev) for k in ("flattened_patches", "attention_mask", "labels")}
                loss = model(**inputs).loss
                loss.backward()
                if grad_clip:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad(set_to_none=True)
                loss_sum += loss.item() * len(batch_data["samples"])
                seen += len(batch_data["samples"])
                step = seen // bs if seen % bs == 0 else seen // bs + 1
                if log_every and step % log_every == 0:
                    rate = seen / (time.perf_counter() - t0)
                    left = (len(train_set) - seen) / max(rate, 1e-9)
                    print(f"  epoch {epoch + 1} step {step}/{steps_per_epoch}: loss {loss_sum / seen:.4f} "
                          f"lr {scheduler.get_last_lr()[0]:.2e} {rate:.1f} samples/s, "
                          f"epoch ends in {left / 60:.0f} min",
                          file=sys.stderr, flush=True)
            train_s = time.perf_counter() - t0
            metrics = {"epoch": epoch + 1, "train_loss": round(loss_sum / max(seen, 1), 5),
                       **validate(model, tokenizer, val_loader, dev, max_new_tokens),
                       "lr": scheduler.get_last_lr()[0], "train_samples_per_s": round(seen / train_s, 2),
                       "seconds": round(time.perf_counter() - t0, 1)}
            improved = (metrics["exact_match"], -metrics["val_loss"]) > (best["exact_match"], -best["val_loss"])
            if improved:
                best = {"exact_match": metrics["exact_match"], "val_loss": metrics["val_loss"], "epoch": epoch + 1}
                save_checkpoint(model, out / "best", max_patches=max_patches, mask=mask,
                                max_new_tokens=max_new_tokens, extra={**meta_extra, "epoch": epoch + 1,
                                                                      "val": metrics})
            metrics["best"] = improved
            save_checkpoint(model, out / "last", max_patches=max_patches, mask=mask, max_new_tokens=max_new_tokens,
                            extra={**meta_extra, "epoch": epoch + 1, "val": metrics})
            tmp = state_path.with_name(f".{STATE_FILE}.tmp")
            # No scheduler state: a resume plans the rest of the schedule again (see above).
            torch.save({"optimizer": optimizer.state_dict(), "epoch": epoch + 1, "best": best}, tmp)
            os.replace(tmp, state_path)  # written last: a crash mid-save resumes from the previous epoch
            with (out / "metrics.jsonl").open("a", encoding="utf-8") as f:
                f.write(json.dumps(metrics) + "\n")
            print(f"epoch {epoch + 1}/{total_epochs}: loss {metrics['train_loss']:.4f} val {metrics['val_loss']:.4f} "
                  f"exact {metrics['exact_match']:.3f} type {metrics['type_accuracy']:.3f} "
                  f"({metrics['train_samples_per_s']:.1f} samples/s){' *' if improved else ''}", file=sys.stderr)
    except ReaderError as exc:
        if "Traceback" in str(exc):  # raised inside a DataLoader worker: keep the message, drop its traceback
            raise ReaderError(_clean(exc)) from None
        raise
    return out
