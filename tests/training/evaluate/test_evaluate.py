"""``evaluate`` end to end with the real evaluator: judging, IE handling, resume, cut-off, overlap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.training.evaluate.conftest import RIGHT, ScriptedSource
from training.evaluate import EvalSettings, Generation, SampleResult, evaluate, sample_seed
from training.tiny import toy_completion

SETTINGS = EvalSettings(k=4, judge_workers=2)


def test_it_judges_known_right_and_wrong_programs(toy_rows: list[dict[str, Any]],
                                                  right_on_even: Callable[[str, int], str]) -> None:
    summary = evaluate(toy_rows, ScriptedSource(right_on_even), SETTINGS)
    assert [p.id for p in summary.problems] == [f"toy:{r['external_id']}" for r in toy_rows]
    for p in summary.problems:
        assert p.verdicts == ["AC", "WA", "AC", "WA"]
        assert (p.attempts, p.passed) == (4, 2)
        assert p.pass_at_1 == pytest.approx(0.5) and p.pass_at_k == pytest.approx(1.0)
    assert summary.summary["pass@1"] == pytest.approx(0.5)


def test_a_completion_without_a_program_is_a_failure_not_an_infra_error(toy_rows: list[dict[str, Any]]) -> None:
    summary = evaluate(toy_rows[:1], ScriptedSource(lambda key, i: "I am not sure. ```"), EvalSettings(k=2))
    p = summary.problems[0]
    assert p.verdicts == ["NA", "NA"] and (p.attempts, p.passed, p.infra_errors) == (2, 0, 0)


def test_infra_errors_are_left_out_of_the_attempts(toy_rows: list[dict[str, Any]]) -> None:
    def answer(key: str, index: int) -> str | Generation:
        if index == 0:
            return Generation(text="", error="RateLimitError: still 429 after retries")
        return toy_completion(RIGHT[key])

    def judge(cases: list[dict[str, Any]], **_: Any) -> list[dict[str, Any]]:
        return [{"id": c["id"], "verdict": "IE" if c["id"].endswith("#1") else "AC", "message": "worker died"}
                for c in cases]

    summary = evaluate(toy_rows[:2], ScriptedSource(answer), EvalSettings(k=4), judge=judge)
    for p in summary.problems:
        assert p.verdicts == ["IE", "IE", "AC", "AC"]
        assert (p.attempts, p.passed, p.infra_errors) == (2, 2, 2)
        assert p.pass_at_1 == 1.0
    assert summary.summary["infra_error_rate"] == pytest.approx(0.5)


def test_a_resumed_job_generates_only_the_missing_samples(toy_rows: list[dict[str, Any]],
                                                          right_on_even: Callable[[str, int], str]) -> None:
    first = ScriptedSource(right_on_even)
    stored: dict[tuple[str, int], SampleResult] = {}
    evaluate(toy_rows, first, SETTINGS, on_sample=lambda key, s: stored.__setitem__((key, s.index), s))
    assert len(stored) == 16
    # The worker "died" after storing samples 0 and 1 of every problem and sample 2 of the first.
    done = {key: s for key, s in stored.items() if key[1] < 2 or key == ("toy:double", 2)}
    second = ScriptedSource(right_on_even)
    new: list[tuple[str, int]] = []
    summary = evaluate(toy_rows, second, SETTINGS, done=done, on_sample=lambda key, s: new.append((key, s.index)))
    generated = sorted(pair for call in second.calls for pair in call)
    assert generated == sorted(set(stored) - set(done)) == sorted(new)
    assert all(p.verdicts == ["AC", "WA", "AC", "WA"] for p in summary.problems)


def test_problem_results_arrive_in_input_order(toy_rows: list[dict[str, Any]],
                                              right_on_even: Callable[[str, int], str]) -> None:
    seen: list[str] = []
    evaluate(toy_rows, ScriptedSource(right_on_even, batch_size=3), SETTINGS, on_problem=lambda p: seen.append(p.id))
    assert seen == [f"toy:{r['external_id']}" for r in toy_rows]


def test_the_cut_off_keeps_newer_problems_and_counts_undated_ones(toy_rows: list[dict[str, Any]],
                                                                  right_on_even: Callable[[str, int], str]) -> None:
    from datetime import date

    toy_rows[0]["contest_date"] = "2025-01-10"
    toy_rows[1]["contest_date"] = "2025-06-01"
    toy_rows[2]["contest_date"] = "2024-12-31"
    settings = EvalSettings(k=2, after=date(2025, 1, 1))
    summary = evaluate(toy_rows, ScriptedSource(right_on_even), settings)
    assert [p.id for p in summary.problems] == ["toy:double", "toy:increment"]
    assert summary.excluded == {"no_contest_date": 1, "before_cutoff": 1, "contaminated": 0}
    assert summary.summary["after"] == "2025-01-01"


def test_contaminated_problems_are_stated_and_can_be_dropped(toy_rows: list[dict[str, Any]],
                                                             right_on_even: Callable[[str, int], str]) -> None:
    report = {"toy:square": {"overlap": 1.0, "shared": 1, "matched_train_ids": ["x:1"]}}
    kept = evaluate(toy_rows, ScriptedSource(right_on_even), EvalSettings(k=1), contamination=report)
    assert len(kept.problems) == 4 and kept.summary["contaminated_evaluated"] == 1
    dropped = evaluate(toy_rows, ScriptedSource(right_on_even), EvalSettings(k=1), contamination=report,
                       exclude_contaminated=True)
    assert "toy:square" not in [p.id for p in dropped.problems]
    assert dropped.excluded_ids == {"toy:square": "contaminated"}


def test_sample_seeds_depend_on_seed_problem_and_index_only() -> None:
    assert sample_seed(0, "cf:1A", 3) == sample_seed(0, "cf:1A", 3)
    assert len({sample_seed(s, key, i) for s in (0, 1) for key in ("cf:1A", "cf:1B") for i in range(4)}) == 16


def _judge_seen_during_generation(rows: list[dict[str, Any]], answer: Callable[[str, int], str], *,
                                  overlap: bool) -> bool:
    import threading
    import time

    judging = threading.Event()
    seen = threading.Event()

    def judge(cases: list[dict[str, Any]], **_: Any) -> list[dict[str, Any]]:
        judging.set()
        time.sleep(0.2)
        judging.clear()
        return [{"id": c["id"], "verdict": "AC"} for c in cases]

    class Watching(ScriptedSource):
        def generate(self, requests: Any, settings: EvalSettings) -> list[Generation]:
            time.sleep(0.1)
            if judging.is_set():
                seen.set()
            time.sleep(0.1)
            return super().generate(requests, settings)

    evaluate(rows, Watching(answer, batch_size=4), SETTINGS, judge=judge, overlap=overlap)
    return seen.is_set()


def test_judging_overlaps_generation(toy_rows: list[dict[str, Any]],
                                     right_on_even: Callable[[str, int], str]) -> None:
    assert _judge_seen_during_generation(toy_rows, right_on_even, overlap=True)
    assert not _judge_seen_during_generation(toy_rows, right_on_even, overlap=False)


def test_a_callback_that_raises_stops_the_evaluation(toy_rows: list[dict[str, Any]],
                                                     right_on_even: Callable[[str, int], str]) -> None:
    class Cancelled(Exception):
        pass

    def on_sample(key: str, sample: SampleResult) -> None:
        raise Cancelled(key)

    source = ScriptedSource(right_on_even, batch_size=2)
    with pytest.raises(Cancelled):
        evaluate(toy_rows, source, SETTINGS, on_sample=on_sample, overlap=False)
    assert len(source.calls) == 1  # nothing generated after the cancel
