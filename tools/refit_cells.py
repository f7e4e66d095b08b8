"""Box the table cells, list rows, menu entries and tree rows of a desktop dataset as
``caap dataset desktop`` boxes them now (``caap.bench.desktop.labels.drawn_box``): on what they
draw, not the whole row the toolkit reports.

The toolkit's boxes are kept once, under ``labels-whole-cells/`` beside ``labels/``, and every run
derives ``labels/`` from them afresh, so running it again after the rule changed (tree rows were
added to it after table cells) gives what the labeller gives, and a second run changes nothing.
A row whose text is not drawn, or whose ink is smaller than the labeller keeps, is dropped, as the
labeller drops it. A check box that draws a radio button's round control becomes a radio button,
as the labeller types it now (``caap.bench.desktop.labels.drawn_kind``). Other elements are untouched.

    python tools/refit_cells.py data/desktop-train data/desktop-eval
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from PIL import Image

from caap.bench.desktop.labels import DRAWN_TYPES, big_enough, drawn_box, drawn_kind
from caap.data.format import Annotation, Dataset, DatasetError, open_dataset
from caap.taxonomy import ElementType

BACKUP = "labels-whole-cells"


def refit(ann: Annotation, image: Image.Image) -> tuple[Annotation, int, int]:
    """``ann`` (the toolkit's boxes) with its rows fitted to their ink; how many boxes moved and
    were dropped."""
    kept, moved, dropped = [], 0, 0
    for e in ann.elements:
        kind = drawn_kind(e.type.value, image, e.bbox)
        if kind != e.type.value:
            e = e.model_copy(update={"type": ElementType(kind)})
        if e.type.value in DRAWN_TYPES:
            box = drawn_box(e.type.value, e.text, image, e.bbox)
            if box is None or not big_enough(e.type.value, box):
                dropped += 1
                continue
            moved += box != e.bbox
            e = e.model_copy(update={"bbox": box})
        kept.append(e)
    return ann.model_copy(update={"elements": kept}), moved, dropped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path)
    args = parser.parse_args()
    for root in args.datasets:
        try:
            refit_dataset(root)
        except (DatasetError, OSError) as exc:  # the old labels stay in the backup: nothing is lost
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


def refit_dataset(root: Path) -> None:
    """Refit one dataset in place from the toolkit's boxes, copied aside first (once)."""
    ds: Dataset = open_dataset(root)
    backup = root / BACKUP
    if not backup.exists():
        shutil.copytree(root / "labels", backup)
    rows = moved = dropped = 0
    for path in sorted(backup.rglob("*.json")):
        ann = ds.load(path)
        if not any(e.type.value in DRAWN_TYPES or e.type is ElementType.CHECKBOX for e in ann.elements):
            continue
        with Image.open(ds.image_path(ann)) as im:
            image = im.convert("RGB")
        rows += sum(e.type.value in DRAWN_TYPES for e in ann.elements)
        new, m, d = refit(ann, image)
        moved, dropped = moved + m, dropped + d
        ds.save_label(root / "labels" / path.relative_to(backup), new)
    print(f"{root}: {rows} rows and cells, {moved} boxes fitted, {dropped} dropped (no text ink); "
          f"the toolkit's boxes in {backup}")


if __name__ == "__main__":
    raise SystemExit(main())
