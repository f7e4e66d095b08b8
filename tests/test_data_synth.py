"""Synthetic text screens: seeded strings that cover the character set, valid page layouts, and (live)
pages rendered by Chromium on Xvfb whose DOM labels give back exactly the strings placed."""

from __future__ import annotations

import shutil

import pytest
from live_marks import live
from typer.testing import CliRunner

from caap.cli import app
from caap.data.synth.page import build_page, overlaps, plan_page
from caap.data.synth.strings import BASE_COVERAGE, NON_ASCII, StringGen, coverage_set

runner = CliRunner()
MERGE_GAP = 5  # merge_line_runs joins same-type runs of a line up to this many px apart
# Which label type each kind of widget must produce.
KIND_TYPES = {"text": {"text"}, "highlight": {"text"}, "bold_sentence": {"text"}, "link": {"hyperlink"},
              "alink": {"hyperlink"}, "link_sentence": {"text", "hyperlink"}, "button": {"button"},
              "input": {"input_field"}, "password": {"input_field"}, "checkbox": {"checkbox"}, "radio": {"radio"},
              "select": {"dropdown"}, "table": {"tabled_text"}, "list": {"tabled_text"}}


# --- strings ----------------------------------------------------------------------------------------
def test_strings_are_seeded_and_deterministic():
    a, b, c = StringGen(7), StringGen(7), StringGen(8)
    first = [a.text() for _ in range(200)]
    assert first == [b.text() for _ in range(200)]
    assert first != [c.text() for _ in range(200)]
    for profile in ("button", "field", "cell", "row", "link", "label", "text"):
        assert StringGen(3).text(profile) == StringGen(3).text(profile)


def test_strings_cover_the_whole_coverage_set_regularly():
    cover = coverage_set()
    assert set("".join(chr(c) for c in range(0x21, 0x7F))) <= set(cover)  # every printable ASCII character
    assert set(NON_ASCII) <= set(cover) and any(ord(c) >= 0x4E00 for c in cover)  # symbols, accents, CJK
    for seed in (0, 1, 2):
        gen = StringGen(seed)
        seen: set[str] = set()
        for _ in range(1500):
            seen |= set(gen.text())
        assert set(cover) <= seen, f"seed {seed} never showed {sorted(set(cover) - seen)}"
        seen = set()
        for _ in range(1500):  # a second window: the sweep keeps coming round, not just once
            seen |= set(gen.text())
        assert set(cover) <= seen


def test_extra_chars_join_the_coverage_set():
    cover = coverage_set("ĀŁ ★\u0301\u00ad")  # a space, a lone combining mark and a soft hyphen are not shown
    assert cover.startswith(BASE_COVERAGE) and cover.endswith("ĀŁ★")
    gen = StringGen(4, extra_chars="ĀŁ★")
    seen = set("".join(gen.text() for _ in range(1500)))
    assert {"Ā", "Ł", "★"} <= seen


def test_strings_are_one_short_line():
    gen = StringGen(11)
    texts = [gen.text() for _ in range(3000)]
    assert all(t and t == " ".join(t.split()) and len(t) <= 40 for t in texts)
    assert sum(len(t) <= 20 for t in texts) / len(texts) > 0.7  # mostly short
    assert any(len(t) > 30 for t in texts)  # some long
    assert all(len(gen.text(max_len=5)) <= 5 for _ in range(200))
    kinds = {k: StringGen(1).make(k) for k in StringGen(1).kinds}
    assert "@" in kinds["email"] and "." in kinds["url"]
    gen = StringGen(5)
    tokens = [gen.token() for _ in range(300)]
    assert all(2 <= len(t) <= 10 and t.isalnum() for t in tokens)
    assert any(t.islower() for t in tokens) and any(not t.islower() and not t.isupper() for t in tokens)


# --- pages --------------------------------------------------------------------------------------------
def test_pages_are_valid_non_overlapping_layouts():
    themes, kinds = set(), set()
    for seed in range(60):
        size = (320, 240) if seed % 3 else (160, 210)
        page = build_page(seed, size)
        assert page.body == build_page(seed, size).body  # deterministic
        w, h = size
        boxes = [p.box for p in page.placed]
        assert boxes and not overlaps(boxes)
        for i, a in enumerate(boxes):
            assert 0 <= a[0] < a[2] <= w and 0 <= a[1] < a[3] <= h
            for b in boxes[i + 1:]:  # side by side on a line: further apart than merge_line_runs joins
                if min(a[3], b[3]) > max(a[1], b[1]):
                    assert a[2] + MERGE_GAP < b[0] or b[2] + MERGE_GAP < a[0], (seed, a, b)
        for p in page.placed:
            assert p.widget.expected and all(e.text and e.text == " ".join(e.text.split()) for e in p.widget.expected)
            assert {e.type for e in p.widget.expected} <= KIND_TYPES[p.widget.kind]
            assert f'data-w="{p.widget.id}"' in page.body
        assert "__FIT" not in page.body and page.html.startswith("<!DOCTYPE html>")
        assert sum(1 for p in page.placed if p.widget.select) <= 1
        themes.add(page.theme)
        kinds |= {p.widget.kind for p in page.placed}
    assert themes == {"miniwob", "app"}
    assert kinds == set(KIND_TYPES)


