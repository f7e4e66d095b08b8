"""Train the element reader: Pix2Struct with a CTC text head (``caap.observe.read.modeling``).

Samples (``caap.train.reader_data``): one per labelled element of real screens and of synthetic
text screens. Loss: ``ctc_weight`` × CTC (the text, from the encoder's columns) + (1 − ``ctc_weight``)
× the decoder's cross-entropy (the record). Settings come from ``training/reader.yaml``, validated
by ``ReaderTrainSettings``; flags override them.

A run is planned in samples (``train_samples``) and may also be capped in wall-clock minutes
(``max_minutes``): the learning rate follows whichever is further along, so an equal-time A/B of two
recipes gives each a complete schedule. Every ``eval_every_minutes`` the model reads the validation
elements the way ``caap observe`` does (``Reader.read`` on each screen) and a line goes to
``metrics.jsonl`` (the learning curve); every ``checkpoint_every_minutes`` ``last/`` is rewritten
with the model, the optimizer and the exact position in the sample stream, so ``resume`` continues
a run cut off at any point. The run directory ``out``::

    best/            the checkpoint with the best validation text exact match (a Reader loads it)
    last/            the latest checkpoint + trainer_state.pt
    metrics.jsonl    one line per evaluation
    caap-train.json  settings, data, sample counts, parameter count, commands (resumes appended)

Several processes: launched with ``torchrun --nproc_per_node N -m caap.cli train reader ...`` (or
``accelerate launch``), each process trains on its share of every batch under
``DistributedDataParallel`` (gloo on CPU, NCCL on GPUs); process 0 evaluates and writes.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from caap.observe.read.configuration import (
    CHECKPOINT_FILE,
    DEFAULT_MASK,
    DEFAULT_PATCH,
    ReaderError,
    ReaderSpec,
    build_tokenizer,
    load_model,
    resolve_device,
    save_checkpoint,
)
from caap.observe.read.ctc import COVERAGE, Alphabet
from caap.observe.read.inference import Reader
from caap.observe.read.processing import colour_set, patch_values
from caap.observe.read.target import decode_target, same_record
from caap.taxonomy import BOOLEAN_ATTRIBUTES, SUBTYPE, TEXT, attributes_of
from caap.train.reader_data import (
    BatchPrefetch,
    Collate,
    GroupedBatches,
    MixedStream,
    Sample,
    load_samples,
    patch_shape,
    record_target,
    spread,
)
from caap.train.settings import load_settings as read_settings
from caap.train.settings import validation_message

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = REPO_ROOT / "training" / "reader.yaml"
STATE_FILE = "trainer_state.pt"
# A batch whose loss or gradient is not finite is skipped (the weights stay as they were) and written
# to skipped.jsonl; this many in a row means the run itself has diverged, and it stops.
MAX_SKIPPED_IN_A_ROW = 20


# --- settings -----------------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ModelSpec(_Strict):
    vision: dict[str, Any]
    text: dict[str, Any]


class MaskSettings(_Strict):
    # default= by name: mypy takes a positional default for a required field
    darken: float = Field(default=DEFAULT_MASK["darken"], ge=0, le=1)
    outline_px: int = Field(default=DEFAULT_MASK["outline_px"], ge=0)
    outline_rgb: tuple[int, int, int] = tuple(DEFAULT_MASK["outline_rgb"])  # type: ignore[assignment]
    context: int | None = Field(default=DEFAULT_MASK["context"], ge=0)


class ReaderTrainSettings(_Strict):
    """``training/reader.yaml``; see the comments there for what each setting is for."""

    model: str = "small"
    base: str | None = None
    models: dict[str, ModelSpec] = Field(default_factory=dict)
    patch: tuple[int, int] = DEFAULT_PATCH
    frames_per_column: int = Field(2, ge=1)
    ctc_context: int = Field(0, ge=0)
    ctc_context_layers: int = Field(2, ge=1)
    stem: list[int] = Field(default_factory=list)
    stem_over: Literal["patch", "image"] = "image"
    max_patches: int = Field(1024, ge=1)
    semi_mask: MaskSettings = Field(default_factory=MaskSettings)
    box_jitter: int = Field(2, ge=0)
    decoder_text: bool = False
    colour: Literal[False, True, "crop", "box"] = False  # caap.observe.read.processing; true = crop
    colour_lr: float = Field(10.0, gt=0)
    train_parts: Literal["all", "decoder"] = "all"
    ctc_weight: float = Field(0.5, ge=0, le=1)
    synthetic_share: float = Field(0.5, ge=0, le=1)
    batch: int = Field(32, ge=1)
    lr: float = Field(1e-3, ge=0)
    weight_decay: float = Field(0.01, ge=0)
    position_bias_lr: float = Field(1.0, ge=0)
    warmup: float = Field(0.03, ge=0, lt=1)
    schedule: Literal["linear", "cosine"] = "cosine"
    grad_clip: float = Field(1.0, ge=0)
    precision: Literal["fp32", "bf16"] = "fp32"
    train_samples: int = Field(400_000, ge=1)
    max_minutes: float | None = Field(None, gt=0)
    eval_every_minutes: float = Field(5.0, gt=0)
    checkpoint_every_minutes: float = Field(5.0, gt=0)
    val_max_samples: int = Field(1500, ge=0)
    max_target_tokens: int = Field(256, ge=2)
    log_every: int = Field(50, ge=0)
    threads: int | None = Field(None, ge=1)
    loader_workers: int = Field(0, ge=0)
    device: str = "auto"
    seed: int = Field(0, ge=0)
    split: str = "val:2800-2999"

    @model_validator(mode="after")
    def _model_known(self) -> ReaderTrainSettings:
        if self.base is None and self.model not in self.models:
            raise ValueError(f"model: {self.model!r} is not one of the configs under models: {sorted(self.models)}")
        if min(self.patch) < 1:
            raise ValueError(f"patch: {list(self.patch)} must be two positive sizes (height, width)")
        return self


def load_settings(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> ReaderTrainSettings:
    """``training/reader.yaml`` (or ``path``) with the non-None ``overrides`` applied, validated."""
    return read_settings(ReaderTrainSettings, path or DEFAULT_CONFIG, overrides, ReaderError)


# --- the model ----------------------------------------------------------------------------------


def _ctc_config(alphabet: Alphabet, settings: ReaderTrainSettings) -> dict[str, Any]:
    if settings.ctc_context and settings.ctc_context % 2 == 0:
        raise ReaderError(f"ctc_context must be odd (a centred kernel in patch columns), got {settings.ctc_context}")
    out: dict[str, Any] = {"classes": alphabet.size, "frames_per_column": settings.frames_per_column,
                           "context": settings.ctc_context, "context_layers": settings.ctc_context_layers}
    if settings.colour:
        out["colour"] = colour_set(settings.colour)
    if settings.stem:
        out.update(stem=list(settings.stem), patch=list(settings.patch), stem_over=settings.stem_over)
    return out


def build_model(settings: ReaderTrainSettings, *, vocab_size: int, alphabet: Alphabet) -> Any:
    """A from-scratch ``ReaderModel`` from the ``models:`` entry the settings name."""
    from transformers import Pix2StructConfig, Pix2StructTextConfig, Pix2StructVisionConfig

    from caap.observe.read.modeling import ReaderModel

    spec = settings.models[settings.model]
    try:
        text = Pix2StructTextConfig(**{"dropout_rate": 0.1, **spec.text, "vocab_size": vocab_size,
                                       "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
                                       "use_cache": True})
        vision = Pix2StructVisionConfig(**{**spec.vision, "patch_embed_hidden_size": patch_values(*settings.patch),
                                           "seq_len": max(int(spec.vision.get("seq_len", 0)),
                                                          settings.max_patches + 1)})
        # The config keeps extra attributes (ctc) that its dataclass-style signature leaves out.
        config = Pix2StructConfig(text_config=text, vision_config=vision, is_vqa=False,  # type: ignore[call-arg]
                                  ctc=_ctc_config(alphabet, settings))
    except (TypeError, ValueError) as exc:
        raise ReaderError(f"model config {settings.model!r}: {exc}") from None
    return ReaderModel(config)


def load_base(settings: ReaderTrainSettings, *, vocab_size: int, alphabet: Alphabet, pad: int, eos: int) -> Any:
    """A Pix2Struct checkpoint to fine-tune (local directory, or a hub id where the hub is allowed),
    given a fresh CTC head; a different patch size or vocabulary re-learns only those layers."""
    from transformers import Pix2StructConfig, PreTrainedConfig

    from caap.observe.read.modeling import ReaderModel

    base = str(settings.base)
    path = Path(base).expanduser()
    offline = os.environ.get("HF_HUB_OFFLINE", "1").strip().lower() not in ("0", "false", "no", "off", "")
    if not path.exists() and offline:
        raise ReaderError(f"base {base!r}: no such local directory, and the model hub is off "
                          "(HF_HUB_OFFLINE=1); give a local checkpoint or set HF_HUB_OFFLINE=0 to download it")
    source = str(path) if path.exists() else base
    try:
        config = Pix2StructConfig.from_pretrained(source)
        base_ctc = getattr(config, "ctc", None)
        config.ctc = _ctc_config(alphabet, settings)
        if isinstance(base_ctc, dict) and base_ctc.get("colour") and not settings.colour:
            # A fine-tune that does not mention colour keeps the base's trained colour layers
            # (from_pretrained would drop them, and the states read from colour with them).
            config.ctc["colour"] = base_ctc["colour"]
            print(f"note: the base reads colour ({base_ctc['colour']}): its colour layers are kept", file=sys.stderr)
        vision = config.vision_config
        assert isinstance(vision, PreTrainedConfig)  # the config turned a dict or None into its vision config
        if vision.patch_embed_hidden_size != patch_values(*settings.patch):
            print(f"note: base patches of {vision.patch_embed_hidden_size} values → "
                  f"{settings.patch[0]}x{settings.patch[1]} px patches (patch projection re-learned)", file=sys.stderr)
            vision.patch_embed_hidden_size = patch_values(*settings.patch)
        # With output_loading_info the result is a (model, info) pair; transformers types only the model.
        model, loading = cast(tuple[Any, dict[str, Any]], ReaderModel.from_pretrained(
            source, config=config, ignore_mismatched_sizes=True, output_loading_info=True))
    except Exception as exc:
        raise ReaderError(f"base {base!r}: cannot load it ({type(exc).__name__}: {exc})") from None
    if any(str(k).startswith("colour.") for k in loading.get("missing_keys", ())):
        model.reset_colour()  # new to this base: start from "no colour" (from_pretrained's init is random)
        print("note: base has no colour layers: they start at zero", file=sys.stderr)
    model = model.float()  # a shipped checkpoint is stored in float16; training keeps float32 weights
    _finer_frames(model, base_ctc, path if path.exists() else None)
    _grown_alphabet(model, base_ctc, path if path.exists() else None)
    if model.config.text_config.vocab_size != vocab_size:
        # The byte tokenizer is the only one caap uses: a base with another vocabulary keeps its
        # encoder and decoder but gets fresh byte embeddings.
        print(f"note: base vocabulary {model.config.text_config.vocab_size} → byte vocabulary {vocab_size} "
              "(token embeddings re-learned)", file=sys.stderr)
        model.resize_token_embeddings(vocab_size)
        model.config.text_config.vocab_size = vocab_size
    if model.config.vision_config.seq_len < settings.max_patches + 1:
        raise ReaderError(f"base {base!r}: its vision seq_len {model.config.vision_config.seq_len} cannot take "
                          f"max_patches {settings.max_patches}")
    for cfg in (model.config, model.config.text_config, model.generation_config):
        cfg.pad_token_id, cfg.eos_token_id, cfg.decoder_start_token_id = pad, eos, pad
    return model


def _saved_ctc_head(directory: Path) -> tuple[Any, Any] | None:
    """The CTC head's weight and bias as a checkpoint directory stores them (float32), or None."""
    from safetensors import safe_open

    weights = directory / "model.safetensors"
    if not weights.is_file():
        return None
    with safe_open(str(weights), "pt") as f:
        if "ctc_head.weight" not in set(f.keys()):
            return None
        return f.get_tensor("ctc_head.weight").float(), f.get_tensor("ctc_head.bias").float()


