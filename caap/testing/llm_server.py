"""A scripted OpenAI-compatible HTTP server for tests and offline demos.

It speaks enough of the Chat Completions API for the official ``openai`` client: ``POST
/v1/chat/completions`` and ``GET /v1/models``. Each request takes the next item of a script, or
asks a ``responder`` callable; items can be text answers, tool calls, or injected failures (an HTTP
status with an optional ``Retry-After``, or a delay longer than the client's timeout). Every request
body is recorded, so tests can assert what the agent sent.

    with ScriptedLLMServer([Reply(text="Action_2=(...)"), Failure(status=429)]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from caap.decide.tokens import estimate_tokens


@dataclass
class Reply:
    """A successful answer: prose and/or tool calls ``[(name, arguments_dict_or_str), ...]``."""

    text: str | None = None
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    delay_s: float = 0.0
    model: str | None = None


@dataclass
class Failure:
    """An injected failure: an HTTP error status, or (status 0) a stall of ``delay_s`` seconds
    before answering normally, to trigger the client's timeout."""

    status: int = 500
    retry_after: float | None = None
    delay_s: float = 0.0
    message: str = "injected failure"


Item = Reply | Failure
Responder = Callable[[dict[str, Any]], Item]


class ScriptedLLMServer:
    def __init__(
        self,
        script: Iterable[Item] = (),
        *,
        responder: Responder | None = None,
        models: Iterable[str] = ("scripted",),
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        keep_requests: int | None = None,
    ) -> None:
        """``keep_requests``: remember only the latest N request bodies (None: all — fine for a
        test, not for a server answering a benchmark's thousands of requests)."""
        self.script: list[Item] = list(script)
        self.responder = responder
        self.models = list(models)
        self.api_key = api_key
        self.keep_requests = keep_requests
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        assert isinstance(host, str)  # an AF_INET socket's name is (str, int); the stub also allows bytes
        return f"http://{host}:{port}/v1"

    def start(self) -> ScriptedLLMServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="scripted-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def push(self, *items: Item) -> None:
        with self._lock:
            self.script.extend(items)

    # --- behaviour ------------------------------------------------------------------------------
    def _next(self, body: dict[str, Any]) -> Item:
        with self._lock:
            self.requests.append(body)
            if self.keep_requests is not None and len(self.requests) > self.keep_requests:
                del self.requests[: len(self.requests) - self.keep_requests]
            if self.script:
                return self.script.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return Failure(status=500, message="the scripted server has no answer left")

    def _completion(self, body: dict[str, Any], item: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": item.text}
        if item.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for name, args in item.tool_calls
            ]
        prompt_text = "".join(
            m.get("content") or "" for m in body.get("messages", []) if isinstance(m.get("content"), str)
        )
        completion_text = (item.text or "") + "".join(
            a if isinstance(a, str) else json.dumps(a) for _, a in item.tool_calls
        )
        prompt_tokens, completion_tokens = estimate_tokens(prompt_text), estimate_tokens(completion_text)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": item.model or body.get("model", "scripted"),
            "choices": [{
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if item.tool_calls else "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to answer

            def _authorised(self) -> bool:
                if server.api_key is None:
                    return True
                if self.headers.get("Authorization") == f"Bearer {server.api_key}":
                    return True
                if self.headers.get("api-key") == server.api_key:  # Azure's header
                    return True
                self._send(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                           "code": "invalid_api_key"}})
                return False

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                if urlsplit(self.path).path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 0, "owned_by": "caap"} for m in server.models]})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                with server._lock:
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    if server.keep_requests is not None and len(server.headers) > server.keep_requests:
                        del server.headers[: len(server.headers) - server.keep_requests]
                if not self._authorised():
                    return
                route = urlsplit(self.path).path.rstrip("/")
                if not route.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "body is not JSON"}})
                    return
                # Azure names the deployment in the path: /openai/deployments/NAME/chat/completions.
                parts = route.split("/")
                if "deployments" in parts:
                    body.setdefault("model", parts[parts.index("deployments") + 1])
                    body["_path"] = self.path
                if body.get("model") not in server.models:
                    self._send(404, {"error": {"message": f"The model `{body.get('model')}` does not exist",
                                               "type": "invalid_request_error", "code": "model_not_found"}})
                    return
                item = server._next(body)
                if item.delay_s:
                    time.sleep(item.delay_s)
                if isinstance(item, Failure) and item.status:
                    headers = {"Retry-After": f"{item.retry_after:g}"} if item.retry_after is not None else {}
                    self._send(item.status, {"error": {"message": item.message, "type": "server_error"}}, headers)
                    return
                reply = item if isinstance(item, Reply) else Reply(text="")
                self._send(200, server._completion(body, reply))

        return Handler
