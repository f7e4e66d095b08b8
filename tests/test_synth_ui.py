"""Generated widget UIs (caap dataset synth --kind ui): sizes and scale factors from the seed, the
command line's errors, and (live) pages rendered by Chromium on Xvfb at factors 1 and 2 whose DOM
labels are in captured-image pixels, inside the image, deterministic, with the new types and
their attributes, and nothing hidden, cut or covered."""

from __future__ import annotations

import json
import random
import re

import pytest
from live_marks import live
from typer.testing import CliRunner

from caap.cli import app
from caap.data.synth.themes import make_theme, stylesheet
from caap.data.synth.ui import (
    SizeRange,
    SizeSpecError,
    UiJob,
    UiPage,
    build_page,
    page_setup,
    parse_blocks,
    parse_scales,
    parse_sizes,
    ui_job,
)

runner = CliRunner()


# --- no display needed --------------------------------------------------------------------------------
def test_sizes_and_scales_parse_and_every_seed_gets_one_of_them():
    assert parse_sizes("320x240, 640x480-1024x768") == (SizeRange((320, 240), (320, 240)),
                                                        SizeRange((640, 480), (1024, 768)))
    assert parse_scales("2,1,2") == (2.0, 1.0)
    for bad, words in (("320", "WIDTHxHEIGHT"), ("100x100", "outside"), ("800x600-640x480", "backwards"),
                       ("", "no size")):
        with pytest.raises(SizeSpecError, match=words):
            parse_sizes(bad)
    for bad in ("3", "x", ""):
        with pytest.raises(SizeSpecError):
            parse_scales(bad)
    with pytest.raises(SizeSpecError, match="whole number"):
        ui_job("322x240", "1.25")
    job = ui_job("320x240,640x480-1920x1080", "1,1.5")
    seen = set()
    for seed in range(300):
        (w, h), scale = job.setup(seed)
        assert (w, h, scale) == (*job.setup(seed)[0], job.setup(seed)[1])  # the seed decides
        assert scale in (1.0, 1.5) and (w * scale).is_integer() and (h * scale).is_integer()
        assert (w, h) == (320, 240) or (640 <= w <= 1920 and 480 <= h <= 1080)
        seen.add((w, h, scale))
    assert len(seen) > 50 and {s for *_, s in seen} == {1.0, 1.5}


def test_pages_are_deterministic_and_hold_many_kinds_of_widget():
    kinds: set[str] = set()
    for seed in range(40):
        size, scale = page_setup(seed, (SizeRange((320, 240), (1920, 1080)),), (1.0, 2.0))
        page = build_page(seed, size, scale)
        assert page.body == build_page(seed, size, scale).body
        assert page.body.count('<div id="ur"') == 1 and f"width:{size[0]}px;height:{size[1]}px" in page.body
        kinds |= set(page.blocks)
    assert len(kinds) >= 18


def test_themes_keep_text_legible():
    from caap.data.synth.page import _rgb, contrast

    for seed in range(200):
        t = make_theme(random.Random(seed))
        for bg in (t.bg, t.surface, t.surface2):
            assert contrast(_rgb(t.text), _rgb(bg)) >= 4.5
            assert contrast(_rgb(t.muted), _rgb(bg)) >= 3.0
        assert contrast(_rgb(t.on_accent), _rgb(t.accent)) >= 4.5
        assert contrast(_rgb(t.sel_fg), _rgb(t.sel_bg)) >= 4.5
        assert 10 <= t.size <= 20


def test_synth_ui_cli_errors(tmp_path):
    out = str(tmp_path / "d")
    for args, words in ((["--kind", "pixels"], "--kind must be"), (["--kind", "ui", "--size", "320x240"], "--size is for"),
                        (["--sizes", "320x240"], "are for --kind ui"), (["--kind", "ui", "--scales", "3"], "is not one of"),
                        (["--kind", "ui", "--sizes", "5000x10"], "outside")):
        result = runner.invoke(app, ["dataset", "synth", "--out", out, "--seeds", "1", *args])
        assert result.exit_code == 2 and words in result.output, (args, result.output)
    assert not (tmp_path / "d").exists()  # nothing written


