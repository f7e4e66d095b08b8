"""Readings remembered by their pixels (caap/observe/memo.py): the memo itself, and the observer
with the shipped models reading a changed screen the same with and without it, while only the
elements whose crops changed go through the models."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.config import ObserveConfig
from caap.observe.memo import ReadingMemo, pixel_key

SCREENS = Path(__file__).resolve().parents[1] / "fixtures" / "screens"


def test_memo_keeps_the_latest_readings_and_drops_the_least_recently_used():
    memo = ReadingMemo(2)
    memo.put(b"a", 1)
    memo.put(b"b", 2)
    assert memo.get(b"a") == 1  # a is now the most recent
    memo.put(b"c", 3)
    assert memo.get(b"b") is None and memo.get(b"a") == 1 and memo.get(b"c") == 3
    assert len(memo) == 2 and (memo.hits, memo.misses) == (3, 1)
    with pytest.raises(ValueError, match="capacity"):
        ReadingMemo(0)
    with pytest.raises(ValueError, match="None"):
        memo.put(b"d", None)


def test_read_through_reads_each_new_key_once_and_in_order():
    memo = ReadingMemo(8)
    memo.put(b"k1", "one")
    asked: list[list[int]] = []

    def read(todo: list[int]) -> list[str]:
        asked.append(todo)
        return [f"read{i}" for i in todo]

    # k2 comes twice: read once, at its first place; k1 was known.
    assert memo.read_through([b"k2", b"k1", b"k3", b"k2"], read) == ["read0", "one", "read2", "read0"]
    assert asked == [[0, 2]]
    assert memo.read_through([b"k3", b"k2"], read) == ["read2", "read0"]
    assert asked == [[0, 2]]  # nothing new: the reader was not called


def test_pixel_key_tells_apart_what_a_reading_depends_on():
    a = np.zeros((4, 6, 3), np.uint8)
    b = a.copy()
    b[1, 2, 0] = 1
    assert pixel_key(a, "button") == pixel_key(a.copy(), "button")
    assert pixel_key(a, "button") != pixel_key(b, "button")  # one pixel
    assert pixel_key(a, "button") != pixel_key(a, "text")  # the type
    assert pixel_key(a) != pixel_key(a.reshape(6, 4, 3))  # the same bytes in another shape
    assert pixel_key(a, (0, 0, 2, 2)) != pixel_key(a, (1, 0, 3, 2))  # where the box lies


@pytest.fixture(scope="module")
def observer():
    pytest.importorskip("ultralytics", reason="needs the vision extra (pip install 'caap[vision]')")
    from caap.observe.vision import DEFAULT_DETECTOR, DEFAULT_READER, VisionObserver

    if not DEFAULT_DETECTOR.is_file() or not (DEFAULT_READER / "model.safetensors").is_file():
        pytest.skip("the shipped models are not in this checkout")
    return VisionObserver.load(memo=0, screen_memo=0, partial_look=0)  # every screen read whole: the crop memo at work


def _same(a: list, b: list) -> None:
    """Element lists equal but for float noise in the confidences (a crop read alone or in a batch
    of others is padded differently)."""
    def plain(elements: list) -> list[dict]:
        out = []
        for e in elements:
            record = e.to_json()
            for key in ("score", "text_confidence"):
                if record.get(key) is not None:
                    record[key] = round(record[key], 3)
            out.append(record)
        return out

    assert plain(a) == plain(b)


@pytest.mark.parametrize("screen", ["resize-textarea-start.png", "email-search-caret-after-name.png",
                                    "click-widget-radio-called-checkbox.png"])
def test_the_observer_reads_the_same_with_a_memo_and_reads_only_changed_crops(observer, screen):
    image = Image.open(SCREENS / screen).convert("RGB")
    reader, ocr = observer.reader, observer.ocr
    plain = observer.observe(image).elements
    assert plain and reader.memo is None and ocr.memo is None

    reader.memo, ocr.memo = ReadingMemo(4096), ReadingMemo(4096)
    try:
        _same(observer.observe(image).elements, plain)
        known = len(reader.memo)
        assert known >= len(plain)  # every element (and a text area's lines) remembered
        misses = (reader.memo.misses, ocr.memo.misses)
        _same(observer.observe(image).elements, plain)
        assert (reader.memo.misses, ocr.memo.misses) == misses  # the same screen: nothing read again

        # A step later one element has changed: a bar of another colour across the first element.
        target = plain[0]
        x1, y1, x2, y2 = target.bbox
        changed = image.copy()
        ImageDraw.Draw(changed).rectangle([x1 + 1, (y1 + y2) // 2, max(x1 + 2, (x1 + x2) // 2), (y1 + y2) // 2 + 1],
                                          fill=(200, 30, 160))
        reader.memo.misses = 0
        with_memo = observer.observe(changed).elements
        read_again = reader.memo.misses
        reader.memo, ocr.memo = None, None
        _same(with_memo, observer.observe(changed).elements)
        # Only crops that overlap the bar (with their few px of context) went through the model.
        near = sum(1 for e in plain if e.bbox[0] - 8 <= x2 and x1 <= e.bbox[2] + 8
                   and e.bbox[1] - 8 <= y2 and y1 <= e.bbox[3] + 8)
        assert 1 <= read_again <= near + 8  # + a text area's lines, which are crops of their own
        assert read_again < known
    finally:
        reader.memo, ocr.memo = None, None


def test_the_memo_is_configured_and_off_at_zero(observer):
    from caap.observe.vision import VisionObserver

    assert ObserveConfig().memo > 0
    with pytest.raises(ValueError):
        ObserveConfig(memo=-1)
    on = VisionObserver.from_config(ObserveConfig(memo=16))
    assert on.reader.memo.capacity == 16 and on.ocr.memo.capacity == 16
    assert observer.reader.memo is None and observer.ocr.memo is None  # loaded with memo=0


def test_a_screen_seen_before_is_answered_from_its_look_and_any_change_looks_again(observer):
    from caap.observe.observation import Typed
    from caap.observe.vision import VisionObserver

    assert ObserveConfig().screen_memo > 0 and observer.seen is None  # loaded with screen_memo=0
    with pytest.raises(ValueError):
        ObserveConfig(screen_memo=-1)
    seeing = VisionObserver(observer.detector, observer.reader, ocr=observer.ocr, text_source="auto", screen_memo=2)
    image = Image.open(SCREENS / "resize-textarea-start.png").convert("RGB")
    first = seeing.observe(image)
    text0 = first.elements[0].text
    again = seeing.observe(image.copy())
    assert first.steps and not again.steps  # no step ran the second time
    _same(again.elements, first.elements)
    assert again.timings_ms["total"] < first.timings_ms["total"] and again.timings_ms["detect"] == 0.0
    again.elements[0].text = first.elements[0].text = "changed by its holder"
    assert seeing.observe(image).elements[0].text == text0  # each look gets its own copy
    # Anything the look depends on looks again: one pixel, a typed value, a name, forget().
    seeing.parts.ocr_threshold = 0.5  # a setting changed in place
    assert seeing.observe(image).steps
    seeing.parts.ocr_threshold = None
    pixel = image.copy()
    pixel.putpixel((0, 0), (1, 2, 3))
    assert seeing.observe(pixel).steps
    box = first.elements[0].bbox
    assert seeing.observe(image, typed=[Typed(box, "x")]).steps
    assert seeing.observe(image, names=["Alice"]).steps
    seeing.forget()
    assert seeing.observe(image).steps