def _finer_frames(model: Any, base_ctc: Any, directory: Path | None) -> None:
    """A base whose CTC head reads ``k`` frames per column, fine-tuned with ``r·k`` frames over the
    same characters: each of its frames becomes ``r`` copies, so the model starts out reading
    exactly as the base does (repeated frames collapse) and learns to use the finer steps —
    narrow glyphs ("l", "i", ".") need a blank between neighbours that 2 px frames can miss."""
    new = model.config.ctc
    if directory is None or not isinstance(base_ctc, dict) or base_ctc.get("classes") != new["classes"]:
        return
    old_frames, frames = int(base_ctc.get("frames_per_column", 1)), int(new["frames_per_column"])
    if frames == old_frames or frames % old_frames:
        return
    import torch

    saved = _saved_ctc_head(directory)
    if saved is None:
        return
    weight, bias = saved
    repeat, classes = frames // old_frames, int(new["classes"])
    head = model.ctc_head
    with torch.no_grad():
        head.weight.copy_(weight.view(old_frames, classes, -1).repeat_interleave(repeat, 0).reshape(head.weight.shape))
        head.bias.copy_(bias.view(old_frames, classes).repeat_interleave(repeat, 0).reshape(head.bias.shape))
    print(f"note: base CTC head of {old_frames} frames per column → {frames} (each frame copied {repeat}x)",
          file=sys.stderr)


