"""`caap bench desktop`: the task table, the checks against real applications on a private desktop
(Xvfb, D-Bus, AT-SPI), a short benchmark of the vision agent with the scripted planner that must
earn its reward, and saved tests replayed."""

from __future__ import annotations

import json
import time

import pytest
from bench_kit import bench_settings, read_episodes
from live_marks import needs_xdotool, needs_xvfb
from typer.testing import CliRunner

from caap.bench.desktop.checks import FileText, FinalState, Node, NoWindow, Output, verify_all
from caap.bench.desktop.task import KINDS
from caap.bench.desktop.tasks import TASK_LIST, TASKS, parse_desktop_tasks
from caap.cli import app


def _desktop_missing() -> str | None:
    from caap.bench.desktop.session import atspi_missing

    return atspi_missing()


needs_desktop = pytest.mark.skipif(_desktop_missing() is not None, reason=f"needs the accessibility bus: "
                                                                          f"{_desktop_missing()}")


def desktop_test(test):
    """A test on the private desktop: Xvfb, xdotool, D-Bus and AT-SPI (it starts its own)."""
    for mark in (needs_desktop, needs_xdotool, needs_xvfb, pytest.mark.display):
        test = mark(test)
    return test


# --- the table -------------------------------------------------------------------------------------


def test_the_task_table_covers_toolkits_apps_and_kinds():
    assert len(TASKS) == len(TASK_LIST)
    toolkits = {t.toolkit for t in TASK_LIST}
    assert {"gtk3"} <= toolkits
    for t in TASK_LIST:
        params = t.params_for(0)
        assert t.instruction_for(params) and "{" not in t.instruction_for(params), t.name
        assert t.checks_for(params) and all(isinstance(k, str) for k in t.kinds)
        assert t.params_for(0) == t.params_for(0)  # a seed always draws the same episode
        assert t.split == ("reserved" if t.reserved else "training")
    assert set().union(*(t.kinds for t in TASK_LIST)) <= set(KINDS)


def test_task_sets_parse():
    from caap.bench.harness import BenchError

    assert parse_desktop_tasks("all") == [t.name for t in TASK_LIST]
    assert set(parse_desktop_tasks("training")) | set(parse_desktop_tasks("reserved")) == set(TASKS)
    assert not set(parse_desktop_tasks("training")) & set(parse_desktop_tasks("reserved"))
    assert parse_desktop_tasks("zenity-entry-rename, zenity-scale-set") == ["zenity-entry-rename", "zenity-scale-set"]
    with pytest.raises(BenchError, match="unknown desktop task"):
        parse_desktop_tasks("zenity-entry-rename,nope")
    listed = CliRunner().invoke(app, ["bench", "desktop", "--list"], env={"COLUMNS": "250"})
    assert listed.exit_code == 0 and all(name in listed.output for name in TASKS)


def test_checks_read_the_final_state():
    state = FinalState(nodes=[{"role": "check box", "name": "Bold", "states": ["checked", "showing"]},
                              {"role": "spin button", "name": "Size", "states": [], "value": [12.0, 0, 99]},
                              {"role": "text", "name": "", "states": [], "text": "hello  world"}],
                       output="ada|lovelace\n", exit_code=0, windows=["Main", "Save As"])
    assert verify_all((Node("check box", "Bold", states=("checked",)), Node("spin button", "Size", value="12"),
                       Node("text", text="hello world"), Output(text="ada|lovelace"),
                       Node("radio button", "Big", exists=False)), state) == []
    failed = verify_all((Node("check box", "Bold", states=("!checked",)), Node("check box", "Italic"),
                         Node("spin button", "Size", value="13"), Output(text="ada"), Output(exit_code="1"),
                         NoWindow("Save As"), FileText("out.txt", equals="x")), state)
    assert failed == ["the check box 'Bold' is checked", "the check box 'Italic' is not shown",
                      "the spin button 'Size' is at 12.0, not 13", "it printed 'ada|lovelace', not 'ada'",
                      "the application exited with 0, not 1", "the window 'Save As' is still open",
                      "~/out.txt was not saved"]
    assert Output(text="{v}").filled({"v": "7"}) == Output(text="7")
    assert Node("check box", "{box}", states=("{s}",)).filled({"box": "Bold", "s": "checked"}) == Node(
        "check box", "Bold", states=("checked",))
    assert verify_all((Output(text="re:\\d+ files"),), FinalState(output="12 files", exit_code=0)) == []


# --- real applications -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def desktop():
    """One private desktop for the module's tests (each starts its task's application afresh)."""
    from caap.bench.desktop.env import DesktopEnv

    env = DesktopEnv()
    yield env
    env.close()


@desktop_test
def test_a_checker_fails_untouched_and_holds_once_the_dialog_is_answered(desktop):
    """zenity's entry dialog, answered with real keystrokes: the checks read what it printed."""
    desktop.open("zenity-entry-rename")
    desktop.reset(3)
    want = desktop.params["value"]
    assert desktop.reward() == 0.0 and desktop.failures == ["the application is still running (the dialog was "
                                                            "not answered)"]
    session = desktop.session
    session.xdotool("key", "ctrl+a")
    session.xdotool("type", "--delay", "20", want)
    session.xdotool("key", "Return")
    time.sleep(0.5)
    assert desktop.reward() == 1.0, desktop.failures
    desktop.reset(4)  # a fresh dialog: answered wrong, the check says what it printed
    session.xdotool("key", "Return")
    assert desktop.reward() == 0.0 and "printed 'untitled.txt'" in desktop.failures[0]


