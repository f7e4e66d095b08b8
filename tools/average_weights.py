"""Average the weights of two or more checkpoints of one lineage (a "model soup"): YOLO detector
files, or element reader directories.

A fine-tune that adds new kinds of screens forgets some of what its start knew; the average of the
start and the fine-tune often keeps most of both. Every checkpoint must have the same classes and
layer shapes (one grew from the other by training only). The result is written like a finished
ultralytics checkpoint (the averaged model in float16, no optimizer), loadable by ``caap`` as
detector weights; its ``train_args`` are the last checkpoint's.

    python tools/average_weights.py models/detector/caap-yolov8n-any.pt runs/detector/any-stage5/weights/last.pt \\
        --weights 0.5,0.5 --out runs/detector/soup.pt

Reader directories (``caap.train.reader.average_readers``: a fine-tune that grew the alphabet may
be averaged with its base) are written as a reader checkpoint in float16, with the last one's
character model and text chooser:

    python tools/average_weights.py models/reader runs/reader/any-ft/best --weights 0.5,0.5 --out runs/reader/soup
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any


def _model(checkpoint: dict[str, Any], path: Path) -> Any:
    model = checkpoint.get("ema") or checkpoint.get("model")
    if model is None:
        raise SystemExit(f"{path}: holds no model (neither 'ema' nor 'model')")
    return model


def average(paths: list[Path], weights: list[float]) -> dict[str, Any]:
    import torch

    checkpoints = []
    for p in paths:
        try:
            checkpoints.append(torch.load(p, map_location="cpu", weights_only=False))
        except Exception as exc:  # a missing, truncated or foreign file: one message, nothing written
            raise SystemExit(f"{p}: not a loadable checkpoint ({type(exc).__name__}: {exc})") from None
    models = [_model(c, p) for c, p in zip(checkpoints, paths, strict=True)]
    names = [dict(m.names) for m in models]
    if any(n != names[0] for n in names):
        raise SystemExit("the checkpoints have different classes; only one model's fine-tunes can be averaged")
    states = [m.float().state_dict() for m in models]
    for p, s in zip(paths[1:], states[1:], strict=True):
        if s.keys() != states[0].keys() or any(s[k].shape != states[0][k].shape for k in s):
            raise SystemExit(f"{p}: its layers differ from {paths[0]}'s")
    total = sum(weights)
    mixed = {}
    for k, first in states[0].items():
        if first.is_floating_point():
            mixed[k] = sum(w / total * s[k] for w, s in zip(weights, states, strict=True))
        else:  # counters (BatchNorm's batches seen): the last checkpoint's
            mixed[k] = states[-1][k]
    soup = copy.deepcopy(models[-1]).float()
    soup.load_state_dict(mixed)
    out = {k: v for k, v in checkpoints[-1].items() if k not in ("optimizer", "scaler", "ema", "updates")}
    out.update({"model": soup.half(), "ema": None, "optimizer": None, "updates": None, "best_fitness": None,
                "averaged_from": [f"{p} × {w / total:.3f}" for p, w in zip(paths, weights, strict=True)]})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--weights", help="comma-separated shares, one per checkpoint (default: equal)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if len(args.checkpoints) < 2:
        parser.error("give two checkpoints or more")
    weights = [1.0] * len(args.checkpoints)
    if args.weights:
        try:
            weights = [float(w) for w in args.weights.split(",")]
        except ValueError:
            parser.error(f"--weights {args.weights!r}: not numbers")
        if len(weights) != len(args.checkpoints) or any(w < 0 for w in weights) or not sum(weights) > 0:
            parser.error("--weights: one share per checkpoint, none negative, not all zero")
    if all(p.is_dir() for p in args.checkpoints):
        return _average_readers(args.checkpoints, weights, args.out)
    import torch

    result = average(args.checkpoints, weights)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(f".{args.out.name}.tmp")
    torch.save(result, tmp)
    tmp.replace(args.out)
    print(f"{args.out}: " + ", ".join(result["averaged_from"]), file=sys.stderr)
    return 0


def _average_readers(paths: list[Path], weights: list[float], out: Path) -> int:
    import shutil

    from caap.observe.read.charlm import LM_FILE
    from caap.observe.read.configuration import ReaderError, ReaderSpec, save_checkpoint
    from caap.observe.text_choice import CHOICE_FILE
    from caap.train.reader import average_readers

    try:
        model, meta = average_readers(paths, weights)
    except ReaderError as exc:
        raise SystemExit(str(exc)) from None
    spec = ReaderSpec.from_meta(meta)
    own = set(spec.to_meta()) | {"format", "target_format", "caap_version", "tokenizer"}
    extra = {k: v for k, v in meta.items() if k not in own} | {"stored_dtype": "float16"}
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_checkpoint(model.half(), tmp, spec, extra)
    for fitted in (LM_FILE, CHOICE_FILE):  # fitted to CTC outputs: the last checkpoint's, if it has them
        if (paths[-1] / fitted).is_file():
            shutil.copy2(paths[-1] / fitted, tmp / fitted)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(f"{out}: " + ", ".join(meta["averaged_from"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