def base_alphabet(settings: ReaderTrainSettings, texts: Iterable[str]) -> Alphabet:
    """The CTC alphabet of a run: a caap base checkpoint's own characters first, in its order (so
    its CTC head's rows keep their meaning, ``_grown_alphabet``), then the new data's other
    characters; without such a base, the coverage set and the data's characters."""
    built = Alphabet.build(texts, COVERAGE)
    meta = Path(str(settings.base)).expanduser() / "caap-reader.json" if settings.base else None
    if meta is None or not meta.is_file():
        return built
    from caap.observe.read.configuration import load_checkpoint_meta

    old = str(load_checkpoint_meta(meta.parent)["alphabet"])
    return Alphabet(old + "".join(ch for ch in built.chars if ch not in set(old)))


def grow_ctc_rows(weight: Any, bias: Any, frames: int, old_classes: int, classes: int) -> tuple[Any, Any]:
    """A CTC head of ``old_classes`` per frame widened to ``classes``: the known rows as they were,
    each new character a copy of the "unknown" row (the head read those glyphs as unknown)."""
    import torch

    from caap.observe.read.ctc import UNKNOWN

    hidden = weight.shape[-1]
    old_w, old_b = weight.view(frames, old_classes, hidden), bias.view(frames, old_classes)
    w = torch.cat([old_w, old_w[:, UNKNOWN:UNKNOWN + 1].expand(frames, classes - old_classes, hidden)], dim=1)
    b = torch.cat([old_b, old_b[:, UNKNOWN:UNKNOWN + 1].expand(frames, classes - old_classes)], dim=1)
    return w.reshape(frames * classes, hidden), b.reshape(frames * classes)


