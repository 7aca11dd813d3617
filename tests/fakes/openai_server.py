"""A local OpenAI-compatible server for tests: ``POST /v1/chat/completions`` answers from a script.

Each request takes the next scripted reply (the last one repeats). A reply is one of:

* a ``str``: the assistant message content (e.g. a JSON proposal, possibly with a hallucinated field id);
* a ``dict``: serialised as JSON and used as the content;
* a callable ``(request_json) -> str | dict``: computed from the request (for replies that use catalog ids);
* :class:`Fail`: an HTTP error status with a body (and headers, e.g. ``Retry-After`` for a 429);
* :class:`Hang`: sleep before answering (to trigger client timeouts);
* :class:`Raw`: a response body sent as is (an HTTP 200 whose body is not a completion, or not JSON at all).

The bad answers a real endpoint gives (tests/unit/test_llm_bad_answers.py): malformed or truncated JSON in the
message, field ids that are not in the catalog, slow answers, 429 and 5xx errors, a broken response body.

Every request body is recorded in ``server.requests``. Binds 127.0.0.1 on a random free port.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fail:
    status: int = 500
    body: str = '{"error": {"message": "scripted failure", "type": "server_error"}}'
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Raw:
    body: str
    status: int = 200


@dataclass(frozen=True)
class Hang:
    seconds: float
    then: str = "{}"


Reply = str | dict[str, Any] | Callable[[dict[str, Any]], "str | dict[str, Any]"] | Fail | Hang | Raw


class FakeOpenAI:
    def __init__(self, replies: list[Reply] | None = None, model: str = "fake-model") -> None:
        self.replies: list[Reply] = list(replies or ["{}"])
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openai", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self) -> Reply:
        with self._lock:
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]

    def _completion(self, content: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                return

            def _send(self, status: int, body: str, headers: tuple[tuple[str, str], ...] = ()) -> None:
                data = body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200, json.dumps({"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                    )
                else:
                    self._send(404, '{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, '{"error": {"message": "not found"}}')
                    return
                try:
                    request = json.loads(raw)
                except json.JSONDecodeError:
                    self._send(400, '{"error": {"message": "bad json"}}')
                    return
                with fake._lock:
                    fake.requests.append(request)
                reply = fake._next()
                if isinstance(reply, Fail):
                    self._send(reply.status, reply.body, reply.headers)
                    return
                if isinstance(reply, Raw):
                    self._send(reply.status, reply.body)
                    return
                if isinstance(reply, Hang):
                    time.sleep(reply.seconds)
                    reply = reply.then
                if callable(reply):
                    reply = reply(request)
                content = reply if isinstance(reply, str) else json.dumps(reply)
                self._send(200, json.dumps(fake._completion(content)))

        return Handler
