"""The reader's character language model and the CTC beam search that uses it."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from caap.observe.read.charlm import CharLM, CharLMError, Fusion
from caap.observe.read.ctc import BLANK, Alphabet, _logaddexp, beam_decode, greedy_decode

TEXTS = ["Select Austin and click Submit.", "Select the checkbox and click Submit.", "Select Iaculis.",
         "click Submit.", "Enter the password"] * 3


def test_probabilities_of_every_next_character_sum_to_one_minus_the_unknown_share() -> None:
    lm = CharLM.train(TEXTS, order=4)
    symbols = [*sorted(set("".join(TEXTS))), "\x03"]
    for context in ("", "Sel", "click Sub", "zzz"):
        total = sum(lm.prob(context, ch) for ch in symbols)
        assert 0.97 < total <= 1.0 + 1e-9, (context, total)


def test_known_spellings_score_higher_than_one_letter_off() -> None:
    lm = CharLM.train(TEXTS, order=6)
    assert lm.score("Select") > lm.score("Selet")
    assert lm.score("Austin") > lm.score("Austn")
    assert lm.score("Iaculis") > lm.score("laculis")
    assert math.isfinite(lm.score("x7#Qz"))  # anything has a probability: passwords stay readable


def test_saves_loads_and_rejects_bad_files(tmp_path) -> None:
    lm = CharLM.train(TEXTS, order=5)
    lm.fusion = Fusion(weight=0.25, bonus=1.5, beam=4, below=0.9)
    path = tmp_path / "char-lm.json"
    lm.save(path)
    again = CharLM.load(path)
    assert again.fusion == lm.fusion and again.order == 5
    assert again.score("click Submit.") == pytest.approx(lm.score("click Submit."))
    with pytest.raises(CharLMError, match="no such"):
        CharLM.load(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CharLMError, match="not a readable"):
        CharLM.load(tmp_path / "bad.json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(CharLMError, match="not a caap-char-lm"):
        CharLM.load(tmp_path / "other.json")
    data = lm.to_json()
    data["fusion"]["speed"] = 3
    (tmp_path / "fusion.json").write_text(json.dumps(data))
    with pytest.raises(CharLMError, match="fusion"):
        CharLM.load(tmp_path / "fusion.json")


def _frames(alphabet: Alphabet, spec: list[dict[str, float]]) -> np.ndarray:
    """Log-probabilities per frame: each dict gives some characters' probabilities, the rest is
    blank (and a small floor for everything)."""
    out = np.full((len(spec), alphabet.size), 1e-6)
    for t, probs in enumerate(spec):
        for ch, p in probs.items():
            out[t, alphabet.encode(ch)[0]] = p
        out[t, BLANK] = max(1.0 - sum(probs.values()), 1e-6)
    return np.log(out / out.sum(axis=1, keepdims=True))


def test_beam_search_restores_a_letter_the_pixels_leave_open() -> None:
    alphabet = Alphabet.build(TEXTS)
    lm = CharLM.train(TEXTS, order=6)
    # "Sele?t": the frame of the "c" is mostly blank (a narrow glyph), so greedy drops it.
    spec = [{"S": 0.99}, {}, {"e": 0.99}, {}, {"l": 0.99}, {}, {"e": 0.99}, {"c": 0.35}, {"t": 0.99}, {}]
    frames = _frames(alphabet, spec)
    torch = pytest.importorskip("torch")
    assert greedy_decode(torch.from_numpy(frames)[None], [len(frames)], alphabet)[0].text == "Selet"
    assert beam_decode(frames, len(frames), alphabet, lm, weight=0.0, bonus=0.0) == "Selet"
    assert beam_decode(frames, len(frames), alphabet, lm, weight=0.3, bonus=1.0) == "Select"


def test_beam_search_leaves_clear_pixels_alone() -> None:
    alphabet = Alphabet.build([*TEXTS, "x7#Qz"])
    lm = CharLM.train(TEXTS, order=6)
    spec = [{"x": 0.99}, {}, {"7": 0.99}, {"#": 0.98}, {}, {"Q": 0.99}, {"z": 0.97}, {}]
    frames = _frames(alphabet, spec)
    assert beam_decode(frames, len(frames), alphabet, lm, weight=0.3, bonus=1.0) == "x7#Qz"
    # Frames past the element's length are not read.
    assert beam_decode(frames, 3, alphabet, lm, weight=0.3, bonus=1.0) == "x7"


def test_beam_search_follows_only_the_likeliest_characters_of_a_spread_frame() -> None:
    """A head early in training spreads each frame over every class; the search follows the ``top``
    likeliest of them (what a trained head gives is searched as before)."""
    alphabet = Alphabet.build([*TEXTS, "x7#Qz"])
    lm = CharLM.train(TEXTS, order=4)
    rng = np.random.default_rng(0)
    spread = rng.dirichlet(np.full(alphabet.size, 50.0), size=12)  # every class near 1/size, above the prune
    spread[::3, alphabet.encode("Q")[0]] += 0.05  # Q a little ahead in every third frame
    frames = np.log(spread / spread.sum(axis=1, keepdims=True))
    assert (frames > math.log(1e-3)).all()
    calls = {"n": 0}
    counted = lm.log_prob

    def log_prob(context: str, ch: str) -> float:
        calls["n"] += 1
        return counted(context, ch)

    lm.log_prob = log_prob  # type: ignore[method-assign]
    one = beam_decode(frames, len(frames), alphabet, lm, weight=0.3, bonus=1.0, beam=4, top=1)
    assert calls["n"] <= len(frames) * 4  # one character per beam and frame
    leaders = {alphabet.decode_ids([int(i)]) for i in frames.argmax(axis=1) if i != BLANK}
    assert one and set(one) <= leaders and "Q" in one  # only what leads a frame is followed
    calls["n"] = 0
    beam_decode(frames, len(frames), alphabet, lm, weight=0.3, bonus=1.0, beam=4, top=None)
    assert calls["n"] > len(frames) * 4 * 10  # every class followed
    # A clear head's frames hold fewer candidates than ``top``: the same text either way.
    clear = _frames(alphabet, [{"x": 0.99}, {}, {"7": 0.6, "T": 0.3}, {"#": 0.98}, {}, {"Q": 0.99}])
    assert beam_decode(clear, len(clear), alphabet, lm, weight=0.3, bonus=1.0, top=2) == \
        beam_decode(clear, len(clear), alphabet, lm, weight=0.3, bonus=1.0, top=None)


def test_the_searchs_logaddexp_is_numpys():
    inf = math.inf
    pairs = [(0.0, 0.0), (-1.5, -0.2), (-0.2, -1.5), (-700.0, -1.0), (-3.0, -inf), (-inf, -3.0), (-inf, -inf),
             (2.0, 2.0 + 1e-12), (-1e-300, -2e-300)]
    for x, y in pairs:
        assert _logaddexp(x, y) == float(np.logaddexp(x, y))
    assert math.isnan(_logaddexp(math.nan, 0.0))
