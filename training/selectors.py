"""Reads of the training app: runs, metric series (downsampled for charts), samples, snapshots."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from django.db.models import QuerySet

from training.models import CHUNK_STEPS, Checkpoint, MetricChunk, RunSample, TrainingRun, unpack

#: bounds of ``max_points`` (the chart asks for its pixel width; the API clamps)
MIN_POINTS = 4
MAX_POINTS = 20_000
DEFAULT_POINTS = 1_000


def downsample_m4(steps: np.ndarray, values: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Reduce a sorted series to at most ``max_points`` points that draw the same line.

    M4 aggregation: the step range is cut into ``max_points // 4`` equal-width buckets (a chart asks
    for 4x its pixel width, so a bucket is at most a pixel column); each non-empty bucket keeps its
    first, minimum, maximum and last point (duplicates once, in step order). Spikes survive and the
    newest point is always kept. Non-finite values are dropped first. A series that already fits is
    returned unchanged. ``steps`` must be sorted ascending and unique.
    """
    steps = np.asarray(steps, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        steps, values = steps[finite], values[finite]
    n = len(steps)
    if n <= max_points:
        return steps, values
    buckets = max(1, max_points // 4)
    span = int(steps[-1]) - int(steps[0]) + 1
    # Integer bucket ids so hand-computed boundaries are exact: bucket = (s - s0) * B // span.
    bucket = (steps - steps[0]) * buckets // span  # (n,) non-decreasing
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])  # (k,) first index of each bucket
    ends = np.r_[starts[1:], n] - 1
    bucket_of = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))  # (n,) 0..k-1
    # Per bucket the earliest index holding its minimum and the latest holding its maximum: every
    # bucket has at least one hit of each, so the first/last hit per bucket lines up with the buckets.
    min_hits = np.flatnonzero(values == np.minimum.reduceat(values, starts)[bucket_of])
    argmin = min_hits[np.r_[0, np.flatnonzero(np.diff(bucket_of[min_hits])) + 1]]
    max_hits = np.flatnonzero(values == np.maximum.reduceat(values, starts)[bucket_of])
    argmax = max_hits[np.r_[np.flatnonzero(np.diff(bucket_of[max_hits])), len(max_hits) - 1]]
    keep = np.unique(np.concatenate([starts, ends, argmin, argmax]))
    return steps[keep], values[keep]


def _finite_or_none(values: Iterable[float]) -> list[float | None]:
    # JSON has no NaN/inf; the chart draws None as a gap.
    return [v if math.isfinite(v) else None for v in values]


def run_metric_arrays(
    *, run_id: int, name: str, min_step: int | None = None, max_step: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """All stored ``(steps, values)`` of one metric of a run within ``[min_step, max_step]``."""
    qs = MetricChunk.objects.filter(run_id=run_id, name=name)
    if min_step is not None:
        qs = qs.filter(chunk__gte=min_step // CHUNK_STEPS)
    if max_step is not None:
        qs = qs.filter(chunk__lte=max_step // CHUNK_STEPS)
    parts = [unpack(s, v, lo) for s, v, lo in qs.order_by("chunk").values_list("steps", "values", "min_step")]
    if not parts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    steps = np.concatenate([p[0] for p in parts])
    values = np.concatenate([p[1] for p in parts])
    if min_step is not None or max_step is not None:
        lo = min_step if min_step is not None else int(steps[0])
        hi = max_step if max_step is not None else int(steps[-1])
        inside = (steps >= lo) & (steps <= hi)
        steps, values = steps[inside], values[inside]
    return steps, values


def run_metric_series(
    run_id: int,
    names: Sequence[str],
    max_points: int = DEFAULT_POINTS,
    *,
    min_step: int | None = None,
    max_step: int | None = None,
) -> dict[str, dict[str, Any]]:
    """Chart-ready series: ``{name: {"steps": [...], "values": [...], "total": n}}`` per requested name.

    Each series is downsampled with :func:`downsample_m4` to at most ``max_points`` points (clamped to
    ``[MIN_POINTS, MAX_POINTS]``); ``total`` is the number of stored points before downsampling. A name
    with no data gives empty lists. Values are floats or None (a non-finite value never leaves here).
    """
    max_points = min(max(int(max_points), MIN_POINTS), MAX_POINTS)
    out: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(names):  # unique, in request order
        steps, values = run_metric_arrays(run_id=run_id, name=name, min_step=min_step, max_step=max_step)
        total = int(len(steps))
        ds_steps, ds_values = downsample_m4(steps, values, max_points)
        out[name] = {"steps": ds_steps.tolist(), "values": _finite_or_none(ds_values.tolist()), "total": total}
    return out


def run_metric_names(*, run_id: int) -> list[str]:
    """Names of every metric the run has recorded, sorted."""
    return sorted(set(MetricChunk.objects.filter(run_id=run_id).values_list("name", flat=True)))


def run_list() -> QuerySet[TrainingRun]:
    return TrainingRun.objects.select_related("created_by", "release").order_by("-created_at", "-id")


def run_get(*, run_id: int) -> TrainingRun:
    """The run (raises ``TrainingRun.DoesNotExist``)."""
    return TrainingRun.objects.select_related("created_by", "release").get(pk=run_id)


def run_checkpoints(*, run_id: int) -> QuerySet[Checkpoint]:
    return Checkpoint.objects.filter(run_id=run_id).order_by("step")


def run_sample_steps(*, run_id: int, limit: int = 200) -> list[int]:
    """The newest ``limit`` steps that have samples, newest first."""
    qs = RunSample.objects.filter(run_id=run_id).values_list("step", flat=True).distinct().order_by("-step")
    return list(qs[:limit])


def run_samples(*, run_id: int, step: int | None = None) -> tuple[int | None, QuerySet[RunSample]]:
    """``(step, samples)`` of one step; ``step=None`` picks the newest step that has samples."""
    if step is None:
        step = RunSample.objects.filter(run_id=run_id).order_by("-step").values_list("step", flat=True).first()
    qs = RunSample.objects.filter(run_id=run_id, step=step).order_by("index") if step is not None else (
        RunSample.objects.none()
    )
    return step, qs


def run_snapshot(*, run_id: int) -> dict[str, Any] | None:
    """What a websocket client gets on join: status and the newest metrics (None if the run is gone)."""
    row = (
        TrainingRun.objects.filter(pk=run_id)
        .values("id", "status", "last_step", "latest_metrics", "error", "cancel_requested")
        .first()
    )
    if row is None:
        return None
    return {
        "run_id": row["id"],
        "status": row["status"],
        "cancel_requested": row["cancel_requested"],
        "error": row["error"],
        "step": row["last_step"],
        "metrics": row["latest_metrics"] or {},
    }


def run_recent_models(*, limit: int = 20) -> list[str]:
    """Distinct ``model`` values of the newest runs' configs (suggestions for the create form)."""
    out: list[str] = []
    for config in TrainingRun.objects.order_by("-id").values_list("config", flat=True)[:200]:
        model = config.get("model") if isinstance(config, dict) else None
        if isinstance(model, str) and model and model not in out:
            out.append(model)
            if len(out) >= limit:
                break
    return out


# Model evaluation reads (CONTRACTS section D: model_evaluation_pass_rates, model_evaluation_label).
from training.selectors_evaluation import (  # noqa: E402, F401
    model_evaluation_compare,
    model_evaluation_export_rows,
    model_evaluation_get,
    model_evaluation_label,
    model_evaluation_list,
    model_evaluation_pass_rates,
    model_evaluation_problems,
    model_evaluation_samples,
)
