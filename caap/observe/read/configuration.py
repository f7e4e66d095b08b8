"""A reader checkpoint on disk and what inference must repeat exactly from training.

Checkpoint directory (format 2): ``save_pretrained`` output of ``ReaderModel`` plus
``caap-reader.json`` (patch size, CTC alphabet, semi-mask settings, generation length, whether the
decoder writes the text). The byte-level tokenizer (``ByT5Tokenizer(extra_ids=0)``) and the
alphabet are rebuilt from it — nothing is ever downloaded.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from caap.files import read_json
from caap.observe.read.target import TARGET_FORMAT

# Never reach for the model hub unless the user explicitly allows it.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

CHECKPOINT_FORMAT = 2
CHECKPOINT_FILE = "caap-reader.json"
DEFAULT_MASK: dict[str, Any] = {"darken": 0.5, "outline_px": 2, "outline_rgb": [255, 0, 0], "context": 4}
DEFAULT_PATCH = (16, 4)  # patch height, width (px): a 4 px column per CTC step pair


class ReaderError(RuntimeError):
    """A reader checkpoint, dataset or setting that cannot be used; the message names the file or field."""


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