def test_plans_use_legible_colours_and_the_display_fonts():
    from caap.data.synth.page import FAMILIES, _rgb, contrast

    for seed in range(30):
        plan = plan_page(seed)
        for panel in plan.panels:
            assert contrast(_rgb(panel.bg), _rgb(panel.fg)) >= 4.5
        for w in plan.widgets:
            for family in FAMILIES:
                if f"font-family:{family};" in w.html:
                    break
            else:
                assert "font-family" not in w.html or "Arial,Helvetica" in w.html, w.html  # default looks


# --- the command line (no display needed for these errors) --------------------------------------------
def test_synth_cli_errors(tmp_path, monkeypatch):
    bad_seeds = runner.invoke(app, ["dataset", "synth", "--out", str(tmp_path / "d"), "--seeds", "20-10"])
    assert bad_seeds.exit_code == 2 and "runs backwards" in bad_seeds.output
    bad_size = runner.invoke(app, ["dataset", "synth", "--out", str(tmp_path / "d"), "--seeds", "1", "--size", "320"])
    assert bad_size.exit_code == 2 and "WIDTHxHEIGHT" in bad_size.output
    huge = runner.invoke(app, ["dataset", "synth", "--out", str(tmp_path / "d"), "--seeds", "1", "--size", "5000x10"])
    assert huge.exit_code == 2 and "width must be" in huge.output
    real_which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "Xvfb" else real_which(name, *a, **k))
    no_x = runner.invoke(app, ["dataset", "synth", "--out", str(tmp_path / "d"), "--seeds", "1"])
    assert no_x.exit_code == 2 and "need Xvfb" in no_x.output
    assert not (tmp_path / "d").exists()


# --- live: real Chromium on Xvfb ------------------------------------------------------------------------
SEEDS = (4, 9)  # a MiniWoB-look page and an app-look page, between them every widget type


@live
def test_rendered_pages_label_back_exactly_what_was_placed(tmp_path):
    pytest.importorskip("mss")
    from caap.data.format import Dataset
    from caap.data.synth.generate import Renderer, SynthStats, check_labels, generate_synth, render_seed

    stats = SynthStats()
    types: set[str] = set()
    with Renderer((320, 240)) as renderer:
        for seed in SEEDS:
            result = render_seed(renderer, seed, "", stats)
            assert result is not None
            frame, labels, page = result
            assert frame.size == (320, 240)
            shown = renderer.browser.evaluate("[...document.querySelectorAll('#region > .sw')].map(e => +e.dataset.w)")
            placed = {p.widget.id: p for p in page.placed if p.widget.id in shown}
            assert len(placed) >= 8
            want = sorted((e.type, e.text) for p in placed.values() for e in p.widget.expected)
            assert sorted((e.type.value, e.text) for e in labels) == want  # each string: exactly one label
            for e in labels:
                x1, y1, x2, y2 = e.bbox
                assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 240
            for p in placed.values():
                assert {e.type for e in p.widget.expected} <= KIND_TYPES[p.widget.kind]
            kept = {wid: p.box for wid, p in placed.items()}
            assert not check_labels(page, kept, labels).missing
            types |= {e.type.value for e in labels}
    assert {"button", "hyperlink", "input_field", "checkbox", "tabled_text", "text"} <= types
    assert stats.screens_dropped == 0

    out = tmp_path / "synth"
    first = generate_synth(out, list(SEEDS))
    assert first.screens == 2 and first.text_elements == first.elements > 0
    items = list(Dataset(out))
    assert sorted(ann.source.seed for _, ann in items) == list(SEEDS)
    assert all(ann.source.kind == "synth" and ann.source.task == "synth-text" for _, ann in items)
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    again = generate_synth(out, list(SEEDS))  # resumes: nothing new
    assert again.screens == 0 and again.skipped == 2 and again.pages == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()} == stamps
