"""The fake OpenAI-compatible server answers the real ``openai`` client like an endpoint would."""

from __future__ import annotations

import json
import threading

import openai
import pytest

from tests.support.openai_server import FakeOpenAIServer, Reply, json_reply


def _client(srv: FakeOpenAIServer, **kw: object) -> openai.OpenAI:
    return openai.OpenAI(base_url=srv.base_url, api_key="test-key", **kw)  # type: ignore[arg-type]


def test_it_answers_a_chat_completion_with_content_and_usage() -> None:
    with FakeOpenAIServer(
        lambda body, n: json_reply({"ok": True}, prompt_tokens=7, completion_tokens=3)
    ) as srv:
        resp = _client(srv).chat.completions.create(model="m1", messages=[{"role": "user", "content": "hi"}])
    assert json.loads(resp.choices[0].message.content or "") == {"ok": True}
    assert resp.model == "m1"
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (7, 3)  # type: ignore[union-attr]
    assert srv.requests[0]["messages"][0]["content"] == "hi"


def test_it_calls_the_responder_once_per_choice_when_n_is_above_one() -> None:
    def responder(body: dict, n: int) -> Reply:
        return Reply(content=f"choice {body['_choice_index']}")

    with FakeOpenAIServer(responder) as srv:
        resp = _client(srv).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], n=3
        )
    assert [c.message.content for c in resp.choices] == ["choice 0", "choice 1", "choice 2"]
    assert resp.usage.completion_tokens == 60  # type: ignore[union-attr]
    assert "_choice_index" not in srv.requests[0]


def test_it_returns_429_then_succeeds_so_the_client_retries() -> None:
    def responder(body: dict, n: int) -> Reply:
        return Reply(status=429) if n == 0 else Reply(content="done")

    with FakeOpenAIServer(responder) as srv:
        client = _client(srv, max_retries=0)
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        resp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert resp.choices[0].message.content == "done"
    assert len(srv.requests) == 2


def test_it_sends_a_raw_body_verbatim() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(raw_body="{not json")) as srv:
        raw = _client(srv).chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
        assert raw.http_response.text == "{not json"


def test_it_delays_past_a_client_timeout_and_keeps_serving() -> None:
    def responder(body: dict, n: int) -> Reply:
        return Reply(content="late", delay_s=0.5) if n == 0 else Reply(content="fast")

    with FakeOpenAIServer(responder) as srv:
        client = _client(srv, max_retries=0, timeout=0.1)
        with pytest.raises(openai.APITimeoutError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        resp = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert resp.choices[0].message.content == "fast"


def test_it_streams_server_sent_events_when_asked() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content="streamed")) as srv:
        stream = _client(srv).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        )
        text = "".join((chunk.choices[0].delta.content or "") for chunk in stream if chunk.choices)
    assert text == "streamed"


def test_it_lists_its_models() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content=""), models=("a", "b")) as srv:
        ids = [m.id for m in _client(srv).models.list()]
    assert ids == ["a", "b"]


def test_it_counts_the_requests_answered_at_the_same_time() -> None:
    gate = threading.Barrier(3, timeout=5)

    def responder(body: dict, n: int) -> Reply:
        gate.wait()  # all three are inside the server together
        return Reply(content="x")

    with FakeOpenAIServer(responder) as srv:
        client = _client(srv)
        threads = [
            threading.Thread(
                target=client.chat.completions.create,
                kwargs={"model": "m", "messages": [{"role": "user", "content": "x"}]},
            )
            for _ in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
    assert srv.max_in_flight == 3
