"""The agent loop end to end: scripted screens, the real openai client, a scripted HTTP endpoint."""

import json
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scripted_app import AppExecutor, AppObserver, ScriptedApp, checkbox_app, dropdown_app, el

from caap.agent.loop import Agent
from caap.agent.trace import TraceWriter, read_steps
from caap.config import AgentConfig, LLMConfig, Price
from caap.decide.llm import LLMClient, LLMReply, Usage
from caap.decide.parser import ToolCall
from caap.decide.prompter import CaapPrompter, PromptOptions
from caap.observe.observation import Typed
from caap.records import EpisodeStatus, Outcome, StepRecord
from caap.testing.llm_server import Failure, Reply, ScriptedLLMServer

TASK = "Select Helli from the list and click Submit."
KEY = "sk-caap-test-key-0123456789"


def make_agent(server, tmp_path, mode, app=None, **agent_kw):
    app = app or dropdown_app()
    cfg = LLMConfig(base_url=server.base_url, model="scripted", api_key=KEY, mode=mode, timeout_s=0.5,
                    backoff_initial_s=0.01, backoff_max_s=0.02, prices={"scripted": Price(input=10, output=30)})
    trace = TraceWriter(tmp_path / "runs", TASK, secrets=[KEY])
    agent = Agent(screen=app, observer=AppObserver(app), executor=AppExecutor(app), planner=LLMClient(cfg),
                  prompter=CaapPrompter(PromptOptions(mode=mode)), config=AgentConfig(**agent_kw), trace=trace)
    return agent, app, trace


TEXT_SCRIPT = [
    Reply(text="Progress: started.\nPlan: open the list, pick Helli, submit.\n"
               "Action_2=(Action: functions.click_element, Argument: {element_id: 1})\n"
               "Action_3=(Action: functions.click_element, Argument: {element_id: 2})"),
    Reply(text="The list is open. Helli is element_4.\n**Action_3**=(Action: functions.click_element, Argument: {element_id: element_4})"),
    Reply(text="Helli is chosen.\nAction_4=(Action: functions.click_element, Argument: {element_id: 2})\n"
               "Action_5=(Action: functions.done, Argument: {reason: \"submitted\"})"),
]
TOOL_SCRIPT = [
    Reply(text="Open the list first.", tool_calls=[("click_element", {"element_id": 1}), ("click_element", {"element_id": 2})]),
    Reply(tool_calls=[("click_element", '{"element_id": "element_4"}')]),
    Reply(text="Submit now.", tool_calls=[("click_element", {"element_id": 2}), ("done", {"reason": "submitted"})]),
]


