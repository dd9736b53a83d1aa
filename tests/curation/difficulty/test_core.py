"""Rows, weights, aggregation and the ordered, resumable scoring loop."""

from __future__ import annotations

import threading

import pytest

from curation.difficulty import (
    DEFAULT_WEIGHTS,
    DIMENSIONS,
    ProblemInput,
    Sample,
    ScoreError,
    aggregate,
    parse_weights,
    score_problems,
)


def _sample(index: int, value: float) -> Sample:
    return Sample(index, {d: value for d in DIMENSIONS}, {d: "why" for d in DIMENSIONS}, "{}")


class CountingScorer:
    """Scores every dimension with the problem's number (its id), records calls."""

    backend = "fake"
    model = "fake"
    prompt_version = "v-test"

    def __init__(self, fail_on: str = "") -> None:
        self.calls: list[tuple[str, int]] = []
        self.fail_on = fail_on
        self._lock = threading.Lock()

    def score_sample(self, problem: ProblemInput, *, index: int) -> Sample:
        with self._lock:
            self.calls.append((problem.id, index))
        if problem.id == self.fail_on:
            raise ScoreError("boom")
        return _sample(index, float(problem.id))


def _problems(n: int) -> list[ProblemInput]:
    return [ProblemInput(id=str(i + 1), statement="s") for i in range(n)]


def test_it_keys_a_row_by_id_else_platform_and_external_id() -> None:
    assert ProblemInput.from_row({"id": "x", "platform": "p", "external_id": "e", "statement": "s"}).id == "x"
    assert ProblemInput.from_row({"platform": "p", "external_id": "e", "statement": "s"}).id == "p:e"


def test_it_refuses_a_row_without_statement() -> None:
    with pytest.raises(ScoreError, match="statement"):
        ProblemInput.from_row({"id": "x", "statement": "  "})


def test_it_reads_export_solutions_and_tags() -> None:
    p = ProblemInput.from_row(
        {
            "id": "x",
            "statement": "s",
            "solutions": [{"code": "print(1)", "language": "python"}],
            "tags": ["dp"],
        }
    )
    assert (p.solutions, p.tags) == (("print(1)",), ("dp",))


def test_it_has_default_weights_summing_to_one() -> None:
    assert sum(DEFAULT_WEIGHTS.values()) == pytest.approx(1.0)
    assert set(DEFAULT_WEIGHTS) == set(DIMENSIONS)


def test_it_aggregates_the_weighted_mean_of_the_per_dimension_means() -> None:
    s0 = Sample(0, dict(zip(DIMENSIONS, [2.0, 4.0, 6.0, 8.0, 10.0])), {}, "")
    s1 = Sample(1, dict(zip(DIMENSIONS, [4.0, 4.0, 4.0, 4.0, 4.0])), {}, "")
    score, means = aggregate([s0, s1], parse_weights("algorithmic_knowledge=1,edge_cases_constraints=3"))
    assert means == dict(zip(DIMENSIONS, [3.0, 4.0, 5.0, 6.0, 7.0]))
    assert score == pytest.approx(0.25 * 3.0 + 0.75 * 7.0)


def test_it_names_an_unknown_weight() -> None:
    with pytest.raises(ValueError, match="unknown dimension.*speed"):
        parse_weights("speed=1")


def test_it_round_trips_a_sample() -> None:
    s = Sample(2, {"a": 1.5}, {"a": "r"}, "raw", 3, 4)
    assert Sample.from_dict(s.to_dict()) == s


@pytest.mark.parametrize("concurrency", [1, 4])
def test_it_yields_results_in_input_order(concurrency: int) -> None:
    results = list(score_problems(_problems(20), CountingScorer(), samples=3, concurrency=concurrency))
    assert [r.id for r in results] == [str(i + 1) for i in range(20)]
    assert [r.score for r in results] == [float(i + 1) for i in range(20)]


def test_it_never_rescores_a_stored_sample_and_reports_only_new_ones() -> None:
    scorer = CountingScorer()
    stored = {("1", 0): _sample(0, 1.0), ("1", 2): _sample(2, 1.0)}
    seen: list[tuple[str, int]] = []
    (result,) = score_problems(
        _problems(1),
        scorer,
        samples=3,
        concurrency=2,
        skip=lambda pid, i: stored.get((pid, i)),
        on_sample=lambda pid, s: seen.append((pid, s.index)),
    )
    assert scorer.calls == [("1", 1)]
    assert seen == [("1", 1)]
    assert [s.index for s in result.samples] == [0, 1, 2]


def test_it_calls_on_sample_in_the_callers_thread() -> None:
    threads: set[int] = set()
    list(
        score_problems(
            _problems(5),
            CountingScorer(),
            concurrency=3,
            on_sample=lambda pid, s: threads.add(threading.get_ident()),
        )
    )
    assert threads == {threading.get_ident()}


def test_it_turns_a_failing_problem_into_an_error_and_goes_on() -> None:
    results = list(score_problems(_problems(3), CountingScorer(fail_on="2"), samples=2, concurrency=2))
    assert [r.to_dict().get("error") for r in results] == [None, "sample 0: boom; sample 1: boom", None]
    assert results[1].to_dict() == {"id": "2", "error": "sample 0: boom; sample 1: boom"}


def test_it_writes_the_cli_row_shape() -> None:
    (result,) = score_problems(_problems(1), CountingScorer(), samples=1)
    assert set(result.to_dict()) == {"id", "score", "dimensions", "samples", "backend", "prompt_version"}


def test_it_stops_cleanly_when_the_consumer_stops_early() -> None:
    results = score_problems(_problems(50), CountingScorer(), samples=3, concurrency=4)
    first = next(results)
    results.close()  # what a caller breaking out of its loop does
    assert first.id == "1"
    assert not [t for t in threading.enumerate() if t.name == "difficulty-scoring"]