NEW_BLOCKS = ("dots", "checkgrid", "calendar", "flatform", "keypad", "levels")


def test_blocks_option_picks_the_kinds_drawn():
    assert parse_blocks("dots, checkgrid:2,form:0.25") == (("dots", 1.0), ("checkgrid", 2.0), ("form", 0.25))
    for bad, words in (("dots,nope", "unknown block kind 'nope'; known kinds: buttons, calendar"),
                       ("dots:x", "not a number"), ("dots:0", "positive"), ("dots:-1", "positive"), (" , ", "no block")):
        with pytest.raises(SizeSpecError, match=words):
            parse_blocks(bad)
    job = ui_job("640x480", "1", blocks=",".join(NEW_BLOCKS))
    assert job.blocks == tuple((k, 1.0) for k in NEW_BLOCKS)
    assert job.info()["blocks"] == "dots:1,checkgrid:1,calendar:1,flatform:1,keypad:1,levels:1"
    assert ui_job("640x480", "1").blocks is None and ui_job("640x480", "1").info()["blocks"] == "all"
    seen: set[str] = set()
    for seed in range(20):
        page = build_page(seed, (800, 600), 1.0, blocks=job.blocks)
        assert set(page.blocks) <= set(NEW_BLOCKS) and page.blocks
        assert page.body == build_page(seed, (800, 600), 1.0, blocks=job.blocks).body  # the seed decides
        seen |= set(page.blocks)
    assert seen == set(NEW_BLOCKS)
    only = build_page(5, (800, 600), 1.0, blocks=(("flatform", 1.0),))
    assert (set(only.blocks) == {"flatform"} and "inset" in only.body) or "solid" in only.body


def test_synth_ui_cli_blocks_errors(tmp_path):
    out = str(tmp_path / "d")
    for args, words in ((["--kind", "ui", "--blocks", "dots,nope"], "known kinds: buttons"),
                        (["--blocks", "dots"], "--blocks is for --kind ui")):
        result = runner.invoke(app, ["dataset", "synth", "--out", out, "--seeds", "1", *args])
        assert result.exit_code == 2 and words in " ".join(result.output.split()), (args, result.output)
    assert not (tmp_path / "d").exists()
    # A dataset of another generation (or block set) is not resumed with this one.
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "dataset.json").write_text(json.dumps({"schema_version": 1, "generator": {"kind": "ui"}}))
    result = runner.invoke(app, ["dataset", "synth", "--out", out, "--seeds", "1", "--kind", "ui", "--blocks", "dots"])
    assert result.exit_code == 2 and "another UI generator" in " ".join(result.output.split()), result.output
    # An unreadable dataset.json: one error naming it, and the file is left as it was.
    (tmp_path / "d" / "dataset.json").write_text("{not json")
    result = runner.invoke(app, ["dataset", "synth", "--out", out, "--seeds", "1", "--kind", "ui"])
    assert result.exit_code == 2 and "dataset.json: unreadable" in " ".join(result.output.split()), result.output
    assert (tmp_path / "d" / "dataset.json").read_text() == "{not json"


