"""A list row selected by a rounded face of its own (GTK 4's sidebars and list views)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from caap.elements import Element
from caap.observe.steps.selection import rounded_faces, selection_face

DESKTOP = Path(__file__).resolve().parents[2] / "fixtures" / "desktop"
FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def _screen(name: str) -> tuple[Image.Image, list[Element]]:
    labels = json.loads((DESKTOP / f"{name}.json").read_text())
    return Image.open(DESKTOP / f"{name}.png").convert("RGB"), [Element(**e) for e in labels["elements"]]


@pytest.mark.parametrize("name", ["gtk4-sidebar-selected-row", "qt5-table-headers"])
def test_only_the_row_on_a_rounded_face_is_selected(name):
    """Cuts of validation screens, the detector's boxes: GTK 4's stack sidebar with its first row
    selected (a grey rounded face a few levels off the white list), and Qt's tables whose grey
    header cells are square bands, which stay unselected."""
    image, gold = _screen(name)
    asked = [e.model_copy(update={"highlighted": False}) for e in gold]
    got = rounded_faces(image, asked)
    labelled = [(g.text, bool(e.highlighted)) for e, g in zip(got, gold, strict=True) if g.highlighted is not None]
    assert labelled == [(g.text, bool(g.highlighted)) for g in gold if g.highlighted is not None]
    assert any(g.highlighted for g in gold) == (name == "gtk4-sidebar-selected-row")


def _list(radius: int) -> tuple[Image.Image, list[Element]]:
    """Five rows of a white list; the third on a grey face with corners of ``radius`` px."""
    image = Image.new("RGB", (240, 200), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(FONT), 13) if FONT.exists() else ImageFont.load_default()
    draw.rounded_rectangle((8, 80, 200, 112), radius=radius, fill=(226, 226, 226))
    rows = []
    for k, word in enumerate(["Inbox", "Drafts", "Sent mail", "Archive", "Trash"]):
        y = 10 + 36 * k
        left, top, right, bottom = draw.textbbox((20, y), word, font=font)
        draw.text((20, y), word, fill=(30, 30, 30), font=font)
        rows.append(Element(type="tabled_text", bbox=(left - 1, top - 1, max(right + 1, left + 40), bottom + 1),
                            text=word, highlighted=False))
    return image, rows


def test_a_rounded_face_selects_its_row_and_a_square_band_does_not():
    image, rows = _list(radius=6)
    assert [e.highlighted for e in rounded_faces(image, rows)] == [False, False, True, False, False]
    x1, y1, x2, y2 = rows[2].bbox
    face = selection_face(np.asarray(image), (x1, y1, x2, y2))
    assert face is not None and 8 <= face[0] <= 12 and 196 <= face[2] <= 200 and face[1] == 80 and face[3] == 112
    square, rows = _list(radius=0)
    assert not any(e.highlighted for e in rounded_faces(square, rows))
