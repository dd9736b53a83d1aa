"""Writes of metric points and sample rows. Every write is idempotent per (run, step)."""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Max, Q

from training.models import CHUNK_STEPS, MetricChunk, RunSample, TrainingRun, merge_points
from webapp import realtime
from webapp.jobs_feed import job_changed

log = logging.getLogger(__name__)

#: characters of prompt/completion a ``RUN_SAMPLES`` event carries per sample (the database keeps all;
#: the page fetches the full rows on demand). 16 samples of 8K-token completions would otherwise make
#: every step's event megabytes large.
EVENT_TEXT_LIMIT = 4000

#: RunSample fields a trainer's sample dict maps to; everything else goes to ``extra``
_SAMPLE_FIELDS = ("prompt", "completion", "reward", "verdict", "length", "truncated", "masked")


def clean_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """``{name: float}`` of the numeric entries (bools count as 0/1); other values are dropped with a log line.

    Non-finite floats are kept here (storage keeps them; reads turn them into gaps).
    """
    out: dict[str, float] = {}
    for name, value in metrics.items():
        if isinstance(value, bool | int | float | np.floating | np.integer):
            out[str(name)] = float(value)
        elif hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # a 0-d tensor / ndarray
            out[str(name)] = float(value.item())
        else:
            log.warning("metric %r has a non-numeric value %r; not stored", name, value)
    return out


def json_safe(metrics: Mapping[str, float]) -> dict[str, float | None]:
    """JSON has no NaN/inf (and PostgreSQL jsonb rejects them): map them to None."""
    return {k: (v if math.isfinite(v) else None) for k, v in metrics.items()}


