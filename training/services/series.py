"""Overlay series for the comparison page: many runs' metrics, bucketed on the server, min/max kept.

A comparison of 20 runs x 10,000 steps x a dozen metrics is 2.4 million points: too many to send, and a
browser could not smooth them interactively. Each series is cut into buckets of ``width`` steps on a
grid shared by every run of the comparison (bucket ``b`` holds steps ``lo + b*width .. lo + (b+1)*width - 1``),
and each non-empty bucket becomes one point: its last step, the mean, the minimum, the maximum and the
number of points. The page draws the mean line (smoothed with an EMA whose per-bucket decay is
``alpha ** count``, so a bucket of k points moves the average as much as its k raw points would) and
the min/max band, so a one-step spike stays visible however far the series is zoomed out.

Summaries (final value, min and max with their steps) come from the full series, never from buckets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.utils import timezone

from training.models import MetricChunk, TrainingRun, unpack

#: bounds of ``points`` (buckets per series) and the default
MIN_POINTS = 10
MAX_POINTS = 5_000
DEFAULT_POINTS = 600
#: significant digits of the bucket values sent (charts and tooltips show 3)
SIGNIFICANT_DIGITS = 6
#: the most runs / metrics one comparison may ask for
MAX_RUNS = 64  # = the default SWEEP_MAX_RUNS: a whole sweep fits on one page
MAX_METRICS = 40

#: which way is better for the summary's "best" (metrics not listed: higher is better)
LOWER_IS_BETTER = frozenset(
    {
        "completions/clipped_ratio",
        "frac_reward_zero_std",
        "eval/infra_error_rate",
        "eval/no_answer_rate",
        "loss",
        "timing/generate_s",
        "timing/reward_s",
        "timing/update_s",
        "timing/step_s",
        "timing/eval_s",
    }
)


@dataclass(frozen=True)
class Buckets:
    """One bucketed series: per non-empty bucket its last step, mean, min, max and point count."""

    steps: np.ndarray  # (k,) int64, ascending
    mean: np.ndarray  # (k,) float64
    min: np.ndarray  # (k,) float64
    max: np.ndarray  # (k,) float64
    count: np.ndarray  # (k,) int64, >= 1


def bucket_width(lo: int, hi: int, points: int) -> int:
    """Steps per bucket so that ``[lo, hi]`` fits in at most ``points`` buckets (at least 1)."""
    span = int(hi) - int(lo) + 1
    return max(1, -(-span // max(1, int(points))))


def bucket_series(steps: np.ndarray, values: np.ndarray, *, lo: int, width: int) -> Buckets:
    """Bucket a sorted series on the grid ``lo + b*width``; non-finite values are left out.

    With ``width == 1`` every point is its own bucket (mean = min = max = the value, count 1).
    """
    steps = np.asarray(steps, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        steps, values = steps[finite], values[finite]
    n = len(steps)
    if n == 0:
        empty_f = np.empty(0, dtype=np.float64)
        return Buckets(np.empty(0, dtype=np.int64), empty_f, empty_f, empty_f, np.empty(0, dtype=np.int64))
    index = (steps - int(lo)) // int(width)  # (n,) non-decreasing
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])  # (k,) first point of each bucket
    count = np.diff(np.r_[starts, n])  # (k,)
    ends = starts + count - 1
    return Buckets(
        steps=steps[ends],
        mean=np.add.reduceat(values, starts) / count,
        min=np.minimum.reduceat(values, starts),
        max=np.maximum.reduceat(values, starts),
        count=count.astype(np.int64),
    )


def ema(values: Sequence[float], counts: Sequence[int], smoothing: float) -> list[float]:
    """The debiased exponential moving average the page draws (TensorBoard's, per bucket).

    ``smoothing`` in [0, 1): the weight of the past per raw point; a bucket of ``c`` points decays the
    past by ``smoothing ** c``. 0 returns the values unchanged. Mirrors ``compare.js`` ``emaBuckets``.
    """
    if not 0.0 <= smoothing < 1.0:
        raise ValueError(f"smoothing must be in [0, 1), got {smoothing}")
    out: list[float] = []
    acc, weight = 0.0, 0.0
    for value, count in zip(values, counts):
        decay = smoothing ** int(count)
        acc = acc * decay + (1.0 - decay) * float(value)
        weight = weight * decay + (1.0 - decay)
        out.append(acc / weight if weight > 0 else float(value))
    return out


def summarize(name: str, steps: np.ndarray, values: np.ndarray) -> dict[str, Any]:
    """Final value, min and max (with the step where each first occurs) and the best, of a full series."""
    finite = np.isfinite(values)
    steps, values = steps[finite], values[finite]
    if len(values) == 0:
        return {
            "final": None,
            "final_step": None,
            "min": None,
            "min_step": None,
            "max": None,
            "max_step": None,
            "best": None,
            "best_step": None,
        }
    i_min, i_max = int(np.argmin(values)), int(np.argmax(values))
    lower = name in LOWER_IS_BETTER
    i_best = i_min if lower else i_max
    return {
        "final": float(values[-1]),
        "final_step": int(steps[-1]),
        "min": float(values[i_min]),
        "min_step": int(steps[i_min]),
        "max": float(values[i_max]),
        "max_step": int(steps[i_max]),
        "best": float(values[i_best]),
        "best_step": int(steps[i_best]),
    }


def _read_arrays(
    run_ids: Sequence[int], names: Sequence[str]
) -> dict[tuple[int, str], tuple[np.ndarray, np.ndarray]]:
    """Every stored point of the requested metrics of the requested runs, in one query."""
    parts: dict[tuple[int, str], list[tuple[np.ndarray, np.ndarray]]] = {}
    rows = (
        MetricChunk.objects.filter(run_id__in=list(run_ids), name__in=list(names))
        .order_by("run_id", "name", "chunk")
        .values_list("run_id", "name", "steps", "values", "min_step")
    )
    for run_id, name, steps, values, min_step in rows:
        parts.setdefault((run_id, name), []).append(unpack(steps, values, min_step))
    out: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}
    for key, pieces in parts.items():
        if len(pieces) == 1:
            out[key] = pieces[0]
        else:
            out[key] = (np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces]))
    return out


def round_significant(values: np.ndarray, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (0 and non-finite values unchanged).

    Dividing an integer-valued float by an exact power of ten is correctly rounded, so the result is the
    double nearest the decimal and JSON writes it short (``0.123457``, not 17 digits): the payload shrinks
    by half and no chart or tooltip (3 significant digits) can tell.
    """
    out = np.array(values, dtype=np.float64, copy=True)
    nz = np.isfinite(out) & (out != 0)
    if nz.any():
        magnitude = np.floor(np.log10(np.abs(out[nz])))
        scale = 10.0 ** (digits - 1 - magnitude)
        out[nz] = np.round(out[nz] * scale) / scale
    return out


def compare_series(
    *, run_ids: Sequence[int], names: Sequence[str], points: int = DEFAULT_POINTS
) -> dict[str, Any]:
    """The comparison payload: per metric a shared bucket grid and, per run, its buckets and summary.

    ``{"points", "metrics": {name: {"lo", "width", "lower_is_better", "runs": {run_id: {"steps", "mean",
    "min", "max", "count", "total", "summary"}}}}}``; a run without the metric is absent from its
    ``runs``. Values are floats or None (JSON has no NaN).
    """
    points = min(max(int(points), MIN_POINTS), MAX_POINTS)
    names = list(dict.fromkeys(names))
    arrays = _read_arrays(run_ids, names)
    metrics: dict[str, Any] = {}
    for name in names:
        present = [
            (rid, arrays[(rid, name)])
            for rid in run_ids
            if (rid, name) in arrays and len(arrays[(rid, name)][0])
        ]
        if not present:
            metrics[name] = {"lo": None, "width": 1, "lower_is_better": name in LOWER_IS_BETTER, "runs": {}}
            continue
        lo = min(int(s[0]) for _, (s, _) in present)
        hi = max(int(s[-1]) for _, (s, _) in present)
        width = bucket_width(lo, hi, points)
        runs: dict[str, Any] = {}
        for rid, (steps, values) in present:
            b = bucket_series(steps, values, lo=lo, width=width)
            runs[str(rid)] = {
                "steps": b.steps.tolist(),
                # bucket_series left the non-finite values out: every number here is finite
                "mean": round_significant(b.mean).tolist(),
                "min": round_significant(b.min).tolist(),
                "max": round_significant(b.max).tolist(),
                "count": b.count.tolist(),
                "total": int(len(steps)),
                "summary": summarize(name, steps, values),
            }
        metrics[name] = {"lo": lo, "width": width, "lower_is_better": name in LOWER_IS_BETTER, "runs": runs}
    return {"points": points, "metrics": metrics}


def compare_runs_info(run_ids: Sequence[int]) -> list[dict[str, Any]]:
    """What the page shows about each run besides its series: name, status, sweep, wall time."""
    rows = TrainingRun.objects.filter(pk__in=list(run_ids)).select_related("sweep")
    by_id = {r.pk: r for r in rows}
    out = []
    for rid in run_ids:
        run = by_id.get(rid)
        if run is None:
            continue
        wall = None
        if run.started_at is not None:
            end = run.finished_at or timezone.now()
            wall = max(0.0, (end - run.started_at).total_seconds())
        out.append(
            {
                "id": run.pk,
                "name": run.name,
                "status": run.status,
                "last_step": run.last_step,
                "max_steps": (run.config or {}).get("max_steps"),
                "preset": (run.config or {}).get("preset", ""),
                "sweep_id": run.sweep_id,
                "sweep_name": run.sweep.name if run.sweep_id else None,
                "sweep_overrides": run.sweep_overrides,
                "wall_s": wall,
                "started_at": run.started_at.isoformat() if run.started_at else None,
                "finished_at": run.finished_at.isoformat() if run.finished_at else None,
            }
        )
    return out


__all__ = [
    "Buckets",
    "DEFAULT_POINTS",
    "LOWER_IS_BETTER",
    "MAX_METRICS",
    "MAX_POINTS",
    "MAX_RUNS",
    "MIN_POINTS",
    "bucket_series",
    "bucket_width",
    "compare_runs_info",
    "compare_series",
    "ema",
    "round_significant",
    "summarize",
]
