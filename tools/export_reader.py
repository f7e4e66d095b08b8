"""Copy a reader checkpoint for shipping: weights stored in float16 (half the size in git; the
reader always computes in float32), plus its caap-reader.json, character language model
(char-lm.json) and text chooser (text-choice.json) where it has them. Other files already in
the destination (the model card, metrics) are kept.

    .venv/bin/python tools/export_reader.py runs/reader/crop64/best models/reader
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from caap.observe.read.charlm import LM_FILE
from caap.observe.read.configuration import CHECKPOINT_FILE, load_checkpoint_meta, load_model, quiet_transformers
from caap.observe.text_choice import CHOICE_FILE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("src", type=Path, help="a reader checkpoint directory (e.g. a run's best/)")
    parser.add_argument("dst", type=Path, help="where to write it (replaced)")
    parser.add_argument("--fp32", action="store_true", help="keep float32 weights")
    args = parser.parse_args()
    meta = load_checkpoint_meta(args.src)
    model = load_model(args.src)
    if not args.fp32:
        model = model.half()
    tmp = args.dst.with_name(f".{args.dst.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    with quiet_transformers():
        model.save_pretrained(tmp)
    meta["stored_dtype"] = "float32" if args.fp32 else "float16"
    (tmp / CHECKPOINT_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for tuned in (LM_FILE, CHOICE_FILE):  # fitted to these weights' CTC outputs: they go with them
        if (args.src / tuned).is_file():
            shutil.copy2(args.src / tuned, tmp / tuned)
    written = {p.name for p in tmp.iterdir()}
    if args.dst.is_dir():  # keep the card and metrics that live beside the weights
        for old in args.dst.iterdir():
            if old.is_file() and old.name not in written and old.suffix in (".md", ".json", ".png"):
                shutil.copy2(old, tmp / old.name)
    shutil.rmtree(args.dst, ignore_errors=True)
    tmp.rename(args.dst)
    size = sum(p.stat().st_size for p in args.dst.iterdir()) / 1e6
    print(f"{args.dst}: {size:.1f} MB ({meta['stored_dtype']})")


if __name__ == "__main__":
    main()