@pytest.mark.parametrize(("mode", "script"), [("text", TEXT_SCRIPT), ("tools", TOOL_SCRIPT)])
def test_three_step_episode(tmp_path, mode, script):
    # A 429, a 500 and a timeout are injected before the second answer; the episode must not notice.
    script = [script[0], Failure(status=429, retry_after=0), Failure(status=500), Failure(status=0, delay_s=1.0),
              script[1], script[2]]
    with ScriptedLLMServer(script) as server:
        agent, app, trace = make_agent(server, tmp_path, mode)
        result = agent.run(TASK)
        requests = server.requests

    assert result.status == "done" and result.reason == "submitted" and result.steps == 3
    assert app.visited == ["closed", "open", "chosen", "submitted"]
    # Executed: the click on the dropdown changed the screen, so the planned click on Submit (made
    # for a screen that no longer existed) was dropped; then Helli, then Submit, then done.
    names = [(a.name, (a.element or {}).get("text"), a.point) for a in result.actions]
    assert names == [("click_element", "Theodora", [76, 65]), ("click_element", "Helli", [76, 100]),
                     ("click_element", "Submit", [49, 96]), ("done", None, None)]
    clicks = [kw for name, kw in agent.executor.calls if name == "click"]
    assert [(c["x"], c["y"]) for c in clicks] == [(76, 65), (76, 100), (49, 96)]
    assert result.actions[0].outcome == Outcome.CHANGED and result.actions[0].dropped == 1
    assert "dropped" in result.actions[0].outcome_text()
    assert "1 action(s) planned after it were dropped" in prompts_of(requests)[-1]
    # One initial frame, one per executed action, and a look at each click's target just before it.
    assert app.captures == 7

    # What the model was sent.
    prompts = [r["messages"][0]["content"] for r in requests]
    assert len(prompts) == 6
    assert ("tools" in requests[0]) == (mode == "tools")
    assert "Your Previous Answer" not in prompts[0] and "Your Previous Answer" in prompts[-1]
    assert "action_2: {name: click_element, arg: {element_id: 1, type: dropdown" in prompts[-1]
    assert '- ID: element_4, data: {type: tabled_text, X: 76 [1-152], Y: 100 [93-108], text: "Helli"' in prompts[1]
    assert '- ID: element_2, data: {type: button' in prompts[1] and "visible: False" in prompts[1]
    # Submit kept its id across the screen where it was hidden.
    assert '- ID: element_2, data: {type: button, X: 49 [1-98], Y: 96 [80-112], text: "Submit", focused: False}' in prompts[-1]

    # The trace.
    steps = read_steps(trace.dir)
    assert [s["step"] for s in steps] == [1, 2, 3]
    for s in steps:
        assert (trace.dir / s["screenshot"]).is_file()
        assert s["prompt"]["text"] and s["response"] and s["timings_ms"]["llm"] > 0
        assert s["response"]["usage"]["prompt_tokens"] > 0 and s["cost_usd"] > 0
    assert steps[1]["response"]["retries"] == 3
    assert steps[1]["response"]["attempts"] == ["rate limited (429)", "server error (500)", "timed out after 0.5s"]
    assert [a["name"] for a in steps[2]["actions"]] == ["click_element", "done"]
    summary = json.loads((trace.dir / "summary.json").read_text())
    assert summary["status"] == "done" and summary["steps"] == 3
    assert summary["cost_usd"] == pytest.approx(sum(s["cost_usd"] for s in steps))
    run = json.loads((trace.dir / "run.json").read_text()) if (trace.dir / "run.json").exists() else {}
    assert "api_key" not in json.dumps(run) or run["config"]["llm"]["api_key"] == "***"
    for f in trace.dir.iterdir():
        assert KEY.encode() not in f.read_bytes()


def prompts_of(requests):
    return [r["messages"][0]["content"] for r in requests]


class ListPlanner:
    """An in-process planner for loop mechanics (no HTTP): answers from a list, then repeats the last."""

    def __init__(self, answers, cost=0.0):
        self.answers = list(answers)
        self.cost = cost
        self.prompts = []

    def complete(self, prompt, tools=None):
        self.prompts.append(prompt)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        calls = answer if isinstance(answer, list) else []
        return LLMReply(content="" if calls else answer, tool_calls=calls, usage=Usage(10, 5), latency_s=0.0,
                        cost_usd=self.cost, retries=0, model="list")


def loop_agent(planner, **cfg):
    app = dropdown_app()
    return Agent(screen=app, observer=AppObserver(app), executor=AppExecutor(app), planner=planner,
                 prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig(**cfg)), app


def test_a_change_within_the_element_acted_on_keeps_the_plan(tmp_path):
    """Ticking a box changes that box only: the boxes and the Submit planned after it still fit the
    screen, so the whole plan runs on one answer (the dropdown test above is the other side)."""
    script = [Reply(text="Action_1=(Action: functions.click_element, Argument: {element_id: 1})\n"
                         "Action_2=(Action: functions.click_element, Argument: {element_id: 2})\n"
                         "Action_3=(Action: functions.click_element, Argument: {element_id: 3})\n"
                         "Action_4=(Action: functions.done, Argument: {reason: \"submitted\"})")]
    with ScriptedLLMServer(script) as server:
        agent, app, _ = make_agent(server, tmp_path, "text", app=checkbox_app())
        result = agent.run("Tick A and B, then click Submit.")
        assert len(server.requests) == 1
    assert result.status == "done" and app.visited == ["none", "a", "ab", "submitted"]
    outcomes = [a.outcome for a in result.actions]
    assert outcomes[:2] == ["the screen changed within the element"] * 2
    assert outcomes[2] == "the screen changed" and outcomes[3] == "done"