# --- live: real Chromium on Xvfb --------------------------------------------------------------------------
# Widgets whose labels are known, at known places (CSS px).
KNOWN = """
<div class="u-main u-box" style="display:block;position:relative">
 <button id="known" style="position:absolute;left:20px;top:30px;width:80px;height:24px">Known</button>
 <div role="tablist" class="u-tabs u-line" style="position:absolute;left:20px;top:70px">
  <span role="tab" id="tab1" class="u-tab" aria-selected="true">Alpha</span>
  <span role="tab" class="u-tab" aria-selected="false">Beta</span></div>
 <div role="tree" class="u-tree" style="position:absolute;left:20px;top:120px">
  <div role="treeitem" id="folder" class="u-ti" aria-expanded="true" aria-selected="true"><span class="u-tg u-open">
   </span><span>Folder</span></div>
  <div role="treeitem" class="u-ti" aria-expanded="false" style="margin-left:16px"><span class="u-tg"></span>
   <span>Closed</span></div>
  <div role="treeitem" class="u-ti" style="margin-left:16px"><span class="u-tg u-leaf"></span><span>Leaf</span></div>
 </div>
 <div style="position:absolute;left:20px;top:200px">
  <details open><summary>Open part</summary><p>Inside words</p></details>
  <details><summary>Shut part</summary><p>Secret words</p></details></div>
 <div style="position:absolute;left:200px;top:30px" class="u-col">
  <label class="u-row"><span class="u-sw" role="switch" aria-checked="true"></span>Wifi</label>
  <label class="u-row"><input type="checkbox" class="u-swc" checked>Sync</label>
  <label class="u-row"><input type="checkbox" data-mixed checked>Some</label>
  <label class="u-row"><input type="checkbox" disabled>Greyed</label>
  <button disabled>Off</button>
  <span class="u-row" style="gap:0"><button aria-pressed="true">Day</button><button aria-pressed="false">Week</button>
  </span>
  <input id="range" type="range" value="30" style="width:120px;margin:0">
  <span class="u-track" role="slider" aria-valuenow="40" style="width:100px"><span class="u-rail"></span><span
   class="u-thumb" style="left:40%"></span></span>
  <progress value="40" max="100" style="width:100px;height:8px"></progress>
  <span class="u-pb" role="progressbar" style="width:100px;height:6px"><span class="u-pbf" style="width:50%"></span>
  </span>
  <input type="number" value="42" style="width:5em">
  <input type="date" value="2024-03-05">
  <div role="menu" class="u-menu"><div role="menuitem" class="u-mi active"><span>Openit</span></div>
   <div role="menuitem" class="u-mi"><span>Closeit</span></div></div>
 </div>
 <button style="position:absolute;left:400px;top:30px;display:none">Gone</button>
 <button style="position:absolute;left:400px;top:60px;visibility:hidden">Ghost</button>
 <div style="position:absolute;left:400px;top:90px;width:50px;height:30px;overflow:hidden">
  <button style="white-space:nowrap">Cut off button</button></div>
 <button style="position:absolute;left:400px;top:140px">Under</button>
 <div class="u-pop" style="left:420px;top:130px"><div class="u-menu"><div role="menuitem" class="u-mi">
  <span>Over</span></div></div></div>
</div>"""


def _known_page(size: tuple[int, int], scale: float) -> UiPage:
    theme = make_theme(random.Random(3))
    body = f'<style>{stylesheet(theme, size)}</style><div id="ur" class="u-box">{KNOWN}</div>'
    return UiPage(0, size, scale, theme.name, body, None, [])


def _rect(renderer, selector: str) -> list[float]:
    return renderer.browser.evaluate(
        f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
        " return [r.left, r.top, r.right, r.bottom]; })()")


