"""Records written under the grammar with one decoder pass per choice (``forced_greedy``) are the
ones ``transformers``' step-by-step constrained greedy generation writes, in fewer passes."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from caap.observe.read.generate import forced_greedy  # noqa: E402
from caap.observe.read.graph import decoder_pass  # noqa: E402
from caap.observe.read.target import RecordGrammar, _allowed, decode_target  # noqa: E402
from caap.taxonomy import ElementType  # noqa: E402

CONFIG = Path(__file__).parents[3] / "training" / "reader.yaml"


class _Alphabet:
    size = 10


def test_forced_greedy_writes_what_constrained_generate_writes_in_fewer_passes():
    from transformers.modeling_outputs import BaseModelOutput

    from caap.observe.read.configuration import build_tokenizer
    from caap.train.reader import build_model, load_settings

    tokenizer = build_tokenizer()
    model = build_model(load_settings(CONFIG, {"model": "tiny"}), vocab_size=len(tokenizer),
                        alphabet=_Alphabet()).eval()  # type: ignore[arg-type]
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.decoder.parameters():  # random weights with clear preferences: every choice is made
            torch.nn.init.normal_(p, std=0.5)
    grammar = RecordGrammar(tokenizer, text=False)
    rows, dim = 24, model.config.text_config.hidden_size
    memory = torch.randn(rows, 30, dim)
    mask = torch.ones(rows, 30)
    mask[::3, 20:] = 0  # memories of different lengths, padded
    kinds = [None, ElementType.TEXT, ElementType.CHECKBOX, ElementType.BUTTON, ElementType.ICON, ElementType.SLIDER]
    types = [kinds[i % len(kinds)] for i in range(rows)]
    calls = []
    decoder = decoder_pass(model)

    def counted(*args, **kwargs):
        calls.append(1)
        return decoder(*args, **kwargs)

    with torch.no_grad():
        ours = forced_greedy(counted, memory, mask, grammar, types, grammar.longest,
                             int(model.config.decoder_start_token_id))
        theirs = model.generate(encoder_outputs=BaseModelOutput(last_hidden_state=memory), attention_mask=mask,
                                max_new_tokens=grammar.longest, do_sample=False, num_beams=1,
                                prefix_allowed_tokens_fn=partial(_allowed, grammar, types))
    ours_text = tokenizer.batch_decode(ours, skip_special_tokens=True)
    assert ours_text == tokenizer.batch_decode(theirs.tolist(), skip_special_tokens=True)
    for text, kind in zip(ours_text, types, strict=True):
        element = decode_target(text, (0, 0, 1, 1))
        assert element.type is not ElementType.UNKNOWN and (kind is None or element.type is kind)
    assert len({t for t in ours_text}) > 3  # the records differ: the decoder chose
    assert len(calls) < theirs.shape[1] / 2  # a pass per choice, not per byte
    # A budget too short for any record stops every row there, as generate's max_new_tokens does.
    short = forced_greedy(decoder, memory, mask, grammar, types, 3, int(model.config.decoder_start_token_id))
    assert all(len(seq) <= 4 for seq in short)