class LateListApp(ScriptedApp):
    """A field whose suggestion list opens a moment after typing, once the screen has looked settled,
    over the Submit button."""

    def __init__(self) -> None:
        field = el("input_field", [10, 60, 140, 80], "")
        submit = el("button", [10, 120, 100, 150], "Submit")
        super().__init__({
            "empty": [field, submit],
            "typed": [field.model_copy(update={"text": "Rus"}), submit],
            "suggestions": [field.model_copy(update={"text": "Rus"}), submit,
                            el("tabled_text", [10, 82, 140, 112], "Russia"), el("tabled_text", [10, 112, 140, 142], "Rust")],
            "picked": [field.model_copy(update={"text": "Russia"}), submit],
            "submitted": [el("text", [10, 10, 150, 30], "Thanks")],
        }, {("empty", "input_field"): "typed", ("typed", "Submit"): "submitted", ("suggestions", "Russia"): "picked",
            ("suggestions", "Rust"): "picked", ("picked", "Submit"): "submitted"}, "empty")
        self._seen_typed = 0

    def _time_passes(self) -> None:
        if self.state == "typed":
            self._seen_typed += 1
            if self._seen_typed > 1:  # the frame after typing looked settled; the list opens now
                self.state = "suggestions"
                self.visited.append(self.state)

    def capture(self):
        self._time_passes()
        return super().capture()

    def click_at(self, x, y):
        self._time_passes()
        super().click_at(x, y)


@pytest.mark.parametrize("popups", ["mark", "off"])
def test_a_click_whose_target_changed_after_the_screen_was_read_is_not_done(popups):
    """use-autocomplete: the suggestions open after the screen was read, over Submit. The click
    planned for Submit would land on a suggestion; it is held back and the screen read again."""
    app = LateListApp()
    planner = ListPlanner(["Action_1=(Action: functions.click_element, Argument: {element_id: 1})",
                           "Action_2=(Action: functions.click_element, Argument: {element_id: 2})",
                           "Action_3=(Action: functions.click_element, Argument: {element_id: 3})",
                           "Action_4=(Action: functions.click_element, Argument: {element_id: 2})\n"
                           "Action_5=(Action: functions.done, Argument: {reason: \"submitted\"})"])
    agent = Agent(screen=app, observer=AppObserver(app), executor=AppExecutor(app), planner=planner,
                  prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig(), popups=popups)
    result = agent.run("Enter a country that starts with Rus and click Submit.")
    assert result.status == "done" and app.visited == ["empty", "typed", "suggestions", "picked", "submitted"]
    assert [a.outcome for a in result.actions][1] == Outcome.NOT_DONE
    clicked = [(c["x"], c["y"]) for name, c in agent.executor.calls if name == "click"]
    assert clicked == [(75, 70), (75, 97), (55, 135)]  # the field, Russia, then Submit: none on a stale view
    if popups == "off":  # the click's own target is looked at again before it
        assert "click_element was not done: the screen changed where it was aimed" in planner.prompts[2]
        assert "appeared while you were deciding" not in planner.prompts[2]
    else:  # the list was drawn while the model decided: held back, read again, shown as what appeared
        assert "click_element was not done: something appeared on the screen while you were deciding" \
            in planner.prompts[2]
        assert "element_3, element_4 appeared while you were deciding" in planner.prompts[2]


class FieldApp(ScriptedApp):
    """A number field and a Submit button; keys change only the field."""

    def __init__(self) -> None:
        def field(text, **kw):
            return [el("input_field", [10, 60, 140, 80], text, **kw), el("button", [10, 120, 100, 150], "Submit")]

        super().__init__({"empty": field(""), "focused": field("", focused=True), "selected": field("4", focused=True),
                          "typed": field("7", focused=True)}, {("empty", "input_field"): "focused"}, "empty")

    def key(self, state: str) -> None:
        self.state = state
        self.visited.append(state)


class FieldExecutor(AppExecutor):
    def press_keys(self, keys):
        super().press_keys(keys)
        self.app.key("selected")

    def type_text(self, text):
        super().type_text(text)
        self.app.key("typed")