def _upsert_columns(run_id: int, columns: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> int:
    """Merge ``{name: (steps, values)}`` into the run's chunks; returns the number of chunk rows written.

    Reads every affected chunk in one query (locked for update where the database supports it), merges
    in memory, then writes with one bulk update and one bulk insert.
    """
    pieces: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
    for name, (steps, values) in columns.items():
        steps = np.asarray(steps, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        if len(steps) == 0:
            continue
        if (steps < 0).any():
            raise ValueError(f"metric {name!r}: steps must be >= 0")
        chunk_ids = steps // CHUNK_STEPS
        order = np.argsort(chunk_ids, kind="stable")
        steps, values, chunk_ids = steps[order], values[order], chunk_ids[order]
        bounds = np.flatnonzero(np.r_[True, chunk_ids[1:] != chunk_ids[:-1], True])
        for a, b in zip(bounds[:-1], bounds[1:]):
            pieces[(name, int(chunk_ids[a]))] = (steps[a:b], values[a:b])
    if not pieces:
        return 0
    by_name: dict[str, list[int]] = defaultdict(list)
    for name, chunk in pieces:
        by_name[name].append(chunk)
    where = Q()
    for name, chunks in by_name.items():
        where |= Q(name=name, chunk__in=chunks)
    existing = {
        (c.name, c.chunk): c
        for c in MetricChunk.objects.select_for_update().filter(where, run_id=run_id)
    }
    rows: list[MetricChunk] = []
    empty_steps, empty_values = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    for (name, chunk), (steps, values) in pieces.items():
        old = existing.get((name, chunk))
        old_steps, old_values = old.arrays() if old is not None else (empty_steps, empty_values)
        merged_steps, merged_values = merge_points(old_steps, old_values, steps, values)
        row = MetricChunk(run_id=run_id, name=name, chunk=chunk)
        row.set_arrays(merged_steps, merged_values)
        rows.append(row)
    # One INSERT ... ON CONFLICT DO UPDATE for new and existing chunks alike (the rows are locked above,
    # so the merge cannot race another writer of the same run).
    MetricChunk.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["run", "name", "chunk"],
        update_fields=["steps", "values", "count", "min_step", "max_step"],
    )
    return len(rows)


@transaction.atomic
def metrics_record(*, run_id: int, step: int, metrics: Mapping[str, Any]) -> dict[str, float | None]:
    """Store one step's metrics and publish them (``RUN_METRICS``) after commit.

    Idempotent per ``(run, step)``: recording a step again replaces its values, never duplicates it.
    The run's ``last_step``/``latest_metrics`` snapshot moves forward only (a replayed older step does not
    overwrite a newer snapshot). Returns the JSON-safe metrics that were published.
    """
    values = clean_metrics(metrics)
    _upsert_columns(run_id, {name: (np.array([step]), np.array([v])) for name, v in values.items()})
    safe = json_safe(values)
    run = TrainingRun.objects.select_for_update().only("id", "last_step", "latest_metrics").get(pk=run_id)
    if run.last_step is None or step >= run.last_step:
        # Merge so metrics logged only every N steps (eval/*) stay visible between their steps.
        TrainingRun.objects.filter(pk=run_id).update(last_step=step, latest_metrics={**run.latest_metrics, **safe})
    realtime.publish_on_commit(
        realtime.run_group(run_id), realtime.RUN_METRICS, {"run_id": run_id, "step": step, "metrics": safe}
    )
    job_changed(run_id, kind="training")  # the jobs view's progress (steps) and log milestones
    return safe


@transaction.atomic
def metrics_bulk_record(*, run_id: int, steps: Sequence[int], metrics: Mapping[str, Sequence[float]]) -> int:
    """Bulk path (imports, benchmarks): ``metrics[name][i]`` is the value at ``steps[i]``.

    Same idempotent upsert as :func:`metrics_record` but one merge per chunk for all steps, and no
    events. Updates the run's snapshot to the newest step. Returns the chunk rows written.
    """
    step_arr = np.asarray(steps, dtype=np.int64)
    columns = {}
    for name, vals in metrics.items():
        arr = np.asarray(vals, dtype=np.float64)
        if arr.shape != step_arr.shape:
            raise ValueError(f"metric {name!r} has {arr.shape[0]} values for {step_arr.shape[0]} steps")
        columns[name] = (step_arr, arr)
    written = _upsert_columns(run_id, columns)
    if len(step_arr):
        last = int(step_arr.max())
        at_last = int(np.flatnonzero(step_arr == last)[-1])
        latest = json_safe({name: float(col[1][at_last]) for name, col in columns.items()})
        run = TrainingRun.objects.select_for_update().only("id", "last_step", "latest_metrics").get(pk=run_id)
        if run.last_step is None or last >= run.last_step:
            TrainingRun.objects.filter(pk=run_id).update(last_step=last, latest_metrics={**run.latest_metrics, **latest})
    return written


@transaction.atomic
def metrics_truncate_after(*, run_id: int, step: int) -> int:
    """Forget every metric point and sample after ``step`` (a resume from the checkpoint at ``step``
    re-runs those steps; their old values must not outlive the new ones). Returns points removed.

    The run's ``last_step``/``latest_metrics`` snapshot is rebuilt from what remains.
    """
    removed = 0
    for count in MetricChunk.objects.filter(run_id=run_id, min_step__gt=step).values_list("count", flat=True):
        removed += count
    MetricChunk.objects.filter(run_id=run_id, min_step__gt=step).delete()
    for row in MetricChunk.objects.select_for_update().filter(run_id=run_id, max_step__gt=step):
        steps, values = row.arrays()
        keep = steps <= step
        removed += int((~keep).sum())
        row.set_arrays(steps[keep], values[keep])  # non-empty: min_step <= step
        row.save(update_fields=["steps", "values", "count", "min_step", "max_step"])
    RunSample.objects.filter(run_id=run_id, step__gt=step).delete()
    if removed == 0:
        return 0
    # Rebuild the snapshot: each metric's newest remaining value (its last chunk's last point).
    latest: dict[str, float] = {}
    last_step: int | None = None
    newest_chunk = dict(
        MetricChunk.objects.filter(run_id=run_id).values("name").annotate(top=Max("chunk")).values_list("name", "top")
    )
    where = Q(pk__in=[])
    for name, chunk in newest_chunk.items():
        where |= Q(name=name, chunk=chunk)
    for row in MetricChunk.objects.filter(where, run_id=run_id):
        steps, values = row.arrays()
        latest[row.name] = float(values[-1])
        last_step = int(steps[-1]) if last_step is None else max(last_step, int(steps[-1]))
    TrainingRun.objects.filter(pk=run_id).update(last_step=last_step, latest_metrics=json_safe(latest))
    return removed


def _sample_row(run_id: int, step: int, index: int, sample: Mapping[str, Any]) -> RunSample:
    reward = sample.get("reward")
    extra = {k: v for k, v in sample.items() if k not in _SAMPLE_FIELDS and k not in ("step", "index")}
    return RunSample(
        run_id=run_id,
        step=step,
        index=int(sample.get("index", index)),
        prompt=str(sample.get("prompt", "")),
        completion=str(sample.get("completion", "")),
        reward=float(reward) if reward is not None and math.isfinite(float(reward)) else None,
        verdict=str(sample.get("verdict", ""))[:8],
        length=int(sample.get("length", 0) or 0),
        truncated=bool(sample.get("truncated", False)),
        masked=bool(sample.get("masked", False)),
        extra=json_safe_tree(extra),
    )


def json_safe_tree(value: Any) -> Any:
    """A JSON-storable copy of nested data: non-finite floats -> None, unknown objects -> str."""
    if isinstance(value, Mapping):
        return {str(k): json_safe_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe_tree(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str | int):
        return value
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return str(value)


def sample_dict(row: RunSample) -> dict[str, Any]:
    """The JSON shape of a sample row (API and ``RUN_SAMPLES`` events)."""
    return {
        "index": row.index,
        "prompt": row.prompt,
        "completion": row.completion,
        "reward": row.reward,
        "verdict": row.verdict,
        "length": row.length,
        "truncated": row.truncated,
        "masked": row.masked,
        **({"extra": row.extra} if row.extra else {}),
    }


@transaction.atomic
def samples_record(*, run_id: int, step: int, samples: Sequence[Mapping[str, Any]]) -> int:
    """Replace the sample table of ``step`` with ``samples`` and publish ``RUN_SAMPLES`` after commit.

    Idempotent per ``(run, step)``: a replayed step's rows replace the old ones. Returns rows stored.
    """
    rows = [_sample_row(run_id, step, i, s) for i, s in enumerate(samples)]
    RunSample.objects.filter(run_id=run_id, step=step).delete()
    RunSample.objects.bulk_create(rows, batch_size=500)
    realtime.publish_on_commit(
        realtime.run_group(run_id),
        realtime.RUN_SAMPLES,
        {"run_id": run_id, "step": step, "samples": [_event_sample(r) for r in rows]},
    )
    return len(rows)


def _event_sample(row: RunSample) -> dict[str, Any]:
    d = sample_dict(row)
    for key in ("prompt", "completion"):
        if len(d[key]) > EVENT_TEXT_LIMIT:
            d[key] = d[key][:EVENT_TEXT_LIMIT] + "…"
            d["clipped_text"] = True
    return d


__all__ = [
    "clean_metrics",
    "json_safe",
    "json_safe_tree",
    "metrics_bulk_record",
    "metrics_record",
    "metrics_truncate_after",
    "sample_dict",
    "samples_record",
]
