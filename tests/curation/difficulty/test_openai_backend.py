"""The openai backend against a real local HTTP server, through the real ``openai`` client."""

from __future__ import annotations

import json
import time

import pytest

from curation.difficulty import DIMENSIONS, ProblemInput, Sample, ScoreError, get_scorer, score_problems
from curation.difficulty.openai_backend import OpenAIScorer
from tests.support.openai_server import FakeOpenAIServer, Reply

PROBLEM = ProblemInput(id="p1", statement="Given n <= 2*10^5 integers, print their sum.")


def answer(score: int = 4, skip: str = "") -> str:
    return json.dumps({d: {"score": score, "rationale": f"{d} evidence"} for d in DIMENSIONS if d != skip})


def make(srv: FakeOpenAIServer, **kw: object) -> OpenAIScorer:
    options: dict = {"base_url": srv.base_url, "api_key": "k", "model": "m", "backoff_base_s": 0.01}
    options.update(kw)
    return OpenAIScorer(**options)


def test_it_scores_a_sample_from_a_valid_answer() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content=answer(6))) as srv:
        sample = make(srv).score_sample(PROBLEM, index=1)
    assert sample.dimensions == {d: 6.0 for d in DIMENSIONS}
    assert sample.rationales["reasoning_depth"] == "reasoning_depth evidence"
    assert json.loads(sample.raw)["mathematical_content"]["score"] == 6


def test_it_sends_a_strict_schema_a_positive_temperature_and_a_seed_per_index() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content=answer())) as srv:
        scorer = make(srv, seed=10)
        for i in range(3):
            scorer.score_sample(PROBLEM, index=i)
    assert [b["seed"] for b in srv.requests] == [10, 11, 12]
    assert all(b["temperature"] > 0 for b in srv.requests)
    schema = srv.requests[0]["response_format"]["json_schema"]["schema"]
    assert sorted(schema["required"]) == sorted(DIMENSIONS)
    assert "2*10^5" in srv.requests[0]["messages"][1]["content"]


def test_it_rejects_an_answer_that_is_not_json() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content="I think it is hard.")) as srv:
        with pytest.raises(ScoreError, match="not valid JSON"):
            make(srv).score_sample(PROBLEM, index=0)


def test_it_rejects_an_answer_missing_a_dimension() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content=answer(skip="edge_cases_constraints"))) as srv:
        with pytest.raises(ScoreError, match="misses dimension.*edge_cases_constraints"):
            make(srv).score_sample(PROBLEM, index=0)


def test_it_rejects_a_score_outside_the_scale() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content=answer(11))) as srv:
        with pytest.raises(ScoreError, match="outside 1..10"):
            make(srv).score_sample(PROBLEM, index=0)


def test_it_rejects_an_http_body_that_is_not_json() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(raw_body="{oops")) as srv:
        with pytest.raises(ScoreError):
            make(srv).score_sample(PROBLEM, index=0)


def test_it_retries_a_429_and_counts_the_retry() -> None:
    def responder(body: dict, n: int) -> Reply:
        return Reply(status=429) if n == 0 else Reply(content=answer())

    with FakeOpenAIServer(responder) as srv:
        scorer = make(srv)
        scorer.score_sample(PROBLEM, index=0)
    assert len(srv.requests) == 2
    assert (scorer.usage.requests, scorer.usage.retries, scorer.usage.failures) == (2, 1, 0)


def test_it_gives_up_with_a_clear_error_after_retrying_a_timeout() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content=answer(), delay_s=0.6)) as srv:
        scorer = make(srv, timeout_s=0.15, max_retries=1)
        with pytest.raises(ScoreError, match="after 2 attempt"):
            scorer.score_sample(PROBLEM, index=0)
    assert scorer.usage.retries == 1 and scorer.usage.failures == 1


def test_it_fails_at_once_on_a_client_error() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(status=401)) as srv:
        scorer = make(srv)
        with pytest.raises(ScoreError, match="HTTP 401"):
            scorer.score_sample(PROBLEM, index=0)
    assert len(srv.requests) == 1


