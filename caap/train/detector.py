"""Train the UI element detector (YOLOv8 via ultralytics) on a caap or YOLO dataset.

Settings come from ``training/detector.yaml``; flags override them. ``--data`` may be a caap dataset
(it is exported to YOLO format first, split by seed) or a directory with a ``data.yaml``.
Training from a config trains from scratch (what caap ships); a ``.pt`` checkpoint fine-tunes.
The run directory holds ultralytics' ``weights/best.pt`` and ``last.pt``, ``results.csv`` and
``caap-train.json`` (the settings and the command), and can be resumed after an interruption.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from caap.taxonomy import DETECTOR_CLASSES
from caap.train.settings import load_settings as read_settings

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_CONFIG = REPO_ROOT / "training" / "detector.yaml"


class TrainingError(RuntimeError):
    pass


class DetectorTrainSettings(BaseModel):
    """``training/detector.yaml``: caap's own keys (``model``, ``split``), the ones every recipe sets,
    and any other ultralytics training argument (checked against ultralytics' own list when it is
    installed, so a misspelt key is an error here rather than deep inside a run)."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(description="a YOLO config (yolov8n.yaml: from scratch) or a .pt checkpoint (fine-tune)")
    split: str = Field(default="val:every10", description="the validation split of a caap dataset")
    # Screens at their own pixel size on canvases of this many pixels (caap.data.canvas); None: each
    # screen scaled to imgsz (the MiniWoB-only recipes). Must equal imgsz when set.
    canvas: int | None = Field(default=None, ge=64, description="native-size training canvases (px)")
    max_tiles: int = Field(default=4, ge=1, description="canvas tiles taken from one large screen")
    epochs: int = Field(ge=1)
    imgsz: int = Field(ge=32)
    batch: int = Field(ge=-1)  # -1: ultralytics picks for the GPU's memory
    # Left out of a recipe, ultralytics' own defaults apply (the shipped recipes set the CAAP paper's
    # loss weights: box 0.9, cls 0.05, dfl 0.05).
    device: str | int | None = None
    workers: int | None = Field(default=None, ge=0)
    seed: int | None = None
    box: float | None = Field(default=None, ge=0)
    cls: float | None = Field(default=None, ge=0)
    dfl: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _known_arguments(self) -> DetectorTrainSettings:
        try:
            from ultralytics.cfg import DEFAULT_CFG_DICT
        except ImportError:  # validated when training, which needs ultralytics anyway
            return self
        unknown = sorted(k for k in (self.model_extra or {}) if k not in DEFAULT_CFG_DICT)
        if unknown:
            raise ValueError(f"not an ultralytics training argument: {', '.join(unknown)}")
        if self.canvas is not None and self.canvas != self.imgsz:
            raise ValueError(f"canvas {self.canvas} must equal imgsz {self.imgsz}: a canvas is never scaled")
        return self

    def yolo_args(self) -> dict[str, Any]:
        """Every setting but caap's own, as ultralytics takes them."""
        return {k: v for k, v in self.model_dump(exclude={"model", "split", "canvas", "max_tiles"}).items()
                if v is not None}


