import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from caap.cli import app
from caap.testing.llm_server import Failure, Reply, ScriptedLLMServer

ROOT = Path(__file__).resolve().parent.parent
IMAGE = ROOT / "examples" / "select-list.png"
ELEMENTS = ROOT / "examples" / "select-list.elements.json"
TASK = "Select Helli from the list and click Submit."
runner = CliRunner()


def caap(*args, env=None):
    return runner.invoke(app, list(args), env=env, catch_exceptions=False)


def test_help_describes_every_command_and_flag():
    top = caap("--help").output
    for command in ("run", "actions", "config"):
        assert command in top
    text = caap("run", "--help").output
    flags = ["--screenshot", "--elements", "--dry-run", "--show-prompt", "--demo", "--config", "--base-url",
             "--model", "--mode", "--temperature", "--max-steps", "--max-seconds", "--max-cost", "--token-budget",
             "--no-demos", "--no-rationales", "--no-cot", "--trace-dir", "--no-trace", "--json"]
    for flag in flags:
        assert flag in text, flag
    assert "OPENAI_BASE_URL" in text


def test_dry_run_plans_one_step_and_prints_target_pixels(tmp_path):
    answer = ("The list must be opened first.\n"
              "Action_2=(Action: functions.click_element, Argument: {element_id: 2})\n"
              "Action_3=(Action: functions.click_element, Argument: {element_id: 3})")
    with ScriptedLLMServer([Reply(text=answer)], models=["gpt-4o"]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-cli-secret-key"}
        result = caap("run", TASK, "--screenshot", str(IMAGE), "--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run",
                      "--mode", "text", "--show-prompt", "--trace-dir", str(tmp_path / "runs"), env=env)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "### Elements On The Current Screen ###" in out  # --show-prompt
    assert "click_element" in out and "(76, 65)" in out and "(49, 96)" in out and "Theodora" in out
    trace_dir = next((tmp_path / "runs").iterdir())
    names = sorted(p.name for p in trace_dir.iterdir())
    assert names == ["run.json", "step_001.png", "step_001_actions.png", "steps.jsonl", "summary.json"]
    for p in trace_dir.iterdir():
        assert b"sk-cli-secret-key" not in p.read_bytes()


def test_dry_run_json_output_and_ablation_flags(tmp_path):
    with ScriptedLLMServer([Reply(tool_calls=[("click_element", {"element_id": 2})])], models=["m"]) as server:
        result = caap("run", TASK, "--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--json", "--no-cot", "--no-trace",
                      "--base-url", server.base_url, "--model", "m")
        prompt = server.requests[0]["messages"][0]["content"]
        tools = server.requests[0]["tools"]
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["status"] == "max_steps" and payload["steps"] == 1
    assert payload["actions"][0]["point"] == [76, 65]
    assert payload["os_events"] == [{"call": "click", "x": 76, "y": 65, "button": "left", "count": 1, "modifiers": []}]
    assert "How To Think" not in prompt and len(tools) == 18


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--screenshot", str(IMAGE), "--elements", "missing.json", "--dry-run"], "missing.json: no such file"),
        (["--elements", str(ELEMENTS), "--screenshot", "nope.png", "--dry-run"], "nope.png: no such image file"),
        (["--screenshot", str(IMAGE), "--elements", str(ELEMENTS)], "cannot be acted on"),
        (["--screenshot", str(IMAGE), "--dry-run", "--detector", "no-weights.pt"], "or pass --elements FILE"),
        (["--elements", str(ELEMENTS), "--dry-run"], "no display"),
        (["--elements", str(ELEMENTS), "--region", "1,2,3"], "LEFT,TOP,WIDTH,HEIGHT"),
        (["--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--mode", "psychic"], "--mode must be"),
        (["--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--demo", "nodemo.json"], "no such demonstration file"),
        (["--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--max-steps", "0"], "agent.max_steps"),
    ],
)
def test_bad_input_gives_one_clear_error(tmp_path, args, message):
    result = caap("run", TASK, *args, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.exit_code == 2
    assert "error:" in result.output and message in result.output.replace("\n", "")
    assert "Traceback" not in result.output


def test_corrupt_inputs(tmp_path):
    bad_img = tmp_path / "bad.png"
    bad_img.write_bytes(b"\x89PNG not really")
    result = caap("run", TASK, "--elements", str(ELEMENTS), "--screenshot", str(bad_img), "--dry-run",
                  env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.exit_code == 2 and "not a readable image" in result.output
    bad_json = tmp_path / "els.json"
    bad_json.write_text('{"elements": [{"type": "input_field", "bbox": [0, 0, 10, 10], "checked": true}]}')
    result = caap("run", TASK, "--screenshot", str(IMAGE), "--elements", str(bad_json), "--dry-run",
                  env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert result.exit_code == 2 and "elements[0]" in result.output and "no 'checked' attribute" in result.output


def test_no_key_and_unreachable_endpoint(tmp_path):
    result = caap("run", TASK, "--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--no-trace")
    assert result.exit_code == 2 and "no API key" in result.output
    with ScriptedLLMServer([Failure(status=500)] * 20, models=["gpt-4o"]) as server:
        cfg = tmp_path / "c.toml"
        cfg.write_text('[llm]\nmax_retries = 1\nbackoff_initial_s = 0.01\n')
        result = caap("run", TASK, "--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--config", str(cfg),
                      "--trace-dir", str(tmp_path / "runs"), env={"OPENAI_BASE_URL": server.base_url})
    assert result.exit_code == 1 and "no answer after 2 attempts" in result.output
    summary = json.loads(next((tmp_path / "runs").iterdir()).joinpath("summary.json").read_text())
    assert summary["status"] == "llm_error"


def test_actions_and_config_commands():
    schemas = json.loads(caap("actions", "--json").output)
    assert len(schemas) == 18 and schemas[0]["function"]["name"] == "click_element"
    assert "drag_mouse_hold_down" in caap("actions").output
    shown = caap("config", env={"OPENAI_API_KEY": "sk-should-not-show"}).output
    assert "sk-should-not-show" not in shown and json.loads(shown)["llm"]["api_key"] == "***"


def test_console_script_is_installed(tmp_path):
    exe = shutil.which("caap", path=str(Path(sys.executable).parent)) or shutil.which("caap")
    assert exe, "the caap console script is not installed"
    with ScriptedLLMServer([Reply(text="Action_2=(Action: functions.point_element, Argument: {element_id: 3})")],
                           models=["gpt-4o"]) as server:
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url}
        proc = subprocess.run([exe, "run", TASK, "--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--json", "--no-trace"],
                              env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["actions"][0]["name"] == "point_element"
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
    assert version.stdout.strip().startswith("caap ")


def test_demonstrations_reach_the_prompt_and_can_be_ablated():
    demo = ROOT / "examples" / "select-list.demo.json"
    with ScriptedLLMServer([Reply(text="Action_2=(Action: functions.done)")] * 2, models=["gpt-4o"]) as server:
        env = {"OPENAI_BASE_URL": server.base_url}
        assert caap("run", TASK, "--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--no-trace", "--demo", str(demo), env=env).exit_code == 0
        assert caap("run", TASK, "--screenshot", str(IMAGE), "--elements", str(ELEMENTS), "--dry-run", "--no-trace", "--demo", str(demo),
                    "--no-demos", env=env).exit_code == 0
        with_demo, without = (r["messages"][0]["content"] for r in server.requests)
    assert "DEMO_1 = {\nTASK: Select Janella" in with_demo
    assert 'demo_action_3: {name: click_element, arg: {type: tabled_text, X: 76 [0-152], Y: 117 [109-126], text: "Janella"' in with_demo
    assert "DEMO_1" not in without
