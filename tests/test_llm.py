import socket

import pytest

from caap.config import LLMConfig, Price
from caap.decide.llm import LLMClient, LLMError, price_for
from caap.testing.llm_server import Failure, Reply, ScriptedLLMServer


def config(server, **kw):
    base = {"base_url": server.base_url, "model": "scripted", "api_key": "sk-test", "timeout_s": 2.0,
            "max_retries": 4, "backoff_initial_s": 0.01, "backoff_max_s": 0.05,
            "prices": {"scripted": Price(input=1.0, output=4.0)}}
    base.update(kw)
    return LLMConfig(**base)


def test_text_and_tool_call_answers_with_usage_and_cost():
    with ScriptedLLMServer([Reply(text="Action_2=(Action: functions.done)"),
                            Reply(text="thinking", tool_calls=[("click_element", {"element_id": 2})])]) as server:
        client = LLMClient(config(server))
        r = client.complete("hello prompt")
        assert r.content == "Action_2=(Action: functions.done)" and r.tool_calls == [] and r.retries == 0
        assert r.usage.prompt_tokens > 0 and r.cost_usd == pytest.approx(
            (r.usage.prompt_tokens * 1.0 + r.usage.completion_tokens * 4.0) / 1e6)
        tools = [{"type": "function", "function": {"name": "click_element", "parameters": {"type": "object"}}}]
        r = client.complete("again", tools)
        assert r.tool_calls[0].name == "click_element" and r.tool_calls[0].arguments == '{"element_id": 2}'
        sent = server.requests[1]
        assert sent["temperature"] == 0.0 and sent["tools"] == tools and sent["messages"][0]["content"] == "again"
        assert "tools" not in server.requests[0]
        assert server.headers[0]["authorization"] == "Bearer sk-test"


def test_retries_429_500_and_timeouts_then_succeeds():
    script = [Failure(status=429, retry_after=0), Failure(status=500), Failure(status=503),
              Failure(status=0, delay_s=1.5), Reply(text="ok")]
    with ScriptedLLMServer(script) as server:
        sleeps = []
        client = LLMClient(config(server, timeout_s=0.5), sleep=sleeps.append)
        r = client.complete("p")
        assert r.content == "ok" and r.retries == 4
        assert r.attempts == ["rate limited (429)", "server error (500)", "server error (503)", "timed out after 0.5s"]
        assert sleeps[0] == 0  # Retry-After honoured
        assert all(0 < s <= 0.05 for s in sleeps[1:])
        assert len(server.requests) == 5


def test_gives_up_after_max_retries_with_a_clear_error():
    with ScriptedLLMServer([Failure(status=500)] * 3) as server:
        client = LLMClient(config(server, max_retries=2), sleep=lambda s: None)
        with pytest.raises(LLMError, match=r"no answer after 3 attempts \(last: server error \(500\)\)") as info:
            client.complete("p")
        assert info.value.retryable


def test_wrong_key_and_unknown_model_fail_at_once():
    with ScriptedLLMServer([Reply(text="never")], api_key="right-key") as server:
        with pytest.raises(LLMError, match="rejected the API key"):
            LLMClient(config(server, api_key="wrong")).complete("p")
        with pytest.raises(LLMError, match="model 'gpt-9' was not found"):
            LLMClient(config(server, api_key="right-key", model="gpt-9")).complete("p")
        assert server.requests == []  # neither reached the script


def test_unreachable_endpoint():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = LLMConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1, backoff_initial_s=0.01)
    with pytest.raises(LLMError, match="could not connect"):
        LLMClient(cfg).complete("p")


def test_missing_key_for_the_default_endpoint_is_explained():
    with pytest.raises(LLMError, match="no API key"):
        LLMClient(LLMConfig())


def test_price_lookup_by_prefix():
    prices = {"gpt-4o": Price(input=1, output=2), "gpt-4o-mini": Price(input=3, output=4)}
    assert price_for("gpt-4o-2024-08-06", prices).input == 1
    assert price_for("gpt-4o-mini-2024", prices).input == 3
    assert price_for("llama3", prices) is None


def test_azure_endpoint_with_api_version():
    with ScriptedLLMServer([Reply(text="hi")], models=["my-deployment"], api_key="azure-key") as server:
        root = server.base_url.removesuffix("/v1")
        cfg = LLMConfig(base_url=root, api_version="2024-10-21", api_key="azure-key", model="my-deployment")
        assert LLMClient(cfg).complete("p").content == "hi"
        assert "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21" in server.requests[0]["_path"]
        assert server.headers[0]["api-key"] == "azure-key"
