"""The reader's encoder pass as an ONNX graph (``caap.observe.read.graph``): the graph gives torch's
outputs for batches of any grid, the exported file is cached by the checkpoint's digest, a reader
on the onnx runtime reads a screen as the torch one does, and bad graphs and runtimes get one clear
error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

pytest.importorskip("onnxruntime", reason="needs the vision extra (pip install 'caap[vision]')")
pytest.importorskip("onnx", reason="needs the vision extra (pip install 'caap[vision]')")
torch = pytest.importorskip("torch")

from caap.observe.read.configuration import ReaderError  # noqa: E402
from caap.observe.read.graph import GraphDecoder, GraphEncoder, decoder_pass, graph_for  # noqa: E402

CONFIG = Path(__file__).parents[3] / "training" / "reader.yaml"
SHIPPED = Path(__file__).parents[3] / "models" / "reader"
SCREEN = Path(__file__).parents[2] / "fixtures" / "screens"


class _Alphabet:
    size = 10


def _checkpoint(tmp_path: Path, **overrides: object) -> tuple[Path, object, object]:
    """A randomly initialised reader saved as a checkpoint (weights, config, caap-reader.json)."""
    from caap.observe.read.configuration import ReaderSpec, load_model, save_checkpoint
    from caap.train.reader import build_model, load_settings

    settings = load_settings(CONFIG, {"model": "tiny", "max_patches": 64, **overrides})
    model = build_model(settings, vocab_size=259, alphabet=_Alphabet()).eval()  # type: ignore[arg-type]
    with torch.no_grad():  # residual branches start at zero: give them weight, so the test sees them
        for name, p in model.named_parameters():
            if name.endswith(("mix.weight", "out.weight")) or name.startswith("colour."):
                torch.nn.init.normal_(p, std=0.3)
    spec = ReaderSpec(alphabet="abcdefgh", patch=settings.patch, max_patches=settings.max_patches)
    path = save_checkpoint(model, tmp_path / "reader", spec)
    return path, load_model(path), spec


def _noise(w: int, h: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


@pytest.mark.parametrize("overrides", [
    {"stem": [4, 8], "stem_over": "image", "ctc_context": 3},
    {"stem": [4, 8], "stem_over": "patch"},
    {"stem": []},
    {"stem": [4, 8], "stem_over": "image", "colour": "box"},
], ids=["stem-over-image", "stem-over-patch", "linear-patches", "box-colours"])
def test_the_graph_gives_torch_outputs_for_any_grid(tmp_path, overrides):
    from caap.observe.read.processing import COLOUR_SETS, patchify

    path, model, spec = _checkpoint(tmp_path, **overrides)
    encoder = GraphEncoder(graph_for(path, model, spec, cache=tmp_path / "cache"))
    # Grids unlike the traced example's (2x9 and 1x6): one crop alone, a wide one, a tall one, a crop
    # scaled down to fit max_patches, and a batch mixing them.
    batches = [[_noise(9, 20, 1)], [_noise(150, 30, 2), _noise(17, 12, 3)],
               [_noise(30, 100, 4), _noise(11, 33, 5), _noise(5, 5, 6)], [_noise(600, 90, 7), _noise(40, 20, 8)]]
    for crops in batches:
        colour = (np.random.default_rng(len(crops)).random((len(crops), COLOUR_SETS["box"]), dtype=np.float32)
                  if model.colour_set == "box" else None)
        grid = patchify(crops, spec.patch, spec.max_patches, colour)
        with torch.no_grad():
            hidden = model.encode(grid.flattened_patches, grid.attention_mask).last_hidden_state
            want_lp, want_len = model.ctc_log_probs(hidden, grid.attention_mask, grid.flattened_patches)
            want_mem = model.decoder_memory(hidden, grid.colour)
        memory, log_probs = encoder(grid.flattened_patches, grid.attention_mask, grid.colour, grid.shapes)
        valid = grid.attention_mask.bool()
        assert log_probs.shape == want_lp.shape
        assert torch.allclose(log_probs, want_lp, atol=1e-3)
        assert torch.allclose(memory[valid], want_mem[valid], atol=1e-3)  # padding positions are never read
        assert want_len.tolist() == [c * model.frames_per_column for _, c in grid.shapes]


def test_the_decoder_graph_gives_torch_scores_for_any_records_and_memories(tmp_path):
    path, model, spec = _checkpoint(tmp_path)
    graph = GraphDecoder(graph_for(path, model, spec, cache=tmp_path / "cache", part="decoder"))
    torch_pass = decoder_pass(model)
    generator = torch.Generator().manual_seed(1)
    dim = model.config.text_config.hidden_size
    for rows, length, tokens in ((1, 1, 5), (4, 13, 40), (9, 30, 3)):  # shapes unlike the traced example's
        ids = torch.randint(0, 259, (rows, length), generator=generator)
        mask = torch.ones(rows, length, dtype=torch.long)
        mask[0, length // 2 + 1:] = 0  # a shorter record, right-padded
        memory = torch.randn(rows, tokens, dim, generator=generator)
        memory_mask = torch.ones(rows, tokens)
        memory_mask[-1, tokens // 2 + 1:] = 0
        with torch.no_grad():
            want = torch_pass(ids, mask, memory, memory_mask)
        got = graph(ids, mask, memory, memory_mask)
        real = mask.bool()  # padded positions are never read
        assert got.shape == want.shape and torch.allclose(got[real], want[real], atol=1e-3)
    with pytest.raises(ReaderError, match="one of"):
        graph_for(path, model, spec, cache=tmp_path / "cache", part="head")


def test_the_graph_is_exported_once_per_checkpoint_and_a_bad_one_is_named(tmp_path):
    path, model, spec = _checkpoint(tmp_path)
    cache = tmp_path / "cache"
    first = graph_for(path, model, spec, cache=cache)
    stamp = first.stat().st_mtime_ns
    assert graph_for(path, model, spec, cache=cache) == first and first.stat().st_mtime_ns == stamp
    assert [p.name for p in cache.iterdir()] == [first.name]  # no export folder left behind
    assert "encoder" in first.name and graph_for(path, model, spec, cache=cache, part="decoder") != first
    # Changed weights: another graph, never the stale one.
    with torch.no_grad():
        model.ctc_head.bias += 1.0
    model.save_pretrained(tmp_path / "changed")
    config = (path / "config.json").read_bytes()
    (path / "model.safetensors").write_bytes((tmp_path / "changed" / "model.safetensors").read_bytes())
    assert (path / "config.json").read_bytes() == config  # only the weights changed
    assert graph_for(path, model, spec, cache=cache) != first
    first.write_bytes(b"not a graph")
    with pytest.raises(ReaderError, match=r"not a readable ONNX graph.*delete it"):
        GraphEncoder(first)
    blocked = tmp_path / "file"
    blocked.write_text("x")
    with pytest.raises(ReaderError, match="no cache folder"):
        graph_for(path, model, spec, cache=blocked / "sub")


def test_reader_runtimes_are_checked(tmp_path):
    from caap.observe.read.inference import Reader

    path, _, _ = _checkpoint(tmp_path)
    with pytest.raises(ReaderError, match="runtime must be one of"):
        Reader(path, runtime="tensorrt")
    assert Reader(path, runtime="torch").graph is None
    auto = Reader(path)  # auto, on the CPU with ONNX Runtime installed
    assert auto.runtime == "onnx" and isinstance(auto.graph, GraphEncoder) and isinstance(auto.decoder, GraphDecoder)


@pytest.mark.skipif(not (SHIPPED / "model.safetensors").is_file(), reason="needs the shipped reader in models/")
def test_the_shipped_reader_reads_a_screen_alike_on_both_runtimes():
    from caap.observe.read.inference import Reader

    image = Image.open(sorted(SCREEN.glob("*.png"))[0]).convert("RGB")
    boxes = [(x, y, min(x + w, image.width), min(y + 14, image.height))
             for y in range(0, image.height - 14, 23) for x, w in ((0, 60), (40, 90), (70, 40))]
    reads = {rt: Reader(SHIPPED, runtime=rt).read(image, boxes, log_probs=True) for rt in ("torch", "onnx")}
    torch_read, onnx_read = reads["torch"], reads["onnx"]
    assert [e.text for e in onnx_read.elements] == [e.text for e in torch_read.elements]
    assert [r.record for r in onnx_read.readings] == [r.record for r in torch_read.readings]
    for i in range(len(boxes)):
        assert np.abs(onnx_read.frames(i) - torch_read.frames(i)).max() < 1e-3
