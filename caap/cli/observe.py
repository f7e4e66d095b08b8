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


@app.command()
def observe(
    images: Annotated[list[Path], typer.Argument(help="Screenshot files or folders of them.")],
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
    config: ConfigOpt = None,
) -> None:
    """Detect and read every UI element of the screenshots (models loaded once for all of them)."""
    from caap.observe.capture.screen import ScreenError, load_image
    from caap.observe.detect.detector import DetectorError
    from caap.observe.tracking import IdTracker
    from caap.observe.vision import VisionObserver

    cfg = config_from_flags(config, {"observe.detector": detector, "observe.reader": reader, "observe.conf": conf,
                                     "observe.type_source": type_source, "observe.text_source": text_source,
                                     "observe.device": device, "observe.ui_scale": ui_scale})
    paths = image_paths(images)
    try:
        observer = VisionObserver.from_config(cfg.observe, use_reader=not no_reader)
    except DetectorError as exc:
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
        elements = IdTracker().update(observer.observe(image))  # ids 1..n in reading order
        record: dict[str, Any] = {"elements": [e.to_json() for e in elements], "timings_ms": observer.last_timings_ms}
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
        for col in ("id", "type", "box", "text", "states", "score"):
            table.add_column(col)
        for e in elements:
            states = " ".join(f"{k}={getattr(e, k)}" for k in ATTRIBUTES if k != TEXT
                              if getattr(e, k) is not None)
            table.add_row(str(e.id), e.type.value, str(list(e.bbox)), json.dumps(e.text, ensure_ascii=False)
                          if e.text is not None else "", states, f"{e.score:.2f}" if e.score is not None else "")
        out.print(table)
        t = observer.last_timings_ms
        ocr = f", ocr {t['ocr']} ms" if "ocr" in t else ""
        err.print(f"detect {t['detect']} ms, read {t['read']} ms{ocr}, total {t['total']} ms", highlight=False)
