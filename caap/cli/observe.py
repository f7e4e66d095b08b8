"""`caap observe`: screenshots → element lists with the vision models (the observe JSON contract)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from caap.cli.common import ConfigOpt, app, config_from_flags, err, fail, out
from caap.taxonomy import ATTRIBUTES, TEXT

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


def image_paths(paths: list[Path]) -> list[Path]:
    """The image files named, folders expanded to their images (sorted); one clear error for a
    missing path or nothing to observe."""
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found.extend(sorted(q for q in p.iterdir() if q.suffix.lower() in IMAGE_SUFFIXES))
        elif p.exists():
            found.append(p)
        else:
            fail(f"{p}: no such image file or folder")
    if not found:
        fail("no images to observe")
    return found


def list_steps(cfg: Any, use_reader: bool, disable: list[str]) -> None:
    """Print the observer's steps in order (no model is loaded): stage, name, purpose, and whether
    each runs with this configuration."""
    from caap.observe.pipeline import PipelineError, describe
    from caap.observe.steps import STEPS
    from caap.observe.vision import disabled_steps

    off = [*disabled_steps(cfg.observe), *disable]
    unknown = sorted(set(off) - {s.name for s in STEPS})
    if unknown:
        fail(str(PipelineError(f"no step named {', '.join(unknown)}")))
    models = ["detector", *(["reader"] if use_reader else []),
              *(["ocr"] if use_reader and cfg.observe.text_source != "reader" else [])]
    table = Table(title="observer steps, in the order they run")
    for col in ("#", "stage", "step", "purpose", "runs"):
        table.add_column(col, no_wrap=col != "purpose")
    for row in describe(STEPS, models, off):
        table.add_row(str(row["order"]), row["stage"], row["name"], row["purpose"],
                      "yes" if row["runs"] else f"no ({row['why_not']})")
    out.print(table)


@app.command()
def observe(
    images: Annotated[list[Path] | None, typer.Argument(help="Screenshot files or folders of them.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help='Print {"elements": [...], "timings_ms": {...}}; several images: one such object per '
        'line (JSON Lines) with an "image" field.')] = False,
    out_image: Annotated[Path | None, typer.Option(
        help="Draw boxes, ids and texts: a PNG path for one image, a folder for several.")] = None,
    detector: Annotated[Path | None, typer.Option(help="Detector weights (default: models/detector/).")] = None,
    reader: Annotated[Path | None, typer.Option(help="Reader checkpoint (default: models/reader/).")] = None,
    no_reader: Annotated[bool, typer.Option(
        "--no-reader", help="Detector only: types are the detector's classes, no text or states.")] = False,
    conf: Annotated[float | None, typer.Option(help="Detector confidence threshold (default 0.25).")] = None,
    type_source: Annotated[str | None, typer.Option(
        help="reader | detector: whose element type wins when they disagree (default: config observe).")] = None,
    text_source: Annotated[str | None, typer.Option(
        help="reader | ocr | auto: where texts come from; auto = the reader's unless it is unsure, then PP-OCR "
             "(default from the config's observe section).")] = None,
    device: Annotated[str | None, typer.Option(help="cpu, or a GPU index such as 0.")] = None,
    ui_scale: Annotated[float | None, typer.Option(
        help="The device scale factor the application draws at (1, 1.25, 1.5, 2; default: the config's "
             "observe section).")] = None,
    disable_step: Annotated[list[str] | None, typer.Option(
        "--disable-step", help="Switch an observer step off by name (repeatable; see --list-steps).")] = None,
    list_steps_: Annotated[bool, typer.Option(
        "--list-steps", help="Print the observer's steps in order with their purpose, and exit.")] = False,
    explain: Annotated[bool, typer.Option(
        "--explain", help="With each element, the step that added it and the steps that changed it.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Detect and read every UI element of the screenshots (models loaded once for all of them)."""
    from caap.observe.capture.screen import ScreenError, load_image
    from caap.observe.detect.detector import DetectorError
    from caap.observe.pipeline import PipelineError
    from caap.observe.vision import VisionObserver

    cfg = config_from_flags(config, {"observe.detector": detector, "observe.reader": reader, "observe.conf": conf,
                                     "observe.type_source": type_source, "observe.text_source": text_source,
                                     "observe.device": device, "observe.ui_scale": ui_scale})
    if list_steps_:
        list_steps(cfg, not no_reader, disable_step or [])
        return
    paths = image_paths(images or [])
    try:
        observer = VisionObserver.from_config(cfg.observe, use_reader=not no_reader, disable=disable_step or ())
    except (DetectorError, PipelineError, ValueError) as exc:  # ValueError: settings, the device
        fail(str(exc))
    except Exception as exc:  # the reader's and OCR's own error types live with the optional model code
        if type(exc).__name__ in ("ReaderError", "OcrError"):
            fail(f"{exc} (use --no-reader to run the detector alone)")
        raise
    many = len(paths) > 1
    if out_image is not None and many:
        out_image.mkdir(parents=True, exist_ok=True)
    for path in paths:
        try:
            image = load_image(path)
        except ScreenError as exc:
            fail(str(exc))
        seen = observer.observe(image).numbered()  # ids 1..n in reading order
        elements = seen.elements
        record: dict[str, Any] = seen.to_json(explain=explain)
        if many:
            record = {"image": str(path), **record}
        if out_image is not None:
            from caap.report.draw import draw_elements

            target = out_image / f"{path.stem}.observed.png" if many else out_image
            draw_elements(image, elements, scale=3.0, with_ids=True).save(target)
        if as_json:
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
            continue
        table = Table(title=f"{path} ({len(elements)} elements)")
        for col in ("id", "type", "box", "text", "states", "score", *(("from",) if explain else ())):
            table.add_column(col)
        origins = seen.provenance if explain and len(seen.provenance) == len(elements) else []
        for i, e in enumerate(elements):
            states = " ".join(f"{k}={getattr(e, k)}" for k in ATTRIBUTES if k != TEXT
                              if getattr(e, k) is not None)
            origin = [" > ".join((origins[i].added_by, *origins[i].changed_by))] if origins else []
            table.add_row(str(e.id), e.type.value, str(list(e.bbox)), json.dumps(e.text, ensure_ascii=False)
                          if e.text is not None else "", states, f"{e.score:.2f}" if e.score is not None else "",
                          *origin)
        out.print(table)
        t = seen.timings_ms
        ocr = f", ocr {t['ocr']} ms" if "ocr" in t else ""
        err.print(f"detect {t['detect']} ms, read {t['read']} ms{ocr}, total {t['total']} ms", highlight=False)
