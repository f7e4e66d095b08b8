"""The reader's two passes as ONNX graphs, run by ONNX Runtime on the CPU.

One encoder pass (``Reader._infer``) turns a batch of patched crops into two things: the CTC
log-probabilities the texts are read from, and the decoder's memory (the encoder output with each
crop's colour vector added) that the records are generated from. A decoder pass
(``caap.observe.read.generate``) turns records written so far and that memory into the next byte's
scores. ``graph_for`` exports each pass, built from the checkpoint's own layers, once per checkpoint
into the model cache (``caap.files.cache_dir``), keyed by the weights' digest, so a fine-tuned reader
gets the same speed and a changed checkpoint is never run from a stale graph. ``GraphEncoder`` and
``GraphDecoder`` run them.

Why: on this project's 2-core CPU ONNX Runtime runs the encoder pass in a third to a half of
torch's time (its fused attention, GELU and normalisation, and no Python between the layers), and a
decoder pass, small enough that torch's and transformers' Python is most of it, in a fraction. The
outputs agree with torch's to about 1e-4.

The grid of a batch (its largest rows and columns of patches) sizes the reassembled crops of the
stem and the CTC head's columns. Torch reads it from the patches (``.item()``), which a trace would
freeze to the example's value, so the graph takes it from the shapes of two extra inputs instead
(``rows_axis``, ``cols_axis``: any float vector of that many entries).
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from caap.files import cache_dir, export_once, file_digest
from caap.observe.onnx_session import session_options
from caap.observe.read.configuration import CHECKPOINT_FILE, ReaderError

OPSET = 17  # supported by every onnxruntime the project allows (>= 1.17)
INPUTS = ("flattened_patches", "attention_mask", "colour", "rows_axis", "cols_axis")
OUTPUTS = ("memory", "log_probs")
DECODER_INPUTS = ("input_ids", "decoder_mask", "memory", "memory_mask")
PARTS = ("encoder", "decoder")
RUNTIMES = ("auto", "onnx", "torch")


def available() -> bool:
    """Whether ONNX Runtime and the ``onnx`` exporter package are installed (the vision extra)."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def _reading_graph(model: Any) -> Any:
    import torch
    from transformers.masking_utils import create_bidirectional_mask

    from caap.observe.read.modeling import StemEmbeddings

    class ReadingGraph(torch.nn.Module):
        """``model.encode`` + ``model.ctc_log_probs`` + ``model.decoder_memory`` with the grid taken
        from input shapes. The vision encoder's forward is spelt out (embeddings, mask, layers, final
        norm, as transformers' ``Pix2StructVisionModel.forward``) so the grid reaches the stem."""

        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, flattened_patches: torch.Tensor, attention_mask: torch.Tensor, colour: torch.Tensor,
                    rows_axis: torch.Tensor, cols_axis: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            vision = self.model.encoder
            grid = (rows_axis.shape[0], cols_axis.shape[0])
            embeddings = vision.embeddings
            x = (embeddings(flattened_patches, grid) if isinstance(embeddings, StemEmbeddings)
                 else embeddings(flattened_patches))
            mask = create_bidirectional_mask(config=vision.config, inputs_embeds=x, attention_mask=attention_mask)
            hidden = vision.layernorm(vision.encoder(x, attention_mask=mask)[0])
            log_probs, _ = self.model.ctc_log_probs(hidden, attention_mask, flattened_patches, width=grid[1])
            return self.model.decoder_memory(hidden, colour), log_probs

    return ReadingGraph().eval()


def _decoding_graph(model: Any) -> Any:
    import torch

    class DecodingGraph(torch.nn.Module):
        """One pass of the text decoder over whole records (no cache): every position's scores."""

        def __init__(self) -> None:
            super().__init__()
            self.decoder = model.decoder

        def forward(self, input_ids: torch.Tensor, decoder_mask: torch.Tensor, memory: torch.Tensor,
                    memory_mask: torch.Tensor) -> torch.Tensor:
            return self.decoder(input_ids=input_ids, attention_mask=decoder_mask, encoder_hidden_states=memory,
                                encoder_attention_mask=memory_mask, use_cache=False, return_dict=True).logits

    return DecodingGraph().eval()


def example_inputs(model: Any, spec: Any) -> tuple[Any, ...]:
    """A batch of two crops of different grids (so the trace holds padding and a real mask)."""
    import torch

    from caap.observe.read.processing import COLOUR_SETS, patchify

    rng = np.random.default_rng(0)
    ph, pw = spec.patch
    crops = [rng.integers(0, 256, (ph * 2 - 3, pw * 9 - 1, 3), dtype=np.uint8),
             rng.integers(0, 256, (ph - 5, pw * 5 + 2, 3), dtype=np.uint8)]
    colour_set = getattr(model, "colour_set", None)
    colour = rng.random((2, COLOUR_SETS[colour_set]), dtype=np.float32) if colour_set == "box" else None
    grid = patchify(crops, spec.patch, spec.max_patches, colour)
    rows, cols = max(r for r, _ in grid.shapes), max(c for _, c in grid.shapes)
    return (grid.flattened_patches, grid.attention_mask, grid.colour, torch.zeros(rows), torch.zeros(cols))


def decoder_inputs(model: Any) -> tuple[Any, ...]:
    """Three records of different lengths (right-padded) over memories of different lengths."""
    import torch

    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(2, 200, (3, 7), generator=generator)
    decoder_mask = torch.ones(3, 7, dtype=torch.long)
    decoder_mask[1, 4:] = 0
    decoder_mask[2, 2:] = 0
    memory = torch.randn(3, 11, model.config.text_config.hidden_size, generator=generator)
    memory_mask = torch.ones(3, 11)
    memory_mask[0, 6:] = 0
    return ids, decoder_mask, memory, memory_mask