@live
@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_known_widgets_are_labelled_in_image_pixels(scale):
    pytest.importorskip("mss")
    from caap.data.synth.generate import Renderer
    from caap.data.synth.ui import render_page

    size = (640, 480)
    with Renderer(size, scale=scale) as renderer:
        shot = render_page(renderer, _known_page(size, scale))
        assert shot.image.size == (round(640 * scale), round(480 * scale))
        by_text = {e.text: e for e in shot.labels if e.text}
        for selector, text in (("#known", "Known"), ("#tab1", "Alpha"), ("#folder", "Folder")):
            box = by_text[text].bbox
            rect = _rect(renderer, selector)
            assert all(abs(b - r * scale) <= 1 for b, r in zip(box, rect, strict=True)), (text, box, rect)
        sliders = [e for e in shot.labels if e.type.value == "slider"]
        assert len(sliders) == 2
        native = [e for e in sliders if abs(e.bbox[2] - e.bbox[0] - 120 * scale) <= 1]
        assert len(native) == 1 and all(abs(b - r * scale) <= 1 for b, r in zip(
            native[0].bbox, _rect(renderer, "#range"), strict=True))
    types = {e.type.value for e in shot.labels}
    assert {"slider", "tab", "tree_item", "progress_bar", "checkbox", "button", "input_field",
            "tabled_text", "text"} <= types
    assert sum(e.type.value == "progress_bar" for e in shot.labels) == 2
    assert by_text["Alpha"].highlighted is True and by_text["Beta"].highlighted is False
    assert by_text["Folder"].type.value == "tree_item" and by_text["Folder"].expanded is True
    assert by_text["Folder"].highlighted is True
    assert by_text["Closed"].expanded is False and by_text["Leaf"].expanded is None  # a leaf has none
    assert by_text["Open part"].type.value == "tree_item" and by_text["Open part"].expanded is True
    assert by_text["Shut part"].expanded is False
    for toggle in ("Wifi", "Sync"):  # a role=switch and a switch-styled checkbox: checked checkboxes
        assert by_text[toggle].type.value == "checkbox" and by_text[toggle].checked is True
    # States beyond the paper's: a box neither ticked nor clear, greyed controls, range values.
    assert by_text["Some"].indeterminate is True and by_text["Some"].checked is None
    assert by_text["Sync"].indeterminate is False and by_text["Sync"].enabled is True
    assert by_text["Greyed"].enabled is False and by_text["Off"].enabled is False
    assert by_text["Known"].enabled is True and by_text["Alpha"].enabled is True
    # A toggle button is held down while on (aria-pressed); a push button never is.
    assert [by_text[t].checked for t in ("Day", "Week", "Known")] == [True, False, False]
    assert sorted(e.value for e in sliders) == [0.3, 0.4]
    bars = sorted((e for e in shot.labels if e.type.value == "progress_bar"), key=lambda e: e.bbox[1])
    assert [e.value for e in bars] == [0.4, None]  # the second says no value (no aria-valuenow)
    # The observer's level rule reads them back from the pixels.
    from caap.observe.primitives import rgb_pixels
    from caap.observe.steps.levels import level_of

    rgb = rgb_pixels(shot.image)
    for e in [*sliders, bars[0]]:
        assert abs((level_of(rgb, e) or -1) - e.value) <= 0.05, (e, level_of(rgb, e))
    assert by_text["42"].type.value == "input_field"  # a spinner: its value
    assert by_text["03/05/2024"].type.value == "input_field"  # a date field: as Chromium shows it
    assert by_text["Openit"].type.value == "tabled_text" and by_text["Openit"].highlighted is True
    assert by_text["Closeit"].highlighted is False
    # Nothing hidden, cut or covered: display:none, visibility:hidden, a closed <details>' content,
    # a button its box cuts, a button under a popup.
    for absent in ("Gone", "Ghost", "Secret", "words", "Cut", "Under"):
        assert not any(absent in t for t in by_text if t != "Inside words"), absent
    assert "Over" in by_text and "Inside words" in by_text
    w, h = shot.image.size
    assert all(0 <= e.bbox[0] < e.bbox[2] <= w and 0 <= e.bbox[1] < e.bbox[3] <= h for e in shot.labels)