def test_it_asks_again_without_response_format_when_the_endpoint_rejects_it() -> None:
    def responder(body: dict, n: int) -> Reply:
        if "response_format" in body:
            return Reply(
                status=400, raw_body='{"error": {"message": "response_format json_schema unsupported"}}'
            )
        return Reply(content=answer())

    with FakeOpenAIServer(responder) as srv:
        scorer = make(srv)
        scorer.score_sample(PROBLEM, index=0)
        scorer.score_sample(PROBLEM, index=1)
    assert ["response_format" in b for b in srv.requests] == [True, False, False]


def test_it_accounts_prompt_and_completion_tokens_per_sample_and_in_total() -> None:
    with FakeOpenAIServer(
        lambda body, n: Reply(content=answer(), prompt_tokens=100, completion_tokens=30)
    ) as srv:
        scorer = make(srv)
        (result,) = list(score_problems([PROBLEM], scorer, samples=3, concurrency=2))
    assert [s.prompt_tokens for s in result.samples] == [100, 100, 100]
    assert (scorer.usage.prompt_tokens, scorer.usage.completion_tokens, scorer.usage.total_tokens) == (
        300,
        90,
        390,
    )


def test_it_keeps_at_most_concurrency_requests_in_flight() -> None:
    def responder(body: dict, n: int) -> Reply:
        time.sleep(0.03)  # long enough for requests to overlap
        return Reply(content=answer())

    problems = [ProblemInput(id=f"p{i}", statement="Sum the numbers.") for i in range(12)]
    with FakeOpenAIServer(responder) as srv:
        results = list(score_problems(problems, make(srv, concurrency=4), samples=3, concurrency=4))
    assert [r.id for r in results] == [p.id for p in problems]
    assert all(r.error == "" for r in results)
    assert 1 < srv.max_in_flight <= 4


def test_it_reports_a_failed_problem_and_goes_on() -> None:
    def responder(body: dict, n: int) -> Reply:
        return (
            Reply(content="nope") if "BROKEN" in body["messages"][1]["content"] else Reply(content=answer())
        )

    problems = [
        ProblemInput(id="a", statement="ok"),
        ProblemInput(id="b", statement="BROKEN"),
        ProblemInput(id="c", statement="ok"),
    ]
    with FakeOpenAIServer(responder) as srv:
        results = list(score_problems(problems, make(srv), samples=2, concurrency=3))
    assert [(r.id, bool(r.error)) for r in results] == [("a", False), ("b", True), ("c", False)]
    assert "sample 0: the model's answer is not valid JSON" in results[1].error


def test_it_reads_its_configuration_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("DIFFICULTY_MODEL", "env-model")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    scorer = get_scorer("openai")
    assert (scorer.model, scorer.backend) == ("env-model", "openai")


def test_it_refuses_to_start_without_a_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIFFICULTY_MODEL", raising=False)
    with pytest.raises(ValueError, match="DIFFICULTY_MODEL"):
        get_scorer("openai", base_url="http://127.0.0.1:9/v1")


def test_it_authenticates_with_the_configured_key() -> None:
    with FakeOpenAIServer(lambda body, n: Reply(content=answer())) as srv:
        make(srv, api_key="sekret").score_sample(PROBLEM, index=0)
    assert srv.headers[0]["authorization"] == "Bearer sekret"


def test_it_asks_only_for_the_samples_not_stored_yet() -> None:
    stored = {("p1", 0): Sample(0, {d: 2.0 for d in DIMENSIONS}, {d: "kept" for d in DIMENSIONS}, "{}")}
    with FakeOpenAIServer(lambda body, n: Reply(content=answer(8))) as srv:
        (result,) = score_problems(
            [PROBLEM], make(srv), samples=2, concurrency=2, skip=lambda pid, i: stored.get((pid, i))
        )
    assert [b["seed"] for b in srv.requests] == [1]
    assert [s.dimensions["reasoning_depth"] for s in result.samples] == [2.0, 8.0]
    assert result.dimensions["reasoning_depth"] == 5.0
