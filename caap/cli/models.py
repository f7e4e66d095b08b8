"""`caap train ...` and `caap eval ...`: the vision models."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from caap.cli.common import app, fail, out

train_app = typer.Typer(help="Train the vision models.", no_args_is_help=True)
app.add_typer(train_app, name="train")


@train_app.command("detector")
def train_detector(
    data: Annotated[list[Path], typer.Option(help="A caap dataset (exported to YOLO, split by seed) or a YOLO "
                                                  "dataset directory with data.yaml; repeat for several caap "
                                                  "datasets (trained on canvases: a recipe with canvas).")],
    model: Annotated[str | None, typer.Option(
        help="YOLO config to train from scratch (yolov8n.yaml, yolov8s.yaml, ...) or a .pt checkpoint to "
        "fine-tune (default from the config: yolov8n.yaml).")] = None,
    config: Annotated[Path | None, typer.Option(help="Training settings (default: training/detector.yaml).")] = None,
    epochs: Annotated[int | None, typer.Option(help="Epochs (default from the config).", min=1)] = None,
    hours: Annotated[float | None, typer.Option(
        help="Stop after this many hours, validation included; the epochs and the learning-rate schedule "
        "are fitted to it (ultralytics' time; default from the config).", min=0.001)] = None,
    imgsz: Annotated[int | None, typer.Option(help="Training image size (default from the config).", min=32)] = None,
    batch: Annotated[int | None, typer.Option(help="Batch size (default from the config).", min=1)] = None,
    device: Annotated[str | None, typer.Option(help="cpu, 0, 0,1 ... (default: GPU if present, else CPU).")] = None,
    split: Annotated[str | None, typer.Option(
        help="Validation seeds when --data is a caap dataset (default from the config: val:2800-2999).")] = None,
    project: Annotated[Path, typer.Option(help="Where run directories go.")] = Path("runs/detector"),
    name: Annotated[str, typer.Option(help="Run name (directory under --project).")] = "train",
    resume: Annotated[bool, typer.Option("--resume", help="Continue the interrupted run --project/--name.")] = False,
    val_data: Annotated[list[Path] | None, typer.Option(
        help="A caap dataset whose every screen is validation (repeatable; trained on canvases).")] = None,
) -> None:
    """Train the UI element detector (ultralytics YOLOv8) with the paper's loss weights."""
    from caap.data.format import DatasetError
    from caap.train.detector import TrainingError
    from caap.train.detector import train as run_training

    try:
        one_or_many = data if len(data) > 1 else data[0]
        run_dir = run_training(one_or_many, config=config, model=model, epochs=epochs, hours=hours, imgsz=imgsz,
                               device=device, batch=batch, split=split, project=project, name=name,
                               resume=resume, val_data=val_data or ())
    except (TrainingError, DatasetError) as exc:
        fail(str(exc))
    out.print(f"run directory: {run_dir} (best weights: {run_dir / 'weights' / 'best.pt'})", highlight=False)


