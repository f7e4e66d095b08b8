"""HTML reports: a real agent run's trace and a benchmark summary, rendered and opened in Chromium.

The browser tests start their own Xvfb and skip, naming the Debian package, only if Xvfb or Chromium
is not installed (as tests/test_live.py does).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from caap.act.dryrun import LEFT, RIGHT
from caap.act.executor import RecordingExecutor
from caap.agent.loop import Agent
from caap.agent.trace import TraceWriter, read_steps
from caap.cli import app
from caap.config import AgentConfig, LLMConfig, Price
from caap.decide.ablations import ABLATIONS
from caap.decide.llm import LLMClient
from caap.decide.prompter import CaapPrompter, PromptOptions
from caap.elements import load_elements
from caap.observe.capture.screen import ImageScreen, load_image
from caap.observe.observation import StaticObserver
from caap.records import ActionRecord, Outcome
from caap.report import (
    ReportError,
    is_bench_dir,
    load_paper_results,
    render_bench,
    render_trace,
    write_bench_report,
    write_trace_report,
)
from caap.report.bench import PAPER_COLUMNS
from caap.report.trace import _Element, draw_actions
from caap.testing.llm_server import Reply, ScriptedLLMServer

ROOT = Path(__file__).resolve().parent.parent
IMAGE = ROOT / "examples" / "select-list.png"
ELEMENTS = ROOT / "examples" / "select-list.elements.json"
# Quotes, angle brackets and an ampersand: the page must show them as text, not as markup.
TASK = 'Select Helli from the list and click "Submit" <now> & stop.'
KEY = "sk-caap-test-key-0123456789"
BAD_ID_ERROR = "element_42 is not on the current screen"
runner = CliRunner()

BROWSER_MARKS = (
    pytest.mark.display,
    pytest.mark.skipif(shutil.which("Xvfb") is None, reason="needs Xvfb (Debian package xvfb)"),
    pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs Chromium (Debian package chromium)"),
)


def needs_browser(test):
    for mark in BROWSER_MARKS:
        test = mark(test)
    return test


# What the page is made of, read back from the DOM after Chromium rendered it.
PAGE_FACTS_JS = """(() => {
  const urls = [...document.querySelectorAll('[src], [href]')].map(e => e.getAttribute('src') || e.getAttribute('href'));
  const css = [...document.styleSheets].flatMap(s => [...s.cssRules].map(r => r.cssText)).join('\\n');
  const prompt = [...document.querySelectorAll('details.prompt')];
  return {
    title: document.title,
    text: document.body.innerText,
    sections: document.querySelectorAll('section.step').length,
    images: [...document.images].map(i => ({complete: i.complete, w: i.naturalWidth, h: i.naturalHeight})),
    urls: urls,
    cssUrls: (css.match(/url\\(/g) || []).length,
    externalLinks: [...document.querySelectorAll('link, script, iframe, object, embed')].length,
    promptDetails: prompt.length,
    promptOpen: prompt.map(d => d.open),
    promptVisible: prompt.map(d => d.querySelector('pre').checkVisibility()),
    navPosition: document.querySelector('nav.index') ? getComputedStyle(document.querySelector('nav.index')).position : null,
    navLinks: [...document.querySelectorAll('nav.index a')].map(a => a.getAttribute('href')),
    injected: document.querySelectorAll('now').length,
    errorBoxes: document.querySelectorAll('section.step .errors').length,
  };
})()"""


def _not_embedded(urls):
    return [u for u in urls if not (u.startswith("data:") or u.startswith("#"))]


# --- a real trace -----------------------------------------------------------------------------------

def run_agent(root: Path) -> Path:
    """One real episode: an invalid answer (an element that is not there), then a click on Submit and done."""
    script = [
        Reply(text="Progress: nothing yet.\nAction_2=(Action: functions.click_element, Argument: {element_id: 42})"),
        Reply(text="Submit is element_3.\nAction_2=(Action: functions.click_element, Argument: {element_id: 3})\n"
                   "Action_3=(Action: functions.done, Argument: {reason: \"submitted\"})"),
    ]
    with ScriptedLLMServer(script) as server:
        cfg = LLMConfig(base_url=server.base_url, model="scripted", api_key=KEY, mode="text", timeout_s=5,
                        backoff_initial_s=0.01, backoff_max_s=0.02, prices={"scripted": Price(input=10, output=30)})
        trace = TraceWriter(root, TASK, secrets=[KEY])
        trace.start({"task": TASK, "config": {"llm": {"model": "scripted", "api_key": "***"}},
                     "caap_version": "test", "dry_run": False})
        agent = Agent(screen=ImageScreen(load_image(IMAGE)), observer=StaticObserver(load_elements(ELEMENTS)),
                      executor=RecordingExecutor(), planner=LLMClient(cfg),
                      prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig(), trace=trace)
        result = agent.run(TASK)
    assert result.status == "done" and result.steps == 2
    return trace.dir


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory) -> Path:
    path = run_agent(tmp_path_factory.mktemp("runs"))
    steps = read_steps(path)
    # The trace is what the report expects: step 1 failed to bind, step 2 clicked Submit (element 3) and stopped.
    assert steps[0]["errors"][0]["message"].startswith(BAD_ID_ERROR) and steps[0]["actions"] == []
    assert [a["name"] for a in steps[1]["actions"]] == ["click_element", "done"]
    assert steps[1]["actions"][0]["element"]["text"] == "Submit"
    return path


@pytest.fixture(scope="module")
def browser():
    from caap.bench.browser import Chromium
    from caap.bench.display import VirtualDisplay

    with VirtualDisplay(1280, 1000) as display, Chromium(
            "about:blank", display=display.name, window_pos=(0, 0), window_size=(1200, 900)) as chromium:
        yield chromium


def test_trace_report_html(trace_dir, tmp_path):
    out = write_trace_report(trace_dir, tmp_path / "r.html")
    html = out.read_text(encoding="utf-8")
    assert out == tmp_path / "r.html"
    assert "&lt;now&gt; &amp; stop." in html and "<now>" not in html  # escaped, not markup
    assert BAD_ID_ERROR in html
    assert html.count('<section class="step') == 2 and 'id="step-1"' in html and 'id="step-2"' in html
    assert html.count("data:image/png;base64,") == 2  # both screenshots embedded
    assert not _not_embedded(re.findall(r'(?:src|href)="([^"]*)"', html))
    assert "<script" not in html and "url(" not in html
    assert "<details class=\"prompt\">" in html and "<details class=\"prompt\" open" not in html
    assert KEY not in html
    # The header: status, reason, model, tokens, cost.
    summary = json.loads((trace_dir / "summary.json").read_text())
    assert "submitted" in html and ">done<" in html and "scripted" in html
    assert f"{summary['prompt_tokens']:,}" in html and f"${summary['cost_usd']:.4f}" in html
    assert render_trace(trace_dir) == html  # deterministic
    assert write_trace_report(trace_dir) == trace_dir / "report.html"


def test_draw_actions_marks_the_target_centre():
    canvas = Image.new("RGB", (480, 630), "white")
    submit = {"id": 3, "type": "button", "bbox": [1, 80, 98, 112], "text": "Submit"}
    elements = {3: _Element.from_json(submit)}
    # No recorded point: the target falls back to the element's centre, geometry's convention (49, 96).
    drawn = draw_actions(canvas, [ActionRecord(name="click_element", args={"element_id": 3}, element=submit,
                                               outcome=Outcome.CHANGED),
                                  ActionRecord(name="done", outcome=Outcome.DONE)], elements, 3.0)
    assert drawn.getpixel((49 * 3 + 1, 96 * 3 + 1)) == LEFT
    # A coordinate action aims at its x/y.
    drawn = draw_actions(Image.new("RGB", (480, 630), "white"),
                         [ActionRecord(name="click_new_point", args={"x": 10, "y": 150}, point=[10, 150],
                                       outcome=Outcome.NO_CHANGE)], {}, 3.0)
    assert drawn.getpixel((31, 451)) == LEFT
    # A refused one is grey.
    drawn = draw_actions(Image.new("RGB", (480, 630), "white"),
                         [ActionRecord(name="click_new_point", args={"x": 10, "y": 150}, point=[10, 150],
                                       outcome=Outcome.DENIED)], {}, 3.0)
    assert drawn.getpixel((31, 451)) == (140, 140, 140)
    # How each action shows comes from the registry (ActionSpec.mark): a right click is blue.
    drawn = draw_actions(Image.new("RGB", (480, 630), "white"),
                         [ActionRecord(name="right_click_element", args={"element_id": 3}, element=submit,
                                       outcome=Outcome.CHANGED)], elements, 3.0)
    assert drawn.getpixel((49 * 3 + 1, 96 * 3 + 1)) == RIGHT


def test_odd_and_unfinished_traces_still_render(trace_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(trace_dir, broken)
    (broken / "summary.json").unlink()  # the run crashed
    (broken / "step_002.png").unlink()
    (broken / "run.json").write_text("{not json")
    # A step as an earlier caap wrote it: the dropped plan spelt into the outcome, the timings of a
    # failed LLM call under "timings", odd elements (the page draws what it can of them).
    old = {"step": 3, "elements": [{"id": "x", "type": "spaceship", "bbox": [5, 5, 1, 1]}, {"bbox": None}],
           "screenshot": "../../../etc/passwd",
           "actions": [{"name": "click_element", "args": {"element_id": 2}, "element": None, "point": [40, 90],
                        "outcome": "the screen changed; the 1 action(s) planned after it were dropped"},
                       {"name": "type_text", "args": {"string_to_type": "hi"}, "outcome": "denied",
                        "reason": "a password field"}],
           "errors": [{"kind": "parse", "message": "no action <found>"}], "response": {"content": "odd"},
           "timings": {"llm": 3.0, "prompt": 2.5}, "prompt": {"text": "the prompt"}, "error": "LLM down"}
    # Records no caap wrote: each skipped with one line that names what is wrong.
    odd = {"step": 4, "actions": ["junk"]}
    with open(broken / "steps.jsonl", "a", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(r) for r in (old, odd, [1, 2])) + "\n" + '{"step": 5, "cut off')
    html = render_trace(broken)
    assert "The run did not finish" in html
    assert "step_002.png is missing or unreadable" in html
    assert "run.json could not be read" in html and "could not be read" in html
    assert "no action &lt;found&gt;" in html and "LLM down" in html
    assert "the screen changed; the 1 action(s) planned after it were dropped" in html
    assert "denied: a password field" in html
    assert "steps.jsonl line 4: not a step record (actions.0:" in html
    assert "steps.jsonl line 5: not a step record" in html
    assert html.count('<section class="step') == 3


def test_not_a_trace_gives_one_clear_error(tmp_path):
    with pytest.raises(ReportError, match="no such trace directory"):
        render_trace(tmp_path / "missing")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ReportError, match="not a directory"):
        render_trace(tmp_path / "file.txt")
    with pytest.raises(ReportError, match=r"no steps\.jsonl"):
        render_trace(tmp_path)
    (tmp_path / "steps.jsonl").write_text("garbage\n")
    with pytest.raises(ReportError, match="not a step log") as info:
        render_trace(tmp_path)
    assert str(tmp_path) in str(info.value)


@needs_browser
def test_trace_report_in_chromium(trace_dir, browser):
    out = write_trace_report(trace_dir)
    browser.navigate(out.as_uri())
    facts = browser.evaluate(PAGE_FACTS_JS)
    assert facts["sections"] == 2
    assert facts["images"] and all(i["complete"] and i["w"] > 0 and i["h"] > 0 for i in facts["images"])
    assert [i["w"] for i in facts["images"]] == [480, 480]  # 160 px screens shown at 3x
    assert TASK in facts["text"] and TASK in facts["title"] and facts["injected"] == 0
    assert BAD_ID_ERROR in facts["text"] and facts["errorBoxes"] == 1
    assert facts["promptDetails"] == 2 and facts["promptOpen"] == [False, False]
    assert facts["promptVisible"] == [False, False]  # the prompt text is folded away
    assert "- ID: element_3, data:" not in facts["text"]
    assert "Action_2=(Action: functions.click_element" in facts["text"]  # the response is shown
    assert not _not_embedded(facts["urls"]) and facts["cssUrls"] == 0 and facts["externalLinks"] == 0
    assert facts["navPosition"] == "sticky" and facts["navLinks"] == ["#step-1", "#step-2"]


# --- the benchmark report ---------------------------------------------------------------------------

PAPER_TSV = ("task\tfull\tdemo_without_cot\tcot_without_demo\tcot_with_action_only_demo\tno_cot_no_demo\n"
             "choose-list\t1.000\t0.980\t0.940\t0.920\t0.980\n"
             "click-button\t0.980\t0.980\t0.980\t0.980\t0.970\n"
             "click-tab-2\t0.960\t0.980\t0.980\t0.960\t0.980\n"
             "login-user\t1.000\t1.000\t1.000\t1.000\t0.440\n")


def bench_summary(tsv: Path, finished: float | None = 1790000600.0) -> dict:
    latency = {"capture": 12.0, "detect": 15.0, "read": 230.0, "prompt": 1.0, "llm": 1500.0, "act": 40.0,
               "settle": 300.0}
    return {
        "caap_version": "test", "started": 1790000000.0, "finished": finished,
        "config": {"tasks": ["choose-list", "click-button"], "seeds": "0-3", "workers": 2, "ablation": "none",
                   "max_steps": 10, "observer": "vision", "model": "gpt-4o", "base_url": "http://127.0.0.1:8000/v1"},
        "tasks": {
            "click-button": {"episodes": 4, "successes": 4, "success_rate": 1.0, "mean_reward": 0.9, "mean_steps": 1.0,
                             "mean_seconds_per_step": 2.1, "statuses": {"finished": 4}, "latency_ms": latency,
                             "tokens_per_episode": {"prompt": 2400.0, "completion": 80.0},
                             "cost_per_episode_usd": 0.0064, "failures": []},
            "choose-list": {"episodes": 4, "successes": 3, "success_rate": 0.75, "mean_reward": 0.4,
                            "mean_steps": 3.5, "mean_seconds_per_step": 2.8,
                            "statuses": {"finished": 3, "max_steps": 1}, "latency_ms": {"llm": 2000.0},
                            "tokens_per_episode": {"prompt": 9000.0, "completion": 300.0},
                            "cost_per_episode_usd": None,
                            "failures": [{"seed": 2, "status": "max_steps", "reason": "reached the step limit <10>",
                                          "trace": "traces/choose-list/seed-2"}]},
        },
        "overall": {"episodes": 8, "covered_tasks": 2, "mean_success_covered": 0.875, "tasks_at_least_0.8": 1,
                    "tasks_at_least_0.9": 1, "mean_success_all_67": 0.0261, "mean_steps": 2.25,
                    "mean_seconds_per_step": 2.6, "latency_ms": latency,
                    "tokens_per_episode": {"prompt": 5700.0, "completion": 190.0}, "cost_per_episode_usd": None},
        "paper": {"tsv": str(tsv), "column": "full"},
    }


@pytest.fixture
def bench_dir(tmp_path) -> Path:
    tsv = tmp_path / "paper.tsv"
    tsv.write_text(PAPER_TSV)
    out = tmp_path / "bench"
    out.mkdir()
    (out / "summary.json").write_text(json.dumps(bench_summary(tsv)))
    return out


def test_bench_report_html(bench_dir):
    summary = json.loads((bench_dir / "summary.json").read_text())
    html = render_bench(summary, Path(summary["paper"]["tsv"]))
    assert "87.5%" in html and "99.0%" in html  # ours vs the paper's mean over the same two tasks
    assert "98.0%" in html and "100.0%" in html  # the paper's per-task numbers
    assert "+2.0" in html and "-25.0" in html  # the differences, in points
    # The mean over all the paper's tasks (here the 4 in the file), tasks not run counting 0.
    assert "43.8%" in html and "98.5%" in html and "over all 4 tasks" in html
    assert 'id="uncovered"' in html
    uncovered = html.split('id="uncovered"')[1]
    assert "click-tab-2" in uncovered and "login-user" in uncovered and "click-button" not in uncovered
    assert 'href="traces/choose-list/seed-2/report.html"' in html
    assert "reached the step limit &lt;10&gt;" in html
    assert "In progress" not in html
    assert "In progress" in render_bench(bench_summary(Path(summary["paper"]["tsv"]), finished=None), None)
    # No paper file: still a page, saying so.
    assert "no such paper results file" in render_bench(summary, bench_dir / "nope.tsv")
    assert is_bench_dir(bench_dir)
    assert write_bench_report(bench_dir) == bench_dir / "report.html"


def test_bench_report_tolerates_a_partial_summary():
    html = render_bench({"finished": None, "tasks": {"x": {"success_rate": "?", "failures": ["junk", {}]}}}, None)
    assert "In progress" in html and "No paper results file" in html
    assert render_bench({}, None).startswith("<!DOCTYPE html>")


def test_paper_results_loading(tmp_path):
    with pytest.raises(ReportError, match="no such paper results file") as info:
        load_paper_results(tmp_path / "missing.tsv")
    assert "missing.tsv" in str(info.value)
    bad = tmp_path / "bad.tsv"
    bad.write_text("task\tsuccess\nclick-button\t1.0\n")
    with pytest.raises(ReportError, match="expected the header"):
        load_paper_results(bad)
    bad.write_text(PAPER_TSV.replace("0.980", "high", 1))
    with pytest.raises(ReportError, match="line 2"):
        load_paper_results(bad)
    good = tmp_path / "good.tsv"
    good.write_text(PAPER_TSV)
    assert load_paper_results(good)["click-tab-2"]["full"] == pytest.approx(0.96)
    assert {a.paper_column for a in ABLATIONS.values()} == set(PAPER_COLUMNS)
    assert ABLATIONS["none"].paper_column == "full" and ABLATIONS["no-cot-no-demos"].paper_column == "no_cot_no_demo"


@pytest.mark.parametrize("path", [ROOT / "caap" / "bench" / "data" / "caap-paper-results.tsv",
                                  Path("/work/shared/miniwob/caap-paper-results.tsv")])
def test_the_papers_table_loads(path):
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    results = load_paper_results(path)
    assert len(results) == 67 and "click-tab-2" in results
    assert all(set(r) == set(PAPER_COLUMNS) and all(0 <= v <= 1 for v in r.values()) for r in results.values())


@needs_browser
def test_bench_report_in_chromium(bench_dir, browser):
    out = write_bench_report(bench_dir)
    browser.navigate(out.as_uri())
    facts = browser.evaluate(PAGE_FACTS_JS)
    text = facts["text"]
    assert "87.5%" in text and "99.0%" in text and "click-tab-2" in text
    assert browser.evaluate("document.querySelectorAll('#uncovered li').length") == 2
    assert browser.evaluate("[...document.querySelectorAll('#uncovered li')].some(li => li.innerText.startsWith("
                            "'click-tab-2'))")
    assert browser.evaluate("document.querySelectorAll('section table tbody tr').length") == 2
    assert facts["images"] == [] and facts["cssUrls"] == 0 and facts["externalLinks"] == 0
    # The only links lead to the failed episodes' own reports, relative to the benchmark directory.
    assert _not_embedded(facts["urls"]) == ["traces/choose-list/seed-2/report.html"]


# --- the command ------------------------------------------------------------------------------------

def test_cli_writes_the_trace_report(trace_dir, tmp_path):
    result = runner.invoke(app, ["report", str(trace_dir)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert str(trace_dir / "report.html") in result.output.replace("\n", "")
    assert (trace_dir / "report.html").is_file()
    out = tmp_path / "sub" / "page.html"
    result = runner.invoke(app, ["report", str(trace_dir), "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0 and out.is_file() and "<!DOCTYPE html>" in out.read_text()


def test_cli_writes_the_bench_report(bench_dir):
    result = runner.invoke(app, ["report", str(bench_dir)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Paper tasks not run" in (bench_dir / "report.html").read_text()


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: p / "missing", "no such trace directory"),
    (lambda p: p, "not a run trace (no steps.jsonl)"),
])
def test_cli_bad_directory_gives_exit_code_2(tmp_path, make, message):
    path = make(tmp_path)
    result = runner.invoke(app, ["report", str(path)], catch_exceptions=False)
    assert result.exit_code == 2
    output = result.output.replace("\n", "")
    assert "error:" in output and message in output and str(path) in output
    assert "Traceback" not in result.output
    assert output.count("error:") == 1


# --- benchmark runs side by side ---------------------------------------------------------------------

def _oracle_summary(tsv: Path) -> dict:
    summary = bench_summary(tsv)
    summary["config"] = {**summary["config"], "observer": "oracle"}
    summary["tasks"]["choose-list"] = {**summary["tasks"]["choose-list"], "success_rate": 1.0, "successes": 4,
                                       "mean_steps": 3.0, "failures": []}
    summary["tasks"]["click-tab-2"] = {"episodes": 4, "successes": 2, "success_rate": 0.5, "mean_steps": 2.0,
                                       "mean_seconds_per_step": 0.2, "failures": []}
    return summary


@pytest.fixture
def two_runs(bench_dir) -> tuple[Path, Path]:
    tsv = Path(json.loads((bench_dir / "summary.json").read_text())["paper"]["tsv"])
    oracle = bench_dir.parent / "oracle"
    oracle.mkdir()
    (oracle / "summary.json").write_text(json.dumps(_oracle_summary(tsv)))
    return bench_dir, oracle


def test_comparison_sets_runs_side_by_side_per_task(two_runs, tmp_path):
    from caap.report.compare import load_run, render_comparison, render_comparison_markdown

    vision, oracle = two_runs
    runs = [load_run(vision), load_run(oracle)]
    html = render_comparison(runs)
    assert "vision" in html and "oracle" in html and "paper (full)" in html
    # choose-list: vision 0.75 against the oracle's 1.0 is -25 points; click-button ties.
    md = render_comparison_markdown(runs)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in md.splitlines() if line.startswith("| ")}
    assert rows["choose-list"][1:5] == ["0.75", "1.00", "-25", "1.00"]
    assert rows["click-button"][1:5] == ["1.00", "1.00", "+0", "0.98"]
    # A task only one run covered is listed with a dash for the other.
    assert rows["click-tab-2"][1:4] == ["—", "0.50", "—"]
    assert "seed 2: reached the step limit <10>" in rows["choose-list"][-1]
    # The headline: mean over the covered tasks (three decimals: 0.965 is no 0.97) and the count at
    # or above 0.95.
    assert rows["vision"][3:5] == ["0.875", "1"] and rows["oracle"][3:5] == ["0.833", "2"]


def test_cli_compares_benchmark_directories(two_runs, tmp_path):
    vision, oracle = two_runs
    md = tmp_path / "results" / "table.md"
    result = runner.invoke(app, ["report", str(vision), str(oracle), "--markdown", str(md), "--name", "eyes",
                                 "--name", "dom"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    page = (vision / "compare.html").read_text()
    assert "eyes vs dom" in page and md.read_text().startswith("# eyes vs dom")
    # Anything but benchmark directories, or options that only a comparison takes: one clear error.
    result = runner.invoke(app, ["report", str(vision), str(tmp_path)], catch_exceptions=False)
    assert result.exit_code == 2 and "only benchmark directories" in result.output.replace("\n", "")
    result = runner.invoke(app, ["report", str(vision), "--markdown", str(md)], catch_exceptions=False)
    assert result.exit_code == 2 and "comparison" in result.output
    result = runner.invoke(app, ["report", str(vision), str(oracle), "--name", "one"], catch_exceptions=False)
    assert result.exit_code == 2 and "1 names for 2" in result.output.replace("\n", "")
