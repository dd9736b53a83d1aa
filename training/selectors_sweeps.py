"""Reads of sweeps and of run comparisons (the comparison page's panels live here too)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Q, QuerySet

from training.models import RunStatus, Sweep, TrainingRun

#: the comparison page's panels: (title, metric) in the order the paper tells its story; a panel whose
#: metric no compared run has recorded is left out (e.g. eval/pass@1 without a held-out release)
COMPARE_PANELS: tuple[tuple[str, str], ...] = (
    ("Reward", "reward"),
    ("Held-out pass@1", "eval/pass@1"),
    ("Mean completion length", "completions/mean_length"),
    ("Max completion length", "completions/max_length"),
    ("Clipped (truncated) ratio", "completions/clipped_ratio"),
    ("Diversity", "diversity"),
    ("Entropy", "entropy"),
    ("Conditional mask ratio", "mask/conditional_masked_ratio"),
    ("Temperature", "temperature"),
    ("Temperature stage", "temperature/stage"),
    ("KL", "kl"),
    ("Clip ratio (high)", "clip_ratio/high_mean"),
    ("Zero-variance groups", "frac_reward_zero_std"),
)
COMPARE_METRICS: tuple[str, ...] = tuple(metric for _, metric in COMPARE_PANELS)

_STATUSES = [s for s, _ in RunStatus.choices]


def sweep_list() -> QuerySet[Sweep]:
    """Sweeps, newest first, each annotated with ``run_count`` and ``n_<status>`` run counts."""
    counts = {f"n_{s}": Count("runs", filter=Q(runs__status=s)) for s in _STATUSES}
    return (
        Sweep.objects.select_related("created_by", "release")
        .annotate(run_count=Count("runs"), **counts)
        .order_by("-created_at", "-id")
    )


def sweep_get(*, sweep_id: int) -> Sweep:
    """The sweep with its run counts (raises ``Sweep.DoesNotExist``)."""
    return sweep_list().get(pk=sweep_id)


def sweep_status(sweep: Sweep) -> str:
    """The derived status of an annotated sweep (``Sweep.status_of``)."""
    statuses: list[str] = []
    for s in _STATUSES:
        statuses += [s] * int(getattr(sweep, f"n_{s}", 0) or 0)
    return Sweep.status_of(statuses)


def sweep_counts(sweep: Sweep) -> dict[str, int]:
    return {s: int(getattr(sweep, f"n_{s}", 0) or 0) for s in _STATUSES}


def sweep_runs(*, sweep_id: int) -> QuerySet[TrainingRun]:
    """The sweep's runs in the order they were expanded."""
    return TrainingRun.objects.filter(sweep_id=sweep_id).select_related("created_by").order_by("id")


#: the largest primary key (PostgreSQL bigint); a bigger "id" is no id, not a database error
_MAX_ID = 2**63 - 1


def as_id(raw: str) -> int | None:
    """``raw`` as a primary key, or None: ASCII digits only (``"²".isdigit()`` is true), within bigint."""
    if not (raw.isascii() and raw.isdigit()):
        return None
    value = int(raw)
    return value if value <= _MAX_ID else None


def parse_run_ids(raw: str, *, limit: int) -> list[int]:
    """``"3,1,2"`` -> ``[3, 1, 2]`` (order kept, duplicates once); ``ValueError`` saying what is wrong."""
    ids: list[int] = []
    for part in (raw or "").split(","):
        part = part.strip()
        if not part:
            continue
        if as_id(part) is None:
            raise ValueError(f"run ids are integers separated by commas, got {part!r}")
        if int(part) not in ids:
            ids.append(int(part))
    if not ids:
        raise ValueError("name the runs to compare, e.g. ?runs=1,2,3")
    if len(ids) > limit:
        raise ValueError(f"at most {limit} runs can be compared at once, got {len(ids)}")
    return ids


def existing_runs(run_ids: list[int]) -> tuple[list[int], list[int]]:
    """``(found, missing)`` of the requested ids, in request order."""
    found = set(TrainingRun.objects.filter(pk__in=run_ids).values_list("pk", flat=True))
    return [r for r in run_ids if r in found], [r for r in run_ids if r not in found]


#: panels shown even before any compared run has a point (the others appear with their first point)
ALWAYS_SHOWN = frozenset(
    {"reward", "completions/mean_length", "completions/clipped_ratio", "diversity", "temperature"}
)


def compare_panels() -> list[dict[str, Any]]:
    """The comparison page's panels: ``{"title", "metric", "always"}``; the page hides a panel that is not
    ``always`` while no compared run has recorded its metric (``eval/pass@1`` without a held-out set)."""
    return [{"title": t, "metric": m, "always": m in ALWAYS_SHOWN} for t, m in COMPARE_PANELS]


__all__ = [
    "COMPARE_METRICS",
    "COMPARE_PANELS",
    "compare_panels",
    "existing_runs",
    "as_id",
    "parse_run_ids",
    "sweep_counts",
    "sweep_get",
    "sweep_list",
    "sweep_runs",
    "sweep_status",
]
