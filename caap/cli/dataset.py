"""`caap dataset ...`: build, check, convert and augment datasets."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from caap import __version__
from caap.cli.common import ConfigOpt, app, config_from_flags, err, fail, out

dataset_app = typer.Typer(help="Build, check, convert and augment annotated screenshot datasets.",
                          no_args_is_help=True)
app.add_typer(dataset_app, name="dataset")


@dataset_app.command("miniwob")
def dataset_miniwob(
    tasks: Annotated[str, typer.Option(help="Comma-separated task names, or a file with one per line.")],
    seeds: Annotated[str, typer.Option(help="Seed ranges, e.g. 1000-2999 (annotation seeds) or 0-999 (test).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Dataset directory (created; an interrupted run resumes).")],
    per_task: Annotated[int | None, typer.Option(
        help="Episodes per task: this many seeds spread evenly over --seeds (default: every seed).")] = None,
    steps: Annotated[str, typer.Option(help="Random interactions per episode, MIN-MAX.")] = "1-4",
    workers: Annotated[int, typer.Option(help="Parallel processes, each with its own Xvfb and Chromium.",
                                         min=1)] = 1,
    agent: Annotated[bool, typer.Option(
        "--agent", help="Drive each episode with caap's agent (the DOM oracle for eyes, the LLM of --base-url/"
                        "--model or the config) instead of random interactions, and label every screen it "
                        "meets: the states deep inside a task. Kept beside the random screens.")] = False,
    max_steps: Annotated[int, typer.Option(help="--agent: steps per episode.", min=1)] = 10,
    config: ConfigOpt = None,
    base_url: Annotated[str | None, typer.Option(
        help="--agent: OpenAI-compatible endpoint (env: OPENAI_BASE_URL).")] = None,
    model: Annotated[str | None, typer.Option(help="--agent: model name (env: OPENAI_MODEL).")] = None,
) -> None:
    """Screenshots of MiniWoB++ tasks captured as the agent sees them, labelled from the DOM.

    Needs Xvfb, xdotool and Chromium (bash tools/setup.sh --system) and the bench extra.
    """
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from caap.bench.harness import BenchError, parse_tasks
    from caap.bench.miniwob import MiniWoBError
    from caap.data.miniwob.generate import AgentDriver
    from caap.data.miniwob.run import generate_parallel, pick_seeds
    from caap.seeds import SeedRangeError, parse_seed_ranges

    try:
        seed_list = pick_seeds(parse_seed_ranges(seeds), per_task)
        task_list = parse_tasks(tasks)  # the benchmark's parser: one rule for task lists
    except (SeedRangeError, MiniWoBError, BenchError) as exc:
        fail(str(exc))
    try:
        lo, hi = (int(x) for x in steps.split("-"))
    except ValueError:
        fail(f"--steps must be MIN-MAX, e.g. 1-4, not {steps!r}")
    driver = None
    if agent:
        llm = config_from_flags(config, {"llm.base_url": base_url, "llm.model": model}).llm
        if not llm.base_url or not llm.model:
            fail("--agent needs an LLM: --base-url and --model (or OPENAI_BASE_URL / OPENAI_MODEL, or the config)")
        driver = AgentDriver(llm=llm, max_steps=max_steps)
    info: dict[str, Any] = {"command": "caap dataset miniwob", "tasks": task_list, "seeds": seeds,
                            "per_task": per_task, "steps": [lo, hi], "caap_version": __version__}
    if driver is not None:
        info.update(agent={"model": driver.llm.model, "max_steps": max_steps})
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err) as progress:
        bar = progress.add_task("episodes", total=len(task_list) * len(seed_list))
        try:
            stats = generate_parallel(out_dir, task_list, seed_list, workers=workers, steps=(lo, hi), info=info,
                                      driver=driver,
                                      on_episode=lambda task, seed, kept: progress.update(
                                          bar, advance=1, description=f"{task} {seed}"))
        except Exception as exc:  # a worker's browser or display failure, re-raised here
            fail(f"generation stopped: {exc} (what was written is kept; run again to resume)", code=1)
    out.print(
        f"{stats.screenshots} screenshots ({stats.elements} elements) from {stats.episodes} new episodes in "
        f"{time.perf_counter() - started:.0f}s; {stats.duplicates} near-duplicates dropped; "
        f"{stats.ended_by_interaction} episodes ended by an interaction; dataset: {out_dir}", highlight=False)


def _parse_size(spec: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in spec.lower().replace("×", "x").split("x"))
    except ValueError:
        fail(f"--size must be WIDTHxHEIGHT in pixels, e.g. 320x240, not {spec!r}")
    # The page, and the marker strip right of it, must fit the browser window on the 1280x800 display.
    if not (32 <= w <= 1200 and 32 <= h <= 700):
        fail(f"--size {spec}: width must be 32-1200 and height 32-700 pixels")
    return w, h


@dataset_app.command("synth")
def dataset_synth(
    out_dir: Annotated[Path, typer.Option("--out", help="Dataset directory (created; an interrupted run resumes).")],
    seeds: Annotated[str, typer.Option(help="Seed ranges, one page per seed, e.g. 10000-10999.")],
    kind: Annotated[str, typer.Option(
        help="text: text screens for the reader; ui: generated widget UIs (forms, tables, trees, menus, tabs, "
             "dialogs, sliders, progress bars…) over sizes and scale factors.")] = "text",
    size: Annotated[str | None, typer.Option(help="--kind text: region size WIDTHxHEIGHT in pixels "
                                                  "[default: 320x240].")] = None,
    sizes: Annotated[str | None, typer.Option(
        help="--kind ui: window sizes in CSS px, WxH or ranges WxH-WxH, comma-separated, within 320x240-1920x1080 "
             "[default: 320x240-1920x1080].")] = None,
    scales: Annotated[str | None, typer.Option(
        help="--kind ui: device scale factors out of 1,1.25,1.5,2 (one browser each; images are CSS px × factor) "
             "[default: all four].")] = None,
    workers: Annotated[int, typer.Option(help="Parallel processes, each with its own Xvfb and Chromium.",
                                         min=1)] = 1,
    chars_from: Annotated[Path | None, typer.Option(
        help="A caap dataset whose label texts' characters join the set every page run must cover.")] = None,
    blocks: Annotated[str | None, typer.Option(
        help="--kind ui: draw only these main-area block kinds, comma-separated, each with an optional weight "
             "(NAME:WEIGHT, default 1), e.g. dots,checkgrid,calendar,flatform,form:0.2 [default: every kind at "
             "its own weight].")] = None,
) -> None:
    """Synthetic screens rendered by Chromium on the virtual screen, captured with mss and labelled
    from the DOM. --kind text: text screens (names, tokens, words, numbers, dates, symbols, CJK… on
    buttons, links, fields, checkboxes, tables, lists), extra training data for the element reader.
    --kind ui: generated widget UIs in light and dark themes, at window sizes from 320x240 to
    1920x1080 and device scale factors 1-2, every element of the taxonomy labelled, for the detector.

    Needs Xvfb and Chromium (bash tools/setup.sh --system) and mss.
    """
    import importlib.util
    import shutil
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from caap.data.format import DatasetError
    from caap.data.synth.generate import GROUP, chars_from_dataset, done_seeds, drawable, generate_synth
    from caap.data.synth.ui import SizeSpecError, ui_job
    from caap.seeds import SeedRangeError, parse_seed_ranges

    try:
        seed_list = parse_seed_ranges(seeds)
    except SeedRangeError as exc:
        fail(str(exc))
    if kind not in ("text", "ui"):
        fail(f"--kind must be text or ui, not {kind!r}")
    if kind == "text" and (sizes is not None or scales is not None):
        fail("--sizes and --scales are for --kind ui (text screens take one --size)")
    if kind == "ui" and size is not None:
        fail("--size is for --kind text (UI pages take --sizes and --scales)")
    if kind == "text" and blocks is not None:
        fail("--blocks is for --kind ui")
    region = _parse_size(size or "320x240")
    job = None
    if kind == "ui":
        try:
            job = ui_job(sizes or "320x240-1920x1080", scales or "1,1.25,1.5,2", blocks=blocks)
        except SizeSpecError as exc:
            fail(str(exc))
        if (out_dir / "dataset.json").exists():  # resuming: only with the generator and blocks it was made with
            from caap.data.format import Dataset, DatasetError

            try:
                made = Dataset(out_dir).meta().get("generator") or {}
            except DatasetError as exc:
                fail(str(exc))
            now = job.info()
            if made.get("kind") == "ui" and any(made.get(k, "all" if k == "blocks" else 1) != v
                                                for k, v in now.items()):
                fail(f"{out_dir} was made by another UI generator or block set "
                     f"({made.get('generator_version', 1)}, {made.get('blocks', 'all')}; now "
                     f"{now['generator_version']}, {now['blocks']}): use a new --out")
    missing = [what for what, ok in (("Xvfb (Debian package xvfb)", shutil.which("Xvfb") is not None),
                                     ("Chromium at /usr/bin/chromium (Debian package chromium)",
                                      Path("/usr/bin/chromium").exists()),
                                     ("mss (pip install 'caap[bench]')", importlib.util.find_spec("mss") is not None))
               if not ok]
    if missing:
        fail(f"synthetic screens need {', '.join(missing)}: bash tools/setup.sh --system")
    extra = ""
    if chars_from is not None:
        try:
            extra = chars_from_dataset(chars_from)
        except DatasetError as exc:
            fail(f"--chars-from: {exc}")
        extra, undrawable = drawable(extra)
        if undrawable:
            err.print(f"--chars-from: {len(undrawable)} characters no installed font draws are left out: "
                      f"{undrawable[:40]!r}", highlight=False)
    info: dict[str, Any] = {"command": "caap dataset synth", "kind": kind, "seeds": seeds,
                            "chars_from": str(chars_from or ""), "extra_chars": extra, "caap_version": __version__}
    if job is not None:
        from dataclasses import replace

        job = replace(job, extra_chars=extra)
        info.update(sizes=sizes or "320x240-1920x1080", scales=[float(s) for s in job.scales], **job.info())
    else:
        info["size"] = list(region)
    todo = len(set(seed_list) - done_seeds(out_dir, job.group if job is not None else GROUP))
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err) as progress:
        bar = progress.add_task("pages", total=todo)
        try:
            stats = generate_synth(out_dir, seed_list, size=region, workers=workers, extra_chars=extra, info=info,
                                   job=job, on_page=lambda seed, ok, n: progress.update(
                                       bar, advance=1, description=f"seed {seed}" + ("" if ok else " (dropped)")))
        except DatasetError as exc:
            fail(str(exc))
        except Exception as exc:  # a worker's browser or display failure, re-raised here
            fail(f"generation stopped: {exc} (what was written is kept; run again to resume)", code=1)
    seconds = time.perf_counter() - started
    rate = stats.screens / seconds if seconds > 0 else 0.0
    done = (f"{stats.screens} screens ({stats.elements} elements, {stats.text_elements} with text) from "
            f"{stats.pages} new pages in {seconds:.0f}s ({rate:.1f} screens/s); {stats.skipped} seeds already there")
    if job is not None:
        types = ", ".join(f"{t} {n}" for t, n in sorted(stats.types.items(), key=lambda kv: -kv[1]))
        out.print(f"{done}; labels per type: {types or 'none'}; dataset: {out_dir}", highlight=False)
        return
    bad = stats.mismatched / max(1, stats.placed)
    out.print(
        f"{done}; labels vs placed strings: {stats.mismatched} of {stats.placed} mismatched ({bad:.2%}), "
        f"{stats.widgets_removed} widgets removed, {stats.screens_dropped} screens dropped; dataset: {out_dir}",
        highlight=False)


@dataset_app.command("desktop")
def dataset_desktop(
    out_dir: Annotated[Path, typer.Option("--out", help="Dataset directory (created; an interrupted run resumes).")],
    apps: Annotated[str | None, typer.Option(
        help="Comma-separated app names (default: every app of the split; see caap.bench.desktop.apps).")] = None,
    screens_per_app: Annotated[int, typer.Option(help="Screens to have per app (episodes run until then).",
                                                 min=1)] = 8,
    size: Annotated[str, typer.Option(help="Virtual screen WIDTHxHEIGHT; windows are sized to fit it.")] = "1440x900",
    seed: Annotated[int, typer.Option(help="First episode seed (episode seeds are SEED, SEED+1, ...).")] = 0,
    split: Annotated[str, typer.Option(
        "--split", help="train: the training apps; eval: only the apps reserved for evaluation (DESIGN §6), "
        "into a dataset of their own.")] = "train",
) -> None:
    """Real GTK 3/4, Qt 5 and Tk applications on a private Xvfb desktop, labelled from their
    accessibility tree (AT-SPI) or, for Tk, from Tk itself.

    Needs the Debian packages of `bash tools/setup.sh --system desktop` and the screen extra.
    """
    import time

    from caap.bench.desktop.session import DesktopError
    from caap.data.desktop.generate import DesktopDataError, generate, select_apps
    from caap.data.format import DatasetError

    try:
        w, h = (int(v) for v in size.lower().replace("×", "x").split("x"))
    except ValueError:
        fail(f"--size must be WIDTHxHEIGHT in pixels, e.g. 1440x900, not {size!r}")
    if not (320 <= w <= 3840 and 240 <= h <= 2160):
        fail(f"--size {size}: width must be 320-3840 and height 240-2160 pixels")
    try:
        chosen = select_apps([a.strip() for a in apps.split(",") if a.strip()] if apps else None, split)
    except DesktopDataError as exc:
        fail(str(exc))
    info = {"command": "caap dataset desktop", "apps": [a.name for a in chosen], "screens_per_app": screens_per_app,
            "size": [w, h], "seed": seed, "caap_version": __version__}
    started = time.perf_counter()
    try:
        stats = generate(out_dir, chosen, split=split, screens_per_app=screens_per_app, size=(w, h), seed=seed,
                         generator_info=info,
                         on_screen=lambda app, kept: err.print(f"{app}: {kept} screen(s)", highlight=False),
                         on_message=lambda msg: err.print(msg, highlight=False))
    except (DesktopDataError, DatasetError) as exc:
        fail(str(exc))
    except DesktopError as exc:
        fail(f"{exc} (what was written is kept; run again to resume)", code=1)
    per_app = ", ".join(f"{name} {n}" for name, n in stats.per_app.items())
    out.print(f"{stats.screens} new screens ({stats.elements} elements) from {stats.episodes} episodes in "
              f"{time.perf_counter() - started:.0f}s; {stats.duplicates} near-duplicates and {stats.unlabelled} "
              f"unlabelled screens dropped; {len(stats.skipped)} app(s) skipped; per app: {per_app or '-'}; "
              f"dataset: {out_dir}", highlight=False)
    if not stats.per_app:
        fail("no app could run: " + "; ".join(stats.skipped), code=1)


SplitOpt = Annotated[str, typer.Option(
    "--split", help="Which seeds are validation: val:2800-2999 (ranges), val:every10 (seeds divisible by 10), "
    "or train:... for the other way round. Images without a seed always go to train.")]


def _split(spec: str) -> Any:
    from caap.data.export import SplitRule
    from caap.data.format import DatasetError

    try:
        return SplitRule.parse(spec)
    except DatasetError as exc:
        fail(str(exc))


def _dataset_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    from caap.data.format import DatasetError

    try:
        return fn(*args, **kwargs)
    except DatasetError as exc:
        fail(str(exc))


@dataset_app.command("report")
def dataset_report(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    sheet: Annotated[Path | None, typer.Option(help="Write a contact sheet PNG (boxes and labels drawn).")] = None,
    per_group: Annotated[int, typer.Option(help="Images per task/group on the contact sheet.", min=1)] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Counts per type, attribute value and task; optionally a contact sheet to check labels by eye."""
    from caap.data.format import open_dataset
    from caap.data.report import contact_sheet, dataset_stats, format_stats

    _dataset_call(open_dataset, dataset)
    stats = _dataset_call(dataset_stats, dataset)
    if as_json:
        sys.stdout.write(json.dumps(stats, indent=2) + "\n")
    else:
        out.print(format_stats(stats))
    if sheet is not None:
        for path in _dataset_call(contact_sheet, dataset, sheet, per_group=per_group):
            err.print(f"contact sheet: {path}", highlight=False)