def test_keys_after_a_click_at_a_point_go_to_the_element_under_it():
    """guess-number: the field is clicked near its left end (a point, not an element), then its
    text selected and a number typed. Selecting changes the field only, so the plan goes on; the
    loop used to count a change after an element-less click as a change anywhere and drop the rest."""
    app = FieldApp()
    planner = ListPlanner(["Action_1=(Action: functions.click_new_point, Argument: {x: 16, y: 70})\n"
                           "Action_2=(Action: functions.press_control_A)\n"
                           "Action_3=(Action: functions.type_text, Argument: {text: \"7\"})\n"
                           "Action_4=(Action: functions.done, Argument: {reason: \"typed\"})"])
    agent = Agent(screen=app, observer=AppObserver(app), executor=FieldExecutor(app), planner=planner,
                  prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig())
    result = agent.run("Enter 7.")
    assert result.status == "done" and result.steps == 1 and app.visited == ["empty", "focused", "selected", "typed"]
    assert [a.outcome for a in result.actions[1:3]] == [Outcome.CHANGED_WITHIN] * 2


def test_the_observer_is_told_what_was_typed_into_which_field():
    """The next look reads the field back with the value typed into it (caap/observe/steps/typed.py)."""
    app = FieldApp()
    observer = AppObserver(app)
    planner = ListPlanner(["Action_1=(Action: functions.click_element, Argument: {element_id: 1})\n"
                           "Action_2=(Action: functions.press_control_A)\n"
                           "Action_3=(Action: functions.type_text, Argument: {text: \"7\"})",
                           "Action_4=(Action: functions.done, Argument: {reason: \"typed\"})"])
    agent = Agent(screen=app, observer=observer, executor=FieldExecutor(app), planner=planner,
                  prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig())
    result = agent.run("Enter 7.")
    assert result.status == "done" and result.steps == 2
    assert observer.typed == [Typed((10, 60, 140, 80), "7")]
    assert observer.names == ("Enter",)  # the task's words that may name something (read_task_names)
    # A new episode starts knowing nothing typed, and with its own task's names.
    agent.planner = ListPlanner(["Action_1=(Action: functions.done, Argument: {reason: \"nothing\"})"])
    agent.run("Nothing for Billi.")
    assert observer.typed == []
    assert observer.names == ("Nothing", "for", "Billi")


def test_invalid_answers_are_reported_back_then_the_episode_stops():
    planner = ListPlanner(["I am not sure.", "Action_2=(Action: functions.click_element, Argument: {element_id: 42})",
                           "Action_2=(Action: functions.teleport)"])
    agent, app = loop_agent(planner, max_invalid_answers=3)
    result = agent.run(TASK)
    assert result.status == "invalid_answers" and result.steps == 3 and app.state == "closed"
    assert "the answer contained no action" in planner.prompts[1]
    assert "element_42 is not on the current screen" in planner.prompts[2]


def test_recovers_after_an_invalid_answer():
    planner = ListPlanner(["no idea", "Action_2=(Action: functions.click_element, Argument: {element_id: 1})",
                           "Action_3=(Action: functions.fail, Argument: {reason: \"cannot find it\"})"])
    agent, app = loop_agent(planner)
    result = agent.run(TASK)
    assert result.status == "failed" and result.reason == "cannot find it" and app.state == "open"


def test_step_limit_time_limit_and_cost_budget():
    click = "Action_2=(Action: functions.click_new_point, Argument: {x: 150, y: 200})"  # changes nothing
    result = loop_agent(ListPlanner([click]), max_steps=4)[0].run(TASK)
    assert result.status == "max_steps" and result.steps == 4
    result = loop_agent(ListPlanner([click], cost=0.3), max_cost_usd=1.0)[0].run(TASK)
    assert result.status == "over_budget" and result.steps == 4 and result.cost_usd == pytest.approx(1.2)
    result = loop_agent(ListPlanner([click]), max_seconds=1e-9)[0].run(TASK)
    assert result.status == "timeout" and result.steps == 0


