"""The decoder's records written greedily under the record grammar, one decoder pass per choice.

A record (``caap.observe.read.target``) is mostly spelt out by the grammar: once the type is known
(the detector's class, ``follow_hints``) every byte of ``text|h=`` is the only one allowed, and the
decoder chooses only the few attribute values. ``transformers``' ``generate`` still runs one decoder
step per byte (about 20 per record) with its Python around each. ``forced_greedy`` appends the bytes
the grammar forces without asking the decoder, and runs the decoder only where a row has a choice:
over the whole record so far (a record is a few dozen bytes; the decoder is two layers), taking the
likeliest allowed byte at the row's last position. That is greedy constrained decoding, the same
choices ``generate`` makes with ``prefix_allowed_tokens_fn``, in 2-5 decoder passes instead of ~20.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caap.observe.read.target import RecordGrammar
from caap.taxonomy import ElementType


def forced_greedy(decoder: Any, memory: Any, memory_mask: Any, grammar: RecordGrammar,
                  types: Sequence[ElementType | None], max_new_tokens: int, start: int) -> list[list[int]]:
    """Each row's generated tokens (start token first, end token last where it was reached within
    ``max_new_tokens``): ``decoder(input_ids, decoder_mask, memory, memory_mask)`` gives every
    position's scores (``caap.observe.read.graph``: ``decoder_pass``, ``GraphDecoder``), ``memory`` (rows, tokens, dim)
    and ``memory_mask`` (rows, tokens) what it attends to, ``types`` the type each row's record must
    have (None: any)."""
    import torch

    rows = memory.shape[0]
    seqs = [[start] for _ in range(rows)]
    open_rows = list(range(rows))
    while True:
        choosing: list[tuple[int, list[int]]] = []
        for r in open_rows:
            seq = seqs[r]
            while True:
                if len(seq) - 1 >= max_new_tokens:
                    break
                allowed = grammar.allowed(seq[1:], types[r])
                if len(allowed) != 1:
                    choosing.append((r, allowed))
                    break
                seq.append(allowed[0])
                if allowed[0] == grammar.eos:
                    break
        if not choosing:
            return seqs
        longest = max(len(seqs[r]) for r, _ in choosing)
        ids = torch.zeros(len(choosing), longest, dtype=torch.long, device=memory.device)
        mask = torch.zeros(len(choosing), longest, dtype=torch.long, device=memory.device)
        for k, (r, _) in enumerate(choosing):  # right padding: the decoder is causal, a row's last position sees none
            ids[k, : len(seqs[r])] = torch.tensor(seqs[r])
            mask[k, : len(seqs[r])] = 1
        picked = torch.tensor([r for r, _ in choosing], device=memory.device)
        logits = decoder(ids, mask, memory[picked], memory_mask[picked])
        last = torch.tensor([len(seqs[r]) - 1 for r, _ in choosing], device=memory.device)
        scores = logits[torch.arange(len(choosing), device=memory.device), last]
        open_rows = []
        for k, (r, allowed) in enumerate(choosing):
            options = torch.tensor(allowed, device=memory.device)
            token = int(options[int(scores[k, options].argmax())])
            seqs[r].append(token)
            if token != grammar.eos:
                open_rows.append(r)
