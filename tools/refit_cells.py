"""Box the table cells, list rows and menu entries of a desktop dataset made before
``caap dataset desktop`` fitted them to their text (``caap.data.desktop.labels.cell_ink_box``).

Each ``tabled_text`` with a text gets the box the labeller gives it now: its ink inside the old
(whole-cell) box, less the cell's grid lines; one whose box holds no text ink, or whose ink is
smaller than the labeller keeps, is dropped, as the labeller drops it. Other elements are untouched.
The old labels are kept once, under ``labels-whole-cells/`` beside ``labels/``.

    python tools/refit_cells.py data/desktop-train data/desktop-eval
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from PIL import Image

from caap.data.desktop.labels import big_enough, cell_ink_box
from caap.data.format import Annotation, Dataset, DatasetError, open_dataset

BACKUP = "labels-whole-cells"


def refit(ann: Annotation, image: Image.Image) -> tuple[Annotation, int, int]:
    """``ann`` with its text cells fitted to their ink; how many boxes moved and were dropped."""
    kept, moved, dropped = [], 0, 0
    for e in ann.elements:
        if e.type.value == "tabled_text" and e.text and e.text.strip():
            box = cell_ink_box(image, e.bbox)
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
    """Refit one dataset in place, its old labels copied aside first (once)."""
    ds: Dataset = open_dataset(root)
    backup = root / BACKUP
    if backup.exists():
        print(f"{root}: already refit ({backup} exists); nothing done")
        return
    shutil.copytree(root / "labels", backup)
    cells = moved = dropped = 0
    for path, ann in ds:
        if not any(e.type.value == "tabled_text" for e in ann.elements):
            continue
        with Image.open(ds.image_path(ann)) as im:
            image = im.convert("RGB")
        cells += sum(e.type.value == "tabled_text" and bool(e.text and e.text.strip()) for e in ann.elements)
        new, m, d = refit(ann, image)
        moved, dropped = moved + m, dropped + d
        ds.save_label(path, new)
    print(f"{root}: {cells} text cells, {moved} boxes fitted, {dropped} dropped (no text ink); "
          f"old labels in {backup}")


if __name__ == "__main__":
    raise SystemExit(main())
