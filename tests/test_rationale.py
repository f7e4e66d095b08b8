"""`caap rationalize`: prompts, concurrency, cache, length cap, failures, through the real openai
client talking HTTP to the scripted server."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from typer.testing import CliRunner

from caap.cli import app
from caap.decide.demos import Demonstration, DemoStep, load_demo, save_demo
from caap.decide.rationale import build_prompt, cap_rationale
from caap.elements import Element
from caap.testing.llm_server import Failure, Reply, ScriptedLLMServer

DROPDOWN = Element(id=1, type="dropdown", bbox=[0, 56, 152, 77], text="Storm", focused=False)
SUBMIT = Element(id=2, type="button", bbox=[1, 80, 98, 112], text="Submit", focused=False)
JANELLA = Element(id=3, type="tabled_text", bbox=[0, 109, 152, 126], text="Janella", highlighted=False)
FIELD = Element(id=4, type="input_field", bbox=[10, 10, 150, 30], text="", focused=True)


def make_demo(n_extra: int = 0) -> Demonstration:
    steps = [
        DemoStep(action="click_element", args={"element_id": 1}, element=DROPDOWN,
                 before=[DROPDOWN, SUBMIT], after=[DROPDOWN, JANELLA]),
        DemoStep(action="click_element", args={"element_id": 3}, element=JANELLA,
                 before=[DROPDOWN, JANELLA], after=[DROPDOWN.model_copy(update={"text": "Janella"}), SUBMIT]),
        DemoStep(action="click_element", args={"element_id": 2}, element=SUBMIT, before=[DROPDOWN, SUBMIT], after=[]),
    ]
    for i in range(n_extra):
        steps.append(DemoStep(action="type_text", args={"string_to_type": f"word {i}"}, before=[FIELD], after=[FIELD]))
    return Demonstration(task="Select Janella from the list and click Submit.", steps=steps)


def step_of(body: dict) -> int:
    """Which action a rationale request is about (action_2 is step 1)."""
    text = body["messages"][0]["content"]
    marker = "### The Action To Explain ###\naction_"
    return int(text.split(marker, 1)[1].split(":", 1)[0]) - 1


@pytest.fixture
def env(tmp_path):
    def make(server_or_url, **extra):
        url = server_or_url if isinstance(server_or_url, str) else server_or_url.base_url
        return {"OPENAI_BASE_URL": url, "OPENAI_MODEL": "scripted", "CAAP_LLM__BACKOFF_INITIAL_S": "0.01",
                "CAAP_LLM__BACKOFF_MAX_S": "0.02", "CAAP_LLM__MAX_RETRIES": "1", **extra}
    return make


def invoke(args, env):
    return CliRunner().invoke(app, ["rationalize", *map(str, args)], env=env)


def test_prompt_has_task_history_action_and_both_screens():
    demo = make_demo()
    demo.steps[0].rationale = "Opening the dropdown shows the names."
    prompt = build_prompt(demo, 1)
    assert "Select Janella from the list and click Submit." in prompt
    assert "action_1: {name: start}" in prompt
    # the step before, with its kept rationale
    assert 'action_2: {name: click_element, arg: {type: dropdown' in prompt
    assert 'reason: "Opening the dropdown shows the names."' in prompt
    # the action itself, described by its element, not its id
    assert 'action_3: {name: click_element, arg: {type: tabled_text, X: 76 [0-152], Y: 117 [109-126], ' \
           'text: "Janella", highlighted: False}}' in prompt
    before, after = prompt.split("### Screen Before action_3 ###")[1].split("### Screen After action_3 ###")
    assert "- ID: element_3, data: {type: tabled_text" in before and '"Storm"' in before
    assert 'text: "Janella", focused: False' in after and "element_2, data: {type: button" in after
    assert "X: centre_x" in before  # the coordinate note the agent's prompt uses
    # a step whose rationale is being rewritten is not shown to later steps
    assert "Opening the dropdown" not in build_prompt(demo, 1, kept=[False, False, False])


def test_masked_and_unrecorded_screens_are_said_plainly():
    demo = Demonstration(task="Log in.", steps=[DemoStep(action="type_text", args={"string_to_type": "****"},
                                                          masked=True)])
    prompt = build_prompt(demo, 0)
    assert "password-like field" in prompt and prompt.count("(not recorded)") == 2


def test_cap_rationale_cuts_at_a_sentence_and_folds_whitespace():
    text = "  First   sentence here.\n\nSecond one is longer than that!  Third sentence never fits. "
    assert cap_rationale(text, 1000) == "First sentence here. Second one is longer than that! Third sentence never fits."
    assert cap_rationale(text, 60) == "First sentence here. Second one is longer than that!"
    assert cap_rationale(text, 30) == "First sentence here."
    one_long = "word " * 40
    capped = cap_rationale(one_long, 50)
    assert len(capped) <= 50 and capped.endswith("word…")
    assert cap_rationale('"Quoted answer."', 100) == "Quoted answer."


def test_writes_every_rationale_concurrently_and_caches(tmp_path, env):
    files = []
    for k in range(2):
        path = tmp_path / f"demo{k}.json"
        demo = make_demo(n_extra=3)
        demo.task = f"{demo.task} (copy {k})"  # different prompts: no cache hit between the two files
        save_demo(demo, path)
        files.append(path)
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def responder(body):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.15)  # slow answers, so that calls overlap as far as the limit allows
        with lock:
            state["now"] -= 1
        return Reply(text=f"Because of step {step_of(body)}.")

    cache = tmp_path / "cache"
    with ScriptedLLMServer(responder=responder) as server:
        result = invoke([*files, "--concurrency", "3", "--cache", cache], env(server))
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 12 and state["max"] == 3
        for path in files:
            demo = load_demo(path)
            assert [s.rationale for s in demo.steps] == [f"Because of step {i}." for i in range(1, 7)]
        assert "12 steps: 12 written, 0 from the cache, 0 skipped, 0 failed" in result.output

        # Nothing left to do: every step is skipped, no request.
        result = invoke([*files, "--cache", cache], env(server))
        assert result.exit_code == 0 and len(server.requests) == 12

        # --force asks the same prompts again: all answered from the cache, no request.
        result = invoke([*files, "--force", "--cache", cache], env(server))
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 12 and "12 written" not in result.output
        assert "12 steps: 0 written, 12 from the cache" in result.output
        assert load_demo(files[0]).steps[0].rationale == "Because of step 1."

        # A fresh copy of the file is answered from the cache as well.
        fresh = tmp_path / "fresh.json"
        save_demo(load_demo(files[1]).model_copy(update={"steps": make_demo(n_extra=3).steps}), fresh)
        result = invoke([fresh, "--cache", cache], env(server))
        assert result.exit_code == 0 and len(server.requests) == 12
        assert load_demo(fresh).steps[5].rationale == "Because of step 6."

        # Without the cache, --force calls again.
        result = invoke([fresh, "--force", "--no-cache", "--concurrency", "1"], env(server))
        assert result.exit_code == 0 and len(server.requests) == 18 and state["max"] == 3


def test_long_answers_are_capped(tmp_path, env):
    path = tmp_path / "d.json"
    save_demo(make_demo(), path)
    answer = "The dropdown held the names.   " + "It was the only way to reach the list. " * 20
    with ScriptedLLMServer(responder=lambda body: Reply(text=answer)) as server:
        result = invoke([path, "--max-chars", "100", "--no-cache"], env(server))
    assert result.exit_code == 0, result.output
    for step in load_demo(path).steps:
        assert step.rationale == "The dropdown held the names. It was the only way to reach the list."


def test_a_failed_step_stays_without_rationale_and_is_reported(tmp_path, env):
    path = tmp_path / "d.json"
    save_demo(make_demo(), path)

    def responder(body):
        step = step_of(body)
        if step == 2:
            return Failure(status=500, message="boom")
        if step == 3:
            return Reply(text="")  # an answer with nothing in it
        return Reply(text="Fine.")

    with ScriptedLLMServer(responder=responder) as server:
        result = invoke([path, "--no-cache"], env(server))
    assert result.exit_code == 1
    steps = load_demo(path).steps
    assert [s.rationale for s in steps] == ["Fine.", None, None]
    assert "step 2: the endpoint" in result.output and "server error (500)" in result.output
    assert "step 3: the model answered with no text" in result.output


def test_force_rewrites_existing_rationales(tmp_path, env):
    path = tmp_path / "d.json"
    demo = make_demo()
    demo.steps[0].rationale = "Old reason."
    save_demo(demo, path)
    with ScriptedLLMServer(responder=lambda body: Reply(text=f"New {step_of(body)}.")) as server:
        result = invoke([path, "--no-cache"], env(server))
        assert result.exit_code == 0, result.output
        assert [s.rationale for s in load_demo(path).steps] == ["Old reason.", "New 2.", "New 3."]
        assert len(server.requests) == 2
        assert "Old reason." in server.requests[0]["messages"][0]["content"]  # kept: shown to later steps
        result = invoke([path, "--no-cache", "--force"], env(server))
        assert result.exit_code == 0, result.output
        assert [s.rationale for s in load_demo(path).steps] == ["New 1.", "New 2.", "New 3."]
        assert len(server.requests) == 5
        assert all("Old reason." not in r["messages"][0]["content"] for r in server.requests[2:])


def test_bad_file_is_one_clear_error(tmp_path, env):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = invoke([bad], env("http://127.0.0.1:9/v1"))
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "bad.json: not a readable JSON demonstration" in lines[0]
    missing = invoke([tmp_path / "nope.json"], env("http://127.0.0.1:9/v1"))
    assert missing.exit_code == 2 and "no such demonstration file" in missing.output


def test_unreachable_endpoint_is_a_clear_error_and_the_file_is_unchanged(tmp_path, env):
    path = tmp_path / "d.json"
    save_demo(make_demo(), path)
    before = path.read_text()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = invoke([path, "--no-cache"], env(f"http://127.0.0.1:{port}/v1", CAAP_LLM__MAX_RETRIES="0"))
    assert result.exit_code == 1
    assert "could not connect" in result.output and "step 1, " in result.output
    failed = [line for line in result.output.splitlines() if line.startswith("failed:")]
    assert len(failed) == 1  # one line for one reason, naming all three steps
    assert path.read_text() == before


def test_a_rejected_request_stops_the_calls_not_yet_started(tmp_path, env):
    path = tmp_path / "d.json"
    save_demo(make_demo(n_extra=5), path)
    with ScriptedLLMServer(responder=lambda body: Reply(text="never"), models=["other"]) as server:
        result = invoke([path, "--no-cache", "--concurrency", "1"], env(server))
    assert result.exit_code == 1
    assert "was not found" in result.output and len(server.requests) == 0
    assert len(server.headers) == 1  # the unknown model was asked about once, not eight times
    assert all(s.rationale is None for s in load_demo(path).steps)


def test_no_key_and_no_endpoint_is_exit_2(tmp_path):
    path = tmp_path / "d.json"
    save_demo(make_demo(), path)
    result = CliRunner().invoke(app, ["rationalize", str(path)])
    assert result.exit_code == 2 and "no API key" in result.output
    assert json.loads(path.read_text())["steps"][0].get("rationale") is None
