"""The glyph bank (caap/observe/glyphs.py): icons named by example, on click-menu-2's screens, and the
observer's two steps that use it (caap/observe/steps/glyph_icons.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from caap.elements import Element
from caap.observe.glyphs import GLYPH_FILE, Found, GlyphBank, GlyphError, cut_glyph, islands
from caap.observe.steps.glyph_icons import add_glyph_icons, name_glyph_icons

pytest.importorskip("cv2")

ROOT = Path(__file__).resolve().parents[2]
SCREENS = ROOT / "tests" / "fixtures" / "screens"
SHIPPED = ROOT / "models" / "reader" / GLYPH_FILE
IN_INSTRUCTION = SCREENS / "click-menu-2-glyph-in-instruction.png"  # dev seed 4004: zoom_out asked, menu open
SUBMENU = SCREENS / "click-menu-2-glyph-submenu.png"  # dev seed 4010: stop asked, the Playback submenu open


def shipped() -> GlyphBank:
    return GlyphBank.load(SHIPPED)


def found(image: Path) -> list[tuple[str, tuple[int, int, int, int]]]:
    return [(f.subtype, f.box) for f in shipped().find(Image.open(image).convert("RGB"))]


def test_the_shipped_bank_names_every_glyph_of_the_menu_and_of_the_instruction() -> None:
    bank = shipped()
    assert set(bank.subtypes) == {"save", "print", "zoom_in", "zoom_out", "previous", "stop", "play", "next"}
    assert bank.screens == ("web",)
    # The instruction's magnifier with a minus, and the menu's four glyphs: the two magnifiers, which differ
    # by the plus sign's few pixels, each named right.
    assert found(IN_INSTRUCTION) == [("zoom_out", (6, 27, 16, 36)), ("save", (12, 61, 21, 70)),
                                     ("print", (12, 95, 21, 104)), ("zoom_in", (11, 112, 21, 121)),
                                     ("zoom_out", (11, 134, 21, 143))]
    # The submenu's player controls, small and plain (Stop is a filled square: a pattern only with the
    # background round it).
    names = [s for s, _ in found(SUBMENU)]
    assert names[0] == "stop" and {"previous", "stop", "play", "next"} <= set(names[1:])


def test_a_glyph_is_found_whatever_its_colours() -> None:
    """A highlighted row draws its glyph white on blue; a disabled one fades it: the same pattern."""
    screen = Image.open(IN_INSTRUCTION).convert("RGB")
    grey = np.asarray(screen.convert("L")).astype(np.int16)
    swapped = Image.fromarray((255 - grey).astype(np.uint8)).convert("RGB")  # colours swapped
    faded = Image.fromarray((128 + grey // 2).astype(np.uint8)).convert("RGB")  # contrast halved (Print's is already)
    for image in (swapped, faded):
        assert [f.subtype for f in shipped().find(image)] == ["zoom_out", "save", "print", "zoom_in", "zoom_out"]
    # Letters and plain page are no glyph: a screen of text alone holds none.
    text_only = Image.new("RGB", (160, 60), "white")
    ImageDraw.Draw(text_only).text((3, 3), "Save Zoom In Print... Out\nPlayback o O 0 @ #", fill="black")
    assert shipped().find(text_only) == []


def test_a_glyph_under_a_line_of_text_is_an_island_of_its_own() -> None:
    """A glyph 2 px under a line of text (click-menu-2's instruction wraps so): a 3 x 3 gradient joins
    them into one piece too wide to be a glyph, the one-sided differences keep them apart."""
    grey = np.full((40, 120), 255, np.uint8)
    grey[10:13, 5:110] = 0      # the line above, its lowest row 12
    grey[15:23, 8:16] = 60      # the glyph from row 15: two rows of page between
    grey[17:21, 10:14] = 255
    assert (7, 14, 16, 23) in islands(grey)
    assert all(b[2] - b[0] <= 33 for b in islands(grey))  # the line is no island


def _ring(dot: int) -> np.ndarray:
    g = np.full((9, 9), 255, np.uint8)
    g[1:8, 1:8] = 0
    g[2:7, 2:7] = 255
    g[4, 4] = dot
    return g


def test_a_glyph_between_two_patterns_is_named_neither() -> None:
    """Where two subtypes' patterns both nearly fit, neither is said: a ring with a faint dot in it
    between a ring (Stop) and a ring with a dot (Play)."""
    both = GlyphBank([])
    assert both.add("stop", _ring(255)) and both.add("play", _ring(0))
    screen = np.full((30, 30), 255, np.uint8)
    screen[10:19, 10:19] = _ring(150)
    image = Image.fromarray(screen).convert("RGB")
    assert both.find(image) == []
    alone = GlyphBank([both.glyphs[0]])
    assert [f.subtype for f in alone.find(image)] == ["stop"]
    # Each exact glyph is named, the other pattern being no rival then.
    screen[10:19, 10:19] = _ring(0)
    assert [f.subtype for f in both.find(Image.fromarray(screen).convert("RGB"))] == ["play"]


def test_a_labelled_cell_is_cut_to_its_glyph_less_its_neighbours_ink() -> None:
    cell = np.full((17, 16), 255, np.uint8)
    cell[0, :] = 0            # the line of text above reaches into the cell
    cell[7:12, 6:11] = 60     # a 5 x 5 filled square
    cut = cut_glyph(cell)
    assert cut is not None and cut.shape == (7, 7)  # the square and a pixel of background round it
    assert (cut[1:-1, 1:-1] == 60).all() and (cut[0] == 255).all()
    assert cut_glyph(np.full((16, 16), 255, np.uint8)) is None  # no ink
    dot = np.full((16, 16), 255, np.uint8)
    dot[7:9, 7:9] = 0
    assert cut_glyph(dot) is None  # too small to tell from a letter's stroke


def test_a_bank_round_trips_and_a_broken_one_is_one_clear_error(tmp_path: Path) -> None:
    bank = shipped()
    path = tmp_path / GLYPH_FILE
    bank.save(path)
    again = GlyphBank.load(path)
    assert [(g.subtype, g.pattern.tolist()) for g in again.glyphs] == [(g.subtype, g.pattern.tolist())
                                                                      for g in bank.glyphs]
    data = json.loads(path.read_text())
    for broken, message in [
        ("{not json", "unreadable"),
        (json.dumps({"format": "other", "glyphs": []}), "not a glyph bank"),
        (json.dumps({**data, "glyphs": [{"subtype": "save", "pattern": [[1, 2], [3, 4]]}]}), "glyph 0 is broken"),
        (json.dumps({**data, "glyphs": [{"subtype": "save", "pattern": [[300] * 6] * 6}]}), "glyph 0 is broken"),
        (json.dumps({**data, "glyphs": [{"pattern": [[1] * 6] * 6}]}), "glyph 0 is broken"),
        (json.dumps({**data, "glyphs": [{"subtype": "rocket", "pattern": [[1, 2, 3, 4, 5, 6]] * 6}]}),
         "rocket"),
        (json.dumps({**data, "screens": ["phone"]}), "screens"),
    ]:
        path.write_text(broken)
        with pytest.raises(GlyphError, match=GLYPH_FILE) as caught:
            GlyphBank.load(path)
        assert message in str(caught.value)
    with pytest.raises(GlyphError, match="missing"):
        GlyphBank.load(tmp_path / "none.json")


def test_the_steps_add_an_icon_take_it_out_of_its_text_and_name_the_read_icon() -> None:
    glyph = Found("zoom_out", (6, 27, 16, 36), 1.0)
    words = Element(type="text", bbox=(5, 25, 43, 36), text="•u, icon.")  # boxed from the glyph on
    row = Element(type="tabled_text", bbox=(26, 127, 52, 138), text="Zoom")  # holds no glyph: unchanged
    after = add_glyph_icons([words, row], [glyph])
    assert after[0].bbox == (17, 25, 43, 36) and after[1] is row
    assert after[2].type.value == "icon" and after[2].subtype == "zoom_out" and after[2].bbox == (6, 27, 16, 36)
    # An icon the detector boxed over the glyph is the glyph's: nothing added, and after reading it is named.
    boxed = Element(type="icon", bbox=(5, 26, 17, 37))
    assert add_glyph_icons([boxed], [glyph]) == [boxed]
    assert name_glyph_icons([boxed], [glyph])[0].subtype == "zoom_out"
    # A toolbar boxed whole as one icon is not the glyph's icon.
    bar = Element(type="icon", bbox=(0, 20, 80, 60))
    assert len(add_glyph_icons([bar], [glyph])) == 2 and name_glyph_icons([bar], [glyph]) == [bar]
    # A glyph in a text's middle leaves the text whole.
    middle = Element(type="text", bbox=(0, 25, 60, 36), text="with the icon here")
    assert add_glyph_icons([middle], [glyph])[0] is middle


def test_the_observer_names_the_instruction_glyph_and_the_menus(miniwob_observer) -> None:
    els = miniwob_observer.observe(Image.open(IN_INSTRUCTION)).elements
    icons = sorted((e.bbox[1], e.subtype) for e in els if e.type.value == "icon")
    assert [s for _, s in icons] == ["zoom_out", "save", "print", "zoom_in", "zoom_out"]
    # The instruction's last line is read without the glyph.
    assert any(e.type.value == "text" and e.text == "icon." for e in els)
    sub = miniwob_observer.observe(Image.open(SUBMENU)).elements
    rows = {e.text for e in sub if e.type.value == "tabled_text"}
    assert {"Prev", "Stop", "Play", "Next"} <= rows  # the submenu's rows read from after their glyphs


def test_cli_cuts_a_bank_from_labelled_screens_and_scores_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from caap.cli import app
    from caap.data.format import Annotation, Dataset

    ds = Dataset.create(tmp_path / "data", "glyphs")
    labels = [("zoom_out", (3, 22, 19, 39)), ("save", (8, 56, 24, 73)), ("print", (8, 90, 24, 107)),
              ("zoom_in", (8, 107, 24, 124)), ("zoom_out", (8, 130, 24, 146))]
    image = Image.open(IN_INSTRUCTION).convert("RGB")
    ds.add("click-menu-2", "seed-4004", image, Annotation(
        image="x.png", width=image.width, height=image.height,
        elements=[Element(type="icon", bbox=b, subtype=s) for s, b in labels]))
    checkpoint = tmp_path / "reader"
    checkpoint.mkdir()
    result = CliRunner().invoke(app, ["train", "glyphs", "--data", str(ds.root), "--checkpoint", str(checkpoint),
                                      "--val", str(ds.root), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["labelled"] == {"zoom_out": 2, "save": 1, "print": 1, "zoom_in": 1}
    assert report["patterns"] == {"print": 1, "save": 1, "zoom_in": 1, "zoom_out": 1}  # the two minus glyphs are one
    assert report["validation"]["recall"] == report["validation"]["precision"] == 1.0
    assert GlyphBank.load(checkpoint / GLYPH_FILE).subtypes == ["print", "save", "zoom_in", "zoom_out"]
    # No labelled glyph: one error line, and the bank already written stays.
    empty = Dataset.create(tmp_path / "empty", "none")
    written = (checkpoint / GLYPH_FILE).read_text()
    result = CliRunner().invoke(app, ["train", "glyphs", "--data", str(empty.root), "--checkpoint", str(checkpoint)])
    assert result.exit_code != 0 and "no labelled glyph icon" in result.output
    assert (checkpoint / GLYPH_FILE).read_text() == written


def test_a_reader_with_a_broken_bank_is_refused(tmp_path: Path) -> None:
    from caap.observe.read.configuration import ReaderError
    from caap.observe.read.inference import Reader

    shipped_reader = ROOT / "models" / "reader"
    if not (shipped_reader / "model.safetensors").is_file():
        pytest.skip(f"{shipped_reader} is not in this checkout")
    checkpoint = tmp_path / "reader"
    shutil.copytree(shipped_reader, checkpoint, ignore=shutil.ignore_patterns("*.png", "metrics-*", "*.md"))
    (checkpoint / GLYPH_FILE).write_text('{"format": "caap-glyphs/1", "glyphs": [{"subtype": 1}]}')
    with pytest.raises(ReaderError, match=GLYPH_FILE):
        Reader(checkpoint, lm=False, chooser=False)