@desktop_test
def test_the_oracle_lists_the_applications_widgets(desktop):
    from caap.bench.desktop.oracle import AccessibilityOracle

    desktop.open("zenity-forms-contact")
    desktop.reset(0)
    seen = AccessibilityOracle(desktop).observe(desktop.session.capture((0, 0, *desktop.size)))
    kinds = {(e.type.value, e.text) for e in seen.elements}
    assert {("button", "OK"), ("button", "Cancel")} <= kinds
    assert sum(e.type.value == "input_field" for e in seen.elements) >= 2 and any(
        e.type.value == "dropdown" for e in seen.elements)
    assert all(p.added_by == "accessibility" for p in seen.provenance)


# --- the benchmark end to end ------------------------------------------------------------------------

# One training task per toolkit: GTK 3, GTK 4, Qt 5 and Tk.
CI_TASKS = ["zenity-checklist-tick", "gtk4-listbox-toggles", "qt5-spinboxes-values", "tk-form-contact"]


@desktop_test
def test_the_vision_agent_earns_the_reward_on_a_short_desktop_benchmark(tmp_path, planner, shipped_observer):
    """The perception gate on desktops: the shipped detector and reader, the CAAP prompt, the
    scripted planner, xdotool; every episode must end with the application in the asked state.
    The solved episodes are saved as tests and replayed without the LLM."""
    from caap.bench.harness import run_bench

    out, tests = tmp_path / "run", tmp_path / "tests"
    settings = bench_settings(out, planner, tasks=CI_TASKS, seeds=[0, 1], benchmark="desktop", max_steps=0,
                              save_tests=str(tests))
    summary = run_bench(settings)
    episodes = read_episodes(out)
    assert len(episodes) == 8
    for e in episodes:
        assert e["success"] and e["reward"] == 1.0, f"{e['task']} seed {e['seed']}: {e['status']} ({e['reason']}; " \
                                                    f"{e.get('checks_failed')})"
    assert summary["overall"]["by_split"] == {"training": {"episodes": 8, "successes": 8, "success_rate": 1.0}}
    assert set(summary["overall"]["by_toolkit"]) == {"gtk3", "gtk4", "qt5", "tk"} and "paper" not in summary
    saved = sorted(p.relative_to(tests).as_posix() for p in tests.rglob("*.json"))
    assert saved == sorted(f"{t}/seed-{s}.json" for t in CI_TASKS for s in (0, 1))
    test = json.loads((tests / "zenity-checklist-tick" / "seed-0.json").read_text())
    assert test["origin"] == {"benchmark": "desktop", "task": "zenity-checklist-tick", "seed": 0}
    assert any(step.get("expect") for step in test["steps"])  # a box ticked: the replay checks it is

    replayed = bench_settings(tmp_path / "replay", planner, tasks=CI_TASKS, seeds=[0, 1], benchmark="desktop",
                              max_steps=0, replay=str(tests))
    again = run_bench(replayed)
    assert again["overall"]["successes"] == 8, [(e["task"], e["status"], e["reason"])
                                                 for e in read_episodes(tmp_path / "replay")]
    assert again["overall"]["replayed"] == {"tests": 8, "passed": 8, "pass_rate": 1.0, "no_test": 0}


@desktop_test
def test_a_task_s_password_is_a_secret_the_model_never_reads_and_no_file_holds(tmp_path, planner, shipped_observer):
    """zenity's login dialog: the task's password is the episode's secret {PASSWORD}. The agent logs in
    (the dialog's own output says so), the saved test replays it, and no file either run wrote holds
    the password or the run's own --secret."""
    from caap.bench.harness import run_bench

    task = TASKS["zenity-password-login"]
    passwords = set(task.params["password"])
    out, tests = tmp_path / "run", tmp_path / "tests"
    settings = bench_settings(out, planner, tasks=[task.name], seeds=[0, 1], benchmark="desktop", max_steps=0,
                              save_tests=str(tests), secrets={"EXTRA": "not-on-screen-99"})
    summary = run_bench(settings)
    episodes = read_episodes(out)
    assert [e["success"] for e in episodes] == [True, True], [(e["status"], e["reason"]) for e in episodes]
    assert all('password "{PASSWORD}"' in e["utterance"] for e in episodes)
    assert summary["config"]["secrets"] == ["EXTRA"]
    replayed = run_bench(bench_settings(tmp_path / "replay", planner, tasks=[task.name], seeds=[0, 1],
                                        benchmark="desktop", max_steps=0, replay=str(tests)))
    assert replayed["overall"]["successes"] == 2, read_episodes(tmp_path / "replay")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "steps.jsonl" for p in files) and any(p.suffix == ".png" for p in files)
    for path in files:
        data = path.read_bytes()
        assert not any(s.encode() in data for s in (*passwords, "not-on-screen-99")), path
