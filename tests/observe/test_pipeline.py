"""The observer as one ordered pipeline of named steps: the table, the runner (timings, what each
step did, provenance, steps switched off), and the shipped observer's output, which must not move
when the code is reorganised (tests/fixtures/observer-golden.jsonl, taken before the pipeline
existed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from caap.cli import app
from caap.elements import Element
from caap.observe.observation import GIVEN, Observation, Provenance
from caap.observe.pipeline import STAGES, Look, Parts, Pipeline, PipelineError, Step, describe
from caap.observe.steps import FIT_STEPS, STEP_NAMES, STEPS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCREENS = FIXTURES / "screens"
GOLDEN = FIXTURES / "observer-golden.jsonl"
VERBS = ("detect", "merge", "drop", "fit", "grow", "snap", "split", "add", "retype", "erase", "narrow", "read",
         "unhighlight", "reread", "empty", "trim", "name")


def el(kind: str, box: list[int], **kw) -> Element:
    return Element(type=kind, bbox=box, **kw)


# --- the table ------------------------------------------------------------------------------------


def test_every_step_is_named_by_a_verb_with_one_line_of_purpose_stage_by_stage():
    assert len(STEP_NAMES) == len(set(STEP_NAMES)) >= 30
    assert [STAGES.index(s.stage) for s in STEPS] == sorted(STAGES.index(s.stage) for s in STEPS)
    assert {s.stage for s in STEPS} == set(STAGES)
    for s in STEPS:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)+", s.name) and s.name.split("_")[0] in VERBS, s.name
        assert s.purpose and "\n" not in s.purpose and len(s.purpose) <= 110, s.name
    assert STEPS[0].name == "detect_elements" and STEPS[0].needs == ("detector",)
    assert all(s.stage == "fit" for s in STEPS if s.name in FIT_STEPS) and "snap_text_boxes" in FIT_STEPS
    # Everything after the detector's own stages reads or is read: without a reader none of it runs.
    assert all("reader" in s.needs for s in STEPS if s.stage in ("propose", "read", "settle"))


def test_describe_says_which_steps_run_and_why_not():
    rows = describe(STEPS, ["detector"], ["snap_text_boxes"])
    by_name = {r["name"]: r for r in rows}
    assert [r["order"] for r in rows] == list(range(1, len(STEPS) + 1))
    assert by_name["detect_elements"]["runs"] and by_name["merge_duplicate_boxes"]["runs"]
    assert by_name["snap_text_boxes"]["why_not"] == "disabled"
    assert by_name["read_elements"]["why_not"] == "no reader"
    assert by_name["reread_doubtful_texts"]["why_not"] == "no reader, ocr"
    assert "runs" not in describe(STEPS)[0]


def test_a_pipeline_refuses_unknown_names_and_steps_out_of_stage_order():
    with pytest.raises(PipelineError, match="no step named snap_everything; the steps are: detect_elements"):
        Pipeline(disable=["snap_everything"])
    read = Step("read_it", "read", "reads", lambda look, els: els)
    fit = Step("fit_it", "fit", "fits", lambda look, els: els)
    with pytest.raises(PipelineError, match="stage by stage"):
        Pipeline([read, fit])
    with pytest.raises(PipelineError, match="repeat"):
        Pipeline([fit, fit])
    with pytest.raises(PipelineError, match="stage 'look'"):
        Step("look_around", "look", "?", lambda look, els: els)
    with pytest.raises(PipelineError, match="unknown models"):
        Step("fit_more", "fit", "?", lambda look, els: els, ("gpu",))


# --- the runner -----------------------------------------------------------------------------------


def _toy_pipeline() -> tuple[Pipeline, list[str]]:
    """Four steps that add, move, retype, drop and keep elements, recording that they ran."""
    ran: list[str] = []

    def add(look: Look, els: list[Element]) -> list[Element]:
        ran.append("add_two")
        return [*els, el("text", [0, 0, 40, 10], score=0.9), el("button", [0, 20, 40, 40], score=0.8),
                el("icon", [60, 60, 70, 70], score=0.5)]

    def fit(look: Look, els: list[Element]) -> list[Element]:
        ran.append("fit_text")
        # The text's box moves a little (a new object, overlapping the old one): the same element, changed.
        return [e.model_copy(update={"bbox": (1, 0, 38, 10)}) if e.type.value == "text" else e for e in els]

    def retype(look: Look, els: list[Element]) -> list[Element]:
        ran.append("retype_button")
        # Rebuilt from scratch with the same box and another type: changed. The icon is dropped, and an
        # unchanged copy of the text (equal, not the same object) is not a change.
        return [Element(type="checkbox", bbox=e.bbox, score=e.score) if e.type.value == "button" else
                e.model_copy() for e in els if e.type.value != "icon"]

    def read(look: Look, els: list[Element]) -> list[Element]:
        ran.append("read_all")
        return els

    steps = [Step("add_two", "propose", "adds", add), Step("fit_text", "propose", "fits", fit),
             Step("retype_button", "settle", "retypes", retype),
             Step("read_all", "settle", "needs a reader", read, ("reader",))]
    return Pipeline(steps), ran


def test_the_runner_times_each_step_and_keeps_what_it_did_to_each_element():
    pipeline, ran = _toy_pipeline()
    seen = pipeline.observe(Image.new("RGB", (80, 80), "white"), Parts())
    assert ran == ["add_two", "fit_text", "retype_button"]  # read_all needs a reader: it does not run
    assert [(r.name, r.stage, r.added, r.changed, r.removed) for r in seen.steps] == [
        ("add_two", "propose", 3, 0, 0), ("fit_text", "propose", 0, 1, 0), ("retype_button", "settle", 0, 1, 1)]
    assert all(r.ms >= 0 for r in seen.steps) and list(seen.stages_ms) == ["propose", "settle"]
    assert [e.type.value for e in seen.elements] == ["text", "checkbox"]
    assert seen.provenance == [Provenance("add_two", ("fit_text",)), Provenance("add_two", ("retype_button",))]
    assert set(seen.timings_ms) == {"detect", "read", "total"}  # the observe contract's keys (no PP-OCR here)
    record = seen.to_json(explain=True)
    assert record["elements"][0]["provenance"] == {"added_by": "add_two", "changed_by": ["fit_text"]}
    assert list(record["steps_ms"]) == ["add_two", "fit_text", "retype_button"]
    assert "provenance" not in seen.to_json()["elements"][0]


def test_steps_switched_off_and_partial_runs():
    steps, ran = _toy_pipeline()
    pipeline = Pipeline(steps.steps, disable=["fit_text"])
    look = pipeline.look(Image.new("RGB", (80, 80), "white"), Parts())
    first = pipeline.run(look, stop="retype_button")
    assert ran == ["add_two"] and len(first) == 3
    rest = pipeline.run(look, first, start="settle")
    assert ran == ["add_two", "retype_button"] and rest[0].bbox == (0, 0, 40, 10)  # not fitted
    assert [r.name for r in look.steps] == ["add_two", "retype_button"]
    given = [el("text", [0, 0, 5, 5])]
    fresh = pipeline.look(Image.new("RGB", (80, 80), "white"), Parts())
    assert pipeline.run(fresh, given, start="retype_button") == given and fresh.provenance == [GIVEN]
    with pytest.raises(PipelineError, match="no step or stage named 'nothing'"):
        pipeline.run(fresh, given, start="nothing")


def test_an_observation_numbered_keeps_each_elements_provenance():
    low, high = el("button", [0, 50, 10, 60]), el("text", [0, 0, 10, 10])
    seen = Observation([low, high], {"total": 1.0}, [], [Provenance("a"), Provenance("b")])
    numbered = seen.numbered()
    assert [(e.id, e.type.value) for e in numbered.elements] == [(1, "text"), (2, "button")]
    assert numbered.provenance == [Provenance("b"), Provenance("a")]
    with pytest.raises(ValueError, match="one for one"):
        seen.with_elements([low])


# --- the shipped observer -------------------------------------------------------------------------


def _plain(record: dict) -> dict:
    """An element record with its confidences rounded: threads and CPUs move the last digits."""
    return {k: (round(v, 2) if k in ("score", "text_confidence") and v is not None else v) for k, v in record.items()}


def test_the_observer_reports_what_it_reported_before_the_pipeline(shipped_observer):
    """Every fixture screen observed as ``caap observe --json`` does gives the elements recorded
    before the observer became a pipeline (types, boxes, texts and states exactly). Re-taken only
    when a shipped model changes what is read: the state head moved seven states (its note)."""
    golden = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    assert len(golden) == len(list(SCREENS.iterdir())) >= 20
    for want in golden:
        image = Image.open(FIXTURES / want["image"]).convert("RGB")
        got = shipped_observer.observe(image).numbered()
        assert [_plain(e.to_json()) for e in got.elements] == [_plain(e) for e in want["elements"]], want["image"]
        # Steps copy elements without validating them: each must still carry only its type's attributes.
        assert all(Element.model_validate(e.model_dump()) == e for e in got.elements), want["image"]


def test_a_real_screen_through_the_pipeline(shipped_observer):
    image = Image.open(SCREENS / "click-tab-2-short-link-beside-link.png").convert("RGB")
    seen = shipped_observer.observe(image)
    ran = [r.name for r in seen.steps]
    assert ran == [s.name for s in STEPS if s.name in ran] and {"detect_elements", "read_elements"} <= set(ran)
    assert len(seen.provenance) == len(seen.elements)
    assert all(p.added_by in STEP_NAMES and set(p.changed_by) <= set(STEP_NAMES) for p in seen.provenance)
    assert all("read_elements" in p.changed_by for p in seen.provenance)  # every box is read
    assert {"detect", "read", "ocr", "total"} <= set(seen.timings_ms)
    assert seen.timings_ms["total"] == pytest.approx(sum(r.ms for r in seen.steps), abs=0.1)
    # The same observer with a step switched off: the words that step found are gone, the rest stays.
    added = [e for e, p in zip(seen.elements, seen.provenance, strict=True) if p.added_by == "add_missed_lines"]
    assert added
    from caap.observe.vision import VisionObserver

    parts = shipped_observer.parts
    without = VisionObserver(parts.detector, parts.reader, ocr=parts.ocr, disable=["add_missed_lines"]).observe(image)
    assert "add_missed_lines" not in [r.name for r in without.steps]
    assert {tuple(e.bbox) for e in added}.isdisjoint({tuple(e.bbox) for e in without.elements})
    assert len(without.elements) == len(seen.elements) - len(added)


def test_caap_observe_lists_explains_and_switches_off_steps(shipped_observer, tmp_path):
    runner = CliRunner()
    listed = runner.invoke(app, ["observe", "--list-steps", "--disable-step", "fit_icons"], terminal_width=300)
    assert listed.exit_code == 0, listed.output
    at = [listed.output.index(f" {name} ") for name in STEP_NAMES]
    assert at == sorted(at)  # in the order they run
    assert "no (disabled)" in listed.output
    text_only = runner.invoke(app, ["observe", "--list-steps", "--text-source", "reader"], terminal_width=300)
    assert "no (no ocr)" in text_only.output
    bad = runner.invoke(app, ["observe", str(SCREENS / "resize-textarea-start.png"), "--disable-step", "nope"])
    assert bad.exit_code != 0 and "no step named nope" in " ".join(bad.output.split())
    config = tmp_path / "no-grips.toml"  # not ./caap.toml, which every caap command in this directory reads
    config.write_text('[observe]\ndisable = ["add_resize_grips"]\n', encoding="utf-8")
    shot = SCREENS / "resize-textarea-small-area.png"
    explained = runner.invoke(app, ["observe", str(shot), "--json", "--explain", "--config", str(config)])
    assert explained.exit_code == 0, explained.output
    record = json.loads(explained.output)
    assert {"elements", "timings_ms", "stages_ms", "steps_ms"} <= set(record)
    assert "add_resize_grips" not in record["steps_ms"] and "add_text_areas" in record["steps_ms"]
    assert all(set(e["provenance"]) == {"added_by", "changed_by"} for e in record["elements"])
    plain = runner.invoke(app, ["observe", str(shot), "--json"])
    assert all("provenance" not in e for e in json.loads(plain.output)["elements"])
    # The grip step retypes the field a text area and adds a handle over its grip: without it, neither.
    kinds = [e["type"] for e in json.loads(plain.output)["elements"]]
    assert kinds.count("resize_handle") == 1 + [e["type"] for e in record["elements"]].count("resize_handle")
