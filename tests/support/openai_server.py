"""A local OpenAI-compatible HTTP server for tests and benches (real HTTP, the real ``openai`` client).

Serves ``POST /v1/chat/completions`` (plain JSON, or server-sent events when the request says
``"stream": true``) and ``GET /v1/models`` on ``127.0.0.1`` at a free port::

    def responder(body: dict, call_number: int) -> Reply:
        return Reply(content='{"answer": 42}') if call_number > 0 else Reply(status=429)

    with FakeOpenAIServer(responder) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        ...
        assert len(srv.requests) == 2 and srv.max_in_flight == 1

Contract:
- ``responder(body, call_number)`` gets the request's JSON body and the 0-based number of the request
  among all chat requests this server received (so "429 on the first call, then success" is
  ``call_number == 0``). For a request with ``"n" > 1`` it is called once per choice with the same
  ``call_number`` and ``body["_choice_index"]`` set (a copy of the body; ``requests`` keeps the original).
  The first choice's ``status``/``raw_body``/``delay_s`` decide the HTTP answer (the delays are not
  summed); ``usage`` sums completion tokens over choices and takes the prompt tokens of the first.
- A non-200 ``status`` answers an OpenAI-style error body ``{"error": {"message", "type", "code"}}``;
  ``raw_body`` sends exactly that text (malformed JSON, an answer missing fields ...).
- ``delay_s`` sleeps before answering, so a client timeout can be provoked; the server survives the
  client hanging up.
- A responder that raises answers 500 with the exception text (a test sees it instead of a hang).
- ``requests`` is every chat body received, in arrival order (appended under a lock), ``headers``
  the HTTP headers of each, names lower-cased (``authorization`` ...);
  ``max_in_flight`` is the largest number of chat requests being answered at the same time, which is
  how a test proves a client's concurrency bound.

Run standalone (a bench measuring a client honestly keeps the server in another process)::

    python -m tests.support.openai_server --responder package.module:function [--port 0]

prints ``READY <base_url>`` on stdout once it listens, then serves until killed.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["FakeOpenAIServer", "Reply", "Responder", "json_reply"]


@dataclass
class Reply:
    """What the server answers for one choice of one request."""

    content: str | None = None  # the assistant message content
    status: int = 200  # e.g. 429, 500
    delay_s: float = 0.0  # sleep before answering (timeouts)
    raw_body: str | None = None  # send exactly this body (malformed JSON etc.)
    prompt_tokens: int = 10
    completion_tokens: int = 20


Responder = Callable[[dict, int], Reply]


def json_reply(payload: Any, **kw: Any) -> Reply:
    """A ``Reply`` whose content is ``payload`` serialised as JSON (the usual structured answer)."""
    return Reply(content=json.dumps(payload), **kw)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # keep-alive handler threads must not block shutdown
    allow_reuse_address = True
    request_queue_size = 256  # listen backlog (default 5): a bench opens dozens of connections at once
    owner: FakeOpenAIServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client's connection pool reuses sockets
    disable_nagle_algorithm = True  # headers and body go in separate writes; no 40 ms Nagle stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        return  # quiet: tests and benches print their own output

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (its timeout fired during our delay): nothing left to answer.
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, _error_body(404, f"no route GET {self.path}"))
            return
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.server.owner.models
        ]
        self._send(200, json.dumps({"object": "list", "data": data}).encode())

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error_body(404, f"no route POST {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._send(400, _error_body(400, f"request body is not JSON: {exc}"))
            return
        owner = self.server.owner
        call_number = owner._arrive(body, {k.lower(): v for k, v in self.headers.items()})
        try:
            self._answer(body, call_number)
        finally:
            owner._leave()

    def _answer(self, body: dict, call_number: int) -> None:
        owner = self.server.owner
        n = int(body.get("n") or 1)
        try:
            if n == 1:
                replies = [owner.responder(body, call_number)]
            else:
                replies = []
                for i in range(n):
                    choice_body = copy.deepcopy(body)
                    choice_body["_choice_index"] = i
                    replies.append(owner.responder(choice_body, call_number))
        except Exception as exc:  # noqa: BLE001 - a broken responder must answer, not hang the client
            self._send(500, _error_body(500, f"responder raised {type(exc).__name__}: {exc}"))
            return
        first = replies[0]
        if first.delay_s > 0:
            time.sleep(first.delay_s)
        if first.raw_body is not None:
            self._send(first.status, first.raw_body.encode())
            return
        if first.status != 200:
            self._send(first.status, _error_body(first.status, f"fake server answered {first.status}"))
            return
        model = str(body.get("model") or owner.models[0])
        usage = {
            "prompt_tokens": first.prompt_tokens,
            "completion_tokens": sum(r.completion_tokens for r in replies),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        completion_id = f"chatcmpl-fake-{call_number}"
        if body.get("stream"):
            self._send(200, _sse_body(completion_id, model, replies, usage), "text/event-stream")
            return
        choices = [
            {
                "index": i,
                "message": {"role": "assistant", "content": r.content},
                "finish_reason": "stop",
                "logprobs": None,
            }
            for i, r in enumerate(replies)
        ]
        payload = {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": choices,
            "usage": usage,
        }
        self._send(200, json.dumps(payload).encode())


def _error_body(status: int, message: str) -> bytes:
    kind = {429: "rate_limit_error", 400: "invalid_request_error", 404: "not_found_error"}.get(
        status, "server_error"
    )
    return json.dumps({"error": {"message": message, "type": kind, "code": status}}).encode()


def _sse_body(completion_id: str, model: str, replies: Sequence[Reply], usage: dict) -> bytes:
    """One content chunk per choice, a finish chunk per choice, a usage chunk, then ``[DONE]``."""
    base = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    events = []
    for i, r in enumerate(replies):
        delta = {"role": "assistant", "content": r.content or ""}
        events.append({**base, "choices": [{"index": i, "delta": delta, "finish_reason": None}]})
        events.append({**base, "choices": [{"index": i, "delta": {}, "finish_reason": "stop"}]})
    events.append({**base, "choices": [], "usage": usage})
    text = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return text.encode()


class FakeOpenAIServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 in a background thread (a context manager)."""

    def __init__(
        self, responder: Responder, *, models: Sequence[str] = ("fake-model",), port: int = 0
    ) -> None:
        self.responder = responder
        self.models = tuple(models)
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []  # HTTP headers (names lower-cased) of each chat request
        self.max_in_flight = 0
        self._in_flight = 0
        self._calls = 0
        self._lock = threading.Lock()
        self._port = port
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # --- bookkeeping (called from handler threads) ---
    def _arrive(self, body: dict, headers: dict[str, str]) -> int:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            number = self._calls
            self._calls += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return number

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    # --- lifecycle ---
    def start(self) -> FakeOpenAIServer:
        """Listen and serve in a daemon thread; ``base_url`` is set when this returns."""
        httpd = _Server(("127.0.0.1", self._port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self.base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _load_responder(spec: str) -> Responder:
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"--responder must be module:function, got {spec!r}")
    return getattr(importlib.import_module(module_name), attr)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a fake OpenAI-compatible endpoint until killed.")
    parser.add_argument("--responder", required=True, help="module:function returning a Reply")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--model", default="fake-model")
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(_load_responder(args.responder), models=(args.model,), port=args.port).start()
    print(f"READY {server.base_url}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