def load_settings(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> DetectorTrainSettings:
    """``training/detector.yaml`` (or ``path``) with the non-None ``overrides`` applied, validated."""
    return read_settings(DetectorTrainSettings, path or DEFAULT_CONFIG, overrides, TrainingError)


def _stamp(root: Path) -> str:
    labels = sorted((root / "labels").rglob("*.json"))
    return f"{len(labels)}-{max((p.stat().st_mtime_ns for p in labels), default=0)}"


def prepare_data(data: str | Path | Sequence[str | Path], split: str, cache_root: Path, *,
                 canvas: int | None = None, max_tiles: int = 4, val_data: Sequence[str | Path] = ()) -> Path:
    """A data.yaml for ultralytics: as given, or exported from caap datasets (cached by content):
    on native-size canvases when ``canvas`` is set (several datasets, or ``val_data``, need it)."""
    roots = [Path(d) for d in data] if isinstance(data, list | tuple) else [Path(data)]  # type: ignore[arg-type]
    val_roots = [Path(d) for d in val_data]
    if canvas is not None or len(roots) > 1 or val_roots:
        if canvas is None:
            raise TrainingError("several datasets are trained together on canvases: set canvas in the recipe")
        for root in (*roots, *val_roots):
            if not (root / "dataset.json").is_file():
                raise TrainingError(f"{root}: not a caap dataset (dataset.json); canvases are cut from caap datasets")
        from caap.data.canvas import export_canvases
        from caap.data.export import SplitRule

        key = hashlib.sha1("|".join([f"{r.resolve()}:{_stamp(r)}" for r in roots]
                                    + [f"val {r.resolve()}:{_stamp(r)}" for r in val_roots]).encode()).hexdigest()[:12]
        out = cache_root / f"canvas{canvas}-t{max_tiles}-{split.replace(':', '_')}-{key}"
        if not (out / "data.yaml").is_file():
            export_canvases(roots, out, split=SplitRule.parse(split), size=canvas, max_tiles=max_tiles,
                            overwrite=True, val_datasets=val_roots)
        return out / "data.yaml"
    data = roots[0]
    if (data / "data.yaml").is_file():
        return data / "data.yaml"
    if data.suffix in (".yaml", ".yml") and data.is_file():
        return data
    if not (data / "dataset.json").is_file():
        raise TrainingError(f"{data}: neither a caap dataset (dataset.json) nor a YOLO dataset (data.yaml)")
    from caap.data.export import SplitRule, export_yolo

    out = cache_root / f"{data.resolve().name}-yolo-{_stamp(data)}-{split.replace(':', '_')}"
    if not (out / "data.yaml").is_file():
        export_yolo(data, out, split=SplitRule.parse(split), overwrite=True)
    return out / "data.yaml"


def grow_classes(weights: str | Path, out: str | Path) -> int:
    """Write ``weights`` with the taxonomy's classes: a detector trained before the taxonomy grew
    (its classes a prefix of ``DETECTOR_CLASSES``) keeps what it knows of its own classes, row for
    row, and the new classes start from the prior ultralytics gives every class of a new head.
    Without this ultralytics drops the whole classification layer when the class count changes,
    and fine-tuning starts by relearning the paper's fourteen types. Returns the classes it had."""
    import math

    import torch
    from torch import nn

    ckpt = torch.load(str(weights), map_location="cpu", weights_only=False)
    model = ckpt.get("ema") or ckpt["model"]
    head = model.model[-1]
    old = int(head.nc)
    names = [model.names[i] for i in range(old)]
    if names != [t.value for t in DETECTOR_CLASSES[:old]]:
        raise TrainingError(f"{weights}: classes {names} are not a prefix of caap's taxonomy")
    new = len(DETECTOR_CLASSES)
    if old < new:
        for branch, stride in zip(head.cv3, head.stride.tolist(), strict=True):
            conv = branch[-1]
            grown = nn.Conv2d(conv.in_channels, new, 1).to(conv.weight.dtype)
            assert grown.bias is not None and conv.bias is not None  # YOLO's class convs carry biases
            with torch.no_grad():
                grown.weight.zero_()
                grown.weight[:old] = conv.weight
                grown.bias.fill_(math.log(5 / new / (640 / stride) ** 2))  # ultralytics' Detect.bias_init
                grown.bias[:old] = conv.bias
            branch[-1] = grown
        head.nc, head.no = new, new + head.reg_max * 4
        model.yaml["nc"] = new
        model.names = {i: t.value for i, t in enumerate(DETECTOR_CLASSES)}
    for key in ("optimizer", "ema", "updates", "train_metrics", "train_results"):
        ckpt.pop(key, None)
    ckpt["model"], ckpt["epoch"], ckpt["best_fitness"] = model, -1, None
    torch.save(ckpt, str(out))
    return old


def train(
    data: str | Path | Sequence[str | Path],
    *,
    config: str | Path | None = None,
    model: str | None = None,
    epochs: int | None = None,
    hours: float | None = None,
    imgsz: int | None = None,
    device: str | None = None,
    batch: int | None = None,
    split: str | None = None,
    project: str | Path = "runs/detector",
    name: str = "train",
    resume: bool = False,
    val_data: Sequence[str | Path] = (),
) -> Path:
    """Train; returns the run directory (best weights in ``weights/best.pt``)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")  # never reach for the hub
    try:
        from ultralytics import YOLO
    except ImportError:
        raise TrainingError("detector training needs ultralytics: pip install 'caap[vision]'") from None
    settings = load_settings(config, {"model": model, "epochs": epochs, "time": hours, "imgsz": imgsz,
                                      "device": device, "batch": batch, "split": split})
    run_dir = Path(project) / name
    if resume:
        last = run_dir / "weights" / "last.pt"
        if not last.is_file():
            raise TrainingError(f"nothing to resume: {last} does not exist")
        YOLO(str(last)).train(resume=True)
        return run_dir
    model_spec, split = settings.model, settings.split
    data_yaml = prepare_data(data, split, Path(project) / ".data", canvas=settings.canvas,
                             max_tiles=settings.max_tiles, val_data=val_data)
    args = {**settings.yolo_args(), "data": str(data_yaml), "project": str(Path(project).resolve()), "name": name,
            "exist_ok": True, "plots": False, "verbose": True, "pretrained": model_spec.endswith(".pt")}
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "caap-train.json").write_text(json.dumps({
        "command": " ".join(sys.argv), "model": model_spec,
        "data": [str(d) for d in data] if isinstance(data, list | tuple) else str(data), "split": split,
        "val_data": [str(d) for d in val_data], "canvas": settings.canvas, "args": args,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }, indent=2) + "\n")
    if model_spec.endswith(".pt") and Path(model_spec).is_file():
        # A base trained on fewer classes than the taxonomy has starts from its own class rows.
        grown = run_dir / "base-grown.pt"
        if grow_classes(model_spec, grown) < len(DETECTOR_CLASSES):
            model_spec = str(grown)
        else:
            grown.unlink()
    try:
        yolo = YOLO(model_spec)
    except FileNotFoundError:
        raise TrainingError(
            f"model {model_spec!r} not found: give a YOLO config (yolov8n.yaml) or a .pt path"
        ) from None
    yolo.train(**args)
    return run_dir
