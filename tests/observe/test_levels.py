"""The level rule: a slider's or progress bar's value from its pixels."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.primitives import rgb_pixels
from caap.observe.steps.levels import level_of, read_levels
from caap.taxonomy import ElementType


def _bar(value: float, *, vertical: bool = False, fill=(53, 132, 228), trough=(222, 222, 222)):
    image = Image.new("RGB", (240, 240), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    if vertical:
        box = (100, 20, 110, 220)
        draw.rectangle((100, 20, 109, 219), fill=trough)
        if value:
            draw.rectangle((100, 220 - round(200 * value), 109, 219), fill=fill)
    else:
        box = (20, 100, 220, 110)
        draw.rectangle((20, 100, 219, 109), fill=trough)
        if value:
            draw.rectangle((20, 100, 20 + round(200 * value) - 1, 109), fill=fill)
    return image, Element(type=ElementType.PROGRESS_BAR, bbox=box)


def _slider(value: float, *, vertical: bool = False, hollow: bool = False):
    image = Image.new("RGB", (240, 240), (246, 245, 244))
    draw = ImageDraw.Draw(image)
    knob = 20
    travel = 200 - knob
    at = 20 + round(travel * value)
    face = (246, 245, 244) if hollow else (255, 255, 255)
    if vertical:
        draw.rectangle((107, 20, 112, 219), fill=(200, 200, 200))
        top = 220 - knob - round(travel * value)
        draw.ellipse((100, top, 119, top + knob - 1), fill=face, outline=(140, 140, 140))
        box = (100, 20, 120, 220)
    else:
        draw.rectangle((20, 107, 219, 112), fill=(200, 200, 200))
        for x in range(20, 221, 40):  # tick marks under the track: not part of the thumb
            draw.line((x, 124, x, 128), fill=(120, 120, 120))
        draw.ellipse((at, 100, at + knob - 1, 119), fill=face, outline=(140, 140, 140))
        box = (20, 100, 220, 130)
    return image, Element(type=ElementType.SLIDER, bbox=box)


@pytest.mark.parametrize("value", [0.0, 0.07, 0.5, 0.93, 1.0])
@pytest.mark.parametrize("vertical", [False, True])
def test_a_progress_bar_is_read_from_its_fill(value: float, vertical: bool) -> None:
    image, bar = _bar(value, vertical=vertical)
    assert level_of(rgb_pixels(image), bar) == pytest.approx(value, abs=0.05)


def test_a_bar_of_one_colour_is_full_when_it_is_an_accent_and_empty_when_it_is_grey() -> None:
    image, bar = _bar(0.0, trough=(90, 90, 90))  # a dark theme's trough
    assert level_of(rgb_pixels(image), bar) == 0.0
    image, bar = _bar(1.0)
    assert level_of(rgb_pixels(image), bar) == 1.0


@pytest.mark.parametrize("value", [0.0, 0.3, 0.72, 1.0])
@pytest.mark.parametrize(("vertical", "hollow"), [(False, False), (True, False), (False, True)])
def test_a_slider_is_read_from_its_thumb(value: float, vertical: bool, hollow: bool) -> None:
    image, slider = _slider(value, vertical=vertical, hollow=hollow)
    assert level_of(rgb_pixels(image), slider) == pytest.approx(value, abs=0.05)


def test_the_step_sets_values_only_on_sliders_and_bars() -> None:
    image, bar = _bar(0.5)
    other = Element(type=ElementType.BUTTON, bbox=(20, 100, 220, 110), text="x")
    out = read_levels(np.asarray(image), [bar, other])
    assert out[0].value == pytest.approx(0.5, abs=0.05) and out[1] is other
    tiny = Element(type=ElementType.PROGRESS_BAR, bbox=(20, 100, 26, 104))
    assert read_levels(np.asarray(image), [tiny]) == [tiny]  # too short to read: left unknown


def test_a_value_counts_as_read_within_the_tolerance() -> None:
    from caap.train.eval_reader import VALUE_TOLERANCE, _majority, agrees

    assert agrees("value", 0.42, 0.4) and not agrees("value", 0.5, 0.4) and not agrees("value", None, 0.4)
    assert agrees("checked", True, True) and not agrees("checked", None, False)
    from collections import Counter

    # The baseline for a value: the one constant nearest most truths.
    base = _majority(Counter({"0.1": 3, "0.12": 2, "0.9": 4}), "value")
    assert base is not None and base["accuracy"] == round(5 / 9, 4) and abs(base["value"] - 0.11) <= VALUE_TOLERANCE


@pytest.mark.parametrize("value", [0.0, 0.3, 0.8])
def test_a_block_thumb_as_thick_as_its_trough_is_read_from_its_colour(value: float) -> None:
    # Tk's classic scale: a raised block inside a sunken trough, its value written above it and
    # the scale's numbers below (neither is the thumb).
    image = Image.new("RGB", (300, 80), (217, 217, 217))
    draw = ImageDraw.Draw(image)
    draw.rectangle((20, 30, 279, 47), fill=(179, 179, 179), outline=(130, 130, 130))
    travel = 258 - 30
    at = 21 + round(travel * value)
    draw.rectangle((at, 31, at + 29, 46), fill=(225, 225, 225), outline=(250, 250, 250))
    draw.text((at + 8, 12), "75", fill=(0, 0, 0))
    for k, x in enumerate(range(20, 281, 52)):
        draw.text((x, 55), str(50 * k), fill=(0, 0, 0))
    slider = Element(type=ElementType.SLIDER, bbox=(20, 10, 280, 70))
    assert level_of(rgb_pixels(image), slider) == pytest.approx(value, abs=0.05)


def test_a_box_cut_short_of_its_bar_is_followed_out_to_its_ends() -> None:
    image, bar = _bar(0.5)  # the bar runs 20-220
    short = bar.model_copy(update={"bbox": (20, 100, 190, 110)})  # the detector stopped 30 px short
    assert level_of(rgb_pixels(image), short) == pytest.approx(0.5, abs=0.05)  # not 100/170 = 0.59