@dataset_app.command("export-yolo")
def dataset_export_yolo(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    out_dir: Annotated[Path, typer.Argument(help="Output directory for the YOLO dataset (images, labels, data.yaml).")],
    split: SplitOpt = "val:every10",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty output directory.")] = False,
) -> None:
    """An ultralytics detection dataset; classes from the taxonomy; train/val split by seed."""
    from caap.data.export import export_yolo

    result = _dataset_call(export_yolo, dataset, out_dir, split=_split(split), overwrite=overwrite)
    images, boxes = result["images"], result["elements"]
    out.print(f"YOLO dataset in {result['out_dir']}: train {images['train']} images / {boxes['train']} boxes, "
              f"val {images['val']} images / {boxes['val']} boxes", highlight=False)


@dataset_app.command("export-reader")
def dataset_export_reader(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    out_dir: Annotated[Path, typer.Argument(help="Output directory for train.jsonl and val.jsonl.")],
    split: SplitOpt = "val:every10",
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty output directory.")] = False,
) -> None:
    """Element reader samples: one line per element with its image, box and target record."""
    from caap.data.export import export_reader_samples

    result = _dataset_call(export_reader_samples, dataset, out_dir, split=_split(split), overwrite=overwrite)
    out.print(json.dumps(result), highlight=False)


