"""The detector's weights as an ONNX graph for ONNX Runtime, exported once per weights file.

On this project's 2-core CPU ONNX Runtime runs the YOLOv8n detector in about half torch's time
(a 1920x1088 screen: 354 ms against 694 ms; a MiniWoB screen at 224 px: 11 ms against 22 ms) and
gives the same boxes. The ``.pt`` file stays the one source of truth: the graph is derived from it
on first use and kept in a cache under the file's digest, so fine-tuned weights get the same speed
and a changed file is never run from a stale graph.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from pathlib import Path

from caap.files import cache_dir, export_once, file_digest

OPSET = 17  # supported by every onnxruntime the project allows (>= 1.17)


def onnx_for(weights: Path, cache: Path | None = None) -> Path:
    """The ONNX graph of YOLO ``weights`` (dynamic batch and image size), exported on first use.

    Raises ``RuntimeError`` naming the file when the export fails (e.g. the ``onnx`` package is
    missing); nothing half-written is ever left under the final name: the export runs in a
    private folder and is renamed into place.
    """
    import ultralytics

    folder = cache or cache_dir() / "detector"
    target = folder / f"{weights.stem}-{file_digest(weights)}-u{ultralytics.__version__}-op{OPSET}.onnx"

    def write(work: Path) -> Path:
        copy = work / "model.pt"
        shutil.copyfile(weights, copy)
        from ultralytics import YOLO

        # The exporter reports on stdout, which `caap observe --json` keeps for its records.
        with contextlib.redirect_stdout(sys.stderr):
            return Path(YOLO(str(copy), task="detect").export(format="onnx", dynamic=True, simplify=False,
                                                              opset=OPSET, imgsz=640, verbose=False))

    return export_once(target, write, what=f"the detector's ONNX graph of {weights}", error=RuntimeError)
