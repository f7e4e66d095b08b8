"""The observer's output on a set of screens, as JSON Lines and one SHA-256, to show that a change
to the observer's code left what it reports untouched.

    .venv/bin/python tools/observe_checksum.py data/miniwob-test data/desktop-eval --out runs/checksum.jsonl
    .venv/bin/python tools/observe_checksum.py data/miniwob-test --detector models/detector/caap-yolov8n-miniwob.pt

Each screen is observed as ``caap observe --json`` does (the shipped models and the default
``[observe]`` settings unless flags name others, ids given in reading order), and its line holds
the image's path relative to its dataset and the elements of the JSON contract (DESIGN §7); the
timings are left out, since they differ from run to run. The digest is over those lines in the
order of the sorted image paths. Torch and the ONNX runtimes run on ``--threads`` CPU threads
(default 2): the same count before and after a change gives bit-identical readings.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def screens(root: Path) -> list[Path]:
    """The images of a caap dataset (its ``images/`` folder) or of a plain folder, sorted."""
    folder = root / "images" if (root / "images").is_dir() else root
    return sorted(p for p in folder.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES)


def elements_of(result: Any) -> list[Any]:
    """The element list of what ``observe`` returned: an ``Observation`` or, before it, a list."""
    return list(result.elements) if hasattr(result, "elements") else list(result)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="+", type=Path, help="datasets or folders of screenshots")
    parser.add_argument("--out", type=Path, help="write every screen's line here (JSON Lines)")
    parser.add_argument("--detector", type=Path, help="detector weights (default: the shipped any-application one)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="the first N screens of each dataset (0: all)")
    args = parser.parse_args(argv)

    import torch
    from PIL import Image

    from caap.config import load_config
    from caap.observe.tracking import IdTracker

    try:
        from caap.observe.vision import VisionObserver
    except ImportError:  # pragma: no cover - layouts before the vision module
        raise
    torch.set_num_threads(args.threads)
    cfg = load_config(None, {}).observe
    if args.detector is not None:
        cfg = cfg.model_copy(update={"detector": args.detector})
    observer = VisionObserver.from_config(cfg)
    digest = hashlib.sha256()
    out = args.out.open("w", encoding="utf-8") if args.out else None
    count = 0
    try:
        for root in args.data:
            paths = screens(root)
            if args.limit:
                paths = paths[: args.limit]
            if not paths:
                print(f"{root}: no screenshots", file=sys.stderr)
                return 2
            part = hashlib.sha256()
            for path in paths:
                with Image.open(path) as im:
                    image = im.convert("RGB")
                elements = IdTracker().update(elements_of(observer.observe(image)))
                line = json.dumps({"image": f"{root.name}/{path.relative_to(root)}",
                                   "elements": [e.to_json() for e in elements]},
                                  ensure_ascii=False, sort_keys=True) + "\n"
                digest.update(line.encode("utf-8"))
                part.update(line.encode("utf-8"))
                if out is not None:
                    out.write(line)
                count += 1
            print(f"{root}: {len(paths)} screens, sha256 {part.hexdigest()}")
    finally:
        if out is not None:
            out.close()
    print(f"all: {count} screens, sha256 {digest.hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
