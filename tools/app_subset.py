"""Split caap desktop datasets by app: a dataset of the named apps' screens (``--keep``) or of all
the others (``--drop``), made of hard links to the source's files (copies across file systems), so
the source stays as it is and a large dataset costs no space. Used to hold whole training apps
out of a detector stage and validate on them (detector HISTORY, stage 12): a stage validated on
screens of the apps it trained on rewards learning those apps.

    .venv/bin/python tools/app_subset.py data/desktop-val12 data/desktop-val12-held --keep tools/held-out-apps.txt
    .venv/bin/python tools/app_subset.py data/desktop-train12 data/desktop-train12-rest --drop tools/held-out-apps.txt
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path


def read_apps(path: Path) -> set[str]:
    """App names, one per line; blank lines and ``#`` comments are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        sys.exit(f"{path}: cannot read the list of apps ({exc})")
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return {line for line in lines if line}


def subset(source: Path, out: Path, apps: set[str], keep: bool) -> list[str]:
    """Link ``source``'s app folders' files into ``out`` (the apps in ``apps`` if ``keep``, else the rest);
    returns the apps linked."""
    meta_path = source / "dataset.json"
    if not meta_path.is_file():
        sys.exit(f"{source}: not a caap dataset (no dataset.json)")
    if out.exists():
        sys.exit(f"{out}: already exists; remove it first")
    present = sorted(p.name for p in (source / "images").iterdir() if p.is_dir())
    chosen = [a for a in present if (a in apps) == keep]
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["name"] = f"{meta.get('name', source.name)}-{'only' if keep else 'without'}-{len(apps)}-apps"
    meta["subset"] = {"source": str(source), "keep" if keep else "drop": sorted(apps), "apps": chosen}
    for part in ("images", "labels"):
        (out / part).mkdir(parents=True)
        for app in chosen:
            if not (source / part / app).is_dir():
                continue
            (out / part / app).mkdir()
            for file in (source / part / app).iterdir():
                try:
                    os.link(file, out / part / app / file.name)
                except OSError:  # another file system
                    shutil.copy2(file, out / part / app / file.name)
    (out / "dataset.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--keep", type=Path, help="a file of app names: only these apps' screens")
    which.add_argument("--drop", type=Path, help="a file of app names: every app but these")
    args = parser.parse_args()
    names = read_apps(args.keep or args.drop)
    chosen = subset(args.source, args.out, names, keep=args.keep is not None)
    screens = sum(1 for app in chosen for _ in (args.out / "images" / app).glob("*.png"))
    print(f"{args.out}: {len(chosen)} apps, {screens} screens")


if __name__ == "__main__":
    main()
