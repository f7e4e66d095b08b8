"""The reader's network: Pix2Struct with a CTC text head over its vision encoder.

``ReaderModel`` *is* a ``Pix2StructForConditionalGeneration`` — same encoder, decoder,
``generate`` and ``save_pretrained`` — plus two small layers:

* ``stem`` (optional, ``config.ctc["stem"]`` = channels of two 3x3 convolutions, [] = none): a small
  CNN in place of Pix2Struct's linear patch projection, max-pooled 4x along the patch height. A
  line of UI text sits anywhere within a 32 px patch row; the linear projection must learn every
  vertical offset of every glyph separately, the convolutions share one detector over all of them.
  A residual convolution of width 3 along each image's patch sequence then hands every patch its
  left and right neighbours (a 4 px patch holds part of a character). With ``stem_over: image`` the
  convolutions run over each crop re-assembled from its patches, so they see across patch borders
  and a glyph gives the same features whatever its offset to the 4 px patch grid;
* ``ctc_pool``: per patch column, attention weights over the column's rows, so each column of the
  encoder's output becomes one vector (every patch carries its column id, ``caap.observe.read.processing``);
* ``ctc_context`` (optional, ``config.ctc["context"]`` = kernel width in columns, 0 = none):
  residual 1-D convolutions along the pooled columns. A character spans 1-3 narrow patch columns;
  the convolutions hand each column its neighbours directly instead of waiting for the from-scratch
  encoder to learn locality through its absolute position tables (which is what keeps a plain head
  on CTC's all-blank plateau for the first ~100k samples, measured);
* ``ctc_head``: each pooled column → ``frames_per_column`` frames of class scores (blank +
  alphabet, ``caap.observe.read.ctc``): a left-to-right frame sequence read by CTC;
* ``colour`` (optional, ``config.ctc["colour"]``: the name of a set in ``caap.observe.read.processing``): a
  small MLP that turns the element's colour statistics (what per-crop standardising removes) into
  a vector added to every position of the decoder's memory (``decoder_memory``). The
  states need it (a hovered row differs from a plain one by its pale tint alone); the CTC head
  never sees it, so adding it to a trained reader leaves the text exactly as it was.

Trained jointly (hybrid CTC/attention, as in joint CTC-attention speech recognition and PaddleOCR's
PP-OCRv3+ recognisers): the CTC loss teaches the encoder a left-to-right alignment of the text,
which a decoder trained from scratch does not find on a CPU budget; the decoder writes the
structured record (type, checked/focused/highlighted, subtype). The head's shape lives in the
model config (``config.ctc = {"classes": N, "frames_per_column": K, "context": W,
"context_layers": L}``), so ``save_pretrained`` /
``from_pretrained`` round-trip it. Loading such a checkpoint into a plain
``Pix2StructForConditionalGeneration`` still works (the CTC layers are ignored).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import Pix2StructConfig, Pix2StructForConditionalGeneration, PreTrainedConfig
from transformers.models.pix2struct.modeling_pix2struct import Pix2StructVisionEmbeddings

from caap.observe.read.processing import COLOUR_SETS, colour_set


class ReaderModel(Pix2StructForConditionalGeneration):
    def __init__(self, config: Pix2StructConfig) -> None:
        super().__init__(config)
        ctc = getattr(config, "ctc", None)
        if not isinstance(ctc, dict) or "classes" not in ctc:
            raise ValueError("ReaderModel needs config.ctc = {'classes': N, 'frames_per_column': K}")
        vision = config.vision_config
        assert isinstance(vision, PreTrainedConfig)  # the config turned a dict or None into its vision config
        hidden = vision.hidden_size
        stem = list(ctc.get("stem") or [])
        if stem:
            patch = ctc.get("patch")
            if not patch or len(patch) != 2:
                raise ValueError("config.ctc['stem'] needs config.ctc['patch'] = [height, width]")
            embeddings = StemEmbeddings(config.vision_config, int(patch[0]), int(patch[1]), stem,
                                        whole_image=ctc.get("stem_over") == "image")
            self.encoder.embeddings = embeddings
        self.frames_per_column = int(ctc.get("frames_per_column", 1))
        self.ctc_classes = int(ctc["classes"])
        self.ctc_pool = nn.Linear(hidden, 1)
        kernel, layers = int(ctc.get("context", 0)), int(ctc.get("context_layers", 2))
        self.ctc_context = nn.ModuleList(
            [ColumnContext(hidden, kernel) for _ in range(layers if kernel > 0 else 0)])
        self.ctc_head = nn.Linear(hidden, self.frames_per_column * self.ctc_classes)
        for layer in (self.ctc_pool, self.ctc_head):
            nn.init.normal_(layer.weight, std=0.02)
            nn.init.zeros_(layer.bias)
        self.colour_set = colour_set(ctc.get("colour"))
        self.colour = (nn.Sequential(nn.Linear(COLOUR_SETS[self.colour_set], hidden), nn.GELU(),
                                     nn.Linear(hidden, hidden)) if self.colour_set else None)
        self.reset_colour()

    def reset_colour(self) -> None:
        """Start the colour vector at zero (its last layer zeroed): a reader given one starts out
        reading its records as it did without."""
        if self.colour is not None:
            first, last = self.colour[0], self.colour[2]
            assert isinstance(first, nn.Linear) and isinstance(last, nn.Linear)  # Sequential yields Modules
            # The inputs lie in [0, 1] and what tells states apart is small (a hovered row's pale
            # tint is 0.1 off white): a wide first layer makes such differences visible at once.
            nn.init.normal_(first.weight, std=4.0)
            nn.init.zeros_(first.bias)
            nn.init.zeros_(last.weight)
            nn.init.zeros_(last.bias)

    def decoder_memory(self, hidden: torch.Tensor, colour: torch.Tensor | None) -> torch.Tensor:
        """What the decoder attends to (same mask as the encoder output): the encoder output
        ``hidden`` (batch, tokens, dim) with the colour vector of each element added to every
        position (an extra token instead gets a 1/tokens share of the attention and learned
        measurably slower). Unchanged where the model has no colour layers."""
        if self.colour is None:
            return hidden
        if colour is None:
            raise ValueError("this reader reads colour statistics beside its patches: pass PatchGrid.colour")
        return hidden + self.colour(colour.to(device=hidden.device, dtype=hidden.dtype)).unsqueeze(1)

    def encode(self, flattened_patches: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        """The vision encoder's output (a ``BaseModelOutput``), computed once for both heads."""
        return self.encoder(flattened_patches=flattened_patches, attention_mask=attention_mask, return_dict=True)

    def ctc_log_probs(self, hidden: torch.Tensor, attention_mask: torch.Tensor,
                      flattened_patches: torch.Tensor, width: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log_probs (batch, frames, classes), frames per element)`` from the encoder output
        ``hidden`` (batch, tokens, dim); each token's column is the second value of its patch row in
        ``flattened_patches`` (1-based, 0 for padding; see ``caap.observe.read.processing``).
        ``width``: the batch's widest grid in columns, where the caller knows it without reading
        the patches (a traced graph takes it from an input's shape, ``caap.observe.read.graph``)."""
        batch, _, dim = hidden.shape
        cols = flattened_patches[:, :, 1].long()
        if width is None:
            width = max(int(cols.max().item()), 1)
        index = (cols - 1).clamp(min=0)
        valid = attention_mask > 0
        # Attention over the rows of each column: a softmax of the pool scores within the column
        # (scores shifted by each element's maximum for stability; padding tokens weigh nothing).
        scores = self.ctc_pool(hidden).squeeze(-1).float().masked_fill(~valid, -1e4)
        weights = torch.exp(scores - scores.max(dim=1, keepdim=True).values) * valid
        totals = torch.zeros(batch, width, device=hidden.device).scatter_add(1, index, weights)
        weights = weights / totals.gather(1, index).clamp(min=1e-12)
        pooled = torch.zeros(batch, width, dim, device=hidden.device, dtype=hidden.dtype).scatter_add(
            1, index.unsqueeze(-1).expand(-1, -1, dim), weights.unsqueeze(-1).to(hidden.dtype) * hidden)
        if len(self.ctc_context):
            present = torch.zeros(batch, width, device=hidden.device).scatter_add(1, index, valid.float()) > 0
            for layer in self.ctc_context:
                pooled = layer(pooled, present)
        logits = self.ctc_head(pooled).view(batch, width * self.frames_per_column, self.ctc_classes)
        lengths = (cols * valid).max(dim=1).values * self.frames_per_column
        return torch.log_softmax(logits.float(), dim=-1), lengths


class ColumnContext(nn.Module):
    """One residual block ``x + W2·gelu(conv(norm(x)))`` along the column axis; columns an element
    does not have (batch padding) are zeroed before each convolution so they never leak in."""

    def __init__(self, hidden: int, kernel: int) -> None:
        super().__init__()
        if kernel % 2 == 0:
            raise ValueError(f"config.ctc['context'] must be odd (a centred kernel), got {kernel}")
        self.norm = nn.LayerNorm(hidden)
        self.conv = nn.Conv1d(hidden, hidden, kernel, padding=kernel // 2)
        self.out = nn.Linear(hidden, hidden)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, x: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        y = self.norm(x) * present.unsqueeze(-1).to(x.dtype)
        y = self.conv(y.transpose(1, 2)).transpose(1, 2)
        return x + self.out(nn.functional.gelu(y))


class ConvPatchProjection(nn.Module):
    """Each flattened patch (height x width x RGB, ``caap.observe.read.processing``) → two 3x3 convolutions
    → max over groups of 4 rows → a linear map to the encoder's width. A drop-in for the vision
    embeddings' ``patch_projection`` (same input and output shapes)."""

    def __init__(self, height: int, width: int, channels: list[int], hidden: int) -> None:
        super().__init__()
        if len(channels) != 2 or height % 4:
            raise ValueError(f"stem: two channel counts and a patch height divisible by 4 (got {channels}, {height})")
        self.height, self.width = height, width
        self.convs = nn.Sequential(nn.Conv2d(3, channels[0], 3, padding=1), nn.GELU(),
                                   nn.Conv2d(channels[0], channels[1], 3, padding=1), nn.GELU(),
                                   nn.MaxPool2d((4, 1)))
        self.proj = nn.Linear(channels[1] * (height // 4) * width, hidden)

    def forward(self, patches: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = patches.shape
        x = patches.reshape(batch * tokens, self.height, self.width, 3).permute(0, 3, 1, 2)
        return self.proj(self.convs(x).flatten(1)).view(batch, tokens, -1)

    def over_image(self, patches: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
                   grid: tuple[Any, Any] | None = None) -> torch.Tensor:
        """The same layers, the convolutions run over each image re-assembled from its patches
        (``rows``/``cols``: 1-based patch positions, 0 for padding tokens; ``grid``: the batch's
        largest (rows, cols), where the caller knows it without reading the patches)."""
        batch, _, values = patches.shape
        ph, pw = self.height, self.width
        nr, nc = grid if grid is not None else (max(int(rows.max().item()), 1), max(int(cols.max().item()), 1))
        slot = torch.where(cols > 0, (rows - 1).clamp(min=0) * nc + (cols - 1).clamp(min=0), nr * nc)
        canvas = patches.new_zeros(batch, nr * nc + 1, values).scatter(
            1, slot.unsqueeze(-1).expand(-1, -1, values), patches)[:, : nr * nc]
        image = canvas.view(batch, nr, nc, ph, pw, 3).permute(0, 5, 1, 3, 2, 4).reshape(batch, 3, nr * ph, nc * pw)
        # Pixels of the canvas no image patch covers (another image of the batch is larger) are
        # zeroed after the first layer too, so a crop gets the same features in any batch.
        occupied = torch.zeros(batch, nr * nc + 1, device=patches.device).scatter(1, slot, 1.0)[:, : nr * nc]
        occupied = occupied.view(batch, 1, nr, 1, nc, 1).expand(-1, -1, -1, ph, -1, pw)
        occupied = occupied.reshape(batch, 1, nr * ph, nc * pw)
        first = self.convs[1](self.convs[0](image)) * occupied.to(image.dtype)
        feats = self.convs[4](self.convs[3](self.convs[2](first)))  # (batch, channels, nr * ph / 4, nc * pw)
        ch, fh = feats.shape[1], ph // 4
        feats = feats.view(batch, ch, nr, fh, nc, pw).permute(0, 2, 4, 1, 3, 5).reshape(batch, nr * nc, ch * fh * pw)
        feats = torch.cat([feats, feats.new_zeros(batch, 1, feats.shape[-1])], dim=1)
        return self.proj(feats.gather(1, slot.unsqueeze(-1).expand(-1, -1, feats.shape[-1])))


class StemEmbeddings(Pix2StructVisionEmbeddings):
    """Pix2Struct's vision embeddings (row and column tables, same names) with ``ConvPatchProjection``
    as the patch projection and a masked residual convolution along the patch sequence."""

    patch_projection: ConvPatchProjection  # type: ignore[assignment]  # replaces Pix2Struct's nn.Linear

    def __init__(self, config: Any, height: int, width: int, channels: list[int], *, whole_image: bool = False) -> None:
        super().__init__(config)
        hidden = config.hidden_size
        self.whole_image = whole_image
        self.patch_projection = ConvPatchProjection(height, width, channels, hidden)
        self.mix_norm = nn.LayerNorm(hidden)
        self.mix = nn.Conv1d(hidden, hidden, 3, padding=1)
        assert self.mix.bias is not None  # made with a bias
        nn.init.zeros_(self.mix.weight)
        nn.init.zeros_(self.mix.bias)

    def forward(self, flattened_patches: torch.Tensor, grid: tuple[Any, Any] | None = None) -> torch.Tensor:
        rows = flattened_patches[:, :, 0].long()
        cols = flattened_patches[:, :, 1].long()
        present = (cols > 0).unsqueeze(-1)
        if self.whole_image:
            x = self.patch_projection.over_image(flattened_patches[:, :, 2:], rows, cols, grid) * present
        else:
            x = self.patch_projection(flattened_patches[:, :, 2:]) * present
        x = x + self.mix((self.mix_norm(x) * present).transpose(1, 2)).transpose(1, 2) * present
        return self.dropout(x + self.row_embedder(rows) + self.column_embedder(cols))
