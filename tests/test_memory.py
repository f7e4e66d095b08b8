"""Memory between episodes: retrieval, trajectory metrics, the action cache, experience and
auto-context — with the agent loop, the real openai client and a scripted HTTP endpoint."""

from __future__ import annotations

import json

import pytest
from scripted_app import AppExecutor, AppObserver, dropdown_app

from caap.agent.loop import Agent
from caap.config import AgentConfig, LLMConfig
from caap.decide.demos import Demonstration, DemoStep, load_demo, save_demo
from caap.decide.llm import LLMClient
from caap.decide.prompter import CaapPrompter, PromptOptions
from caap.elements import Element
from caap.memory.autocontext import demo_from_steps, save_auto_demo
from caap.memory.cache import ActionCache, CacheError, cache_key
from caap.memory.experience import Attempt, ExperienceStore, cap, parse_rules
from caap.memory.families import family_of
from caap.memory.retrieval import DemoStore
from caap.memory.session import Memory, MemoryOptions
from caap.memory.trajectory import match, signatures
from caap.records import ActionRecord, Outcome
from caap.taxonomy import ElementType
from caap.testing.llm_server import Reply, ScriptedLLMServer

TASK = "Select Helli from the list and click Submit."
SCRIPT = [
    Reply(tool_calls=[("click_element", {"element_id": 1})]),
    Reply(tool_calls=[("click_element", {"element_id": 4})]),
    Reply(tool_calls=[("click_element", {"element_id": 2}), ("done", {"reason": "submitted"})]),
]


def demo(task: str, n: int = 1, family: str | None = None) -> Demonstration:
    steps = [DemoStep(action="click_element", args={"element_id": 1},
                      element=Element(type=ElementType.BUTTON, bbox=(0, 0, 10, 10), text="OK"))] * n
    return Demonstration(task=task, steps=steps, family=family)


def client(server) -> LLMClient:
    return LLMClient(LLMConfig(base_url=server.base_url, model="scripted", api_key="k", mode="tools",
                               timeout_s=2, backoff_initial_s=0.01, backoff_max_s=0.02))


def agent_for(server, memory: Memory, app=None) -> Agent:
    app = app or dropdown_app()
    return Agent(screen=app, observer=AppObserver(app), executor=AppExecutor(app), planner=client(server),
                 prompter=CaapPrompter(PromptOptions(mode="tools")), config=AgentConfig(max_steps=6),
                 cache=memory.cache, experience=memory.experience_lines(TASK), family=None,
                 demonstrations=memory.demonstrations(TASK))


# --- retrieval and families -----------------------------------------------------------------------


def test_bm25_ranks_the_similar_task_first_and_honours_family_and_exclusion(tmp_path):
    store = DemoStore([demo("Click on the checkbox labelled Ab and press Submit."),
                       demo("Select Ewe from the dropdown and click Submit."),
                       demo("Drag the item up to the top of the list."),
                       demo("Select Ox from the dropdown and click Submit.", family="choose-list", n=3)])
    got = store.top_k("Select Fido from the dropdown and click Submit.", 2)
    assert [d.task for d in got] == ["Select Ewe from the dropdown and click Submit.",  # shorter of the two ties
                                     "Select Ox from the dropdown and click Submit."]
    assert store.top_k("Select Fido from the dropdown and click Submit.", 1, family="choose-list")[0].family
    assert store.top_k("Select Ewe from the dropdown and click Submit.", 4, exclude_task=True)[0].task.startswith(
        "Select Ox")
    assert store.top_k("completely unrelated words", 3) == []
    save_demo(demo("Press the red button."), tmp_path / "a" / "b" / "one.json")
    assert len(DemoStore.load([tmp_path])) == 1  # directories are searched recursively


def test_families_blank_values_but_keep_the_template():
    assert family_of('Type "hello" into the box and press 3 keys') == family_of("Type 'bye' into the box and press 12 keys")
    assert family_of("anything", "click-button") == "click-button"


# --- trajectory metrics ------------------------------------------------------------------------------


def test_exact_and_prefix_match():
    def rec(name, args, element=None, outcome=Outcome.CHANGED):
        return ActionRecord(name=name, args=args, element=element, outcome=outcome)

    ok = rec("click_element", {"element_id": 3}, {"type": "button", "text": "OK", "bbox": [0, 0, 9, 9]})
    other = rec("click_element", {"element_id": 3}, {"type": "button", "text": "No", "bbox": [0, 0, 9, 9]})
    typed = rec("type_text", {"string_to_type": "x"})
    done = rec("done", {}, outcome=Outcome.DONE)
    ref = signatures([ok, typed])
    assert match(signatures([ok, typed, done]), ref) == {"exact": 1.0, "prefix": 1.0}
    assert match(signatures([other, typed]), ref) == {"exact": 0.0, "prefix": 0.0}
    assert match(signatures([ok]), ref) == {"exact": 0.0, "prefix": 0.5}
    assert match(signatures([other, typed], "action"), signatures([ok, typed], "action"))["exact"] == 1.0
    # Refused and failed actions are no part of the trajectory.
    denied = rec("click_element", {"element_id": 4}, outcome=Outcome.DENIED)
    failed = rec("press_key", {"key": "enter"}, outcome=Outcome.ERROR)
    assert signatures([ok, denied, failed, typed]) == ref
    # A demonstration's steps (``action``, an Element) sign the same as the episode's records.
    steps = [DemoStep(action="click_element", args={"element_id": 9},
                      element=Element(type="button", bbox=[0, 0, 9, 9], text="OK")),
             DemoStep(action="type_text", args={"string_to_type": "x"}), DemoStep(action="done")]
    assert signatures(steps) == ref


