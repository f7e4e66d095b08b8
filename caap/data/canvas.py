"""Training canvases for the detector: screens of every size at their own pixel size.

The observer runs the detector on a whole screen at its own resolution (``Detector.input_size``),
so what it must learn is how elements look at one pixel size, anywhere. ultralytics scales every
training image to one input size, which would shrink a 1080p screen six-fold and blow a 160x210
MiniWoB screen up two-fold. Instead the screens are cut and packed onto square canvases of the
training size, never scaled (except by their device scale factor, ``Source.scale``, so a HiDPI
screen looks the way the observer sees it after ``ui_scale``):

- a screen larger than the canvas gives up to ``max_tiles`` canvas-sized tiles (a grid with
  overlap, the tiles holding most elements first, ties broken by a seeded draw);
- smaller screens are packed side by side, row by row (several MiniWoB screens per canvas, which
  is also cheaper per screen than training them alone at 224 px).

An element cut by a tile's edge is kept (clipped) when most of it shows; a sliver is painted over
with the padding grey, so the network is neither asked to find half a word nor punished for it.
Split by seed per dataset, like ``export_yolo``; several datasets go into one export.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from caap.data.export import (
    CLASS_INDEX,
    SPLITS,
    Item,
    Split,
    SplitRule,
    data_yaml,
    fresh_output_dir,
    guard_output,
    load_items,
    split_of,
    yolo_line,
)
from caap.data.format import Dataset, DatasetError
from caap.data.reserved import check_trainable
from caap.elements import Element
from caap.geometry import Box, area, intersect

PAD_RGB = (114, 114, 114)  # ultralytics' letterbox grey: what the network already knows as "nothing"
KEEP_VISIBLE = 0.6         # share of an element's area that must lie on a tile for it to stay a label
TILE_OVERLAP = 96          # px shared by neighbouring tiles of a large screen
GAP = 0                    # px between packed screens (MiniWoB: 160 px wide, three fill 480 exactly)


@dataclass
class Piece:
    """A part of one screen (the whole screen, or a tile) with its labels, in its own pixels. A whole
    small screen is read only when its canvas is drawn (``item``), so no split sits in memory."""

    size: tuple[int, int]
    name: str
    image: Image.Image | None = None
    labels: list[tuple[int, Box]] | None = None  # (class index, box)
    item: Item | None = None

    def load(self) -> tuple[Image.Image, list[tuple[int, Box]]]:
        if self.image is None or self.labels is None:
            assert self.item is not None
            return _scaled(self.item)
        return self.image, self.labels


def _scaled_size(item: Item) -> tuple[int, int]:
    scale = item.ann.source.scale or 1.0
    return max(1, round(item.ann.width / scale)), max(1, round(item.ann.height / scale))


def _scaled_elements(item: Item) -> tuple[Image.Image, list[tuple[Element, Box]]]:
    """The screen at device scale factor 1, with each element and its box there (elements whose box
    vanishes at factor 1 are left out)."""
    with Image.open(item.image_path) as img:
        image = img.convert("RGB")
    scale = item.ann.source.scale or 1.0
    if scale == 1.0:
        return image, [(e, e.bbox) for e in item.ann.elements]
    w, h = max(1, round(image.width / scale)), max(1, round(image.height / scale))
    image = image.resize((w, h), Image.Resampling.BOX if scale > 1 else Image.Resampling.BICUBIC)
    out = []
    for e in item.ann.elements:
        b = (round(e.bbox[0] / scale), round(e.bbox[1] / scale), round(e.bbox[2] / scale), round(e.bbox[3] / scale))
        if b[2] > b[0] and b[3] > b[1]:
            out.append((e, b))
    return image, out


def _scaled(item: Item) -> tuple[Image.Image, list[tuple[int, Box]]]:
    """The screen and its labels (class index, box) at device scale factor 1."""
    image, elements = _scaled_elements(item)
    return image, [(CLASS_INDEX[e.type], b) for e, b in elements]


def _starts(length: int, size: int) -> list[int]:
    """Tile origins along one side: from 0, ``TILE_OVERLAP`` shared, the last flush with the end."""
    if length <= size:
        return [0]
    step = size - TILE_OVERLAP
    starts = list(range(0, length - size, step))
    return [*starts, length - size]


def tiles(image: Image.Image, labels: list[tuple[int, Box]], size: int, max_tiles: int, rng: random.Random,
          name: str) -> list[Piece]:
    """Up to ``max_tiles`` tiles of a screen larger than ``size`` (see the module docstring)."""
    grid = [(x, y) for y in _starts(image.height, size) for x in _starts(image.width, size)]
    scored = []
    for x, y in grid:
        inside = sum(1 for _, b in labels if b[0] >= x and b[1] >= y and b[2] <= x + size and b[3] <= y + size)
        scored.append((-inside, rng.random(), x, y))
    out = []
    for _, _, x, y in sorted(scored)[:max_tiles]:
        w, h = min(size, image.width - x), min(size, image.height - y)
        tile = image.crop((x, y, x + w, y + h))
        kept: list[tuple[int, Box]] = []
        draw = ImageDraw.Draw(tile)
        for c, label in labels:
            part = intersect(label, (x, y, x + w, y + h))
            if part is None:
                continue
            shown = area(part) / area(label)
            box = (part[0] - x, part[1] - y, part[2] - x, part[3] - y)
            if shown >= KEEP_VISIBLE:
                kept.append((c, box))
            else:
                draw.rectangle((box[0], box[1], box[2] - 1, box[3] - 1), fill=PAD_RGB)
        out.append(Piece((w, h), f"{name}__t{x}_{y}", tile, kept))
    return out


def pack(pieces: Sequence[Piece], size: int) -> Iterator[tuple[Image.Image, list[tuple[int, Box]], list[str]]]:
    """Canvases of ``size`` with the pieces laid left to right in rows (shelf packing), in order."""
    canvas: Image.Image | None = None
    labels: list[tuple[int, Box]] = []
    names: list[str] = []
    x = y = row_h = 0
    for piece in pieces:
        w, h = piece.size
        if canvas is not None and x + w > size:
            x, y, row_h = 0, y + row_h + GAP, 0
        if canvas is not None and y + h > size:
            yield canvas, labels, names
            canvas = None
        if canvas is None:
            canvas, labels, names = Image.new("RGB", (size, size), PAD_RGB), [], []
            x = y = row_h = 0
        image, got = piece.load()
        canvas.paste(image, (x, y))
        labels += [(c, (b[0] + x, b[1] + y, b[2] + x, b[3] + y)) for c, b in got]
        names.append(piece.name)
        x, row_h = x + w + GAP, max(row_h, h)
    if canvas is not None:
        yield canvas, labels, names


def _same_size(a: Box, b: Box) -> bool:
    return a[2] - a[0] == b[2] - b[0] and a[3] - a[1] == b[3] - b[1]


def tile_dataset(src: str | Path, out_dir: str | Path, *, size: int = 480, max_tiles: int = 3, seed: int = 0,
                 seeds: Collection[int] | None = None, overwrite: bool = False) -> dict[str, Any]:
    """A caap dataset holding what the detector's canvases are cut from: every screen at device scale
    factor 1, and each screen larger than ``size`` replaced by its ``max_tiles`` fullest tiles (as
    ``tiles`` chooses them; the rest of the screen is what the canvases rarely see).

    It is the small form of a dataset of big screens, to carry to a training machine (a 1080p
    generated page keeps about a third of its pixels). Each tile keeps its screen's source (so the
    split by seed is unchanged) and the records of the elements it keeps; an element cut by the edge
    keeps its type and states but not its text (None: unknown), so the reader can train on tiles too.
    ``seeds``: only the screens of these seeds (to cut a large set into archives that fit).
    Returns ``{"out_dir", "screens", "tiled", "written", "elements"}``.
    """
    if max_tiles < 1:
        raise DatasetError(f"max_tiles {max_tiles}: must be at least 1")
    items = load_items(src)
    if seeds is not None:
        wanted = set(seeds)
        items = [i for i in items if i.ann.source.seed in wanted]
        if not items:
            raise DatasetError(f"{src}: no screen has one of the seeds asked for")
    out_dir = Path(out_dir)
    guard_output(out_dir, Path(src))
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    with fresh_output_dir(out_dir, overwrite=overwrite) as tmp:
        meta = {"tiled_from": str(Path(src).resolve()), "size": size, "max_tiles": max_tiles, "seed": seed}
        ds = Dataset.create(tmp, f"{Path(src).resolve().name}-tiles", meta)
        for item in items:
            counts["screens"] += 1
            image, scaled = _scaled_elements(item)
            source = item.ann.source.model_copy(update={"scale": None})
            # Labels carry the element's index in place of its class, so each kept box finds its record.
            indexed = [(i, b) for i, (_, b) in enumerate(scaled)]
            if image.width <= size and image.height <= size:
                pieces = [Piece(image.size, item.stem, image, indexed)]
            else:
                counts["tiled"] += 1
                pieces = tiles(image, indexed, size, max_tiles, rng, item.stem)
            for piece in pieces:
                assert piece.image is not None and piece.labels is not None
                # An element cut by the tile's edge shows part of its text: its text becomes unknown
                # (None: the reader's CTC head skips it) rather than wrong.
                elements = [scaled[i][0].model_copy(update={"bbox": b} if _same_size(b, scaled[i][1])
                                                    else {"bbox": b, "text": None})
                            for i, b in piece.labels]
                ann = item.ann.model_copy(update={"source": source, "elements": elements})
                ds.add(item.group, piece.name, piece.image, ann)
                counts["written"] += 1
                counts["elements"] += len(elements)
    return {"out_dir": str(out_dir.resolve()), **{k: counts[k] for k in ("screens", "tiled", "written", "elements")}}


def export_canvases(datasets: Sequence[str | Path], out_dir: str | Path, *, split: SplitRule, size: int = 480,
                    max_tiles: int = 4, seed: int = 0, overwrite: bool = False,
                    val_datasets: Sequence[str | Path] = (), require_val: bool = True) -> dict[str, Any]:
    """An ultralytics YOLO dataset of ``size``-px canvases from one or more caap datasets, split by
    seed; every screen of ``val_datasets`` is validation (sets generated apart, from other seeds).
    ``require_val=False`` allows an empty validation split (a part of a larger export whose
    validation comes from another part).

    Returns ``{"out_dir", "split", "canvases": {split: n}, "screens": {split: n}, "elements":
    {split: n}, "classes": {split: {type: n}}, "datasets": [...]}``. ``manifest.tsv`` says which
    screens (and tiles) each canvas holds.
    """
    if size % 32 or size < 64:
        raise DatasetError(f"canvas size {size}: must be a multiple of 32 (the network's stride), at least 64")
    if max_tiles < 1:
        raise DatasetError(f"max_tiles {max_tiles}: must be at least 1")
    out_dir = Path(out_dir)
    roots = [Path(d) for d in datasets]
    val_roots = [Path(d) for d in val_datasets]
    if not roots:
        raise DatasetError("no datasets given")
    for root in (*roots, *val_roots):
        guard_output(out_dir, root)
    # Everything is validated before anything is written.
    per_split: dict[Split, list[Item]] = {s: [] for s in SPLITS}
    prefixes: dict[int, str] = {}
    for n, root in enumerate((*roots, *val_roots)):
        held_out = n >= len(roots)
        items = load_items(root)
        check_trainable((item.label_path, item.ann.source) for item in items)  # validation picks models too
        for item in items:
            per_split["val" if held_out else split_of(item.ann, split)].append(item)
            prefixes[id(item)] = f"d{n}" if len(roots) + len(val_roots) > 1 else ""
    if not per_split["train"] or (require_val and not per_split["val"]):
        empty = "train" if not per_split["train"] else "val"
        raise DatasetError(f"split '{split}' leaves the {empty} split empty over {', '.join(map(str, roots))}")
    rng = random.Random(seed)
    canvases: Counter[str] = Counter()
    screens: Counter[str] = Counter()
    elements: Counter[str] = Counter()
    classes: dict[str, Counter[str]] = {s: Counter() for s in SPLITS}
    names_of = {i: t.value for t, i in CLASS_INDEX.items()}
    manifest = ["split\tcanvas\tpieces"]
    final = out_dir.resolve()
    with fresh_output_dir(out_dir, overwrite=overwrite) as tmp:
        for sp in SPLITS:
            (tmp / "images" / sp).mkdir(parents=True)
            (tmp / "labels" / sp).mkdir(parents=True)
            items = list(per_split[sp])
            rng.shuffle(items)  # mixes datasets and tasks on each canvas
            small: list[Piece] = []

            def write(image: Image.Image, labels: list[tuple[int, Box]], names: list[str], sp: Split = sp) -> None:
                stem = f"c{canvases[sp]:06d}"
                image.save(tmp / "images" / sp / f"{stem}.png", optimize=False, compress_level=1)
                lines = [yolo_line(c, b, image.width, image.height) for c, b in labels]
                (tmp / "labels" / sp / f"{stem}.txt").write_text("".join(f"{ln}\n" for ln in lines),
                                                                  encoding="utf-8")
                manifest.append(f"{sp}\t{stem}\t{','.join(names)}")
                canvases[sp] += 1
                elements[sp] += len(labels)
                classes[sp].update(names_of[c] for c, _ in labels)

            for item in items:
                name = "__".join(p for p in (prefixes[id(item)], item.flat_name) if p)
                screens[sp] += 1
                w, h = _scaled_size(item)
                if w > size or h > size:
                    image, labels = _scaled(item)
                    for piece in tiles(image, labels, size, max_tiles, rng, name):
                        # A tile narrower or shorter than the canvas is padded, on a canvas of its own.
                        for canvas, got, names in pack([piece], size):
                            write(canvas, got, names)
                else:
                    small.append(Piece((w, h), name, item=item))
            # Tallest first packs rows tightly; order within a height stays the shuffled one.
            small.sort(key=lambda p: -p.size[1])
            for canvas, got, names in pack(small, size):
                write(canvas, got, names)
        (tmp / "data.yaml").write_text(data_yaml(final), encoding="utf-8")
        (tmp / "manifest.tsv").write_text("\n".join(manifest) + "\n", encoding="utf-8")
    return {
        "out_dir": str(final),
        "split": str(split),
        "size": size,
        "datasets": [str(r) for r in roots],
        "val_datasets": [str(r) for r in val_roots],
        "canvases": {s: canvases[s] for s in SPLITS},
        "screens": {s: screens[s] for s in SPLITS},
        "elements": {s: elements[s] for s in SPLITS},
        "classes": {s: dict(sorted(classes[s].items())) for s in SPLITS},
    }


def _export_part(job: tuple[Path, list[Path], SplitRule, int, int, list[Path], int]) -> dict[str, Any]:
    out, roots, split, size, max_tiles, val, seed = job
    return export_canvases(roots, out, split=split, size=size, max_tiles=max_tiles, seed=seed, overwrite=True,
                           val_datasets=val, require_val=False)


def export_canvas_parts(parts: dict[str, Sequence[str | Path]], out_dir: str | Path, *, split: SplitRule,
                        size: int = 480, max_tiles: int = 4, seed: int = 0,
                        val_datasets: Sequence[str | Path] = ()) -> dict[str, Any]:
    """``export_canvases`` for several parts at once, one process each, and one ``data.yaml`` that
    lists every part's train and val folders (for a recipe without ``canvas``: the canvases are
    already at the training size). On a many-core GPU host this cuts in seconds what one process
    cuts in minutes while the card waits. Each part mixes only its own datasets on its canvases; the
    first part takes ``val_datasets``. Returns ``{"data_yaml", "parts": {name: export result}}``."""
    from concurrent.futures import ProcessPoolExecutor

    if not parts:
        raise DatasetError("no parts given")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [(out_dir / name, [Path(r) for r in roots], split, size, max_tiles,
             [Path(v) for v in val_datasets] if n == 0 else [], seed + n)
            for n, (name, roots) in enumerate(parts.items())]
    with ProcessPoolExecutor(len(jobs)) as pool:
        results = dict(zip(parts, pool.map(_export_part, jobs), strict=True))
    train = [f"{r['out_dir']}/images/train" for r in results.values() if r["canvases"]["train"]]
    val = [f"{r['out_dir']}/images/val" for r in results.values() if r["canvases"]["val"]]
    if not val:
        raise DatasetError("no validation canvases in any part: give val_datasets or datasets with validation seeds")
    (out_dir / "data.yaml").write_text(data_yaml(None, train=train, val=val), encoding="utf-8")
    return {"data_yaml": str(out_dir / "data.yaml"), "parts": results}
