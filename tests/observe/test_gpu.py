"""The observer on a GPU (``[observe] device = "cuda"``): where torch sees no CUDA device, asking
for one is one clear error before any model loads; where it does, the detector, the reader and
PP-OCR run there and read a screen as on the CPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

torch = pytest.importorskip("torch", reason="needs the vision extra (pip install 'caap[vision]')")

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"
HAS_GPU = torch.cuda.is_available()


@pytest.mark.skipif(HAS_GPU, reason="checks the error where there is no GPU; this machine has one")
def test_a_gpu_asked_for_where_there_is_none_is_one_clear_error():
    from caap.cli import app
    from caap.observe.vision import VisionObserver, check_device

    assert check_device("cpu") == "cpu" and check_device("auto") == "cpu"
    for device in ("cuda", "cuda:1", "0"):
        with pytest.raises(ValueError, match="no CUDA device"):
            check_device(device)
    with pytest.raises(ValueError, match="cpu, cuda"):
        check_device("tpu")
    with pytest.raises(ValueError, match="no CUDA device"):
        VisionObserver.load(device="cuda")
    result = CliRunner().invoke(app, ["observe", str(sorted(SCREENS.glob("*.png"))[0]), "--device", "cuda"])
    assert result.exit_code == 2 and "no CUDA device" in result.output and "Traceback" not in result.output


@pytest.mark.skipif(not HAS_GPU, reason="needs an NVIDIA GPU with torch's CUDA build (none on this machine)")
def test_the_observer_on_a_gpu_reads_a_screen_as_on_the_cpu():
    import onnxruntime as ort

    from caap.observe.vision import VisionObserver

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("PP-OCR on a GPU needs onnxruntime-gpu (tools/setup.sh gpu)")
    image = Image.open(SCREENS / "resize-textarea-start.png").convert("RGB")
    cpu = VisionObserver.load(device="cpu", memo=0, screen_memo=0).observe(image).elements
    gpu_observer = VisionObserver.load(device="cuda", memo=0, screen_memo=0)
    assert gpu_observer.reader.runtime == "torch" and gpu_observer.detector.runtime == "torch"
    gpu = gpu_observer.observe(image).elements
    assert [e.type for e in gpu] == [e.type for e in cpu]
    assert sum(a.text == b.text for a, b in zip(gpu, cpu, strict=True)) >= 0.95 * len(cpu)