# --- the action cache ------------------------------------------------------------------------------


def test_cache_skips_the_llm_on_a_solved_screen_and_records_hits(tmp_path):
    memory = Memory(MemoryOptions(cache=tmp_path / "cache.json"))
    with ScriptedLLMServer(list(SCRIPT)) as server:
        first = agent_for(server, memory)
        result = first.run(TASK)
        assert result.status == "done" and len(server.requests) == 3
        assert [s.cache for s in first.steps] == ["miss", "miss", "miss"]
        memory.finish(TASK, success=True, status=result.status, reason=result.reason, steps=first.steps)

        again = Memory(MemoryOptions(cache=tmp_path / "cache.json"))  # a new process: read from the file
        second = agent_for(server, again)
        result = second.run(TASK)
        assert result.status == "done" and len(server.requests) == 3  # no new LLM call
        assert [s.cache for s in second.steps] == ["hit", "hit", "hit"]
        assert second.executor.app.visited == ["closed", "open", "chosen", "submitted"]
        assert again.cache.hit_rate == 1.0 and result.prompt_tokens == 0


def test_cache_finds_moved_elements_and_drops_what_it_cannot_find(tmp_path):
    cache = ActionCache(tmp_path / "c.json")
    ok = Element(id=1, type=ElementType.BUTTON, bbox=(10, 10, 50, 30), text="OK")
    key = cache_key("press ok", [ok], [])
    from caap.act.actions import ScreenState, plan

    cache.note(key, "press ok", [plan("click_element", {"element_id": 1}, ScreenState([ok], 160, 210))])
    cache.end_episode(success=True)
    moved = Element(id=7, type=ElementType.BUTTON, bbox=(80, 150, 120, 170), text="OK")
    assert cache_key("press ok", [moved], []) == key  # identity ignores positions
    hit = cache.lookup(key, [moved], 160, 210)
    assert hit is not None and hit[0].args["element_id"] == 7 and hit[0].point == (100, 160)
    cache.end_episode(success=False)  # the episode that used it failed: the variant goes
    assert cache.lookup(key, [moved], 160, 210) is None
    assert json.loads((tmp_path / "c.json").read_text())["entries"] == {}


def test_failed_episodes_are_not_cached_and_processes_merge(tmp_path):
    path = tmp_path / "c.json"
    a, b = ActionCache(path), ActionCache(path)
    from caap.act.actions import ScreenState, plan

    e = Element(id=1, type=ElementType.BUTTON, bbox=(10, 10, 50, 30), text="A")
    action = plan("click_element", {"element_id": 1}, ScreenState([e], 100, 100))
    a.note("k1", "t", [action])
    a.end_episode(success=False)
    assert json.loads(path.read_text())["entries"] == {}
    a.note("k1", "t", [action])
    b.note("k2", "t", [action])
    a.end_episode(success=True)
    b.end_episode(success=True)  # b read the file before a wrote: a's entry must survive
    assert set(json.loads(path.read_text())["entries"]) == {"k1", "k2"}
    path.write_text("{not json")
    with pytest.raises(CacheError, match="unreadable action cache"):
        ActionCache(path)


# --- experience and auto-context -------------------------------------------------------------------


def test_experience_records_bounded_attempts_and_llm_rules(tmp_path):
    store = ExperienceStore(tmp_path, max_failures=2, max_rules=3, rule_chars=60)
    for i in range(4):
        store.record("click-button", Attempt(task=f"t{i}", status="max_steps"), success=False)
    assert [a.task for a in store.get("click-button").failures] == ["t2", "t3"]
    answer = ("Here are rules:\n- Click the button whose text matches the task exactly.\n"
              "* Press submit only once.\n2. " + "Very long rule. " * 10 + "\nnot a rule")
    with ScriptedLLMServer([Reply(text=answer)]) as server:
        added = store.derive_rules(client(server), "click-button", Attempt(
            task="Click on the 'ok' button.", status="max_steps", reason="ran out of steps",
            actions=["{name: click_element, arg: {type: button, text: \"no\"}}"]))
        prompt = server.requests[0]["messages"][0]["content"]
    assert "Click on the 'ok' button." in prompt and "ran out of steps" in prompt and 'text: \\"no\\"' not in prompt
    assert added[0] == "Click the button whose text matches the task exactly."
    assert len(added) == 3 and all(len(r) <= 61 for r in added)
    assert store.add_rules("click-button", ["press submit only once."]) == []  # a duplicate
    store.record("click-button", Attempt(task="t", status="done", actions=["{name: click_element}"]), success=True)
    lines = store.prompt_lines("click-button")
    assert lines[0].startswith("- Click the button") and "A successful earlier attempt ('t'):" in lines
    (tmp_path / next(p.name for p in tmp_path.glob("click-button-*.json"))).write_text("[]")
    with pytest.raises(Exception, match="unreadable experience file"):
        store.get("click-button")
    assert parse_rules("1) one\n- two") == ["one", "two"] and cap("Alpha beta gamma. Delta epsilon zeta", 24) == "Alpha beta gamma."
    assert cap("Alpha beta gamma delta", 14) == "Alpha beta…"