def _grown_alphabet(model: Any, base_ctc: Any, directory: Path | None) -> None:
    """A base whose CTC head knows fewer characters than the run's alphabet (the base's characters
    first, ``base_alphabet``) keeps its rows for the characters it knows (``grow_ctc_rows``)
    instead of the whole head starting from random."""
    new = model.config.ctc
    if directory is None or not isinstance(base_ctc, dict):
        return
    old_classes, classes = int(base_ctc.get("classes", 0)), int(new["classes"])
    frames = int(new["frames_per_column"])
    if not 0 < old_classes < classes or int(base_ctc.get("frames_per_column", 1)) != frames:
        return
    import torch

    saved = _saved_ctc_head(directory)
    if saved is None:
        return
    w, b = grow_ctc_rows(*saved, frames, old_classes, classes)
    with torch.no_grad():
        model.ctc_head.weight.copy_(w)
        model.ctc_head.bias.copy_(b)
    print(f"note: base CTC head of {old_classes - 2} characters → {classes - 2} (its rows kept; new characters "
          "start as its unknown row)", file=sys.stderr)


def average_readers(directories: list[Path], shares: list[float]) -> tuple[Any, dict[str, Any]]:
    """The weighted mean of reader checkpoints of one lineage (a base and its fine-tunes: a "model
    soup"), as a model and the checkpoint metadata of the last one. A fine-tune that learned new
    screens forgets some of its base's (MiniWoB's mail icons, after the any-application fine-tune);
    the mean keeps most of both. A checkpoint whose alphabet is a prefix of the last one's (the
    fine-tune grew it, ``base_alphabet``) takes part with its CTC head grown as training grew it."""
    from caap.observe.read.configuration import load_checkpoint_meta, load_model

    if len(directories) != len(shares) or len(directories) < 2 or min(shares) < 0 or not sum(shares) > 0:
        raise ReaderError("average: two checkpoints or more, one share each, none negative, not all zero")
    metas = [load_checkpoint_meta(d) for d in directories]
    models = [load_model(d) for d in directories]
    target, last = metas[-1], models[-1]
    chars, frames = str(target["alphabet"]), int(last.config.ctc["frames_per_column"])
    states = []
    for d, meta, model in zip(directories, metas, models, strict=True):
        state = {k: v.float() for k, v in model.state_dict().items()}
        own = str(meta["alphabet"])
        if own != chars:
            if not chars.startswith(own) or int(model.config.ctc["frames_per_column"]) != frames:
                raise ReaderError(f"{d}: its alphabet is not the start of {directories[-1]}'s; "
                                  "only a base and its fine-tunes can be averaged")
            state["ctc_head.weight"], state["ctc_head.bias"] = grow_ctc_rows(
                state["ctc_head.weight"], state["ctc_head.bias"], frames, len(own) + 2, len(chars) + 2)
        if state.keys() != last.state_dict().keys() or any(
                state[k].shape != v.shape for k, v in last.state_dict().items()):
            raise ReaderError(f"{d}: its layers differ from {directories[-1]}'s")
        states.append(state)
    total = sum(shares)
    mixed = {k: sum(w / total * st[k] for w, st in zip(shares, states, strict=True)).to(v.dtype)
             for k, v in last.state_dict().items()}
    last.load_state_dict(mixed)
    meta = {**target, "averaged_from": [f"{d} x {w / total:.3f}" for d, w in zip(directories, shares, strict=True)]}
    return last, meta


