"""Held-down buttons drawn with a dithered face (Qt's Windows style)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.steps.dither import dither_share, dithered_faces

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"


def test_the_checked_tool_buttons_of_a_windows_style_window_are_held_down():
    """A cut of a validation screen of caap's Qt showcase in the Windows style, the detector's
    boxes: two checked toggle buttons ('Week', 'Year', dithered faces) and a ticked check box,
    whose tick is not a dithered face and is left to the other steps."""
    labels = json.loads((DESKTOP / "qt5-windows-toggle-buttons.json").read_text())
    image = Image.open(DESKTOP / "qt5-windows-toggle-buttons.png").convert("RGB")
    asked = [Element(**{**e, "checked": False}) for e in labels["elements"]]
    got = dithered_faces(image, asked)
    assert [(e.text, e.checked) for e in got] == [("Week", True), ("Check spelling", False), ("Year", True)]


def _button(dithered: bool) -> Image.Image:
    image = Image.new("RGB", (80, 28), (239, 239, 239))
    face = np.full((22, 74, 3), 239, np.uint8)
    if dithered:
        yy, xx = np.indices(face.shape[:2])
        face[(yy + xx) % 2 == 0] = 255
    image.paste(Image.fromarray(face), (3, 3))
    draw = ImageDraw.Draw(image)
    draw.rectangle((2, 2, 77, 25), outline=(120, 120, 120))
    draw.text((24, 8), "Bold", fill=(0, 0, 0))
    return image


def test_a_dithered_face_is_held_down_and_a_flat_one_is_not():
    box = (2, 2, 78, 26)
    assert dither_share(np.asarray(_button(True)), box) > 0.5
    assert dither_share(np.asarray(_button(False)), box) == 0.0
    flat = dithered_faces(_button(False), [Element(type="button", bbox=box, text="Bold", checked=False)])
    pressed = dithered_faces(_button(True), [Element(type="button", bbox=box, text="Bold", checked=False)])
    assert (flat[0].checked, pressed[0].checked) == (False, True)
    # a scrollbar trough is dithered in the same style, and has no checked state to read
    trough = dithered_faces(_button(True), [Element(type="scrollbar", bbox=box)])
    assert trough[0].checked is None
