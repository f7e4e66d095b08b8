"""The LLM client: the official ``openai`` package against any OpenAI-compatible endpoint.

Retries are ours, not the SDK's (its ``max_retries`` is set to 0), so that every retry is counted
in the trace and the backoff is configurable: timeouts, connection errors, 429 and 5xx are retried
with exponential backoff (honouring ``Retry-After``); a wrong key, an unknown model or a rejected
request stop at once with one clear message.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from caap.config import LLMConfig, Price
from caap.decide.parser import ToolCall

# Local servers (vLLM, llama.cpp, Ollama) ignore the key but the SDK insists on one.
PLACEHOLDER_KEY = "not-needed"


class LLMError(RuntimeError):
    """The endpoint could not give an answer; the message says what to fix."""

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class LLMReply:
    content: str
    tool_calls: list[ToolCall]
    usage: Usage
    latency_s: float
    cost_usd: float | None
    retries: int
    model: str
    finish_reason: str | None = None
    attempts: list[str] = field(default_factory=list)  # what went wrong on each retried attempt

    def to_json(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls],
            "usage": {"prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens},
            "latency_s": round(self.latency_s, 4),
            "cost_usd": self.cost_usd,
            "retries": self.retries,
            "attempts": self.attempts,
            "model": self.model,
            "finish_reason": self.finish_reason,
        }


def price_for(model: str, prices: dict[str, Price]) -> Price | None:
    """Exact model name first, then the longest configured prefix (``gpt-4o-2024-08-06`` → ``gpt-4o``)."""
    if model in prices:
        return prices[model]
    best = max((name for name in prices if model.startswith(name)), key=len, default=None)
    return prices[best] if best else None


def cost_of(usage: Usage, price: Price | None) -> float | None:
    if price is None:
        return None
    return (usage.prompt_tokens * price.input + usage.completion_tokens * price.output) / 1_000_000


class LLMClient:
    """One client per run; ``complete`` is safe to call repeatedly."""

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self._sleep = sleep
        key = config.api_key.get_secret_value() if config.api_key else None
        if not key:
            if config.base_url is None:
                raise LLMError(
                    "no API key: set OPENAI_API_KEY (or llm.api_key in the config), or point "
                    "--base-url / OPENAI_BASE_URL at a local OpenAI-compatible server"
                )
            key = PLACEHOLDER_KEY
        self.endpoint = config.base_url or "https://api.openai.com/v1"
        self._client: openai.OpenAI
        if config.api_version:
            if not config.base_url:
                raise LLMError(
                    "llm.api_version is set (Azure) but no endpoint: set --base-url or AZURE_OPENAI_ENDPOINT"
                )
            self._client = openai.AzureOpenAI(
                azure_endpoint=config.base_url, api_version=config.api_version, api_key=key,
                timeout=config.timeout_s, max_retries=0,
            )
        else:
            self._client = openai.OpenAI(
                api_key=key, base_url=config.base_url, timeout=config.timeout_s, max_retries=0
            )

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.config.backoff_max_s)
        delay = self.config.backoff_initial_s * (2**attempt)
        return min(delay * (0.75 + 0.5 * random.random()), self.config.backoff_max_s)

    def _fatal(self, exc: openai.APIStatusError) -> LLMError:
        status = exc.status_code
        where = f"{self.endpoint} (model {self.config.model!r})"
        if status == 401:
            return LLMError(f"the endpoint {where} rejected the API key (401): check OPENAI_API_KEY")
        if status == 403:
            return LLMError(f"the endpoint {where} refused access (403): the key lacks permission for this model")
        if status == 404:
            return LLMError(
                f"model {self.config.model!r} was not found at {self.endpoint} (404): check --model / "
                "OPENAI_MODEL and --base-url"
            )
        detail = getattr(exc, "message", str(exc))
        return LLMError(f"the endpoint {where} rejected the request ({status}): {detail}")

    def complete(self, prompt: str, tools: list[dict[str, Any]] | None = None) -> LLMReply:
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": self.config.temperature,
        }
        if self.config.max_tokens:
            kwargs["max_tokens"] = self.config.max_tokens
        if tools:
            kwargs["tools"] = tools
            kwargs["tool_choice"] = "auto"
        attempts: list[str] = []
        start = time.monotonic()
        for attempt in range(self.config.max_retries + 1):
            retry_after: float | None = None
            try:
                response = self._client.chat.completions.create(**kwargs)
                return self._reply(response, start, attempts)
            except openai.APITimeoutError:
                reason = f"timed out after {self.config.timeout_s:g}s"
            except openai.APIConnectionError as exc:
                reason = f"could not connect ({exc.__cause__ or exc})"
            except openai.RateLimitError as exc:
                reason = "rate limited (429)"
                retry_after = _retry_after(exc)
            except openai.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code not in (408, 409):
                    raise self._fatal(exc) from None
                reason = f"server error ({exc.status_code})"
                retry_after = _retry_after(exc)
            except openai.APIResponseValidationError as exc:
                reason = f"malformed response ({exc})"
            attempts.append(reason)
            if attempt < self.config.max_retries:
                self._sleep(self._backoff(attempt, retry_after))
        raise LLMError(
            f"the endpoint {self.endpoint} gave no answer after {len(attempts)} attempts "
            f"(last: {attempts[-1]})",
            retryable=True,
        )

    def _reply(self, response: Any, start: float, attempts: list[str]) -> LLMReply:
        latency = time.monotonic() - start
        if not getattr(response, "choices", None):
            raise LLMError(f"the endpoint {self.endpoint} answered with no choices")
        choice = response.choices[0]
        message = choice.message
        calls = [
            ToolCall(name=c.function.name, arguments=c.function.arguments or "", id=c.id)
            for c in (message.tool_calls or [])
            if getattr(c, "function", None) is not None
        ]
        usage = Usage(
            prompt_tokens=getattr(response.usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(response.usage, "completion_tokens", 0) or 0,
        )
        model = getattr(response, "model", None) or self.config.model
        price = price_for(self.config.model, self.config.prices) or price_for(model, self.config.prices)
        return LLMReply(
            content=message.content or "",
            tool_calls=calls,
            usage=usage,
            latency_s=latency,
            cost_usd=cost_of(usage, price),
            retries=len(attempts),
            model=model,
            finish_reason=choice.finish_reason,
            attempts=attempts,
        )


def _retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None