def param_groups(model: Any, settings: ReaderTrainSettings) -> list[dict[str, Any]]:
    """AdamW groups: weight decay on weight matrices only (not norms, biases, or the decoder's
    relative position bias), and the position bias at ``position_bias_lr`` times the rate (Pix2Struct's
    decoder knows token positions only through that one small table)."""
    decay, no_decay, position, colour = [], [], [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if name.startswith("colour."):
            colour.append(p)
        elif "relative_attention_bias" in name and settings.position_bias_lr != 1.0:
            position.append(p)
        elif p.ndim < 2 or "norm" in name.lower():
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [{"params": decay, "weight_decay": settings.weight_decay, "base_lr": settings.lr},
              {"params": no_decay, "weight_decay": 0.0, "base_lr": settings.lr}]
    if position:
        groups.append({"params": position, "weight_decay": 0.0, "base_lr": settings.lr * settings.position_bias_lr})
    if colour:  # new layers starting from zero beside a trained decoder
        groups.append({"params": colour, "weight_decay": 0.0, "base_lr": settings.lr * settings.colour_lr})
    for g in groups:
        g["lr"] = g["base_lr"]
    return groups


def lr_factor(progress: float, settings: ReaderTrainSettings) -> float:
    """The learning rate, as a share of the base rate, at ``progress`` in [0, 1] of the run."""
    if progress < settings.warmup:
        return (progress + 1e-6) / settings.warmup
    rest = min(1.0, (progress - settings.warmup) / max(1e-9, 1.0 - settings.warmup))
    return 0.5 * (1 + math.cos(math.pi * rest)) if settings.schedule == "cosine" else 1.0 - rest


def freeze_reading(model: Any) -> int:
    """``train_parts: decoder``: everything but the decoder and the colour layers stops learning —
    the text (encoder + CTC head) stays exactly the base's — and the rest trains several times
    faster (the encoder runs without gradients). Returns the trainable parameter count."""
    trainable = 0
    for name, p in model.named_parameters():
        p.requires_grad_(name.startswith(("decoder.", "colour.")))
        trainable += p.numel() if p.requires_grad else 0
    return trainable


class JointObjective:
    """The training loss as one ``nn.Module`` (so ``DistributedDataParallel`` can wrap it): one
    encoder pass, the CTC loss on its columns, the decoder's cross-entropy on the record
    (``decoder_only``: the encoder without gradients and the decoder's loss alone)."""

    def __new__(cls, model: Any, ctc_weight: float, *, decoder_only: bool = False) -> Any:
        import torch
        import torch.nn.functional as F
        from torch import nn


        class _Objective(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, flattened_patches: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor,
                        ctc_targets: torch.Tensor, ctc_lengths: torch.Tensor, ctc_mask: torch.Tensor,
                        colour: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
                from transformers.modeling_outputs import BaseModelOutput

                with torch.set_grad_enabled(torch.is_grad_enabled() and not decoder_only):
                    encoded = self.model.encode(flattened_patches, attention_mask).last_hidden_state
                if decoder_only:
                    ctc = encoded.new_zeros(())
                else:
                    log_probs, frames = self.model.ctc_log_probs(encoded, attention_mask, flattened_patches)
                    per = F.ctc_loss(log_probs.transpose(0, 1), ctc_targets, frames, ctc_lengths, blank=0,
                                     reduction="none", zero_infinity=True)
                    ctc = (per / ctc_lengths.clamp(min=1) * ctc_mask).sum() / ctc_mask.sum().clamp(min=1)
                memory = self.model.decoder_memory(encoded, colour)
                decoder = self.model(encoder_outputs=BaseModelOutput(last_hidden_state=memory),
                                     attention_mask=attention_mask, labels=labels).loss
                if not bool((labels != -100).any()):  # a batch of text-area lines only: no record to learn
                    decoder = torch.nan_to_num(decoder) * 0.0
                if decoder_only:
                    return decoder, ctc, decoder.detach()
                return ctc_weight * ctc + (1 - ctc_weight) * decoder, ctc.detach(), decoder.detach()

        return _Objective()


# --- validation ---------------------------------------------------------------------------------


def validate(reader: Reader, samples: list[Sample], *, decoder_text: bool) -> dict[str, Any]:
    """Read the validation elements screen by screen, as ``caap observe`` does (labelled boxes,
    their true types as the detector's hints): text exact match, record exact match, type and state
    accuracy."""
    from collections import defaultdict

    import torch

    from caap.train.reader_data import ScreenCache

    reader.model.eval()
    by_screen: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        by_screen[s.image].append(s)
    cache = ScreenCache()
    n = record_exact = type_ok = text_n = text_exact = ctc_exact = 0
    states = {name: [0, 0] for name in (*BOOLEAN_ATTRIBUTES, SUBTYPE)}
    started = time.perf_counter()
    with torch.inference_mode():
        for image, group in by_screen.items():
            read = reader.read(cache.get(image), [s.bbox for s in group], [s.element.type for s in group])
            for s, got, reading in zip(group, read.elements, read.readings, strict=True):
                gold = s.element
                n += 1
                # The reader's own type: the hint it was given fills in only for unreadable records.
                type_ok += decode_target(reading.record, s.bbox).type == gold.type
                record_exact += same_record(got, gold)
                if TEXT in attributes_of(gold.type) and gold.text is not None:
                    text_n += 1
                    truth = " ".join(gold.text.split())
                    text_exact += " ".join((got.text or "").split()) == truth
                    ctc_exact += (reading.text or "") == truth  # the CTC head's own reading
                for name, counts in states.items():
                    if getattr(gold, name) is not None:
                        counts[1] += 1
                        counts[0] += getattr(got, name) == getattr(gold, name)
    reader.model.train()
    result = {"val_elements": n, "text_exact": round(text_exact / max(text_n, 1), 4),
              "ctc_text_exact": round(ctc_exact / max(text_n, 1), 4),
              "record_exact": round(record_exact / max(n, 1), 4), "type_accuracy": round(type_ok / max(n, 1), 4),
              "val_seconds": round(time.perf_counter() - started, 1)}
    result.update({f"{k}_accuracy": round(r / t, 4) for k, (r, t) in states.items() if t})
    return result


def record_length(samples: list[Sample], tokenizer: Any, *, with_text: bool, cap: int) -> int:
    """Generation length for the decoder: the longest training record (bytes + eos), capped."""
    longest = max(len(tokenizer(record_target(s.element, with_text=with_text)).input_ids) for s in samples)
    return min(longest, cap)


# --- distributed ----------------------------------------------------------------------------------


def _distributed() -> tuple[int, int, int]:
    """(rank, world size, local rank) — a process group when launched by torchrun/accelerate."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1, 0
    import torch
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    return dist.get_rank(), world, int(os.environ.get("LOCAL_RANK", "0"))


def _agree(flags: list[int], world: int) -> list[int]:
    """Process 0's decisions (evaluate, checkpoint, stop) for every process, so all take the same steps."""
    if world == 1:
        return flags
    import torch
    import torch.distributed as dist

    t = torch.tensor(flags, dtype=torch.int64)
    dist.broadcast(t, src=0)
    return [int(v) for v in t.tolist()]


# --- checkpoints ----------------------------------------------------------------------------------


def _log_skipped(out: Path, step: int, samples: list[Sample], loss: float, norm: float, main: bool) -> None:
    """One line in ``skipped.jsonl`` per skipped batch: which elements it held, to find the cause."""
    line = {"step": step, "loss": loss if math.isfinite(loss) else str(loss),
            "grad_norm": norm if math.isfinite(norm) else str(norm),
            "elements": [{"image": s.image, "bbox": list(s.bbox), "type": s.element.type.value} for s in samples]}
    if main:
        with (out / "skipped.jsonl").open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
    print(f"  step {step}: loss {loss} / gradient norm {norm} not finite: batch skipped", file=sys.stderr,
          flush=True)


def _save_last(out: Path, model: Any, spec: ReaderSpec, extra: dict[str, Any], state: dict[str, Any]) -> None:
    """Rewrite ``out/last`` as a whole: written beside it, then swapped in, so a run killed while
    saving still has the previous complete checkpoint."""
    import torch

    tmp, last, old = out / "last.tmp", out / "last", out / "last.old"
    shutil.rmtree(tmp, ignore_errors=True)
    save_checkpoint(model, tmp, spec, extra)
    torch.save(state, tmp / STATE_FILE)
    shutil.rmtree(old, ignore_errors=True)
    if last.exists():
        os.replace(last, old)
    os.replace(tmp, last)
    shutil.rmtree(old, ignore_errors=True)


def _last_dir(out: Path) -> Path | None:
    """The complete last checkpoint (``last/``, or ``last.old/`` if a save was cut off mid-swap)."""
    for name in ("last", "last.old"):
        d = out / name
        if (d / STATE_FILE).is_file() and (d / CHECKPOINT_FILE).is_file():
            return d
    return None


# --- training -----------------------------------------------------------------------------------


def train(
    data: list[str | Path] | str | Path | None = None,
    *,
    config: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    out: str | Path = "runs/reader/train",
    resume: bool = False,
    stop_after_samples: int | None = None,
) -> Path:
    """Train the reader on ``data`` (one or more caap datasets); returns the run directory.

    ``stop_after_samples``: end this session after that many more samples, with a checkpoint,
    leaving the plan as it is (``resume`` continues it exactly where it stopped).

    ``overrides``: settings that replace the config's (None values are ignored). With ``resume``
    the run in ``out`` continues with its own settings; ``overrides`` may then change
    ``train_samples``, ``max_minutes``, ``device``, ``threads`` and the evaluation/checkpoint periods."""
    import torch

    datasets = [data] if isinstance(data, str | Path) else list(data or [])
    if not datasets and not resume:
        raise ReaderError("no training data given")
    out = Path(out)
    run_file = out / "caap-train.json"
    rank, world, local_rank = _distributed()
    main = rank == 0
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    last = _last_dir(out) if resume else None
    if resume:
        if last is None:
            raise ReaderError(f"nothing to resume: {out} has no complete last/ checkpoint")
        try:
            record = json.loads(run_file.read_text(encoding="utf-8"))
            settings = ReaderTrainSettings.model_validate(record["settings"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ReaderError(f"{run_file}: cannot resume without the run's settings ({exc})") from None
        # The sample stream's position only means something over the same datasets.
        recorded: list[str | Path] = [str(d) for d in record.get("data", [])]
        if not datasets:
            datasets = recorded
        elif recorded and [str(d) for d in datasets] != recorded:
            raise ReaderError(f"a resumed run trains on its own data {recorded}; got {[str(d) for d in datasets]} "
                              "(leave --data out to resume)")
        if not datasets:
            raise ReaderError(f"{run_file}: records no training data; give the data to train on")
        changeable = {"train_samples", "max_minutes", "device", "threads", "eval_every_minutes",
                      "checkpoint_every_minutes", "log_every", "loader_workers"}
        refused = sorted(set(overrides) - changeable)
        if refused:
            raise ReaderError(f"a resumed run keeps its settings; cannot change {refused} "
                              f"(changeable: {sorted(changeable)})")
        try:
            settings = settings.model_copy(update=overrides)
            ReaderTrainSettings.model_validate(settings.model_dump())
        except ValidationError as exc:
            raise ReaderError(validation_message(exc, "resume")) from None
    else:
        if (out / "metrics.jsonl").exists() or _last_dir(out) is not None:
            raise ReaderError(f"{out}: already holds a run (resume it, or choose another output directory)")
        settings = load_settings(config, overrides)
        record = {}
    if settings.threads:
        torch.set_num_threads(settings.threads)
    dev = resolve_device(settings.device)
    if world > 1 and dev.startswith("cuda"):
        dev = f"cuda:{local_rank}"
        torch.cuda.set_device(local_rank)
    torch.manual_seed(settings.seed + rank)

    train_samples, val_samples, info = load_samples(datasets, settings.split)
    tokenizer = build_tokenizer()
    if last is not None:
        from caap.observe.read.configuration import load_checkpoint_meta

        meta = load_checkpoint_meta(last)
        spec = ReaderSpec.from_meta(meta)
        alphabet = Alphabet(spec.alphabet)
        model = load_model(last, dev).train()
    else:
        alphabet = base_alphabet(settings, (s.element.text or "" for s in train_samples))
        spec = ReaderSpec(alphabet=alphabet.chars, patch=settings.patch, max_patches=settings.max_patches,
                          mask=settings.semi_mask.model_dump(mode="json"),
                          max_new_tokens=record_length(train_samples, tokenizer, with_text=settings.decoder_text,
                                                       cap=settings.max_target_tokens),
                          decoder_text=settings.decoder_text)
        if settings.base:
            model = load_base(settings, vocab_size=len(tokenizer), alphabet=alphabet, pad=tokenizer.pad_token_id,
                              eos=tokenizer.eos_token_id)
        else:
            model = build_model(settings, vocab_size=len(tokenizer), alphabet=alphabet)
        model = model.to(dev).train()
    params = sum(p.numel() for p in model.parameters())
    decoder_only = settings.train_parts == "decoder"
    if decoder_only:
        trainable = freeze_reading(model)
        if main:
            print(f"train_parts decoder: {trainable / 1e6:.2f}M of {params / 1e6:.2f}M params learn; "
                  "the text reading stays the base's", file=sys.stderr)

    objective = JointObjective(model, settings.ctc_weight, decoder_only=decoder_only)
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel

        objective = DistributedDataParallel(objective, device_ids=[local_rank] if dev.startswith("cuda") else None)
    optimizer = torch.optim.AdamW(param_groups(model, settings), lr=settings.lr)
    stream = GroupedBatches(MixedStream(train_samples, settings.synthetic_share, settings.seed),
                            [patch_shape(s, spec.patch, spec.mask) for s in train_samples],
                            settings.batch * world, seed=settings.seed)
    collate = Collate(tokenizer, alphabet, patch=spec.patch, max_patches=spec.max_patches, mask=spec.mask,
                      max_target_tokens=settings.max_target_tokens, decoder_text=spec.decoder_text,
                      jitter=settings.box_jitter, seed=settings.seed + rank, colour=model.colour_set)
    val = spread(val_samples, settings.val_max_samples)
    step, seen, elapsed = 0, 0, 0.0
    best = {"text_exact": -1.0, "record_exact": -1.0}
    if last is not None:
        try:
            state = torch.load(last / STATE_FILE, map_location="cpu", weights_only=True)
            optimizer.load_state_dict(state["optimizer"])
            stream.restore(state["stream"])
            torch.set_rng_state(state["torch_rng"])  # dropout continues as if never interrupted
            step, seen, best = int(state["step"]), int(state["samples"]), state["best"]
            elapsed = float(state["elapsed"])
        except Exception as exc:
            raise ReaderError(f"{last / STATE_FILE}: not a usable trainer state "
                              f"({type(exc).__name__}: {exc})") from None

    global_batch = settings.batch * world
    total_steps = max(1, math.ceil(settings.train_samples / global_batch))
    budget_s = settings.max_minutes * 60 if settings.max_minutes else math.inf
    if step >= total_steps or elapsed >= budget_s:
        raise ReaderError(f"{out}: the run already reached its plan ({seen} samples, {elapsed / 60:.1f} min); "
                          "raise --train-samples or --max-minutes to train longer")
    extra = {"model": settings.base or settings.model, "params": params, "trained_on": [str(d) for d in datasets]}
    if main:
        out.mkdir(parents=True, exist_ok=True)
        record = {
            **record,
            "command": record.get("command") or " ".join(sys.argv),
            "data": [str(d) for d in datasets],
            "settings": settings.model_dump(mode="json"),
            "model": settings.base or settings.model,
            "params": params,
            "samples": info,
            "alphabet": alphabet.chars,
            "device": dev,
            "processes": world,
            "started": record.get("started") or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        if resume:
            record["resumed"] = [*record.get("resumed", []), {
                "step": step, "samples": seen, "minutes": round(elapsed / 60, 2), "overrides": overrides,
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": " ".join(sys.argv)}]
        run_file.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"reader: {params / 1e6:.2f}M params, {info['elements']['train_real']} real + "
              f"{info['elements']['train_synthetic']} synthetic train elements + "
              f"{info['text_area_lines']['lines']} text-area lines / {len(val)} val elements, "
              f"{len(alphabet.chars)} characters, plan {settings.train_samples} samples"
              f"{f' or {settings.max_minutes:g} min' if settings.max_minutes else ''} on {dev}"
              f"{f' x {world} processes' if world > 1 else ''}", file=sys.stderr, flush=True)

    reader = Reader.in_memory(model, spec, tokenizer, path=out, device=dev)

    window = {"loss": 0.0, "ctc": 0.0, "dec": 0.0, "n": 0, "t": time.perf_counter(), "samples": 0}
    skipped = skipped_in_a_row = 0
    session_start = time.perf_counter() - elapsed
    last_eval = last_ckpt = elapsed
    pause_at = seen + stop_after_samples if stop_after_samples else None
    done = 0  # process 0's stop decision (_agree)
    batches = BatchPrefetch(stream, train_samples, collate, step=step, rank=rank, batch=settings.batch,
                            workers=settings.loader_workers)
    try:
        while not done:
            indices, batch = batches.next()
            with torch.autocast(dev.split(":")[0], dtype=torch.bfloat16, enabled=settings.precision == "bf16"):
                loss, ctc, dec = objective(batch.inputs["flattened_patches"].to(dev),
                                           batch.inputs["attention_mask"].to(dev), batch.labels.to(dev),
                                           batch.ctc_targets.to(dev), batch.ctc_lengths.to(dev), batch.ctc_mask.to(dev),
                                           batch.inputs["colour"].to(dev))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            # The norm is of the gradients every process holds after their all-reduce: all skip alike.
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), settings.grad_clip or float("inf"))
            elapsed = time.perf_counter() - session_start
            progress = max((step + 1) / total_steps, elapsed / budget_s)
            factor = lr_factor(min(progress, 1.0), settings)
            for g in optimizer.param_groups:
                g["lr"] = g["base_lr"] * factor
            finite = bool(torch.isfinite(norm)) and bool(torch.isfinite(loss.detach()))
            if finite:
                optimizer.step()
                skipped_in_a_row = 0
            else:
                # One bad batch would otherwise turn every weight into NaN for the rest of the run.
                skipped += 1
                skipped_in_a_row += 1
                _log_skipped(out, step, [train_samples[i] for i in indices], float(loss.detach()), float(norm), main)
                if skipped_in_a_row >= MAX_SKIPPED_IN_A_ROW:
                    raise ReaderError(f"{skipped_in_a_row} batches in a row had a non-finite loss or gradient (step "
                                      f"{step}): the run has diverged; lower lr or use precision fp32 "
                                      f"(the batches are listed in {out / 'skipped.jsonl'})")
            step += 1
            seen += global_batch
            if finite:
                for key, value in (("loss", loss), ("ctc", ctc), ("dec", dec)):
                    window[key] += value.detach().item()
                window["n"] += 1
            window["samples"] += global_batch
            if main and settings.log_every and step % settings.log_every == 0:
                rate = window["samples"] / max(time.perf_counter() - window["t"], 1e-9)
                print(f"  step {step}/{total_steps} ({seen} samples, {elapsed / 60:.1f} min): loss "
                      f"{window['loss'] / window['n']:.4f} (ctc {window['ctc'] / window['n']:.4f}, decoder "
                      f"{window['dec'] / window['n']:.4f}) lr {settings.lr * factor:.2e} {rate:.1f} samples/s",
                      file=sys.stderr, flush=True)
            finished = step >= total_steps or elapsed >= budget_s
            paused = pause_at is not None and seen >= pause_at
            do_eval, do_ckpt, done = _agree([int(finished or elapsed - last_eval >= settings.eval_every_minutes * 60),
                                             int(finished or paused
                                                 or elapsed - last_ckpt >= settings.checkpoint_every_minutes * 60),
                                             int(finished or paused)], world)
            if do_eval:
                last_eval = elapsed
                if main:
                    rate = window["samples"] / max(time.perf_counter() - window["t"], 1e-9)
                    metrics = {"step": step, "samples": seen, "minutes": round(elapsed / 60, 2),
                               "skipped_batches": skipped,
                               "real_epochs": round(stream.stream.epochs, 3),  # drawn: collated-ahead batches too
                               "lr": settings.lr * factor,
                               "train_loss": round(window["loss"] / max(window["n"], 1), 5),
                               "train_ctc": round(window["ctc"] / max(window["n"], 1), 5),
                               "train_decoder": round(window["dec"] / max(window["n"], 1), 5),
                               "samples_per_s": round(rate, 2), **validate(reader, val, decoder_text=spec.decoder_text)}
                    improved = ((metrics["text_exact"], metrics["record_exact"])
                                > (best["text_exact"], best["record_exact"]))
                    metrics["best"] = improved
                    if improved:
                        best = {"text_exact": metrics["text_exact"], "record_exact": metrics["record_exact"],
                                "step": step}
                        save_checkpoint(model, out / "best", spec,
                                        {**extra, "step": step, "samples": seen, "val": metrics})
                    with (out / "metrics.jsonl").open("a", encoding="utf-8") as f:
                        f.write(json.dumps(metrics) + "\n")
                    print(f"eval at {seen} samples, {elapsed / 60:.1f} min: text exact {metrics['text_exact']:.4f} "
                          f"record exact {metrics['record_exact']:.4f} type {metrics['type_accuracy']:.4f} "
                          f"({metrics['samples_per_s']:.1f} samples/s){' *' if improved else ''}",
                          file=sys.stderr, flush=True)
                # Evaluation time counts in ``elapsed``: an equal wall-clock A/B includes it.
                window = {"loss": 0.0, "ctc": 0.0, "dec": 0.0, "n": 0, "t": time.perf_counter(), "samples": 0}
            if do_ckpt:
                last_ckpt = elapsed
                if main:
                    state = {"optimizer": optimizer.state_dict(), "stream": batches.state(),
                             "torch_rng": torch.get_rng_state(), "step": step, "samples": seen,
                             "elapsed": time.perf_counter() - session_start, "best": best}
                    _save_last(out, model, spec, {**extra, "step": step, "samples": seen}, state)
    finally:
        batches.close()
    if world > 1:
        import torch.distributed as dist

        dist.barrier()
    return out
