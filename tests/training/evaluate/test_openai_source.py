"""The OpenAI-compatible source against the local fake server: real HTTP, the real ``openai`` client."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.openai_server import FakeOpenAIServer, Reply
from tests.training.evaluate.conftest import RIGHT, WRONG
from training.evaluate import EvalSettings, SampleRequest, evaluate, make_source
from training.tiny import TOY_TASKS, toy_completion

STATEMENT_TO_KEY = {f"print {what}.": f"toy:{ext_id}" for ext_id, what, _ in TOY_TASKS}


def _key_of(body: dict[str, Any]) -> str:
    text = body["messages"][-1]["content"]
    return next(key for needle, key in STATEMENT_TO_KEY.items() if needle in text)


def solver(body: dict[str, Any], call: int) -> Reply:
    """Right for every problem but square (always wrong)."""
    key = _key_of(body)
    return Reply(content=toy_completion(WRONG if key == "toy:square" else RIGHT[key]))


def test_it_evaluates_through_an_openai_compatible_endpoint(toy_rows: list[dict[str, Any]]) -> None:
    with FakeOpenAIServer(solver) as srv:
        source = make_source("openai", "fake-model", base_url=srv.base_url, api_key="test", concurrency=3)
        summary = evaluate(toy_rows, source, EvalSettings(k=2, temperature=0.7, top_p=0.9, max_tokens=64, seed=5))
    assert {p.id: p.passed for p in summary.problems} == {
        "toy:double": 2, "toy:increment": 2, "toy:square": 0, "toy:negate": 2
    }
    assert len(srv.requests) == 8
    body = srv.requests[0]
    assert (body["model"], body["temperature"], body["top_p"], body["max_tokens"], body["n"]) == (
        "fake-model", 0.7, 0.9, 64, 1
    )
    assert len({r["seed"] for r in srv.requests}) == 8  # one seed per (problem, sample index)


def test_prompts_are_the_training_prompts(toy_rows: list[dict[str, Any]]) -> None:
    from training.data import prompt_text
    from training.tiny import toy_problems

    with FakeOpenAIServer(solver) as srv:
        source = make_source("openai", "fake-model", base_url=srv.base_url, api_key="t", system_prompt="Be brief.")
        evaluate(toy_rows[:1], source, EvalSettings(k=1))
    assert srv.requests[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": prompt_text(toy_problems()[0])},
    ]


def test_it_retries_a_rate_limited_request(toy_rows: list[dict[str, Any]]) -> None:
    def limited(body: dict[str, Any], call: int) -> Reply:
        return Reply(status=429) if call == 0 else solver(body, call)

    with FakeOpenAIServer(limited) as srv:
        source = make_source("openai", "fake-model", base_url=srv.base_url, api_key="t", concurrency=1)
        summary = evaluate(toy_rows[:1], source, EvalSettings(k=1))
    assert len(srv.requests) == 2 and summary.problems[0].verdicts == ["AC"]


def test_a_request_failing_after_its_retries_is_an_infra_error(toy_rows: list[dict[str, Any]]) -> None:
    def broken(body: dict[str, Any], call: int) -> Reply:
        return Reply(status=500) if body.get("seed") == first_seed[0] else solver(body, call)

    first_seed: list[int] = []
    with FakeOpenAIServer(broken) as srv:
        source = make_source("openai", "fake-model", base_url=srv.base_url, api_key="t", max_retries=1)
        from training.evaluate import sample_seed

        first_seed.append(sample_seed(0, "toy:double", 0))
        summary = evaluate(toy_rows[:1], source, EvalSettings(k=2))
    p = summary.problems[0]
    assert p.verdicts == ["IE", "AC"] and (p.attempts, p.passed, p.infra_errors) == (1, 1, 1)


def test_it_keeps_at_most_concurrency_requests_in_flight() -> None:
    with FakeOpenAIServer(lambda body, call: Reply(content="x", delay_s=0.05)) as srv:
        source = make_source("openai", "fake-model", base_url=srv.base_url, api_key="t", concurrency=3)
        requests = [SampleRequest("p:1", i, i, "hi") for i in range(12)]
        gens = source.generate(requests, EvalSettings(k=1))
    assert [g.text for g in gens] == ["x"] * 12
    assert srv.max_in_flight == 3


def test_it_needs_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        make_source("openai", "m", base_url="http://127.0.0.1:9/v1")
