"""The pass@k estimator on hand-computed cases, bootstrap intervals and the summary's breakdowns."""

from __future__ import annotations

import numpy as np
import pytest

from training.evaluate import ProblemResult, bootstrap_ci, pass_at_k, summarize


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),  # c / n
        (5, 2, 2, 0.7),  # 1 - C(3,2) / C(5,2) = 1 - 3/10
        (5, 0, 3, 0.0),
        (5, 3, 3, 1.0),  # n - c = 2 < k: every 3-subset holds a pass
        (10, 1, 10, 1.0),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
    ],
)
def test_it_matches_hand_computed_pass_at_k(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_it_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="0 <= c <= n"):
        pass_at_k(3, 4, 1)


def test_the_bootstrap_interval_contains_the_mean_and_narrows_with_more_problems() -> None:
    rng = np.random.default_rng(1)
    small = rng.random(20).tolist()
    large = rng.random(2000).tolist()
    lo_s, hi_s = bootstrap_ci(small, n=500)
    lo_l, hi_l = bootstrap_ci(large, n=500)
    assert lo_s <= float(np.mean(small)) <= hi_s
    assert lo_l <= float(np.mean(large)) <= hi_l
    assert hi_l - lo_l < (hi_s - lo_s) / 3


def _result(pid: str, attempts: int, passed: int, *, platform: str = "cf", ie: int = 0,
            difficulty: str = "easy", date: str | None = "2025-03-01", io_mode: str = "stdin") -> ProblemResult:
    return ProblemResult(
        id=f"{platform}:{pid}", platform=platform, external_id=pid, io_mode=io_mode, difficulty=difficulty,
        contest_date=date, attempts=attempts, passed=passed, infra_errors=ie, verdicts=[],
        pass_at_1=pass_at_k(attempts, passed, 1) if attempts else None,
        pass_at_k=pass_at_k(attempts, passed, 2) if attempts else None,
    )


def test_the_summary_averages_problems_and_breaks_them_down() -> None:
    results = [
        _result("a", 4, 4, difficulty="easy"),
        _result("b", 4, 0, difficulty="hard", platform="atcoder", date="2025-04-02"),
        _result("c", 4, 2, difficulty="hard", io_mode="call", date=None),
    ]
    s = summarize(results, 2, bootstrap=200)
    assert s["pass@1"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert s["ci95"]["pass@1"][0] <= s["pass@1"] <= s["ci95"]["pass@1"][1]
    assert set(s["by_platform"]) == {"atcoder", "cf"}
    assert s["by_difficulty"]["hard"]["pass@1"] == pytest.approx(0.25)
    assert set(s["by_month"]) == {"2025-03", "2025-04", "unknown"}
    assert s["by_io_mode"]["call"]["problems"] == 1


def test_infrastructure_errors_are_reported_apart_and_never_count_as_failures() -> None:
    results = [_result("a", 2, 2, ie=2), _result("b", 0, 0, ie=4)]
    s = summarize(results, 2, bootstrap=50)
    assert s["pass@1"] == pytest.approx(1.0)  # a: 2 of 2 judged; b (all IE) left out of the mean
    assert s["judged_problems"] == 1 and s["problems"] == 2
    assert s["infra_errors"] == 6 and s["infra_error_rate"] == pytest.approx(6 / 8)


def test_settings_round_trip_through_json_safe_dicts() -> None:
    from datetime import date

    from training.evaluate import EvalSettings

    s = EvalSettings(k=8, temperature=1.0, after=date(2025, 2, 1), checker="strict")
    assert s.to_dict()["after"] == "2025-02-01"
    assert EvalSettings.from_dict(s.to_dict()) == s


def test_settings_name_the_bad_field() -> None:
    from training.evaluate import EvalSettings

    with pytest.raises(ValueError, match="top_p"):
        EvalSettings(top_p=0)
    with pytest.raises(ValueError, match="unknown evaluation setting"):
        EvalSettings.from_dict({"kk": 1})