def test_stop_request_halts_before_the_next_os_event():
    stop = threading.Event()
    planner = ListPlanner(["Action_2=(Action: functions.click_new_point, Argument: {x: 150, y: 200})\n"
                           "Action_3=(Action: functions.click_new_point, Argument: {x: 151, y: 200})"])
    agent, _ = loop_agent(planner)
    agent.stop = stop
    original = agent.executor.click

    def click_then_stop(*a, **kw):
        original(*a, **kw)
        stop.set()  # e.g. the user pressed the stop hotkey during the first click

    agent.executor.click = click_then_stop
    result = agent.run(TASK)
    assert result.status == "stopped"
    assert [n for n, _ in agent.executor.calls] == ["click"]  # the second click never happened


def test_llm_failure_ends_the_episode_with_the_reason(tmp_path):
    with ScriptedLLMServer([Failure(status=500)] * 10) as server:
        agent, _, trace = make_agent(server, tmp_path, "text")
        agent.planner.config = agent.planner.config.model_copy(update={"max_retries": 1})
        result = agent.run(TASK)
    assert result.status == "llm_error" and "no answer after 2 attempts" in result.reason
    steps = read_steps(trace.dir)
    assert "no answer" in steps[0]["error"]
    assert json.loads((trace.dir / "summary.json").read_text())["status"] == "llm_error"


def test_tool_call_answer_without_prose_is_remembered_for_the_next_prompt():
    planner = ListPlanner([[ToolCall("click_element", '{"element_id": 1}')], "Action_3=(Action: functions.done)"])
    agent, _ = loop_agent(planner)
    agent.run(TASK)
    assert "functions.click_element" in planner.prompts[1].split("### Your Previous Answer ###")[1]