@live
def test_generated_pages_are_inside_the_image_and_deterministic(tmp_path):
    pytest.importorskip("mss")
    from caap.data.format import Dataset
    from caap.data.synth.generate import generate_synth

    job = UiJob((SizeRange((320, 240), (320, 240)), SizeRange((640, 480), (640, 480))), (1.0, 2.0))
    seeds = range(6)
    assert {job.setup(s)[1] for s in seeds} == {1.0, 2.0} and len({job.setup(s) for s in seeds}) >= 3
    first = generate_synth(tmp_path / "a", seeds, job=job)
    assert first.screens == 6 and first.elements > 60
    second = generate_synth(tmp_path / "b", seeds, job=job, workers=2)
    assert second.screens == 6
    items = {ann.source.seed: (path, ann) for path, ann in Dataset(tmp_path / "a")}
    assert sorted(items) == list(seeds)
    for seed, (path, ann) in items.items():
        (w, h), scale = job.setup(seed)
        assert (ann.width, ann.height) == (round(w * scale), round(h * scale))
        assert ann.source.task == "synth-ui" and ann.source.scale == scale
        assert all(0 <= e.bbox[0] < e.bbox[2] <= ann.width and 0 <= e.bbox[1] < e.bbox[3] <= ann.height
                   for e in ann.elements)
        twin = tmp_path / "b" / path.relative_to(tmp_path / "a")
        assert twin.read_text() == path.read_text(), f"seed {seed} labelled differently on a second run"
    again = generate_synth(tmp_path / "a", seeds, job=job)  # resumes: nothing new
    assert again.skipped == 6 and again.screens == 0


@live
def test_new_blocks_are_drawn_and_labelled():
    """Plots with points, checkbox grids, calendars in other looks and flat Tk-like entries: each
    labelled with its taxonomy type, at its size."""
    pytest.importorskip("mss")
    from caap.data.synth.generate import Renderer
    from caap.data.synth.ui import render_page

    size = (800, 600)
    with Renderer(size, scale=1.0) as renderer:
        labels = {}
        for i, kind in enumerate(NEW_BLOCKS):
            page = build_page(7 + i, size, 1.0, blocks=((kind, 1.0),))
            shot = render_page(renderer, page)
            labels[kind] = (page, shot.labels)
    page, dots = labels["dots"]
    points = [e for e in dots if e.type.value == "shape" and e.subtype in ("point", "circle")]
    assert 1 <= len(points) <= page.body.count("<circle")
    assert all(e.bbox[2] - e.bbox[0] <= 14 and e.bbox[3] - e.bbox[1] <= 14 for e in points)  # small dots, not buttons
    assert any(e.type.value == "text" and e.text.lstrip("-").isdigit() for e in dots)  # tick labels
    _, grid = labels["checkgrid"]
    boxes = [e for e in grid if e.type.value == "checkbox"]
    assert len(boxes) >= 4 and any(e.checked for e in boxes) and any(not e.checked for e in boxes)
    _, cal = labels["calendar"]
    days = {e.text for e in cal if e.type.value in ("hyperlink", "button", "tabled_text") and e.text.isdigit()}
    assert {str(d) for d in range(1, 29)} <= days
    _, flat = labels["flatform"]
    fields = [e for e in flat if e.type.value == "input_field"]
    assert fields and any(e.text == "" for e in fields)
    assert all(e.bbox[3] - e.bbox[1] <= 40 for e in fields)
    page, pad = labels["keypad"]
    keys = [e for e in pad if e.type.value == "button"]
    # Every key is a button boxed by its frame: as tall as drawn, wider than its one to four characters.
    heights = {int(h) for h in re.findall(r"grid-column:span \d;height:(\d+)px", page.body)}
    framed = [e for e in keys if any(abs((e.bbox[3] - e.bbox[1]) - h) <= 2 for h in heights)]
    assert len(framed) >= 6 and len(framed) >= 0.8 * len(keys), (heights, keys)
    assert all(e.text for e in framed)
    page, levels = labels["levels"]
    bars = [e for e in levels if e.type.value == "progress_bar"]
    sliders = [e for e in levels if e.type.value == "slider"]
    assert len(bars) + len(sliders) >= 2, levels
    # Bars are boxed by their 3-8 px trough, either way up; sliders knob edge to knob edge (<= 28 px).
    assert all(min(e.bbox[2] - e.bbox[0], e.bbox[3] - e.bbox[1]) <= 9 for e in bars), bars
    assert all(10 <= min(e.bbox[2] - e.bbox[0], e.bbox[3] - e.bbox[1]) <= 29 for e in sliders), sliders