def test_experience_reaches_the_prompt(tmp_path):
    memory = Memory(MemoryOptions(experience=tmp_path / "exp"))
    memory.experience.add_rules(family_of(TASK), ["Open the list before choosing from it."])
    with ScriptedLLMServer(list(SCRIPT)) as server:
        agent = agent_for(server, memory)
        agent.run(TASK)
        prompt = server.requests[0]["messages"][0]["content"]
    assert "### Lessons From Earlier Attempts ###" in prompt and "- Open the list before choosing from it." in prompt


def test_a_successful_run_becomes_a_demonstration_at_most_twice_per_family(tmp_path):
    auto = tmp_path / "auto"
    memory = Memory(MemoryOptions(auto_context=auto, experience=tmp_path / "exp"))
    with ScriptedLLMServer(list(SCRIPT) * 4) as server:
        for _ in range(3):
            agent = agent_for(server, memory)
            result = agent.run(TASK)
            kept = memory.finish(TASK, success=True, status=result.status, reason=result.reason,
                                 steps=agent.steps, screen=(160, 210))
    files = sorted(auto.glob("*.json"))
    assert len(files) == 2 and kept["auto_context"] is None  # the third was no shorter
    saved = load_demo(files[0])
    assert saved.source == "auto-context" and [s.element.text for s in saved.steps] == ["Theodora", "Helli", "Submit"]
    assert saved.steps[0].before and saved.steps[0].after and saved.steps[0].before != saved.steps[0].after
    shorter = demo_from_steps(TASK, agent.steps[-1:], family=None)
    assert len(shorter.steps) == 1 and save_auto_demo(auto, shorter) is not None  # replaces a longer one
    assert sorted(len(load_demo(f).steps) for f in auto.glob("*.json")) == [1, 3]
    # And a later episode is shown it.
    fresh = Memory(MemoryOptions(auto_context=auto))
    assert fresh.demonstrations(TASK)[0].task == TASK


def test_one_screen_content_in_two_layouts_keeps_two_variants(tmp_path):
    from caap.act.actions import ScreenState, plan

    cache = ActionCache(tmp_path / "c.json")
    left = Element(id=1, type=ElementType.BUTTON, bbox=(5, 5, 30, 20))  # no text: found by position only
    right = Element(id=1, type=ElementType.BUTTON, bbox=(120, 180, 145, 195))
    key = cache_key("click the button", [left], [])
    for button in (left, right):
        assert cache.lookup(key, [button], 160, 210) is None
        cache.note(key, "t", [plan("click_element", {"element_id": 1}, ScreenState([button], 160, 210))])
        cache.end_episode(success=True)
    assert [cache.lookup(key, [b], 160, 210)[0].point for b in (left, right)] == [(17, 12), (132, 187)]
    assert cache.hits == 2 and cache.lookups == 4


def test_bench_summary_reports_cache_hit_rate_and_reference_match(tmp_path):
    from caap.bench.harness import BenchSettings, summarize

    settings = BenchSettings(tasks=["click-test"], seeds=[0, 1], out=tmp_path)
    episodes = [{"task": "click-test", "seed": 0, "success": True, "steps": 1, "seconds": 1.0,
                 "cache": {"lookups": 1, "hits": 0}, "reference": {"exact": 1.0, "prefix": 1.0}},
                {"task": "click-test", "seed": 1, "success": True, "steps": 2, "seconds": 1.0,
                 "cache": {"lookups": 2, "hits": 2}, "reference": {"exact": 0.0, "prefix": 0.5}}]
    task = summarize(settings, episodes)["tasks"]["click-test"]
    assert task["cache"] == {"lookups": 3, "hits": 2, "hit_rate": 0.6667}
    assert task["reference_match"] == {"episodes": 2, "exact": 0.5, "prefix": 0.75}


def test_bench_refuses_broken_memory_files_before_starting(tmp_path):
    from caap.bench.harness import BenchError, BenchSettings

    (tmp_path / "cache.json").write_text("{broken")
    with pytest.raises(BenchError, match="unreadable action cache"):
        BenchSettings(tasks=["click-test"], seeds=[0], out=tmp_path / "o", cache=str(tmp_path / "cache.json")).check()
    auto = tmp_path / "auto"
    auto.mkdir()
    (auto / "x.json").write_text('{"task": 3}')
    with pytest.raises(BenchError, match=r"x\.json"):
        BenchSettings(tasks=["click-test"], seeds=[0], out=tmp_path / "o", auto_context=str(auto)).check()
