"""Looking at a dataset: counts (``dataset_stats`` / ``format_stats``) and contact sheets of
annotated screenshots (``contact_sheet``), to catch label mistakes before training on them.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from caap.data.augment import AUG_PREFIX
from caap.data.export import Item, load_items
from caap.data.format import DatasetError, open_dataset
from caap.report.draw import TYPE_COLOURS, draw_elements, fit_text, label_font
from caap.seeds import format_seed_ranges
from caap.taxonomy import DETECTOR_CLASSES, FRACTION_ATTRIBUTES, TEXT, TYPE_ATTRIBUTES, ElementType

# --- statistics ---------------------------------------------------------------------------------


def _value_key(value: Any) -> str:
    # JSON object keys must be strings; "true"/"false"/"null" read the same as in the annotations.
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_FIRST = {"true": 0, "false": 1, "present": 0, "empty": 1}


def _ordered(counts: Counter[str]) -> dict[str, int]:
    # true/false and present/empty first, other values (subtypes) alphabetically, null last.
    return dict(sorted(counts.items(), key=lambda kv: (kv[0] == "null", _FIRST.get(kv[0], 2), kv[0])))


def dataset_stats(dataset_root: str | Path) -> dict[str, Any]:
    """Counts for a dataset, JSON-serialisable::

        {"root", "name", "images", "elements",
         "types": {type: n},                                   every detector class, zeros included
         "attributes": {type: {attr: {value: n}}},             only the attributes the type carries;
                                                               booleans/subtype by value, text as
                                                               {"present", "empty", "null"}
         "groups": {group: {"images", "elements"}}, "tasks": {task: {"images", "elements"}},
         "kinds": {source.kind: images},
         "elements_per_image": {"mean", "min", "max"}, "image_sizes": {"WxH": images},
         "seeds": {"distinct", "ranges", "unseeded"}, "augmented": images with an aug: note}
    """
    meta = open_dataset(dataset_root).meta()
    items = load_items(dataset_root, allow_unknown=True, allow_empty=True)
    types: Counter[str] = Counter({t.value: 0 for t in DETECTOR_CLASSES})
    attributes: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    tasks: dict[str, Counter[str]] = defaultdict(Counter)
    kinds: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    per_image: list[int] = []
    seeds: set[int] = set()
    unseeded = augmented = 0
    for it in items:
        ann = it.ann
        n = len(ann.elements)
        per_image.append(n)
        sizes[f"{ann.width}x{ann.height}"] += 1
        groups[it.group].update(images=1, elements=n)
        tasks[ann.source.task or "(none)"].update(images=1, elements=n)
        kinds[ann.source.kind] += 1
        if ann.source.seed is None:
            unseeded += 1
        else:
            seeds.add(ann.source.seed)
        if ann.source.note and ann.source.note.startswith(AUG_PREFIX):
            augmented += 1
        for e in ann.elements:
            types[e.type.value] += 1
            for name in TYPE_ATTRIBUTES[e.type]:
                value = getattr(e, name)
                if name == TEXT:
                    key = "null" if value is None else ("empty" if value == "" else "present")
                elif name in FRACTION_ATTRIBUTES:  # a slider's value: known or not, not one row per number
                    key = "null" if value is None else "present"
                else:
                    key = _value_key(value)
                attributes[e.type.value][name][key] += 1
    total = sum(per_image)
    return {
        "root": str(Path(dataset_root).resolve()),
        "name": meta.get("name"),
        "images": len(items),
        "elements": total,
        "types": dict(types),
        "attributes": {
            t.value: {name: _ordered(attributes[t.value][name]) for name in TYPE_ATTRIBUTES[t]}
            for t in ElementType if t.value in attributes
        },
        "groups": {g: {"images": c["images"], "elements": c["elements"]} for g, c in sorted(groups.items())},
        "tasks": {t: {"images": c["images"], "elements": c["elements"]} for t, c in sorted(tasks.items())},
        "kinds": dict(sorted(kinds.items())),
        "elements_per_image": {
            "mean": round(total / len(items), 2) if items else 0.0, "min": min(per_image, default=0),
            "max": max(per_image, default=0),
        },
        "image_sizes": dict(sizes.most_common()),
        "seeds": {"distinct": len(seeds), "ranges": format_seed_ranges(seeds), "unseeded": unseeded},
        "augmented": augmented,
    }


def _attr_summary(attrs: dict[str, dict[str, int]]) -> str:
    parts = []
    for name, counts in attrs.items():
        parts.append(f"{name}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return "; ".join(parts)


def format_stats(stats: dict[str, Any]) -> Any:
    """A rich renderable (a ``rich.console.Group`` of tables) for ``console.print``."""
    from rich.console import Group
    from rich.table import Table

    summary = Table(title=f"Dataset {stats.get('name') or ''}  ({stats['root']})", show_header=False)
    summary.add_column(style="bold")
    summary.add_column()
    epi = stats["elements_per_image"]
    seeds = stats["seeds"]
    seed_ranges = seeds["ranges"] if len(seeds["ranges"]) <= 80 else seeds["ranges"][:77] + "..."
    for key, value in (
        ("images", stats["images"]),
        ("elements", stats["elements"]),
        ("elements per image", f"mean {epi['mean']}, min {epi['min']}, max {epi['max']}"),
        ("image sizes", ", ".join(f"{k} ({v})" for k, v in stats["image_sizes"].items())),
        ("sources", ", ".join(f"{k} ({v})" for k, v in stats["kinds"].items())),
        ("seeds", f"{seeds['distinct']} distinct: {seed_ranges}; {seeds['unseeded']} image(s) without a seed"),
        ("augmented copies", stats["augmented"]),
    ):
        summary.add_row(key, str(value))

    types = Table(title="Element types")
    types.add_column("type")
    types.add_column("elements", justify="right")
    types.add_column("attributes (value: count)")
    for name, count in stats["types"].items():
        attrs = _attr_summary(stats["attributes"].get(name, {}))
        types.add_row(name, str(count), attrs, style="dim" if count == 0 else None)

    groups = Table(title="Groups")
    groups.add_column("group")
    groups.add_column("images", justify="right")
    groups.add_column("elements", justify="right")
    for name, c in stats["groups"].items():
        groups.add_row(name, str(c["images"]), str(c["elements"]))
    parts: list[Any] = [summary, types, groups]
    if set(stats["tasks"]) != set(stats["groups"]):  # only worth a table when tasks and groups differ
        tasks = Table(title="Tasks (source.task)")
        tasks.add_column("task")
        tasks.add_column("images", justify="right")
        tasks.add_column("elements", justify="right")
        for name, c in stats["tasks"].items():
            tasks.add_row(name, str(c["images"]), str(c["elements"]))
        parts.append(tasks)
    return Group(*parts)


# --- contact sheets -----------------------------------------------------------------------------

@dataclass
class _Layout:
    cell_w: int
    cell_h: int
    img_w: int
    img_h: int
    columns: int
    rows: int
    header_h: int
    pad: int
    line_h: int


def _fit_scale(w: int, h: int, scale: int, max_w: int, max_h: int) -> float:
    return min(float(scale), max_w / w, max_h / h)


def _pick(items: list[Item], k: int) -> list[Item]:
    """Up to ``k`` items spread evenly over the (sorted) group, for variety across seeds."""
    if len(items) <= k:
        return items
    if k == 1:
        return [items[0]]
    idx = sorted({round(i * (len(items) - 1) / (k - 1)) for i in range(k)})
    return [items[i] for i in idx]


def _draw_cell(
    sheet: Image.Image, item: Item, x0: int, y0: int, lay: _Layout, scale: int, font: Any, small: Any
) -> None:
    with Image.open(item.image_path) as im:
        img = im.convert("RGB")
    f = _fit_scale(img.width, img.height, scale, lay.img_w, lay.img_h)
    drawn = draw_elements(img, item.ann.elements, scale=f, font=small)
    sheet.paste(drawn, (x0, y0))
    sheet_draw = ImageDraw.Draw(sheet)
    sheet_draw.rectangle((x0 - 1, y0 - 1, x0 + drawn.width, y0 + drawn.height), outline=(160, 160, 160))
    caption = fit_text(sheet_draw, f"{item.group}/{item.stem}", font, lay.cell_w - 2 * lay.pad)
    sheet_draw.text((x0, y0 + lay.img_h + 3), caption, font=font, fill=(0, 0, 0))


def _legend(draw: ImageDraw.ImageDraw, types: list[ElementType], x: int, y: int, width: int, font: Any,
            line_h: int) -> int:
    """Draw colour swatches with type names, wrapping lines; return the height used."""
    cx, cy = x, y
    for t in types:
        w = int(draw.textlength(t.value, font=font)) + line_h + 14
        if cx + w > x + width and cx > x:
            cx, cy = x, cy + line_h + 2
        draw.rectangle((cx, cy + 2, cx + line_h - 4, cy + line_h - 2), fill=TYPE_COLOURS[t])
        draw.text((cx + line_h, cy), t.value, font=font, fill=(0, 0, 0))
        cx += w
    return cy + line_h - y


def contact_sheet(
    dataset_root: str | Path,
    out_png: str | Path,
    *,
    per_group: int = 2,
    columns: int = 8,
    scale: int = 2,
    groups: Iterable[str] | None = None,
    max_size: int = 4096,
    max_cell: int = 800,
) -> list[Path]:
    """Draw up to ``per_group`` annotated screenshots per group on a grid and save it as PNG.

    Screens are enlarged ×``scale`` (NEAREST; screens larger than ``max_cell`` pixels are shrunk to
    fit), each box outlined in its type's colour with a label (``element_label``), each cell
    captioned ``group/stem``. A sheet stays within ``max_size`` pixels a side; when the groups do
    not fit on one, several are written (``OUT-1.png``, ``OUT-2.png``, ...; a group is never split
    unless it alone is larger than a sheet). Returns the paths written (one for a single sheet).
    """
    if per_group < 1 or columns < 1 or scale < 1:
        raise DatasetError(f"contact sheet: per_group, columns and scale must be >= 1 (got {per_group}, "
                           f"{columns}, {scale})")
    out_png = Path(out_png)
    if out_png.suffix.lower() != ".png":
        raise DatasetError(f"{out_png}: the contact sheet must be a .png file")
    meta = open_dataset(dataset_root).meta()
    items = load_items(dataset_root, allow_unknown=True)
    by_group: dict[str, list[Item]] = defaultdict(list)
    for it in items:
        by_group[it.group].append(it)
    names = sorted(by_group)
    if groups is not None:
        wanted = list(dict.fromkeys(groups))
        missing = [g for g in wanted if g not in by_group]
        if missing:
            raise DatasetError(
                f"{dataset_root}: groups: no such group(s) {', '.join(missing)} "
                f"(have: {', '.join(names[:20])}{', ...' if len(names) > 20 else ''})"
            )
        names = wanted
    chosen = [(g, _pick(by_group[g], per_group)) for g in names]

    font, small = label_font(13), label_font(11)
    line_h = int(max(font.getbbox("Ag")[3], 13)) + 3  # Pillow types the box as floats; it holds whole pixels
    pad = 10
    img_w = img_h = 1
    for _, its in chosen:
        for it in its:
            f = _fit_scale(it.ann.width, it.ann.height, scale, max_cell, max_cell)
            img_w, img_h = max(img_w, round(it.ann.width * f)), max(img_h, round(it.ann.height * f))
    cell_w, cell_h = img_w + pad, img_h + line_h + pad
    n_cells = sum(len(its) for _, its in chosen)
    cols = max(1, min(columns, n_cells, (max_size - pad) // cell_w))  # no empty columns on a small sheet
    sheet_w = pad + cols * cell_w

    # The header (title + legend) height depends on the width; measure it on a scratch image.
    legend_types = [t for t in ElementType if t is not ElementType.UNKNOWN or any(
        e.type is t for _, its in chosen for it in its for e in it.ann.elements)]
    scratch = ImageDraw.Draw(Image.new("RGB", (sheet_w, 10)))
    header_h = pad + line_h + _legend(scratch, legend_types, pad, 0, sheet_w - 2 * pad, small, line_h) + pad
    rows = max(1, (max_size - header_h - pad) // cell_h)
    lay = _Layout(cell_w, cell_h, img_w, img_h, cols, rows, header_h, pad, line_h)

    # Pack whole groups into sheets.
    capacity = cols * rows
    sheets: list[list[Item]] = [[]]
    for _, its in chosen:
        if sheets[-1] and len(sheets[-1]) + len(its) > capacity:
            sheets.append([])
        for it in its:
            if len(sheets[-1]) == capacity:
                sheets.append([])
            sheets[-1].append(it)

    paths = [out_png] if len(sheets) == 1 else [
        out_png.with_name(f"{out_png.stem}-{i}{out_png.suffix}") for i in range(1, len(sheets) + 1)
    ]
    out_png.parent.mkdir(parents=True, exist_ok=True)
    title_name = meta.get("name") or Path(dataset_root).name
    for n, (cells, path) in enumerate(zip(sheets, paths, strict=True), start=1):
        used_rows = max(1, -(-len(cells) // cols))
        sheet = Image.new("RGB", (sheet_w, header_h + used_rows * cell_h + pad), (255, 255, 255))
        draw = ImageDraw.Draw(sheet)
        title = f"{title_name}: {len(items)} images, {len(by_group)} groups"
        if len(sheets) > 1:
            title += f"  (sheet {n}/{len(sheets)})"
        draw.text((pad, pad), title, font=font, fill=(0, 0, 0))
        _legend(draw, legend_types, pad, pad + line_h, sheet_w - 2 * pad, small, line_h)
        for i, it in enumerate(cells):
            r, c = divmod(i, cols)
            _draw_cell(sheet, it, pad + c * cell_w, header_h + r * cell_h, lay, scale, font, small)
        # Atomic: a reader (or a crash) never sees half a PNG.
        tmp = path.with_name(f".{path.name}.tmp")
        sheet.save(tmp, format="PNG")
        os.replace(tmp, path)
    return paths
