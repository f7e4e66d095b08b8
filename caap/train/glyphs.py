"""Build the reader's glyph bank (``caap.observe.glyphs``) from labelled screens, and score it.

``build`` cuts every labelled icon whose subtype is a glyph's (``GLYPH_ICON_SUBTYPES``) out of the
training datasets' screens and keeps each distinct grey pattern once. ``score`` looks for the bank's
glyphs on validation screens and matches what it finds to the labelled glyph icons (one to one, each
found box's centre inside a labelled box): recall and precision per subtype. The bank is written as
``glyphs.json`` beside the reader's weights, where ``Reader`` loads it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from PIL import Image

from caap.data.format import Annotation, open_dataset
from caap.geometry import Box
from caap.observe.glyphs import GLYPH_FILE, GlyphBank, GlyphError, build_bank
from caap.taxonomy import GLYPH_ICON_SUBTYPES, ElementType


def _screens(datasets: Sequence[str | Path]) -> Iterator[tuple[Annotation, Path]]:
    for root in datasets:
        ds = open_dataset(root)
        for _, ann in ds:
            yield ann, ds.image_path(ann)


def _glyph_icons(ann: Annotation) -> list[tuple[str, Box]]:
    return [(e.subtype, tuple(e.bbox)) for e in ann.elements  # type: ignore[misc]
            if e.type == ElementType.ICON and e.subtype in GLYPH_ICON_SUBTYPES]


def build(datasets: Sequence[str | Path], screens: Sequence[str] = ("web",)) -> tuple[GlyphBank, dict[str, int]]:
    """The bank of the datasets' labelled glyph icons (looked for on ``screens``), and how many of each
    subtype were labelled."""
    def labelled() -> Iterator[tuple[Image.Image, list[tuple[str, Box]]]]:
        for ann, image in _screens(datasets):
            icons = _glyph_icons(ann)
            if icons:
                with Image.open(image) as im:
                    yield im.convert("RGB"), icons
    return build_bank(labelled(), kinds=screens)


def _inside(found: Box, label: Box) -> bool:
    cx, cy = (found[0] + found[2]) / 2, (found[1] + found[3]) / 2
    return label[0] <= cx <= label[2] and label[1] <= cy <= label[3]


def score(bank: GlyphBank, datasets: Sequence[str | Path]) -> dict[str, Any]:
    """The bank on the datasets' screens: per subtype, labelled glyphs found with the right subtype,
    labelled glyphs, glyphs found (any subtype) and found with a wrong subtype or where none is."""
    per: dict[str, dict[str, int]] = {s: {"labelled": 0, "right": 0, "found": 0, "wrong": 0}
                                      for s in GLYPH_ICON_SUBTYPES}
    screens = 0
    for ann, image in _screens(datasets):
        screens += 1
        with Image.open(image) as im:
            found = bank.find(im.convert("RGB"))
        labels = _glyph_icons(ann)
        used = [False] * len(labels)
        for subtype, _ in labels:
            per[subtype]["labelled"] += 1
        for f in found:
            per[f.subtype]["found"] += 1
            hit = next((i for i, (_, box) in enumerate(labels) if not used[i] and _inside(f.box, box)), None)
            if hit is not None and labels[hit][0] == f.subtype:
                used[hit] = True
                per[f.subtype]["right"] += 1
            else:
                per[f.subtype]["wrong"] += 1
    total = {k: sum(p[k] for p in per.values()) for k in ("labelled", "right", "found", "wrong")}
    return {"screens": screens, "per_subtype": per, "total": total,
            "recall": total["right"] / total["labelled"] if total["labelled"] else None,
            "precision": total["right"] / total["found"] if total["found"] else None}


def build_and_write(datasets: Sequence[str | Path], checkpoint: str | Path, *, val: Sequence[str | Path] = (),
                    screens: Sequence[str] = ("web",), out: str | Path | None = None) -> dict[str, Any]:
    """Build the bank from ``datasets``, score it on ``val`` (where given) and write it (``out`` or
    ``glyphs.json`` in the reader's ``checkpoint`` directory); the report."""
    bank, seen = build(datasets, screens)
    if not len(bank):
        raise GlyphError(f"no labelled glyph icon ({', '.join(GLYPH_ICON_SUBTYPES)}) "
                         f"in {', '.join(map(str, datasets))}")
    target = Path(out) if out is not None else Path(checkpoint) / GLYPH_FILE
    report: dict[str, Any] = {"labelled": seen, "patterns": {s: sum(g.subtype == s for g in bank.glyphs)
                                                             for s in bank.subtypes}}
    if val:
        report["validation"] = score(bank, val)
    bank.save(target)
    report["written"] = str(target)
    return report
