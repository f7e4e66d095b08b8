"""One archive of caap datasets, small enough to carry to a lent training machine and back.

``pack`` writes a gzip'd tar holding each dataset as ``<name>/dataset.json``, ``<name>/labels/...``
and ``<name>/images/...``; ``unpack`` restores them as ordinary caap datasets (their images are
``.webp``, which every loader opens like PNG). What makes it small, without changing a pixel:

* screens are stored as **lossless** WebP (about half the bytes of PNG; decoded, the same pixels);
* a screen that occurs twice in a dataset (an episode step that changed nothing) is stored once;
  a later screen of an episode (same task and seed) is stored as its difference from the one before
  (mod 256, lossless WebP; 40 % fewer bytes on MiniWoB episodes, measured) where that is smaller.

(Blanking synthetic pages beyond a few px of their elements was measured too: their flat
backgrounds already cost nothing in WebP, and the archive came out 0.1 MB larger.)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from caap.data.format import DatasetError, open_dataset

DEFAULT_MAX_MB = 60.0
PACK_MANIFEST = "pack.json"  # screens stored as differences: [stored file, base screen, screen] in order


def _webp(pixels: np.ndarray) -> bytes:
    buf = io.BytesIO()
    # Effort 2/50 is as small as the slowest setting (6/100) at 1/200 of its time (measured).
    Image.fromarray(pixels).save(buf, "WEBP", lossless=True, quality=50, method=2)
    return buf.getvalue()


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
    tar.addfile(info, io.BytesIO(data))


def pack(datasets: list[str | Path], out: str | Path, *, max_mb: float | None = DEFAULT_MAX_MB) -> dict[str, Any]:
    """Write ``datasets`` into the archive ``out`` (see the module docstring). Nothing is left at
    ``out`` unless the whole archive was written and fits in ``max_mb`` (None: no limit); an
    existing file there is replaced only then. Returns the counts and the size."""
    out = Path(out)
    roots = [open_dataset(d).root for d in datasets]
    names = [r.resolve().name for r in roots]
    twice = [n for n, c in Counter(names).items() if c > 1]
    if twice:
        raise DatasetError(f"datasets must have different directory names in one archive: {twice}")
    if not out.parent.is_dir():
        raise DatasetError(f"{out.parent}: no such directory for the archive")
    tmp = out.with_name(f".{out.name}.tmp")
    stats: dict[str, Any] = {"archive": str(out), "datasets": {}}
    try:
        with tarfile.open(tmp, "w:gz", compresslevel=6) as tar:
            for root, name in zip(roots, names, strict=True):
                ds = open_dataset(root)
                meta = ds.meta()
                meta["packed"] = {"images": "lossless webp"}
                _add_bytes(tar, f"{name}/dataset.json", (json.dumps(meta, indent=2) + "\n").encode())
                counts: Counter[str] = Counter()
                stored: dict[str, str] = {}  # pixel hash → image path inside the dataset
                previous: dict[tuple[Any, ...], tuple[np.ndarray, str]] = {}  # episode → its last screen
                deltas: list[list[str]] = []
                for label_path, ann in ds:
                    image: Image.Image = Image.open(ds.image_path(ann))
                    image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
                    digest = hashlib.sha1(image.tobytes() + repr(image.size).encode()).hexdigest()
                    rel = stored.get(digest)
                    if rel is not None:
                        counts["duplicate_screens"] += 1
                    else:
                        rel = str(Path(ann.image).with_suffix(".webp"))
                        pixels = np.asarray(image)
                        data = _webp(pixels)
                        episode = (label_path.parent.name, ann.source.kind, ann.source.task, ann.source.seed)
                        base = previous.get(episode) if ann.source.seed is not None else None
                        stored_as = rel
                        if base is not None and base[0].shape == pixels.shape:
                            delta = _webp(pixels - base[0])  # uint8 arithmetic: the difference mod 256
                            if len(delta) < len(data):
                                data, stored_as = delta, str(Path(ann.image).with_suffix(".delta.webp"))
                                deltas.append([stored_as, base[1], rel])
                                counts["delta_images"] += 1
                        _add_bytes(tar, f"{name}/{stored_as}", data)
                        previous[episode] = (pixels, rel)
                        stored[digest] = rel
                        counts["images"] += 1
                    label = ann.model_copy(update={"image": rel}).to_json()
                    label_rel = label_path.relative_to(ds.root)
                    _add_bytes(tar, f"{name}/{label_rel}", (json.dumps(label, ensure_ascii=False) + "\n").encode())
                    counts["screens"] += 1
                    counts["elements"] += len(ann.elements)
                if deltas:
                    _add_bytes(tar, f"{name}/{PACK_MANIFEST}", (json.dumps({"deltas": deltas}) + "\n").encode())
                stats["datasets"][name] = dict(counts)
        size_mb = tmp.stat().st_size / 1e6
        stats["mb"] = round(size_mb, 2)
        if max_mb is not None and size_mb > max_mb:
            raise DatasetError(f"{out}: the archive would be {size_mb:.1f} MB, over the {max_mb:g} MB limit "
                               "(pack fewer datasets, or raise --max-mb)")
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    return stats


def unpack(archive: str | Path, out_dir: str | Path) -> list[Path]:
    """Extract an archive written by ``pack`` into ``out_dir``; returns the dataset directories.
    A dataset directory that already exists there is never overwritten."""
    archive, out_dir = Path(archive), Path(out_dir)
    if not archive.is_file():
        raise DatasetError(f"{archive}: no such archive")
    try:
        with tarfile.open(archive, "r:*") as tar:
            members = tar.getmembers()
            names = {m.name for m in members}
            tops = sorted({Path(n).parts[0] for n in names if Path(n).parts})
            if not tops or any(f"{t}/dataset.json" not in names for t in tops):
                raise DatasetError(f"{archive}: not a caap dataset archive (each top folder needs a dataset.json)")
            taken = [t for t in tops if (out_dir / t).exists()]
            if taken:
                raise DatasetError(f"{out_dir}: {', '.join(taken)} already exist(s); unpack somewhere else")
            out_dir.mkdir(parents=True, exist_ok=True)
            tar.extractall(out_dir, filter="data")  # refuses absolute paths, links out, device files
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise DatasetError(f"{archive}: unreadable archive ({type(exc).__name__}: {exc})") from None
    roots = [out_dir / t for t in tops]
    for root in roots:
        _undo_deltas(root)
        open_dataset(root)
    return roots


def _undo_deltas(root: Path) -> None:
    """Turn each stored difference back into its screen, in the order they were taken."""
    manifest = root / PACK_MANIFEST
    if not manifest.is_file():
        return
    try:
        deltas = json.loads(manifest.read_text(encoding="utf-8"))["deltas"]
        for stored_as, base, final in deltas:
            for rel in (stored_as, base, final):
                if Path(rel).is_absolute() or ".." in Path(rel).parts:
                    raise DatasetError(f"{manifest}: {rel!r} points outside the dataset")
            with Image.open(root / base) as b, Image.open(root / stored_as) as d:
                pixels = np.asarray(b) + np.asarray(d)  # uint8 wraps: base + (screen - base) mod 256
            (root / final).write_bytes(_webp(pixels))
            (root / stored_as).unlink()
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise DatasetError(f"{manifest}: cannot rebuild the screens ({type(exc).__name__}: {exc})") from None
    manifest.unlink()