ANSWERS = st.one_of(
    st.text(max_size=200),
    st.builds(lambda n, a: f"Action_2=(Action: functions.{n}, Argument: {a})",
              st.sampled_from(["click_element", "type_text", "scroll", "press_key", "x", "done", "drag_mouse_move"]),
              st.text(max_size=40)),
    st.lists(st.builds(ToolCall, st.sampled_from(["click_element", "fail", "nope", "wait"]), st.text(max_size=30)),
             min_size=1, max_size=2),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(answers=st.lists(ANSWERS, min_size=1, max_size=3))
def test_fuzz_nothing_escapes_the_loop(answers):
    """Whatever the model answers, the loop ends by one of its own rules, its records say how, and
    the OS saw exactly the actions recorded as run (no drag left held)."""
    planner = ListPlanner(answers)
    agent, _ = loop_agent(planner, max_steps=3, max_invalid_answers=2)
    result = agent.run(TASK)
    assert result.status in {EpisodeStatus.DONE, EpisodeStatus.FAILED, EpisodeStatus.MAX_STEPS,
                             EpisodeStatus.INVALID_ANSWERS}
    assert result.steps == len(agent.steps) == len(planner.prompts) <= 3
    terminal = [a for a in result.actions if a.terminal]
    if result.status == EpisodeStatus.DONE:
        assert terminal == [result.actions[-1]] and terminal[0].outcome == Outcome.DONE
    elif result.status == EpisodeStatus.FAILED:
        assert terminal == [result.actions[-1]] and terminal[0].outcome == Outcome.FAIL
    elif result.status == EpisodeStatus.INVALID_ANSWERS:
        assert not terminal and all(not s.actions for s in agent.steps[-2:])
    else:
        assert not terminal and result.steps == 3
    calls = [name for name, _ in agent.executor.calls]
    ran = [a for a in result.actions if a.executed]
    assert calls.count("click") == sum(a.name == "click_element" for a in ran)
    assert calls.count("mouse_down") == calls.count("mouse_up")  # a held button is let go at the end
    for step in agent.steps:  # every record reads back from its trace line as it was (NaN too)
        line = json.dumps(step.to_json())
        assert json.dumps(StepRecord.from_json(json.loads(line)).to_json()) == line


CHILD = r"""
from scripted_app import AppExecutor, AppObserver, ScriptedApp, checkbox_app, dropdown_app, el
from caap.agent.loop import Agent
from caap.agent.trace import TraceWriter
from caap.config import AgentConfig, LLMConfig
from caap.decide.llm import LLMClient
from caap.decide.prompter import CaapPrompter, PromptOptions
app = dropdown_app()
trace = TraceWriter({root!r}, "crash test")
trace.start({{"task": "crash test"}})
agent = Agent(screen=app, observer=AppObserver(app), executor=AppExecutor(app),
              planner=LLMClient(LLMConfig(base_url={url!r}, model="scripted", mode="text", timeout_s=60)),
              prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig(), trace=trace)
agent.run("Select Helli from the list and click Submit.")
"""


def test_a_killed_run_keeps_every_finished_step(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    script = [TEXT_SCRIPT[0], TEXT_SCRIPT[1], Reply(text="too late", delay_s=30)]
    root = tmp_path / "runs"
    with ScriptedLLMServer(script) as server:
        code = CHILD.format(root=str(root), url=server.base_url)
        # scripted_app lives beside this file: the child finds it on its PYTHONPATH.
        path = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")]))
        proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": path})
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and len(server.requests) < 3:
                assert proc.poll() is None, "the child run ended early"
                time.sleep(0.05)
            assert len(server.requests) == 3  # the third LLM call is in flight
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        finally:
            if proc.poll() is None:
                proc.kill()
    trace_dir = next(root.iterdir())
    steps = read_steps(trace_dir)
    assert [s["step"] for s in steps] == [1, 2]
    assert steps[1]["actions"][0]["element"]["text"] == "Helli"
    assert (trace_dir / "step_003.png").is_file()  # the step in flight had saved its screenshot
    assert (trace_dir / "run.json").is_file() and not (trace_dir / "summary.json").exists()


def test_an_episode_that_ends_mid_drag_lets_go_of_the_button():
    hold = "Action_2=(Action: functions.drag_mouse_hold_down, Argument: {x: 150, y: 200})"
    agent, _ = loop_agent(ListPlanner([hold, "Action_3=(Action: functions.fail, Argument: {reason: \"lost\"})"]))
    assert agent.run(TASK).status == "failed"
    assert [n for n, _ in agent.executor.calls] == ["mouse_down", "mouse_up"]  # released once the episode ended
    drag = hold + "\nAction_3=(Action: functions.drag_mouse_release, Argument: {})"
    agent, _ = loop_agent(ListPlanner([drag, "Action_4=(Action: functions.done, Argument: {})"]))
    agent.run(TASK)
    assert [n for n, _ in agent.executor.calls] == ["mouse_down", "mouse_up"]  # no second release


class SliderApp(ScriptedApp):
    """A slider with its value drawn beside it, past its box (zenity's scale): Right moves the thumb
    and redraws the number, which is part of the slider, not a change elsewhere."""

    def __init__(self) -> None:
        super().__init__({}, {}, "40", size=(320, 120))
        self.value = 40

    @property
    def states(self):
        x = 20 + 2 * self.value
        return {str(self.value): [el("slider", [10, 40, 230, 70], value=self.value / 100),
                                   el("button", [x, 42, x + 10, 68], "|"),  # the thumb, drawn where the value is
                                   el("text", [246, 48, 270, 62], str(self.value)),
                                   el("button", [200, 90, 260, 115], "OK")]}

    @states.setter
    def states(self, _value) -> None:
        pass


class SliderExecutor(AppExecutor):
    def press_keys(self, keys):
        super().press_keys(keys)
        if list(keys) == ["right"]:
            self.app.value += 1
            self.app.state = str(self.app.value)


def test_a_slider_s_value_drawn_beside_it_is_part_of_the_slider():
    """Pressing Right on a slider redraws the number beside it; the rest of the plan still fits, so
    all three presses run on one answer (before, the number's change dropped the plan after the first)."""
    app = SliderApp()
    planner = ListPlanner(["Action_1=(Action: functions.click_element, Argument: {element_id: 1})\n"
                           + "".join(f"Action_{i}=(Action: functions.press_key, Argument: {{key: right}})\n"
                                     for i in (2, 3, 4)),
                           "Action_5=(Action: functions.done, Argument: {reason: \"set\"})"])
    agent = Agent(screen=app, observer=AppObserver(app), executor=SliderExecutor(app), planner=planner,
                  prompter=CaapPrompter(PromptOptions(mode="text")), config=AgentConfig())
    result = agent.run("Set the slider to 43.")
    assert result.status == "done" and app.value == 43
    assert len(planner.prompts) == 2
    assert [a.dropped for a in result.actions[:4]] == [0, 0, 0, 0]
