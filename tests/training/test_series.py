"""Overlay series of the comparison page: the bucket math on hand-computed numbers, the EMA the page
draws, summaries from the full series, and ``/api/runs/compare/``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from training import services
from training.models import TrainingRun
from training.services.series import (
    bucket_series,
    bucket_width,
    compare_series,
    ema,
    round_significant,
    summarize,
)


def test_it_sizes_buckets_so_the_range_fits_in_the_requested_points() -> None:
    assert bucket_width(1, 10, 5) == 2
    assert bucket_width(1, 10, 3) == 4  # ceil(10 / 3)
    assert bucket_width(1, 10, 100) == 1
    assert bucket_width(0, 9_999, 600) == 17


def test_it_keeps_mean_min_max_and_count_per_bucket() -> None:
    steps = np.array([1, 2, 3, 4, 5, 6, 7])
    values = np.array([1.0, 3.0, 2.0, 10.0, 0.0, 4.0, 5.0])
    b = bucket_series(steps, values, lo=1, width=3)  # buckets {1,2,3} {4,5,6} {7}
    assert b.steps.tolist() == [3, 6, 7]
    assert b.mean.tolist() == [2.0, pytest.approx(14 / 3), 5.0]
    assert b.min.tolist() == [1.0, 0.0, 5.0]
    assert b.max.tolist() == [3.0, 10.0, 5.0]
    assert b.count.tolist() == [3, 3, 1]


def test_a_one_step_spike_survives_bucketing_as_the_bucket_max() -> None:
    steps = np.arange(1, 10_001)
    values = np.zeros(10_000)
    values[4_321] = 50.0
    b = bucket_series(steps, values, lo=1, width=bucket_width(1, 10_000, 300))
    assert len(b.steps) <= 300
    assert b.max.max() == 50.0 and b.min.min() == 0.0
    assert int(b.count.sum()) == 10_000


def test_it_leaves_out_non_finite_values_and_gaps_in_the_steps() -> None:
    steps = np.array([1, 2, 10, 11])
    values = np.array([1.0, math.nan, 3.0, math.inf])
    b = bucket_series(steps, values, lo=1, width=5)  # bucket 0: {1}; bucket 1 (6..10): {10}
    assert b.steps.tolist() == [1, 10] and b.mean.tolist() == [1.0, 3.0] and b.count.tolist() == [1, 1]
    assert len(bucket_series(np.array([], dtype=np.int64), np.array([]), lo=0, width=3).steps) == 0


def test_buckets_of_different_runs_share_one_grid() -> None:
    a = bucket_series(np.arange(1, 11), np.ones(10), lo=1, width=4)
    b = bucket_series(np.arange(5, 9), np.ones(4), lo=1, width=4)
    assert a.steps.tolist() == [4, 8, 10] and b.steps.tolist() == [8]  # b's steps 5..8 are a's second bucket


def test_the_ema_of_buckets_weighs_each_bucket_by_its_point_count() -> None:
    assert ema([1.0, 2.0, 3.0], [1, 1, 1], 0.0) == [1.0, 2.0, 3.0]
    # debiased EMA with s = 0.5 over 0, 1: (0.5 * 0.5 * 0 + 0.5 * 1) / (1 - 0.25) = 2 / 3
    assert ema([0.0, 1.0], [1, 1], 0.5) == [0.0, pytest.approx(2 / 3)]
    # a bucket of 2 points decays the past by s^2 = 0.25 and weighs 0.75: (0.25 * 0 + 0.75 * 1), debiased by
    # the weight of the 3 points so far, 1 - 0.5^3
    assert ema([0.0, 1.0], [1, 2], 0.5)[1] == pytest.approx(0.75 / 0.875)
    # a bucketed constant stays that constant whatever the smoothing
    assert ema([2.0, 2.0, 2.0], [5, 3, 7], 0.9) == [pytest.approx(2.0)] * 3
    with pytest.raises(ValueError):
        ema([1.0], [1], 1.0)


def test_the_bucketed_ema_tracks_the_ema_of_the_raw_points() -> None:
    rng = np.random.default_rng(0)
    values = np.cumsum(rng.normal(size=3000)) * 0.01 + rng.normal(size=3000) * 0.1
    raw = ema(values.tolist(), [1] * 3000, 0.99)
    b = bucket_series(np.arange(3000), values, lo=0, width=10)
    bucketed = ema(b.mean.tolist(), b.count.tolist(), 0.99)
    assert np.max(np.abs(np.array(bucketed) - np.array(raw)[b.steps])) < 0.02


def test_it_sends_six_significant_digits() -> None:
    rounded = round_significant(np.array([0.12345678901, 1234567.891, -0.000123456789, 0.0, 2.5]))
    assert rounded.tolist() == [0.123457, 1234570.0, -0.000123457, 0.0, 2.5]
    assert [repr(v) for v in rounded.tolist()[:3]] == ["0.123457", "1234570.0", "-0.000123457"]


def test_the_summary_uses_the_metric_direction() -> None:
    steps, values = np.array([1, 2, 3, 4]), np.array([0.2, 0.9, 0.1, 0.5])
    reward = summarize("reward", steps, values)
    assert (reward["final"], reward["best"], reward["best_step"]) == (0.5, 0.9, 2)
    clipped = summarize("completions/clipped_ratio", steps, values)
    assert (clipped["best"], clipped["best_step"], clipped["max_step"]) == (0.1, 3, 2)
    assert summarize("reward", np.array([1]), np.array([math.nan]))["final"] is None


# --- with the database ---------------------------------------------------------------------------


@pytest.fixture
def two_runs(db: object, dataset: str, trainer: Any, settings: Any, tmp_path: Path) -> tuple[TrainingRun, TrainingRun]:
    settings.RUNS_DIR = tmp_path / "runs"
    config = {"model": "tiny", "dataset": {"release": dataset}}
    a = services.run_create(name="a", config_dict=config, user=trainer)
    b = services.run_create(name="b", config_dict=config, user=trainer)
    steps = list(range(1, 1201))  # spans three metric chunks
    services.metrics_bulk_record(run_id=a.pk, steps=steps, metrics={
        "reward": [0.001 * s for s in steps], "completions/clipped_ratio": [0.5] * len(steps)})
    services.metrics_bulk_record(run_id=b.pk, steps=steps[:600], metrics={"reward": [1.0 if s == 300 else 0.0
                                                                                   for s in steps[:600]]})
    return a, b


def test_it_buckets_every_run_on_one_grid_and_summarizes_the_full_series(two_runs: tuple[TrainingRun, TrainingRun]) -> None:
    a, b = two_runs
    out = compare_series(run_ids=[a.pk, b.pk], names=["reward", "completions/clipped_ratio", "entropy"], points=100)
    reward = out["metrics"]["reward"]
    assert reward["lo"] == 1 and reward["width"] == 12
    ra, rb = reward["runs"][str(a.pk)], reward["runs"][str(b.pk)]
    assert len(ra["steps"]) == 100 and ra["total"] == 1200 and sum(ra["count"]) == 1200
    assert len(rb["steps"]) == 50 and rb["steps"] == ra["steps"][:50]
    assert max(rb["max"]) == 1.0  # the one-step spike at 300
    assert ra["summary"]["final"] == pytest.approx(1.2) and rb["summary"]["best_step"] == 300
    assert list(out["metrics"]["completions/clipped_ratio"]["runs"]) == [str(a.pk)]
    assert out["metrics"]["entropy"]["runs"] == {}
    assert out["metrics"]["completions/clipped_ratio"]["lower_is_better"] is True


def test_the_compare_api_serves_runs_and_their_series(
    api_as: Any, viewer: Any, two_runs: tuple[TrainingRun, TrainingRun]
) -> None:
    a, b = two_runs
    response = api_as(viewer).get(f"/api/runs/compare/?runs={b.pk},{a.pk}&metrics=reward&points=20")
    assert response.status_code == 200
    body = response.json()
    assert [r["id"] for r in body["runs"]] == [b.pk, a.pk] and body["points"] == 20
    assert len(body["metrics"]["reward"]["runs"][str(a.pk)]["steps"]) == 20


def test_the_compare_api_defaults_to_the_papers_metrics(api_as: Any, viewer: Any, two_runs: Any) -> None:
    a, _ = two_runs
    body = api_as(viewer).get(f"/api/runs/compare/?runs={a.pk}").json()
    assert {"reward", "eval/pass@1", "completions/mean_length", "completions/max_length", "completions/clipped_ratio",
            "diversity", "entropy", "mask/conditional_masked_ratio", "temperature", "temperature/stage"} <= set(
        body["metrics"])


@pytest.mark.parametrize("query,field", [
    ("", "runs"), ("runs=1,abc", "runs"), ("runs=424242", "runs"), ("runs={a}&points=many", "points"),
    ("runs=%C2%B2", "runs"), ("runs=99999999999999999999", "runs"),
])
def test_the_compare_api_says_what_is_wrong_with_a_request(
    api_as: Any, viewer: Any, two_runs: Any, query: str, field: str
) -> None:
    a, _ = two_runs
    response = api_as(viewer).get("/api/runs/compare/?" + query.format(a=a.pk))
    assert response.status_code == 400 and field in response.json()


def test_the_compare_api_needs_a_role(api_as: Any, outsider: Any, two_runs: Any) -> None:
    from rest_framework.test import APIClient

    a, _ = two_runs
    assert api_as(outsider).get(f"/api/runs/compare/?runs={a.pk}").status_code == 403
    assert APIClient().get(f"/api/runs/compare/?runs={a.pk}").status_code in (401, 403)
