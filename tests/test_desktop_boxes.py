"""Boxes the observer fits or adds from the pixels of toolkit-drawn screens: icons on their picture,
scrollbars by their arrow buttons or the slider in their trough, thin bars a box held
together, a list's rows from the rows the detector found, framed title
buttons, markers boxed with their labels, texts joined by a middle dot, slanted lines, switches,
centred labels taken for tabs, text areas by the panel their lines stand on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from caap.elements import Element
from caap.geometry import iou
from caap.observe.steps.framed_icons import framed_icons
from caap.observe.steps.label_stacks import centred_label_stacks
from caap.observe.steps.scrollbars import arrow_scrollbars
from caap.observe.steps.segments import drawn_lines
from caap.observe.steps.separators import split_at_separators
from caap.observe.steps.shape_fit import fit_icons
from caap.observe.steps.snap import add_missed_rows
from caap.observe.steps.switches import toggle_switches
from caap.observe.steps.text_areas import framed_text_areas
from caap.taxonomy import ElementType

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
needs_font = pytest.mark.skipif(not FONT.is_file(), reason="needs fonts-dejavu-core (tools/setup.sh --system)")


def icon(box: tuple[int, int, int, int], kind: str = "icon") -> Element:
    return Element(type=kind, bbox=box, score=0.6)


def test_a_flat_icon_is_boxed_on_its_glyph_and_a_framed_one_on_its_frame():
    image = Image.new("RGB", (200, 80), (246, 245, 244))
    draw = ImageDraw.Draw(image)
    draw.rectangle([20, 20, 29, 29], outline=(40, 40, 40), width=2)      # a glyph on a flat button
    draw.rectangle([60, 10, 91, 41], fill=(252, 252, 252), outline=(180, 180, 180))  # a framed button
    draw.rectangle([70, 20, 81, 31], fill=(200, 40, 40))
    draw.rectangle([120, 24, 129, 25], fill=(40, 40, 40))                # a dash: one stroke
    draw.rectangle([150, 10, 199, 69], fill=(30, 90, 200))               # a picture larger than an icon
    out = fit_icons(image, [icon((16, 16, 34, 34)), icon((60, 10, 92, 42)), icon((116, 18, 134, 32)),
                            icon((148, 8, 200, 71)), icon((16, 50, 34, 68), "button")])
    assert [e.bbox for e in out] == [(19, 19, 31, 31), (60, 10, 92, 42), (116, 18, 134, 32),
                                     (148, 8, 200, 71), (16, 50, 34, 68)]


def _scrollbar(draw: ImageDraw.ImageDraw, x: int, top: int, bottom: int, width: int = 15) -> None:
    """A Chromium-style vertical scrollbar: a light trough, arrow buttons at both ends, a thumb."""
    draw.rectangle([x, top, x + width - 1, bottom - 1], fill=(241, 241, 241))
    mid = x + width // 2
    draw.polygon([(mid - 3, top + 9), (mid + 3, top + 9), (mid, top + 6)], fill=(80, 80, 80))
    draw.polygon([(mid - 3, bottom - 10), (mid + 3, bottom - 10), (mid, bottom - 7)], fill=(80, 80, 80))
    draw.rectangle([x + 2, top + 40, x + width - 3, top + 90], fill=(193, 193, 193))


def test_a_scrollbar_is_found_by_its_two_arrow_buttons():
    image = Image.new("RGB", (300, 220), "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, 0, 144, 219], fill=(210, 225, 239))     # a panel right up against the trough
    _scrollbar(draw, 145, 10, 210)
    # A spin box's stacked arrows: a pair too close together to hold a trough between them.
    draw.polygon([(200, 26), (206, 26), (203, 23)], fill=(80, 80, 80))
    draw.polygon([(200, 32), (206, 32), (203, 35)], fill=(80, 80, 80))
    out = arrow_scrollbars(image, [])
    assert [(e.type.value, e.bbox) for e in out] == [("scrollbar", (145, 10, 160, 210))]
    assert arrow_scrollbars(image, out) == out                 # held by a box: not added twice


def test_a_scrollbar_on_a_coloured_page_is_found_by_its_dark_arrows():
    image = Image.new("RGB", (160, 210), (217, 229, 240))     # book-flight's pale blue page
    draw = ImageDraw.Draw(image)
    draw.rectangle([145, 50, 159, 209], fill=(252, 252, 252))  # the trough differs from the page too
    draw.polygon([(148, 61), (156, 61), (152, 57)], fill=(139, 139, 139))
    draw.polygon([(148, 198), (156, 198), (152, 202)], fill=(139, 139, 139))
    out = arrow_scrollbars(image, [])
    assert [e.type.value for e in out] == ["scrollbar"] and iou(out[0].bbox, (145, 50, 160, 210)) > 0.9


def test_a_horizontal_scrollbar_is_found_by_its_arrows():
    image = Image.new("RGB", (300, 100), "white")
    bar = Image.new("RGB", (100, 300), "white")
    _scrollbar(ImageDraw.Draw(bar), 40, 20, 280)
    image.paste(bar.transpose(Image.Transpose.ROTATE_90), (0, 0))  # the same bar, lying down
    out = arrow_scrollbars(image, [])
    assert [(e.type.value, e.bbox) for e in out] == [("scrollbar", (20, 45, 280, 60))]


@needs_font
def test_a_lists_missed_rows_are_found_from_the_rows_found():
    font = ImageFont.truetype(str(FONT), 12)
    image = Image.new("RGB", (300, 330), "white")
    draw = ImageDraw.Draw(image)
    rows = []
    for i in range(17):                                        # Qt's list: one entry every 17 px
        top = 10 + 17 * i
        draw.text((26, top), f"Application {i + 1}", font=font, fill=(0, 0, 0))
        x1, _, x2, _ = draw.textbbox((26, top), f"Application {i + 1}", font=font)
        rows.append((x1, top + 1, x2 + 1, top + 14))
    draw.text((60, 310), "Always use it", font=font, fill=(0, 0, 0))  # under the list, off its edge
    found = [Element(type="tabled_text", bbox=rows[i], score=0.5) for i in (5, 6, 9, 10)]
    out = add_missed_rows(image, found)
    assert out[:4] == found
    assert sorted(e.bbox[1] for e in out) == [r[1] for r in rows]
    assert all(e.type.value == "tabled_text" and e.score == 0.5 for e in out)
    assert all(abs(e.bbox[0] - 26) <= 1 for e in out)
    # Two found rows are no list to follow, and a low-confidence row sets nothing off.
    assert add_missed_rows(image, found[:2]) == found[:2]
    unsure = [e.model_copy(update={"score": 0.1}) for e in found]
    assert add_missed_rows(image, unsure) == unsure


@needs_font
def test_lines_of_text_no_box_holds_are_added_from_pp_ocrs_detector():
    pytest.importorskip("rapidocr", reason="PP-OCR needs rapidocr (pip install 'caap[vision]')")
    pytest.importorskip("onnxruntime", reason="PP-OCR needs onnxruntime (pip install 'caap[vision]')")
    from caap.observe.ocr.ppocr import PPOCR
    from caap.observe.steps.missed_text import missed_lines

    font = ImageFont.truetype(str(FONT), 12)
    image = Image.new("RGB", (400, 240), "white")
    draw = ImageDraw.Draw(image)
    draw.text((40, 20), "Navigate the tree", font=font, fill=(0, 0, 0))       # boxed by the detector
    draw.text((60, 60), "Beaulah", font=font, fill=(0, 0, 0))                 # missed: no box
    draw.rectangle([40, 58, 52, 72], outline=(200, 150, 60))                  # a folder icon beside it
    draw.text((60, 90), "Thaddeus", font=font, fill=(0, 0, 0))                # half of it under a box
    draw.line([10, 130, 390, 130], fill=(120, 120, 120))                      # a rule: no text
    for x in range(200, 380, 6):                                              # a picture: too big a region
        draw.line([x, 150, x + 40, 235], fill=(x % 255, 90, 160), width=2)
    found = [Element(type="text", bbox=(40, 20, 148, 34), score=0.9),
             Element(type="icon", bbox=(40, 58, 53, 73), score=0.4),
             Element(type="text", bbox=(60, 90, 95, 105), score=0.8)]
    out = missed_lines(image, found, PPOCR())
    assert out[:3] == found
    added = out[3:]
    alone = Image.new("L", image.size, 255)
    ImageDraw.Draw(alone).text((60, 60), "Beaulah", font=font, fill=0)
    x1, y1, x2, y2 = Image.eval(alone, lambda v: 255 - v).getbbox()       # the word's ink
    assert [(e.type.value, e.score) for e in added] == [("text", 0.4)]
    assert added[0].bbox == (x1, y1, x2 + 1, y2 + 1)                       # on its ink, 1 px past it
    assert missed_lines(image, out, PPOCR(memo=64)) == out                  # each line is held now
    assert missed_lines(Image.new("RGB", (5, 300), "white"), found, PPOCR()) == found  # no room for text


def test_the_box_rules_take_tiny_and_blank_screens():
    pytest.importorskip("cv2", reason="needs the vision extra (pip install 'caap[vision]')")
    for size in [(1, 1), (1, 40), (40, 1), (9, 9), (160, 210)]:
        image = Image.new("RGB", size, "white")
        held = [icon((0, 0, 1, 1))]
        assert arrow_scrollbars(image, held) == held
        assert add_missed_rows(image, held) == held
        assert fit_icons(image, held) == held
        assert framed_icons(image, held) == held
        assert drawn_lines(image, held) == held
        assert split_at_separators(image, held) == held
        assert toggle_switches(image, held) == held
        assert framed_text_areas(image, held) == held


def test_a_level_bar_drawn_in_segments_is_one_bar():
    from caap.observe.steps.figures import thin_bars

    image = Image.new("RGB", (400, 120), (250, 250, 250))
    draw = ImageDraw.Draw(image)
    for i in range(5):                                         # GTK's discrete level bar: 5 segments, 2 px apart
        x = 20 + 66 * i
        draw.rectangle([x, 30, x + 63, 35], fill=(53, 132, 228) if i < 3 else (222, 222, 222))
    for i in range(4):                                         # a dashed rule: pieces too far apart
        draw.rectangle([20 + 40 * i, 80, 39 + 40 * i, 83], fill=(120, 120, 120))
    out = thin_bars(image, [])
    assert [(e.type.value, e.bbox) for e in out] == [("progress_bar", (20, 30, 348, 36))]


def test_a_box_holding_two_bars_or_not_its_bar_gives_way_to_the_bars():
    from caap.observe.steps.figures import thin_bars

    image = Image.new("RGB", (400, 160), (246, 245, 244))
    draw = ImageDraw.Draw(image)
    draw.rectangle([20, 20, 349, 23], fill=(222, 222, 222))    # a progress bar's trough ...
    draw.rectangle([20, 20, 180, 23], fill=(53, 132, 228))     # ... and its fill
    draw.rectangle([20, 60, 349, 68], fill=(222, 222, 222))    # two level bars, 9 px thick,
    draw.rectangle([20, 75, 349, 83], fill=(255, 255, 255), outline=(205, 205, 205))  # (GTK 3's:
    draw.rectangle([23, 78, 200, 80], fill=(33, 100, 200))     # a 1 px frame, white, then the fill)
    draw.rectangle([20, 140, 80, 148], outline=(205, 205, 205))  # a short frame: no bar
    draw.rectangle([20, 120, 349, 123], fill=(222, 222, 222))  # a slider's trough under its knob
    draw.ellipse([150, 111, 171, 132], fill=(250, 250, 250), outline=(150, 150, 150))
    fill_only = Element(type="progress_bar", bbox=(60, 19, 200, 27), score=0.6)
    both = Element(type="slider", bbox=(18, 57, 352, 88), score=0.4)
    slider = Element(type="slider", bbox=(18, 108, 352, 135), score=0.8)
    out = thin_bars(image, [fill_only, both, slider])
    assert sorted((e.type.value, e.bbox) for e in out) == [
        ("progress_bar", (20, 20, 350, 24)), ("progress_bar", (20, 60, 350, 69)), ("progress_bar", (20, 75, 350, 84)),
        ("slider", (18, 108, 352, 135))]                        # the slider holds one bar and keeps it
    assert thin_bars(image, out) == out


def test_a_scrollbar_without_arrows_is_found_by_the_slider_in_its_trough():
    from caap.observe.steps.scrollbars import trough_scrollbars

    image = Image.new("RGB", (400, 320), (246, 245, 244))
    draw = ImageDraw.Draw(image)
    draw.rectangle([20, 20, 370, 290], fill=(255, 255, 255), outline=(205, 205, 205))  # a text view ...
    draw.rectangle([355, 21, 369, 289], fill=(206, 206, 206))                          # ... its trough
    draw.rounded_rectangle([359, 30, 366, 120], radius=3, fill=(126, 126, 126))       # ... and slider
    draw.rectangle([40, 200, 300, 214], fill=(222, 222, 222))                          # a shaded row ...
    draw.text((50, 202), "First name    Melodee", fill=(30, 30, 30))                   # ... of a table
    piece = Element(type="scrollbar", bbox=(356, 150, 369, 280), score=0.3)            # the detector's piece
    out = trough_scrollbars(image, [piece])
    assert [e.type.value for e in out] == ["scrollbar"] and iou(out[0].bbox, (355, 21, 370, 290)) > 0.9
    assert trough_scrollbars(image, out) == out


def _framed_glyph(draw: ImageDraw.ImageDraw, x: int, y: int) -> None:
    """A Fusion dock title button: an 11 px frame with rounded corners round a small glyph."""
    draw.line([(x + 1, y), (x + 9, y)], fill=(120, 120, 120))
    draw.line([(x + 1, y + 10), (x + 9, y + 10)], fill=(120, 120, 120))
    draw.line([(x, y + 1), (x, y + 9)], fill=(120, 120, 120))
    draw.line([(x + 10, y + 1), (x + 10, y + 9)], fill=(120, 120, 120))
    draw.line([(x + 3, y + 3), (x + 7, y + 7)], fill=(40, 40, 40), width=2)
    draw.line([(x + 3, y + 7), (x + 7, y + 3)], fill=(40, 40, 40), width=2)


def test_framed_title_buttons_are_icons_and_the_title_box_gives_way():
    pytest.importorskip("cv2", reason="needs the vision extra (pip install 'caap[vision]')")
    image = Image.new("RGB", (300, 80), (239, 239, 239))
    draw = ImageDraw.Draw(image)
    draw.rectangle([10, 14, 60, 24], fill=(30, 30, 30))        # the dock's title
    _framed_glyph(draw, 250, 15)
    _framed_glyph(draw, 264, 15)
    draw.rectangle([100, 50, 110, 60], outline=(120, 120, 120))  # an empty frame: an unticked checkbox
    draw.rectangle([150, 50, 160, 60], fill=(30, 30, 30))       # a filled square: not a framed glyph
    title = Element(type="tabled_text", bbox=(8, 12, 276, 28), score=0.3)  # boxed over its buttons
    out = framed_icons(image, [title])
    assert [(e.type.value, e.bbox) for e in out] == [("tabled_text", (8, 12, 249, 28)),
                                                     ("icon", (263, 14, 276, 27)), ("icon", (249, 14, 262, 27))]
    assert framed_icons(image, out) == out                     # held now


def test_a_bold_letter_at_a_titles_end_is_no_framed_glyph():
    """A bold ``n`` 10 px square: its arch, its stems and its two feet ink 0.7 of each side, as a
    frame's sides do; its foot is two runs, a frame's side one. The title keeps its last letter."""
    pytest.importorskip("cv2", reason="needs the vision extra (pip install 'caap[vision]')")
    image = Image.new("RGB", (120, 30), (239, 239, 239))
    draw = ImageDraw.Draw(image)
    draw.rectangle([10, 10, 60, 19], fill=(30, 30, 30))          # the title's other letters
    draw.rectangle([64, 10, 73, 12], fill=(0, 0, 0))             # the arch
    draw.rectangle([64, 10, 67, 19], fill=(0, 0, 0))             # the left stem, its foot 4 px
    draw.rectangle([71, 10, 73, 19], fill=(0, 0, 0))             # the right stem, its foot 3 px
    draw.point([(68, 19), (70, 19)], fill=(0, 0, 0))             # serifs reaching in: 0.9 of the foot inked
    title = Element(type="text", bbox=(8, 8, 76, 22), score=0.9)
    assert framed_icons(image, [title]) == [title]


def test_a_marker_boxed_with_its_label_is_cut_out_of_the_text_box():
    pytest.importorskip("cv2", reason="needs the vision extra (pip install 'caap[vision]')")
    from caap.observe.steps.figures import small_figures

    image = Image.new("RGB", (200, 120), "white")
    draw = ImageDraw.Draw(image)
    draw.line([(79, 0), (79, 119)], fill=(128, 128, 128), width=3)  # the y axis through the marker
    draw.ellipse([75, 30, 83, 38], fill=(0, 0, 255))           # a blue grid point ...
    draw.rectangle([68, 31, 69, 39], fill=(0, 0, 0))           # ... and its black tick label "1"
    label = Element(type="text", bbox=(66, 28, 85, 41), score=0.5)  # the detector boxed both as one
    # A bold letter pair at the end of a word: black like the word, not a marker.
    draw.rectangle([120, 80, 140, 90], fill=(0, 0, 0))
    draw.rectangle([150, 80, 157, 88], fill=(0, 0, 0))
    word = Element(type="text", bbox=(118, 78, 159, 92), score=0.9)
    out = small_figures(image, [label, word])
    # The label keeps its glyph, fitted 1 px past it on the right and below, the axis left out.
    assert [(e.type.value, e.bbox) for e in out] == [("text", (68, 31, 71, 41)), ("text", (118, 78, 159, 92)),
                                                     ("shape", (75, 30, 84, 39))]


@needs_font
def test_texts_joined_by_a_middle_dot_are_cut_apart():
    font = ImageFont.truetype(str(FONT), 13)
    image = Image.new("RGB", (320, 60), "white")
    draw = ImageDraw.Draw(image)
    draw.text((10, 10), "Emelia @deneen · 17h ago", font=font, fill=(60, 60, 60))
    draw.text((10, 35), "Hi, it is 1.5 o'clock: i.e. late", font=font, fill=(60, 60, 60))  # no middle dot
    x1, y1, x2, y2 = draw.textbbox((10, 10), "Emelia @deneen · 17h ago", font=font)
    joined = Element(type="text", bbox=(x1 - 1, y1 - 1, x2 + 1, y2 + 1), score=0.9)
    plain = Element(type="text", bbox=(8, 34, 300, 52), score=0.9)
    out = split_at_separators(image, [joined, plain])
    for text, parts in (("a · · b", 2), ("· b", 1), ("x ·", 1)):   # dots side by side, at an end
        row = Image.new("RGB", (200, 30), "white")
        box = ImageDraw.Draw(row).textbbox((5, 5), text, font=font)
        ImageDraw.Draw(row).text((5, 5), text, font=font, fill=(0, 0, 0))
        got = split_at_separators(row, [Element(type="text", bbox=(box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1))])
        assert len(got) == parts and all(e.bbox[2] > e.bbox[0] for e in got)
    name_end = draw.textbbox((10, 10), "Emelia @deneen", font=font)[2]
    date_start = draw.textbbox((10, 10), "Emelia @deneen · ", font=font)[2]
    assert len(out) == 3 and out[2] == plain
    assert abs(out[0].bbox[2] - name_end) <= 2 and abs(out[1].bbox[0] - date_start) <= 2
    assert out[0].bbox[1::2] == out[1].bbox[1::2] == joined.bbox[1::2]


def test_slanted_lines_between_points_are_shapes_and_outlines_are_not():
    pytest.importorskip("cv2", reason="needs the vision extra (pip install 'caap[vision]')")
    image = Image.new("RGB", (320, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.line([(20, 30), (150, 50)], fill=(0, 0, 0), width=2)   # an angle's two arms from one vertex
    draw.line([(20, 30), (90, 110)], fill=(0, 0, 0), width=2)
    draw.polygon([(200, 40), (300, 60), (240, 150)], outline=(0, 0, 0))  # a triangle's sides
    draw.rectangle([20, 160, 300, 166], fill=(50, 120, 220))    # a level bar
    out = drawn_lines(image, [])
    arms = [(19, 29, 92, 112), (19, 29, 152, 52)]             # each arm's ends, a pixel round them
    assert len(out) == 2 and all(max(iou(e.bbox, arm) for e in out) > 0.9 for arm in arms)
    assert all(e.type.value == "shape" for e in out)
    assert drawn_lines(image, out) == out


def test_an_off_switch_is_found_by_its_faint_pill_and_a_button_is_not():
    pytest.importorskip("cv2", reason="needs the vision extra (pip install 'caap[vision]')")
    image = Image.new("RGB", (300, 120), (53, 53, 53))         # a dark theme's window
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle([20, 20, 69, 45], radius=13, fill=(40, 40, 40), outline=(27, 27, 27))
    draw.ellipse([22, 22, 43, 43], fill=(58, 58, 58))          # the knob, at the "off" end
    draw.rounded_rectangle([120, 20, 169, 45], radius=4, fill=(70, 70, 70))  # a button as wide
    draw.rounded_rectangle([20, 70, 69, 95], radius=13, outline=(150, 150, 150))  # an outlined pill
    out = toggle_switches(image, [])
    assert [(e.type.value, e.bbox) for e in out] == [("checkbox", (20, 20, 70, 46)), ("checkbox", (20, 70, 70, 96))]
    assert toggle_switches(image, out) == out


@needs_font
def test_centred_labels_taken_for_tabs_become_texts_and_a_column_of_tabs_stays():
    image = Image.new("RGB", (400, 260), (53, 53, 53))
    draw = ImageDraw.Draw(image)
    found = []
    for i, (words, size) in enumerate([("Title 2", 20), ("Title 3", 17), ("Heading", 14), ("Body", 13)]):
        font = ImageFont.truetype(str(FONT), size)
        x1, y1, x2, y2 = draw.textbbox((0, 0), words, font=font)
        left, top = 100 - (x2 - x1) // 2 - x1, 20 + 34 * i
        draw.text((left, top), words, font=font, fill=(238, 238, 236))
        found.append(Element(type="tab", bbox=(left + x1 - 3, top + y1 - 8, left + x2 + 3, top + y2 + 8), score=0.8))
    tabs = [Element(type="tab", bbox=(250, 20 + 32 * i, 350, 50 + 32 * i), score=0.8) for i in range(3)]
    for tab in tabs:
        draw.text((270, tab.bbox[1] + 8), "page", font=ImageFont.truetype(str(FONT), 13), fill=(238, 238, 236))
    out = centred_label_stacks(image, found + tabs)
    assert [e.type.value for e in out] == ["text"] * 4 + ["tab"] * 3
    assert all(e.bbox[3] - e.bbox[1] < f.bbox[3] - f.bbox[1] - 10 for e, f in zip(out, found, strict=False))
    assert out[4:] == tabs


@needs_font
def test_a_text_area_is_found_by_the_panel_its_lines_stand_on():
    font = ImageFont.truetype(str(FONT), 12)
    image = Image.new("RGB", (640, 300), (239, 239, 239))     # Qt's window grey
    draw = ImageDraw.Draw(image)
    panels = [(10, 10, 300, 140), (330, 10, 620, 140), (10, 160, 300, 290)]
    for x1, y1, x2, y2 in panels:
        draw.rectangle([x1, y1, x2, y2], fill="white", outline=(160, 160, 160))
    def line(x: int, y: int, words: str) -> Element:
        draw.text((x, y), words, font=font, fill=(0, 0, 0))
        bx1, by1, bx2, by2 = draw.textbbox((x, y), words, font=font)
        return Element(type="text", bbox=(bx1 - 1, by1 - 1, bx2 + 1, by2 + 1), score=0.8)
    found = [line(15, 14, "This widget takes up about two thirds of the grid")]      # a text edit
    found += [line(335, 14 + 18 * i, name) for i, name in enumerate(["John Doe", "Jane Doe", "Tim", "Sal"])]  # a list
    found += [line(15, 164, "Name:"), Element(type="button", bbox=(15, 200, 90, 225), score=0.9)]  # a form
    out = framed_text_areas(image, found)
    assert [(e.type.value, e.bbox) for e in out[len(found):]] == [("text_area", (10, 10, 301, 141))]
    assert framed_text_areas(image, out) == out


def test_a_text_view_boxed_in_part_grows_to_its_panel():
    """A GTK 4 text view 760 px wide (a validation screen, dark theme) that the detector boxed from
    its middle on: the box grows to the panel of the view's colour, the caret at its first column
    comes inside, and a box on the window itself, a panel holding a button, or a web page stay."""
    from caap.observe.steps.focus import text_caret
    from caap.observe.steps.text_areas import grown_text_areas

    fixtures = Path(__file__).resolve().parent / "fixtures" / "desktop"
    image = Image.open(fixtures / "gtk4-text-view-boxed-in-part-dark.png").convert("RGB")
    labels = json.loads((fixtures / "gtk4-text-view-boxed-in-part-dark.json").read_text())
    found = [Element(**{k: v for k, v in e.items() if not k.startswith("gold_")}) for e in labels["elements"]]
    view = next(i for i, e in enumerate(found) if e.type is ElementType.TEXT_AREA)
    assert not text_caret(np.asarray(image), found[view].bbox)
    out = grown_text_areas(image, found)
    assert iou(out[view].bbox, (3, 49, 767, 510)) > 0.97  # the view's labelled extent
    assert text_caret(np.asarray(image), out[view].bbox)
    assert [e for i, e in enumerate(out) if i != view] == [e for i, e in enumerate(found) if i != view]
    assert grown_text_areas(image, out) == out

    window = Image.new("RGB", (400, 300), (246, 245, 244))
    draw = ImageDraw.Draw(window)
    draw.rectangle([20, 20, 309, 279], fill=(255, 255, 255), outline=(200, 200, 200))
    draw.rectangle([330, 0, 399, 299], fill=(60, 60, 60))  # a side bar the window's colour stops at
    halves = [Element(type="text_area", bbox=(22, 22, 200, 277), score=0.5),
              Element(type="text_area", bbox=(150, 22, 307, 277), score=0.7)]
    assert [(e.bbox, e.score) for e in grown_text_areas(window, halves)] == [((18, 18, 312, 282), 0.7)]
    beside = Image.new("RGB", (400, 300), (246, 245, 244))
    ImageDraw.Draw(beside).rectangle([100, 0, 399, 299], fill=(60, 60, 60))
    on_window = [Element(type="text_area", bbox=(0, 0, 15, 300), score=0.5)]  # on a window's strip
    assert grown_text_areas(beside, on_window) == on_window
    with_button = [*halves[:1], Element(type="button", bbox=(230, 200, 300, 230), score=0.9)]
    assert grown_text_areas(window, with_button) == with_button