def graph_for(checkpoint: Path, model: Any, spec: Any, cache: Path | None = None, part: str = "encoder") -> Path:
    """The ONNX graph of one pass (``part``: encoder or decoder) of the reader in ``checkpoint``
    (``model``: its weights, loaded), exported on first use into ``cache`` (default: the model
    cache's ``reader`` folder) under the digest of its weights and configuration. Nothing
    half-written is ever left under the final name: the export runs in a private folder and is
    renamed into place. A failed export is a ``ReaderError``."""
    import torch
    import transformers

    weights = sorted(p for p in checkpoint.glob("*.safetensors") if p.name != "state-head.safetensors")
    sources = [checkpoint / "config.json", checkpoint / CHECKPOINT_FILE, *weights]
    key = "-".join(file_digest(p)[:8] for p in sources if p.is_file())
    folder = cache or cache_dir() / "reader"
    if part not in PARTS:
        raise ReaderError(f"a reader graph is one of {PARTS}, not {part!r}")
    target = folder / f"reader-{part}-{key}-t{torch.__version__}-tf{transformers.__version__}-op{OPSET}.onnx"

    def write(work: Path) -> Path:
        out = work / "reader.onnx"
        names: Sequence[str]
        outputs: Sequence[str]
        if part == "encoder":
            graph, inputs, names, outputs = _reading_graph(model), example_inputs(model, spec), INPUTS, OUTPUTS
            axes = {"flattened_patches": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
                    "colour": {0: "batch"}, "rows_axis": {0: "rows"}, "cols_axis": {0: "cols"},
                    "memory": {0: "batch", 1: "tokens"}, "log_probs": {0: "batch", 1: "frames"}}
        else:
            graph, inputs, names, outputs = _decoding_graph(model), decoder_inputs(model), DECODER_INPUTS, ("logits",)
            axes = {"input_ids": {0: "batch", 1: "length"}, "decoder_mask": {0: "batch", 1: "length"},
                    "memory": {0: "batch", 1: "tokens"}, "memory_mask": {0: "batch", 1: "tokens"},
                    "logits": {0: "batch", 1: "length"}}
        # The exporter warns about every traced shape and Python value; the equality tests are the check.
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), torch.inference_mode(False):
            warnings.simplefilter("ignore")
            torch.onnx.export(graph, inputs, str(out), input_names=list(names), output_names=list(outputs),
                              dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        return out

    return export_once(target, write, what=f"the reader's ONNX graph ({part}) of {checkpoint}", error=ReaderError)


def _session(graph: Path, threads: int | None) -> Any:
    import onnxruntime as ort

    try:
        return ort.InferenceSession(str(graph), sess_options=session_options(threads),
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types for unreadable graphs
        raise ReaderError(f"{graph}: not a readable ONNX graph ({type(exc).__name__}: {exc}); "
                          "delete it to export it again") from None


def _inputs(session: Any, graph: Path, expected: Sequence[str], required: str) -> list[str]:
    # The exporter drops inputs a reader does not use (no colour layers, no stem over the crop).
    names = [i.name for i in session.get_inputs()]
    if not set(names) <= set(expected) or required not in names:
        raise ReaderError(f"{graph}: the graph takes {names}, not the reader's {list(expected)}; "
                          "delete it to export it again")
    return names


class GraphEncoder:
    """The exported encoder pass in an ONNX Runtime session; ``__call__`` answers as the torch pass
    does: ``(memory, log_probs)`` as torch tensors (float32, CPU)."""

    def __init__(self, graph: Path, threads: int | None = None) -> None:
        self.session = _session(graph, threads)
        self.inputs = _inputs(self.session, graph, INPUTS, "flattened_patches")

    def __call__(self, flattened_patches: Any, attention_mask: Any, colour: Any,
                 shapes: Sequence[tuple[int, int]]) -> tuple[Any, Any]:
        import torch

        rows, cols = max(r for r, _ in shapes), max(c for _, c in shapes)
        feed = {"flattened_patches": flattened_patches.numpy(), "attention_mask": attention_mask.numpy(),
                "colour": colour.numpy(), "rows_axis": np.zeros(rows, np.float32),
                "cols_axis": np.zeros(cols, np.float32)}
        memory, log_probs = self.session.run(list(OUTPUTS), {name: feed[name] for name in self.inputs})
        return torch.from_numpy(memory), torch.from_numpy(log_probs)


class GraphDecoder:
    """The exported decoder pass in an ONNX Runtime session: ``__call__(input_ids, decoder_mask,
    memory, memory_mask)`` gives every position's scores (a torch tensor), as ``decoder_pass`` does
    with the torch decoder."""

    def __init__(self, graph: Path, threads: int | None = None) -> None:
        self.session = _session(graph, threads)
        self.inputs = _inputs(self.session, graph, DECODER_INPUTS, "input_ids")

    def __call__(self, input_ids: Any, decoder_mask: Any, memory: Any, memory_mask: Any) -> Any:
        import torch

        feed = {"input_ids": input_ids.numpy(), "decoder_mask": decoder_mask.numpy(),
                "memory": memory.float().numpy(), "memory_mask": memory_mask.float().numpy()}
        (logits,) = self.session.run(["logits"], {name: feed[name] for name in self.inputs})
        return torch.from_numpy(logits)


def decoder_pass(model: Any) -> Any:
    """The torch decoder as ``GraphDecoder`` is called: every position's scores."""

    def run(input_ids: Any, decoder_mask: Any, memory: Any, memory_mask: Any) -> Any:
        return model.decoder(input_ids=input_ids, attention_mask=decoder_mask, encoder_hidden_states=memory,
                             encoder_attention_mask=memory_mask, use_cache=False, return_dict=True).logits

    return run