@dataset_app.command("augment")
def dataset_augment(
    dataset: Annotated[Path, typer.Argument(help="Source dataset directory.")],
    out_dir: Annotated[Path, typer.Argument(help="New dataset directory (originals + augmented copies).")],
    multiplier: Annotated[int, typer.Option(help="Images per original in the result (3 = tripled, as in CAAP).",
                                            min=1)] = 3,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed gives the same copies.")] = 0,
    train_split: Annotated[str | None, typer.Option(
        "--split", help="Augment only the train side of this split (e.g. val:every10); validation images "
        "are copied unchanged.")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a non-empty output directory.")] = False,
) -> None:
    """Colour changes, small box jitter and Gaussian noise, as in the CAAP paper; never a flip."""
    from caap.data.augment import augment_dataset

    rule = _split(train_split) if train_split else None
    result = _dataset_call(augment_dataset, dataset, out_dir, multiplier=multiplier, seed=seed, overwrite=overwrite,
                           only_train=rule)
    out.print(f"{result['images']} images ({result['originals']} originals, {result['augmented']} augmented) in "
              f"{result['out_root']} ({result['seconds']:.0f}s)", highlight=False)


@dataset_app.command("pack")
def dataset_pack(
    datasets: Annotated[list[Path], typer.Argument(help="Dataset directories (different names).")],
    out_file: Annotated[Path, typer.Option("--out", help="Archive to write (.tar.gz).")],
    max_mb: Annotated[float, typer.Option(help="Refuse an archive larger than this (0: no limit).", min=0)] = 60.0,
) -> None:
    """One small archive of datasets to carry to a training machine (lossless WebP, duplicates once)."""
    from caap.data.pack import pack

    result = _dataset_call(pack, datasets, out_file, max_mb=max_mb or None)
    for name, counts in result["datasets"].items():
        out.print(f"{name}: {counts.get('screens', 0)} screens ({counts.get('images', 0)} images, "
                  f"{counts.get('duplicate_screens', 0)} duplicates), {counts.get('elements', 0)} elements",
                  highlight=False)
    out.print(f"{result['archive']}: {result['mb']} MB", highlight=False)


@dataset_app.command("tile")
def dataset_tile(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Tiled dataset to write (must not exist or be empty).")],
    size: Annotated[int, typer.Option(help="Canvas size of the detector recipe (its imgsz), px.", min=64)] = 480,
    max_tiles: Annotated[int, typer.Option(help="Tiles kept from a screen larger than --size (the fullest).",
                                           min=1)] = 3,
    seed: Annotated[int, typer.Option(help="Breaks ties between equally full tiles.")] = 0,
    seeds: Annotated[str | None, typer.Option(
        help="Only the screens of these seeds, e.g. 0-399 (to cut a large set into archives that fit).")] = None,
) -> None:
    """A dataset of big screens made small enough to carry: screens at scale factor 1, large ones cut
    to the fullest tiles the detector's canvases take (an element cut by an edge loses its text)."""
    from caap.data.canvas import tile_dataset
    from caap.seeds import SeedRangeError, parse_seed_ranges

    try:
        wanted = parse_seed_ranges(seeds) if seeds else None
    except SeedRangeError as exc:
        fail(f"--seeds: {exc}")
    r = _dataset_call(tile_dataset, dataset, out_dir, size=size, max_tiles=max_tiles, seed=seed, seeds=wanted)
    out.print(f"{out_dir}: {r['written']} images from {r['screens']} screens ({r['tiled']} tiled), "
              f"{r['elements']} elements", highlight=False)


@dataset_app.command("unpack")
def dataset_unpack(
    archive: Annotated[Path, typer.Argument(help="Archive written by `caap dataset pack`.")],
    out_dir: Annotated[Path, typer.Argument(help="Directory to put the datasets in.")] = Path("data"),
) -> None:
    """Restore the datasets of a packed archive (never over an existing dataset)."""
    from caap.data.pack import unpack

    for root in _dataset_call(unpack, archive, out_dir):
        out.print(str(root), highlight=False)


@dataset_app.command("export-labelstudio")
def dataset_export_labelstudio(
    dataset: Annotated[Path, typer.Argument(help="Dataset directory.")],
    out_file: Annotated[Path, typer.Option("--out", help="Label Studio tasks JSON to write.")],
    image_root_url: Annotated[str | None, typer.Option(
        help="URL prefix under which the dataset's files are served (default: Label Studio local-files "
        "URLs; see annotation/GUIDE.md).")] = None,
) -> None:
    """Label Studio tasks with the current labels as predictions (labeling config: annotation/)."""
    from caap.data.labelstudio import export_tasks

    n = _dataset_call(export_tasks, dataset, out_file, image_root_url=image_root_url)
    out.print(f"{n} Label Studio tasks written to {out_file}", highlight=False)


@dataset_app.command("import-labelstudio")
def dataset_import_labelstudio(
    export_file: Annotated[Path, typer.Argument(help="A Label Studio JSON export.")],
    dataset: Annotated[Path, typer.Argument(help="The dataset the tasks came from.")],
    out_dir: Annotated[Path | None, typer.Option(
        "--out", help="Write a new dataset here instead of updating DATASET's labels.")] = None,
) -> None:
    """Bring corrected annotations from Label Studio back into the canonical format."""
    from caap.data.labelstudio import import_export

    n = _dataset_call(import_export, export_file, dataset, out_root=out_dir)
    out.print(f"{n} annotations imported into {out_dir or dataset}", highlight=False)


@dataset_app.command("prelabel")
def dataset_prelabel(
    images_dir: Annotated[Path, typer.Argument(help="Folder of unlabelled screenshots (png, jpg, jpeg, webp; "
                                                     "searched recursively).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Dataset directory to write (new or empty, unless "
                                                         "--append or --overwrite).")],
    tasks: Annotated[Path | None, typer.Option(
        "--tasks", help="Label Studio tasks JSON to write (default: OUT/labelstudio-tasks.json).")] = None,
    image_root_url: Annotated[str | None, typer.Option(
        help="URL prefix under which the dataset's files are served (default: Label Studio local-files "
        "URLs; see annotation/GUIDE.md).")] = None,
    append: Annotated[bool, typer.Option(
        "--append", help="Add to the caap dataset at OUT: screenshots already there (same bytes) are skipped, "
        "so this also resumes an interrupted run; nothing there is changed.")] = False,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Delete the caap dataset at OUT first (once the models have loaded).")] = False,
    detector: Annotated[Path | None, typer.Option(help="Detector weights (default: models/detector/).")] = None,
    reader: Annotated[Path | None, typer.Option(help="Reader checkpoint (default: models/reader/).")] = None,
    conf: Annotated[float | None, typer.Option(help="Detector confidence threshold (default 0.25).")] = None,
    device: Annotated[str | None, typer.Option(help="cpu, or a GPU index such as 0.")] = None,
    config: ConfigOpt = None,
) -> None:
    """Pre-label screenshots with the vision models: a caap dataset plus Label Studio tasks whose
    predictions a person corrects (then `caap dataset import-labelstudio EXPORT OUT`)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from caap.cli.live import vision_observer
    from caap.data.prelabel import Mode, ModelFiles, Status, check_output, find_images, prelabel

    if append and overwrite:
        fail("--append and --overwrite exclude each other")
    mode: Mode = "append" if append else "overwrite" if overwrite else "new"
    # Inputs and output first: a wrong folder is told before the models take seconds to load.
    images = _dataset_call(find_images, images_dir, exclude=out_dir)
    _dataset_call(check_output, out_dir, mode, images_dir)
    cfg = config_from_flags(config, {"observe.detector": detector, "observe.reader": reader, "observe.conf": conf,
                                     "observe.device": device})
    observer = vision_observer(cfg, "(nothing was written)")
    models = ModelFiles.of_observer(observer)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=err) as progress:
        bar = progress.add_task("screenshots", total=len(images))

        def on_image(path: Path, status: Status, message: str) -> None:
            if status == "unreadable":
                progress.console.print(f"skipped {path}: {message}", highlight=False, soft_wrap=True)
            progress.update(bar, advance=1, description=path.name)

        result = _dataset_call(prelabel, images_dir, out_dir, observer, models, mode=mode, tasks_path=tasks,
                               image_root_url=image_root_url, on_image=on_image)
    skipped = len(result.unreadable)
    out.print(f"{result.written} screenshots pre-labelled ({result.elements} elements"
              + (f"; {result.dropped} of no label type left out" if result.dropped else "") + ")"
              + (f", {result.already} already in the dataset" if result.already else "")
              + (f", {skipped} unreadable skipped" if skipped else "")
              + f"; dataset: {result.dataset}; Label Studio tasks: {result.tasks_path} ({result.tasks} tasks, "
              f"predictions of {models.version})", highlight=False)
    if result.written + result.already == 0:
        fail(f"none of the {result.found} screenshots could be read", code=1)
    out.print(f"next: .venv/bin/python tools/labelstudio_server.py {result.dataset} --tasks {result.tasks_path}",
              highlight=False)