eval_app = typer.Typer(help="Measure the vision models on held-out data.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


@eval_app.command("detector")
def eval_detector(
    data: Annotated[Path, typer.Option(help="A caap dataset of held-out screens (e.g. MiniWoB++ seeds 0-999).")],
    weights: Annotated[Path, typer.Option(help="Detector weights (.pt).")],
    conf: Annotated[float, typer.Option(help="Confidence threshold for precision/recall.")] = 0.25,
    device: Annotated[str, typer.Option(help="Device for the accuracy pass (latency runs on CPU and GPU).")] = "cpu",
    snap: Annotated[bool | None, typer.Option(
        help="Run the observer's fit stage on the boxes (snapped to their words...), as the observer does "
             "(default: config observe).")] = None,
    disable_step: Annotated[list[str] | None, typer.Option(
        "--disable-step", help="Switch an observer step off (repeatable; caap observe --list-steps).")] = None,
    config: Annotated[Path | None, typer.Option(help="caap config file whose observe section is used.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the result JSON here.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
) -> None:
    """Precision, recall, mAP50 and mAP50-95 per class and overall at IoU 0.5, and latency per image."""
    from caap.cli.common import config_from_flags
    from caap.data.format import DatasetError
    from caap.observe.detect.detector import DetectorError
    from caap.observe.pipeline import PipelineError
    from caap.train.eval_detector import evaluate

    observe_cfg = config_from_flags(config, {"observe.snap_text_boxes": snap}).observe
    try:
        result = evaluate(data, weights, conf=conf, device=device, snap=observe_cfg.snap_text_boxes,
                          disable=[*observe_cfg.disable, *(disable_step or [])])
    except (DatasetError, DetectorError, PipelineError) as exc:
        fail(str(exc))
    text = json.dumps(result, indent=2)
    if out_file:
        out_file.write_text(text + "\n", encoding="utf-8")
    if as_json:
        sys.stdout.write(text + "\n")
        return
    o = result["overall"]
    table = Table(title=f"detector on {result['images']} images, {result['elements']} elements (IoU {result['iou']}, "
                        f"conf {result['conf']})")
    for col in ("class", "labelled", "precision", "recall", "AP50", "AP50-95"):
        table.add_column(col)
    for name, c in result["per_class"].items():
        table.add_row(name, str(c["gt"]), _fmt(c["precision"]), _fmt(c["recall"]), _fmt(c["ap50"]), _fmt(c["ap50_95"]))
    table.add_row("all (class-agnostic)", str(result["elements"]), _fmt(o["precision"]), _fmt(o["recall"]),
                  _fmt(result["map50"]), _fmt(result["map50_95"]), style="bold")
    out.print(table)
    out.print(f"recall by centres (each box's centre inside the other): {_fmt(o['recall_by_centres'])}",
              highlight=False)
    for key, title, what in (("per_task", "per task (class-agnostic)", "task"),
                             ("per_type", "per labelled type, found by a box of any type", "type")):
        if len(result[key]) > 1:
            found = Table(title=title)
            for col in (what, "labelled", "found (IoU)", "found (centres)"):
                found.add_column(col)
            for name, c in result[key].items():
                found.add_row(name, str(c["labelled"]), _fmt(c["found_share"]), _fmt(c["centres_share"]))
            out.print(found)
    for dev, lat in result["latency_ms"].items():
        out.print(f"latency ({dev}): mean {lat['mean']} ms, p50 {lat['p50']} ms, p90 {lat['p90']} ms per image "
                  f"({lat['images']} images)", highlight=False)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


@train_app.command("reader")
def train_reader(
    data: Annotated[list[Path] | None, typer.Option(
        help="A caap dataset (repeat for several): real screens split by seed; synthetic ones (caap dataset "
             "synth) only train. Required for a new run; --resume uses the run's own.")] = None,
    base: Annotated[str | None, typer.Option(
        help="Fine-tune this Pix2Struct checkpoint (local path, or a hub id where a hub is reachable).")] = None,
    model: Annotated[str | None, typer.Option(
        help="From-scratch model config in the settings file: tiny, compact, small, base.")] = None,
    config: Annotated[Path | None, typer.Option(help="Training settings (default: training/reader.yaml).")] = None,
    train_samples: Annotated[int | None, typer.Option(help="Samples the run is planned for.", min=1)] = None,
    max_minutes: Annotated[float | None, typer.Option(
        help="Stop after this many minutes (the schedule ends there if that comes first).", min=0.01)] = None,
    batch: Annotated[int | None, typer.Option(help="Batch size per process.", min=1)] = None,
    device: Annotated[str | None, typer.Option(help="cpu, cuda, 0 ... (default: GPU if present).")] = None,
    threads: Annotated[int | None, typer.Option(help="torch CPU threads (default: one per core).", min=1)] = None,
    split: Annotated[str | None, typer.Option(help="Validation seeds (default from the config).")] = None,
    settings: Annotated[list[str] | None, typer.Option(
        "--set", help="Override any setting: KEY=VALUE, VALUE in YAML (e.g. --set patch=[16,2] "
                      "--set decoder_text=true). Repeatable.")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="Run directory (best/, last/, metrics.jsonl).")] = Path(
        "runs/reader/train"),
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in --out where it stopped.")] = False,
) -> None:
    """Train the element reader: Pix2Struct with a CTC text head, at native resolution.

    Several processes (CPUs or GPUs): torchrun --nproc_per_node N -m caap.cli train reader ..."""
    from caap.data.format import DatasetError
    from caap.observe.read.configuration import ReaderError
    from caap.train.reader import train as run_training

    overrides = _settings_overrides(settings or [])
    overrides.update({"base": base, "model": model, "train_samples": train_samples, "max_minutes": max_minutes,
                      "batch": batch, "device": device, "threads": threads, "split": split})
    try:
        run = run_training([str(d) for d in data or []], config=config, overrides=overrides, out=out_dir, resume=resume)
    except (ReaderError, DatasetError) as exc:
        fail(str(exc))
    out.print(f"run directory: {run} (best checkpoint: {Path(run) / 'best'})", highlight=False)


def _fitted(run: Callable[[], dict], as_json: bool) -> dict | None:
    """Run one of the steps fitted to a trained reader: its report, or None once printed as JSON
    (``--json``); a dataset or reader problem is one error line."""
    from caap.data.format import DatasetError
    from caap.observe.glyphs import GlyphError
    from caap.observe.read.configuration import ReaderError

    try:
        report = run()
    except (ReaderError, DatasetError, GlyphError) as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return None
    return report


# The steps fitted to a trained reader (character model, text chooser, glyph bank) take the same inputs.
ReaderDatasets = Annotated[list[Path], typer.Option(
    "--data", help="The caap datasets the reader was trained on (repeat for several): their split as in training.")]
ReaderCheckpoint = Annotated[Path, typer.Option(
    help="Reader checkpoint directory; the fitted file is written into it (beside the weights).")]
ValidationSeeds = Annotated[str, typer.Option(help="Validation seeds (as the reader's training used).")]


@train_app.command("reader-lm")
def train_reader_lm(
    data: ReaderDatasets,
    checkpoint: ReaderCheckpoint,
    split: ValidationSeeds = "val:2800-2999",
    order: Annotated[int, typer.Option(help="Characters of context + 1.", min=1, max=12)] = 6,
    val_max: Annotated[int, typer.Option(help="Validation texts to tune on (an even spread).", min=1)] = 1500,
    synthetic: Annotated[bool, typer.Option(help="Count the synthetic datasets' texts too.")] = True,
    prune: Annotated[int, typer.Option(
        help="Drop contexts of 2+ characters seen this many times or fewer (smaller file).", min=0)] = 1,
    force: Annotated[bool, typer.Option(help="Write the model even where it does not help.")] = False,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write here instead of the checkpoint.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Count a character language model of the training texts and tune how the reader's CTC beam
    search weighs it (caap/observe/read/charlm.py); written as char-lm.json beside the weights."""
    from caap.train.reader_lm import build

    report = _fitted(lambda: build([str(d) for d in data], checkpoint, split=split, order=order, val_max=val_max,
                                   synthetic=synthetic, prune=prune, force=force, out=out_file), as_json)
    if report is None:
        return
    table = Table(title=f"fusion grid on {report['elements']} validation texts "
                        f"(greedy {report['greedy_exact_match']:.4f})")
    for column in ("weight", "bonus", "below", "searched", "exact match"):
        table.add_column(column, justify="right")
    for g in sorted(report["grid"], key=lambda g: -g["exact_match"])[:10]:
        table.add_row(str(g["weight"]), str(g["bonus"]), str(g["below"]), f"{g['searched']:.3f}",
                      f"{g['exact_match']:.4f}")
    out.print(table)
    best = report["best"]
    where = report["written"] or "nothing written (the model does not help; --force writes it)"
    out.print(f"best: weight {best['weight']} bonus {best['bonus']} below {best['below']} -> "
              f"{best['exact_match']:.4f}; {where}", highlight=False)


@train_app.command("states")
def train_states(
    data: Annotated[list[Path], typer.Option("--data", help="Training datasets (repeat for several).")],
    val: Annotated[list[Path], typer.Option(
        help="Validation datasets: held-back screens of the training apps and MiniWoB seeds 2800-2999 "
             "(repeat the option for each).")],
    checkpoint: Annotated[Path, typer.Option(help="The reader directory the head is written into.")],
    copies: Annotated[int, typer.Option(help="Jittered boxes per labelled element besides its own.", min=0)] = 1,
    jitter: Annotated[float, typer.Option(
        help="How far each side of a jittered box moves: up to this share of the box's short side.", min=0.0,
        max=0.5)] = 0.12,
    plain: Annotated[float, typer.Option(
        help="Share of texts with no state on (unselected labels and rows) kept for training.", min=0.0,
        max=1.0)] = 0.3,
    epochs: Annotated[int, typer.Option(min=1)] = 8,
    minutes: Annotated[float | None, typer.Option(help="Stop after the epoch that passes this time.")] = None,
    width: Annotated[int, typer.Option(help="Channels of the first conv blocks.", min=8)] = 32,
    view: Annotated[int, typer.Option(
        help="The views cut from each box: 1 (the box's two ends and the whole, squeezed) or 2 (also its "
             "top-left and bottom-right corners at the screen's scale).", min=1, max=2)] = 2,
    lr: float = 2e-3,
    seed: int = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Train the state head (caap/observe/read/states.py): a small CNN over each control's pixels
    that reads checked, focused, highlighted, expanded, indeterminate and enabled (those the
    training screens hold 20 examples of each value for); written as state-head.* in the reader's
    directory, with thresholds fitted on the validation screens."""
    from rich.progress import Progress

    from caap.data.format import DatasetError
    from caap.train.states import collect, train

    if not (checkpoint / "config.json").is_file():
        fail(f"{checkpoint}: not a reader directory (no config.json); the head is written beside the reader")
    try:
        with Progress(transient=True, console=out) as bar:
            task = bar.add_task("cutting the training views", total=None)
            train_ex = collect([str(d) for d in data], copies=copies, seed=seed, plain=plain, jitter=jitter,
                               view=view, progress=lambda done, total: bar.update(task, completed=done, total=total))
            task = bar.add_task("cutting the validation views", total=None)
            val_ex = collect([str(d) for d in val], copies=0, view=view,
                             progress=lambda done, total: bar.update(task, completed=done, total=total))
    except DatasetError as exc:
        fail(str(exc))
    card = {"command": " ".join(["caap train states", *sys.argv[3:]]) if len(sys.argv) > 3 else "caap train states",
            "train_data": [str(d) for d in data], "validation_data": [str(d) for d in val], "copies": copies,
            "jitter": jitter, "plain": plain}
    report = train(train_ex, val_ex, checkpoint, epochs=epochs, lr=lr, width=width, seed=seed, minutes=minutes,
                   view=view, card=card,
                   log=(lambda line: None) if as_json else (lambda line: out.print(line, highlight=False)))
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return
    _print_head(report, f"(best epoch {report['best_epoch']})")
    out.print(f"written: {checkpoint}", highlight=False)


def _print_head(settings: dict[str, Any], title: str) -> None:
    """A state head's validation scores at its thresholds, one row per state, and what it leaves unread."""
    table = Table(title=f"state head on {settings['validation_examples']} validation elements {title}")
    for column in ("state", "elements", "accuracy", "majority", "recall (true)", "precision (true)", "threshold"):
        table.add_column(column, justify="right")
    for state, v in settings["validation"].items():
        table.add_row(state, str(v["elements"]), f"{v['accuracy']:.4f}", f"{v['majority']:.4f}",
                      _fmt(v["recall_true"]), _fmt(v["precision_true"]), f"{settings['thresholds'][state]:.2f}")
    out.print(table)
    if settings.get("one_focus"):
        out.print("focused: the likeliest element of a screen only", highlight=False)
    for pair, why in settings.get("not_read", {}).items():
        out.print(f"not read: {pair}: {why}", highlight=False)


@train_app.command("states-calibrate")
def train_states_calibrate(
    val: Annotated[list[Path], typer.Option(
        help="Validation datasets, as for caap train states (repeat the option for each).")],
    checkpoint: Annotated[Path, typer.Option(help="The reader directory whose state head is refitted.")],
    detector: Annotated[Path | None, typer.Option(
        help="Fit on this detector's boxes and types (with its fitting steps), matched to the labels, "
             "instead of the labelled boxes: what the head reads in use.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the new settings as JSON.")] = False,
) -> None:
    """Refit a trained state head's thresholds, and the element types it reads each state on, on
    validation screens; the weights are kept. Thresholds weigh each kind of screen (desktop apps,
    MiniWoB, generated UIs) the same; a type is left unread where its claims do not beat the
    type's usual value on some kind of screen (the reason is written into state-head.json)."""
    from rich.progress import Progress

    from caap.data.format import DatasetError
    from caap.observe.detect.detector import Detector, DetectorError
    from caap.observe.read.states import StateHead, StateHeadError
    from caap.observe.vision import VisionObserver
    from caap.train.states import collect, recalibrate

    try:
        view = StateHead.load(checkpoint).view
        observer = VisionObserver(Detector(detector), None) if detector is not None else None
        with Progress(transient=True, console=out) as bar:
            task = bar.add_task("cutting the validation views", total=None)
            val_ex = collect([str(d) for d in val], copies=0, observer=observer, view=view,
                             progress=lambda done, total: bar.update(task, completed=done, total=total))
        config = recalibrate(checkpoint, val_ex, [str(d) for d in val],
                             boxes=str(detector) if detector is not None else "labelled")
    except (DatasetError, StateHeadError, DetectorError) as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps({k: config[k] for k in ("thresholds", "types_read", "not_read", "validation")},
                                    indent=2) + "\n")
        return
    _print_head(config, "(as it now reads)")
    out.print(f"written: {checkpoint}", highlight=False)


@train_app.command("text-choice")
def train_text_choice(
    checkpoint: ReaderCheckpoint,
    data: Annotated[list[Path] | None, typer.Option(
        "--data", help="The caap datasets the reader was trained on (repeat for several): their validation "
                       "seeds by --split.")] = None,
    screens: Annotated[str, typer.Option(
        help="The kind of screen this chooser is for: desktop (application windows) or web (web pages); the "
             "file's chooser for the other kind is kept.")] = "desktop",
    detector: Annotated[Path | None, typer.Option(
        help="Detector weights whose boxes are read, as caap observe does (default: the config's observe).")] = None,
    labelled: Annotated[bool, typer.Option(
        "--labelled", help="Read the labelled boxes instead of the detector's.")] = False,
    split: ValidationSeeds = "val:2800-2999",
    holdout: Annotated[list[Path] | None, typer.Option(
        help="A validation dataset used whole: screens no training saw (desktop apps' held-back seeds, "
             "generated UIs of unused seeds); repeat for several.")] = None,
    threads: Annotated[int | None, typer.Option(help="torch and onnxruntime CPU threads.", min=1)] = None,
    config: Annotated[Path | None, typer.Option(help="caap config file whose observe section is used.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write here instead of the checkpoint.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Fit how text_source=auto picks between the reader's text and PP-OCR's where they disagree, on
    one kind of screen (caap/observe/text_choice.py); written into text-choice.json beside the weights."""
    from rich.progress import Progress

    from caap.cli.common import config_from_flags
    from caap.observe.vision import DEFAULT_DETECTOR, DEFAULT_OCR_THRESHOLD
    from caap.train.text_choice import fit

    cfg = config_from_flags(config, {}).observe
    weights = None if labelled else (detector or cfg.detector or DEFAULT_DETECTOR)
    def observe_and_fit() -> dict:
        with Progress(transient=True, console=out) as bar:
            task = bar.add_task("observing validation screens", total=None)
            return fit([str(d) for d in data or ()], checkpoint, detector=weights, split=split, screens=screens,
                       holdout=[str(d) for d in holdout or ()],
                       snap=cfg.snap_text_boxes, disable=cfg.disable, threads=threads, out=out_file,
                       progress=lambda done, total: bar.update(task, completed=done, total=total))

    report = _fitted(observe_and_fit, as_json)
    if report is None:
        return
    table = Table(title=f"{report['screens']} screens' chooser: {report['texts']} validation texts, "
                        f"{report['disagreements']} disagreements "
                        f"(reader {report['reader']:.4f}, PP-OCR {report['ocr']:.4f}, better of the two "
                        f"{report['better_of_two']:.4f})")
    previous = report.get("previous_chooser")
    for column in ("ocr_threshold", "to PP-OCR", "confidence rule", "chooser (cross-validated)",
                   *(("chooser it replaces",) if previous else ())):
        table.add_column(column, justify="right")
    for th, rule in report["rule"].items():
        chosen = report["chooser_cross_validated"][th]
        table.add_row(th, f"{rule['to_ocr']:.3f}", f"{rule['exact_match']:.4f}", f"{chosen['exact_match']:.4f}",
                      *((f"{previous[th]['exact_match']:.4f}",) if previous else ()))
    out.print(table)
    for kind, scores in report["per_kind"].items():
        th = str(DEFAULT_OCR_THRESHOLD)
        before = scores.get("previous_chooser")
        out.print(f"{kind}: {scores['texts']} texts; at ocr_threshold {th}: confidence rule "
                  f"{scores['rule'][th]['exact_match']:.4f}, chooser (cross-validated) "
                  f"{scores['chooser_cross_validated'][th]['exact_match']:.4f}"
                  + (f", the chooser it replaces {before[th]['exact_match']:.4f}" if before else ""), highlight=False)
    out.print(f"text areas (read line by line): PP-OCR's text below confidence {report['text_area_below']}; "
              f"written: {report['written']} ({report['seconds']:.0f} s)", highlight=False)


@train_app.command("glyphs")
def train_glyphs(
    data: Annotated[list[Path], typer.Option(
        "--data", help="caap datasets whose labelled glyph icons (a subtype of the glyphs) are cut (repeat).")],
    checkpoint: ReaderCheckpoint,
    val: Annotated[list[Path] | None, typer.Option(
        help="A validation dataset the bank is scored on (labelled glyph icons found; repeat).")] = None,
    screens: Annotated[list[str] | None, typer.Option(
        help="The kinds of screen the glyphs are looked for on (desktop, web; repeat); default web.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write here instead of the checkpoint.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Cut the labelled glyph icons (a menu's disk, magnifiers, player controls) into the bank the observer
    names icons with (caap/observe/glyphs.py); written as glyphs.json beside the reader's weights."""
    from caap.train.glyphs import build_and_write

    report = _fitted(lambda: build_and_write([str(d) for d in data], checkpoint, val=[str(v) for v in val or ()],
                                             screens=tuple(screens or ("web",)), out=out_file), as_json)
    if report is None:
        return
    table = Table(title=f"glyph bank: {sum(report['patterns'].values())} patterns")
    for column in ("subtype", "labelled", "patterns", *(("val found", "val labelled", "val wrong")
                                                         if "validation" in report else ())):
        table.add_column(column, justify="right")
    per = report.get("validation", {}).get("per_subtype", {})
    for subtype in sorted(set(report["labelled"]) | set(per)):
        v = per.get(subtype)
        table.add_row(subtype, str(report["labelled"].get(subtype, 0)), str(report["patterns"].get(subtype, 0)),
                      *((str(v["right"]), str(v["labelled"]), str(v["wrong"])) if v else ()))
    out.print(table)
    if "validation" in report:
        v = report["validation"]
        out.print(f"validation ({v['screens']} screens): recall {_fmt(v['recall'])}, precision {_fmt(v['precision'])}",
                  highlight=False)
    out.print(f"written: {report['written']}", highlight=False)


def _settings_overrides(items: list[str]) -> dict[str, object]:
    """``--set KEY=VALUE`` flags as a mapping (values parsed as YAML: numbers, lists, true/false)."""
    import yaml

    overrides: dict[str, object] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            fail(f"--set {item!r}: expected KEY=VALUE")
        try:
            overrides[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            fail(f"--set {item!r}: the value is not valid YAML ({exc})")
    return overrides


@eval_app.command("reader")
def eval_reader(
    data: Annotated[Path, typer.Option(help="A caap dataset of held-out screens (ground-truth boxes are read).")],
    checkpoint: Annotated[Path, typer.Option(help="Reader checkpoint directory.")],
    device: Annotated[str, typer.Option(help="Device for the accuracy pass.")] = "cpu",
    limit: Annotated[int | None, typer.Option(help="Evaluate this many screens spread over the dataset.")] = None,
    no_tesseract: Annotated[bool, typer.Option("--no-tesseract", help="Skip the Tesseract OCR peer.")] = False,
    no_ocr: Annotated[bool, typer.Option(
        "--no-ocr", help="Skip the PP-OCR peer (text_source must be reader).")] = False,
    type_source: Annotated[str | None, typer.Option(
        help="The observer setting scored as its output: reader | detector (default: config observe).")] = None,
    text_source: Annotated[str | None, typer.Option(
        help="The observer setting scored as 'default': reader | ocr | auto (default: config observe).")] = None,
    ocr_threshold: Annotated[float | None, typer.Option(
        help="auto: reader texts below this confidence go to PP-OCR (default: config observe).")] = None,
    config: Annotated[Path | None, typer.Option(help="caap config file whose observe section is scored.")] = None,
    detector: Annotated[Path | None, typer.Option(
        help="Read the boxes these detector weights find (matched to the labels at IoU 0.5) instead of the "
             "labelled boxes; also times the whole observation (detect + read).")] = None,
    threads: Annotated[int | None, typer.Option(help="torch CPU threads (default: one per core).", min=1)] = None,
    snap: Annotated[bool | None, typer.Option(
        help="--detector: run the observer's fit stage on its boxes (default: config observe).")] = None,
    disable_step: Annotated[list[str] | None, typer.Option(
        "--disable-step", help="Switch an observer step off (repeatable; caap observe --list-steps).")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Also write the result JSON here.")] = None,
    errors: Annotated[Path | None, typer.Option(
        help="Write every misread text and state here (JSON Lines: screen, task, box, gold and what each "
             "source read).")] = None,
    task_names: Annotated[bool, typer.Option(
        "--task-names", help="Give the observer the names of each screen's task, as the agent's loop does "
                             "(read_task_names); screens without a task get none.")] = False,
) -> None:
    """Type accuracy, text exact match and CER per text source, states, latency; PP-OCR and Tesseract beside it."""
    from caap.cli.common import config_from_flags
    from caap.data.format import DatasetError
    from caap.observe.read.configuration import ReaderError
    from caap.train.eval_reader import evaluate

    observe_cfg = config_from_flags(config, {"observe.type_source": type_source, "observe.text_source": text_source,
                                             "observe.ocr_threshold": ocr_threshold,
                                             "observe.snap_text_boxes": snap}).observe
    try:
        result = evaluate(data, checkpoint, device=device, limit=limit, tesseract=not no_tesseract, ocr=not no_ocr,
                          detector=detector, threads=threads, type_source=observe_cfg.type_source,
                          text_source=observe_cfg.text_source, ocr_threshold=observe_cfg.ocr_threshold,
                          errors=errors, snap=observe_cfg.snap_text_boxes,
                          disable=[*observe_cfg.disable, *(disable_step or [])], task_names=task_names)
    except (ReaderError, DatasetError) as exc:
        fail(str(exc))
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if out_file:
        out_file.write_text(text + "\n", encoding="utf-8")
    sys.stdout.write(text + "\n")
