"""Train the UI element detector (YOLOv8 via ultralytics) on a caap or YOLO dataset.

Settings come from ``training/detector.yaml``; flags override them. ``--data`` may be a caap dataset
(it is exported to YOLO format first, split by seed) or a directory with a ``data.yaml``.
Training from a config trains from scratch (what caap ships); a ``.pt`` checkpoint fine-tunes.
The run directory holds ultralytics' ``weights/best.pt`` and ``last.pt``, ``results.csv`` and
``caap-train.json`` (the settings and the command), and can be resumed after an interruption.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
        return self

    def yolo_args(self) -> dict[str, Any]:
        """Every setting but caap's own, as ultralytics takes them."""
        return {k: v for k, v in self.model_dump(exclude={"model", "split"}).items() if v is not None}


def load_settings(path: str | Path | None = None, overrides: dict[str, Any] | None = None) -> DetectorTrainSettings:
    """``training/detector.yaml`` (or ``path``) with the non-None ``overrides`` applied, validated."""
    return read_settings(DetectorTrainSettings, path or DEFAULT_CONFIG, overrides, TrainingError)


def prepare_data(data: str | Path, split: str, cache_root: Path) -> Path:
    """A data.yaml for ultralytics: as given, or exported from a caap dataset (cached by content)."""
    data = Path(data)
    if (data / "data.yaml").is_file():
        return data / "data.yaml"
    if data.suffix in (".yaml", ".yml") and data.is_file():
        return data
    if not (data / "dataset.json").is_file():
        raise TrainingError(f"{data}: neither a caap dataset (dataset.json) nor a YOLO dataset (data.yaml)")
    from caap.data.export import SplitRule, export_yolo

    labels = sorted((data / "labels").rglob("*.json"))
    stamp = f"{len(labels)}-{max((p.stat().st_mtime_ns for p in labels), default=0)}-{split.replace(':', '_')}"
    out = cache_root / f"{data.resolve().name}-yolo-{stamp}"
    if not (out / "data.yaml").is_file():
        export_yolo(data, out, split=SplitRule.parse(split), overwrite=True)
    return out / "data.yaml"


def train(
    data: str | Path,
    *,
    config: str | Path | None = None,
    model: str | None = None,
    epochs: int | None = None,
    imgsz: int | None = None,
    device: str | None = None,
    batch: int | None = None,
    split: str | None = None,
    project: str | Path = "runs/detector",
    name: str = "train",
    resume: bool = False,
) -> Path:
    """Train; returns the run directory (best weights in ``weights/best.pt``)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")  # never reach for the hub
    try:
        from ultralytics import YOLO
    except ImportError:
        raise TrainingError("detector training needs ultralytics: pip install 'caap[vision]'") from None
    settings = load_settings(config, {"model": model, "epochs": epochs, "imgsz": imgsz, "device": device,
                                      "batch": batch, "split": split})
    run_dir = Path(project) / name
    if resume:
        last = run_dir / "weights" / "last.pt"
        if not last.is_file():
            raise TrainingError(f"nothing to resume: {last} does not exist")
        YOLO(str(last)).train(resume=True)
        return run_dir
    model_spec, split = settings.model, settings.split
    data_yaml = prepare_data(data, split, Path(project) / ".data")
    args = {**settings.yolo_args(), "data": str(data_yaml), "project": str(Path(project).resolve()), "name": name,
            "exist_ok": True, "plots": False, "verbose": True, "pretrained": model_spec.endswith(".pt")}
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "caap-train.json").write_text(json.dumps({
        "command": " ".join(sys.argv), "model": model_spec, "data": str(data), "split": split, "args": args,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }, indent=2) + "\n")
    try:
        yolo = YOLO(model_spec)
    except FileNotFoundError:
        raise TrainingError(
            f"model {model_spec!r} not found: give a YOLO config (yolov8n.yaml) or a .pt path"
        ) from None
    yolo.train(**args)
    return run_dir
