"""Metric storage: chunked upsert, idempotence per step, resume truncation, M4 downsampling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from training import selectors, services
from training.models import CHUNK_STEPS, MetricChunk, RunSample, TrainingRun, merge_points
from training.selectors import downsample_m4


@pytest.fixture
def run(db: object) -> TrainingRun:
    return TrainingRun.objects.create(name="metrics", config={"max_steps": 10})


def _series(run: TrainingRun, name: str) -> tuple[list[int], list[float]]:
    steps, values = selectors.run_metric_arrays(run_id=run.pk, name=name)
    return steps.tolist(), values.tolist()


# --- pure functions ------------------------------------------------------------------------------


def test_it_merges_new_points_into_sorted_unique_steps_with_the_newest_value_winning() -> None:
    steps, values = merge_points(np.array([1, 3, 5]), np.array([1.0, 3.0, 5.0]), np.array([4, 3, 3]),
                                 np.array([4.0, 30.0, 31.0]))
    assert steps.tolist() == [1, 3, 4, 5]
    assert values.tolist() == [1.0, 31.0, 4.0, 5.0]


def test_it_packs_consecutive_steps_as_nothing_but_the_first_step() -> None:
    chunk = MetricChunk(name="reward", chunk=0)
    chunk.set_arrays(np.array([4, 5, 6]), np.array([0.5, 0.25, 1.0]))
    assert bytes(chunk.steps) == b""
    steps, values = chunk.arrays()
    assert steps.tolist() == [4, 5, 6] and values.tolist() == [0.5, 0.25, 1.0]


def test_it_packs_steps_with_gaps_explicitly() -> None:
    chunk = MetricChunk(name="eval/accuracy", chunk=0)
    chunk.set_arrays(np.array([10, 20, 30]), np.array([0.1, 0.2, 0.3]))
    assert len(bytes(chunk.steps)) == 3 * 8
    assert chunk.arrays()[0].tolist() == [10, 20, 30]


def test_it_returns_a_series_that_fits_unchanged() -> None:
    steps, values = downsample_m4(np.arange(5), np.array([5.0, 1, 4, 2, 3]), 8)
    assert steps.tolist() == [0, 1, 2, 3, 4]
    assert values.tolist() == [5.0, 1, 4, 2, 3]


def test_it_keeps_first_min_max_and_last_of_each_bucket() -> None:
    # 16 steps, max_points 8 -> 2 buckets: steps 0-7 and 8-15.
    values = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3], dtype=float)
    steps, out = downsample_m4(np.arange(16), values, 8)
    # bucket 0: first 0 (3), min 1 (1, earliest of the ties), max 5 (9), last 7 (6)
    # bucket 1: first 8 (5), min 9 (3), max 14 (9, the latest of the ties), last 15 (3)
    assert steps.tolist() == [0, 1, 5, 7, 8, 9, 14, 15]
    assert out.tolist() == [3, 1, 9, 6, 5, 3, 9, 3]


def test_it_buckets_by_step_range_so_sparse_series_keep_their_gaps() -> None:
    # Steps 0,1,2,3 and 100..103: with 2 buckets over [0, 103] the first holds steps 0-51.
    steps = np.array([0, 1, 2, 3, 100, 101, 102, 103])
    values = np.array([0, 5, -5, 1, 2, 2, 2, 2], dtype=float)
    ds_steps, ds_values = downsample_m4(steps, values, 7)  # 7 < 8 points -> one bucket (7 // 4)
    assert ds_steps.tolist() == [0, 1, 2, 103]
    assert ds_values.tolist() == [0, 5, -5, 2]


def test_it_drops_non_finite_values_before_downsampling() -> None:
    steps, values = downsample_m4(np.arange(4), np.array([1.0, math.nan, math.inf, 2.0]), 100)
    assert steps.tolist() == [0, 3]
    assert values.tolist() == [1.0, 2.0]


def test_it_never_returns_more_points_than_asked_for() -> None:
    rng = np.random.default_rng(0)
    steps, values = downsample_m4(np.arange(100_000), rng.normal(size=100_000), 1000)
    assert 0 < len(steps) <= 1000
    assert steps[-1] == 99_999  # the newest point survives


# --- services ------------------------------------------------------------------------------------


def test_it_stores_each_metric_of_a_step(run: TrainingRun) -> None:
    services.metrics_record(run_id=run.pk, step=1, metrics={"reward": 0.25, "entropy": 1.5})
    assert _series(run, "reward") == ([1], [0.25])
    assert _series(run, "entropy") == ([1], [1.5])


def test_it_replaces_a_recorded_step_instead_of_duplicating_it(run: TrainingRun) -> None:
    services.metrics_record(run_id=run.pk, step=1, metrics={"reward": 0.25})
    services.metrics_record(run_id=run.pk, step=2, metrics={"reward": 0.5})
    services.metrics_record(run_id=run.pk, step=1, metrics={"reward": 0.75})
    assert _series(run, "reward") == ([1, 2], [0.75, 0.5])


def test_it_puts_steps_of_one_chunk_in_one_row(run: TrainingRun) -> None:
    for step in (1, 2, CHUNK_STEPS - 1, CHUNK_STEPS):
        services.metrics_record(run_id=run.pk, step=step, metrics={"reward": float(step)})
    rows = list(MetricChunk.objects.filter(run=run, name="reward").order_by("chunk").values_list("chunk", "count"))
    assert rows == [(0, 3), (1, 1)]


def test_it_moves_the_run_snapshot_forward_only(run: TrainingRun) -> None:
    services.metrics_record(run_id=run.pk, step=2, metrics={"reward": 0.5, "eval/infra_error_rate": 0.0})
    services.metrics_record(run_id=run.pk, step=3, metrics={"reward": 0.6})
    services.metrics_record(run_id=run.pk, step=1, metrics={"reward": 0.1})
    run.refresh_from_db()
    assert run.last_step == 3
    assert run.latest_metrics == {"reward": 0.6, "eval/infra_error_rate": 0.0}


def test_it_stores_non_finite_values_but_never_returns_them(run: TrainingRun) -> None:
    services.metrics_record(run_id=run.pk, step=1, metrics={"kl": math.nan, "reward": 1.0})
    run.refresh_from_db()
    assert run.latest_metrics["kl"] is None
    assert selectors.run_metric_series(run.pk, ["kl"])["kl"] == {"steps": [], "values": [], "total": 1}


def test_it_ignores_non_numeric_metric_values(run: TrainingRun) -> None:
    services.metrics_record(run_id=run.pk, step=1, metrics={"reward": 1, "note": "hello"})
    assert selectors.run_metric_names(run_id=run.pk) == ["reward"]


def test_it_bulk_records_columns_idempotently(run: TrainingRun) -> None:
    steps = list(range(1, 2001))
    services.metrics_bulk_record(run_id=run.pk, steps=steps, metrics={"reward": [s / 10 for s in steps]})
    services.metrics_bulk_record(run_id=run.pk, steps=[5, 2001], metrics={"reward": [-1.0, 7.0]})
    got_steps, got_values = _series(run, "reward")
    assert got_steps == list(range(1, 2002))
    assert got_values[4] == -1.0 and got_values[-1] == 7.0
    run.refresh_from_db()
    assert run.last_step == 2001


def test_it_forgets_metrics_and_samples_after_the_resumed_step(run: TrainingRun) -> None:
    for step in range(1, 6):
        services.metrics_record(run_id=run.pk, step=step, metrics={"reward": float(step)})
        services.samples_record(run_id=run.pk, step=step, samples=[{"prompt": "p", "completion": "c"}])
    removed = services.metrics_truncate_after(run_id=run.pk, step=3)
    assert removed == 2
    assert _series(run, "reward") == ([1, 2, 3], [1.0, 2.0, 3.0])
    assert sorted(set(RunSample.objects.filter(run=run).values_list("step", flat=True))) == [1, 2, 3]
    run.refresh_from_db()
    assert (run.last_step, run.latest_metrics) == (3, {"reward": 3.0})


def test_it_truncates_across_chunks(run: TrainingRun) -> None:
    steps = list(range(1, 3 * CHUNK_STEPS))
    services.metrics_bulk_record(run_id=run.pk, steps=steps, metrics={"reward": [float(s) for s in steps]})
    services.metrics_truncate_after(run_id=run.pk, step=CHUNK_STEPS + 10)
    got, _ = _series(run, "reward")
    assert got[-1] == CHUNK_STEPS + 10 and len(got) == CHUNK_STEPS + 10


def test_it_replaces_the_sample_table_of_a_replayed_step(run: TrainingRun) -> None:
    services.samples_record(run_id=run.pk, step=1, samples=[{"completion": "a"}, {"completion": "b"}])
    services.samples_record(run_id=run.pk, step=1, samples=[{"completion": "c", "reward": 1.0, "verdict": "AC"}])
    rows = list(RunSample.objects.filter(run=run).values_list("completion", "reward", "verdict"))
    assert rows == [("c", 1.0, "AC")]


def test_it_keeps_unknown_sample_fields_as_extra(run: TrainingRun) -> None:
    services.samples_record(run_id=run.pk, step=1, samples=[{"step": 1, "index": 0, "advantage": 0.5, "group": 0}])
    assert RunSample.objects.get(run=run).extra == {"advantage": 0.5, "group": 0}


# --- selectors -----------------------------------------------------------------------------------


def test_it_downsamples_a_stored_series_to_max_points(run: TrainingRun) -> None:
    steps = list(range(1, 5001))
    services.metrics_bulk_record(run_id=run.pk, steps=steps, metrics={"reward": [math.sin(s / 50) for s in steps]})
    series = selectors.run_metric_series(run.pk, ["reward", "missing"], max_points=400)
    assert series["reward"]["total"] == 5000
    assert 0 < len(series["reward"]["steps"]) <= 400
    assert series["reward"]["steps"][0] == 1 and series["reward"]["steps"][-1] == 5000
    assert series["missing"] == {"steps": [], "values": [], "total": 0}


def test_it_restricts_a_series_to_a_step_range(run: TrainingRun) -> None:
    steps = list(range(1, 2001))
    services.metrics_bulk_record(run_id=run.pk, steps=steps, metrics={"reward": [float(s) for s in steps]})
    series = selectors.run_metric_series(run.pk, ["reward"], max_points=10_000, min_step=600, max_step=1100)
    assert series["reward"]["steps"] == list(range(600, 1101))


def test_it_clips_long_texts_in_sample_events_but_stores_them_whole(
    run: TrainingRun, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: object
) -> None:
    from webapp import realtime

    sent: list[dict[str, object]] = []
    monkeypatch.setattr(realtime, "publish", lambda group, kind, data: sent.append(data))
    long = "x" * (services.metrics.EVENT_TEXT_LIMIT + 10)
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        services.samples_record(run_id=run.pk, step=1, samples=[{"completion": long}])
    event_sample = sent[0]["samples"][0]  # type: ignore[index]
    assert len(event_sample["completion"]) == services.metrics.EVENT_TEXT_LIMIT + 1 and event_sample["clipped_text"]
    assert RunSample.objects.get(run=run).completion == long
