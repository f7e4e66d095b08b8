"""The reader's network: Pix2Struct with a CTC text head over its vision encoder.

``ReaderModel`` *is* a ``Pix2StructForConditionalGeneration`` — same encoder, decoder,
``generate`` and ``save_pretrained`` — plus two small layers:

* ``ctc_pool``: per patch column, attention weights over the column's rows, so each column of the
  encoder's output becomes one vector (every patch carries its column id, ``caap.observe.patches``);
* ``ctc_head``: each pooled column → ``frames_per_column`` frames of class scores (blank +
  alphabet, ``caap.observe.ctc``): a left-to-right frame sequence read by CTC.

Trained jointly (hybrid CTC/attention, as in joint CTC-attention speech recognition and PaddleOCR's
PP-OCRv3+ recognisers): the CTC loss teaches the encoder a left-to-right alignment of the text,
which a decoder trained from scratch does not find on a CPU budget; the decoder writes the
structured record (type, checked/focused/highlighted, subtype). The head's shape lives in the
model config (``config.ctc = {"classes": N, "frames_per_column": K}``), so ``save_pretrained`` /
``from_pretrained`` round-trip it. Loading such a checkpoint into a plain
``Pix2StructForConditionalGeneration`` still works (the CTC layers are ignored).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from transformers import Pix2StructConfig, Pix2StructForConditionalGeneration


class ReaderModel(Pix2StructForConditionalGeneration):
    def __init__(self, config: Pix2StructConfig) -> None:
        super().__init__(config)
        ctc = getattr(config, "ctc", None)
        if not isinstance(ctc, dict) or "classes" not in ctc:
            raise ValueError("ReaderModel needs config.ctc = {'classes': N, 'frames_per_column': K}")
        hidden = config.vision_config.hidden_size
        self.frames_per_column = int(ctc.get("frames_per_column", 1))
        self.ctc_classes = int(ctc["classes"])
        self.ctc_pool = nn.Linear(hidden, 1)
        self.ctc_head = nn.Linear(hidden, self.frames_per_column * self.ctc_classes)
        for layer in (self.ctc_pool, self.ctc_head):
            nn.init.normal_(layer.weight, std=0.02)
            nn.init.zeros_(layer.bias)

    def encode(self, flattened_patches: torch.Tensor, attention_mask: torch.Tensor) -> Any:
        """The vision encoder's output (a ``BaseModelOutput``), computed once for both heads."""
        return self.encoder(flattened_patches=flattened_patches, attention_mask=attention_mask, return_dict=True)

    def ctc_log_probs(self, hidden: torch.Tensor, attention_mask: torch.Tensor,
                      flattened_patches: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log_probs (batch, frames, classes), frames per element)`` from the encoder output
        ``hidden`` (batch, tokens, dim); each token's column is the second value of its patch row in
        ``flattened_patches`` (1-based, 0 for padding; see ``caap.observe.patches``)."""
        batch, _, dim = hidden.shape
        cols = flattened_patches[:, :, 1].long()
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
        logits = self.ctc_head(pooled).view(batch, width * self.frames_per_column, self.ctc_classes)
        lengths = (cols * valid).max(dim=1).values * self.frames_per_column
        return torch.log_softmax(logits.float(), dim=-1), lengths