@live
def test_toolkit_blocks_are_labelled_as_the_desktop_labeller_boxes_them():
    """Desktop-toolkit look-alikes (caap.data.synth.toolkit): long scales and bars either way up,
    their drawn value inside the widget's box; drawn scrollbars along a whole track; large text
    views whose lines are no elements of their own; notebook tabs boxed on their label; colour
    swatches boxed as the whole framed button, not the patch inside."""
    pytest.importorskip("mss")
    from caap.data.synth.generate import Renderer
    from caap.data.synth.ui import render_page
    from caap.geometry import intersect

    size = (900, 700)
    labels = {}
    with Renderer(size, scale=1.0) as renderer:
        for i, kind in enumerate(("gauges", "scrollpane", "textview", "notebook", "swatches")):
            page = build_page(21 + i, size, 1.0, blocks=((kind, 1.0),))
            labels[kind] = (page, render_page(renderer, page).labels)

    def inside(small, big) -> bool:
        return intersect(small.bbox, big.bbox) is not None and all(
            big.bbox[k] - 1 <= small.bbox[k] for k in (0, 1)) and all(small.bbox[k] <= big.bbox[k] + 1 for k in (2, 3))

    _, gauges = labels["gauges"]
    levels = [e for e in gauges if e.type.value in ("slider", "progress_bar")]
    w = [e.bbox[2] - e.bbox[0] for e in levels]
    h = [e.bbox[3] - e.bbox[1] for e in levels]
    assert any(b >= 5 * a and b >= 150 for a, b in zip(w, h, strict=True)), levels  # a long vertical one
    assert any(a >= 5 * b and a >= 150 for a, b in zip(w, h, strict=True)), levels  # and a horizontal one
    # A value a scale or bar draws (50.0, 35%) is part of it, never a text element of its own.
    assert not any(inside(t, lv) for t in gauges if t.type.value == "text" for lv in levels)
    _, pane = labels["scrollpane"]
    bars = [e for e in pane if e.type.value == "scrollbar"]
    assert bars and all(min(e.bbox[2] - e.bbox[0], e.bbox[3] - e.bbox[1]) <= 17 for e in bars), bars
    assert all(max(e.bbox[2] - e.bbox[0], e.bbox[3] - e.bbox[1]) >= 100 for e in bars), bars
    _, view = labels["textview"]
    areas = [e for e in view if e.type.value == "text_area"]
    assert areas and all(a.bbox[3] - a.bbox[1] >= 88 and a.text for a in areas), areas
    assert not any(inside(e, a) for a in areas for e in view if e is not a)
    page, book = labels["notebook"]
    tabs = [e for e in book if e.type.value == "tab"]
    tall = {int(v) for v in re.findall(r"line-height:(\d+)px;white-space:nowrap", page.body)}
    assert len(tabs) >= 2 and 1 <= sum(e.highlighted is True for e in tabs) <= page.body.count('role="tablist"')
    assert all(any(abs(e.bbox[3] - e.bbox[1] - t) <= 1 for t in tall) for e in tabs), (tall, tabs)
    assert all(e.text for e in tabs)
    page, palette = labels["swatches"]
    swatches = [e for e in palette if e.type.value == "icon"]
    drawn = {(int(a), int(b)) for a, b in re.findall(r"inline-block;width:(\d+)px;height:(\d+)px", page.body)}
    assert len(swatches) >= 3 and not any(inside(e, s) for s in swatches for e in palette if e is not s)
    # Each box is a drawn button's outer size (frame and padding included), never the patch inside.
    assert all(any(abs(e.bbox[2] - e.bbox[0] - w) <= 1 and abs(e.bbox[3] - e.bbox[1] - h) <= 1 for w, h in drawn)
               for e in swatches), (drawn, swatches[:5])
