"""Reads behind the insights page: which runs' launch warned about which insight.

``TrainingRun.warnings`` holds the ``check_config`` warnings of a run at creation, each
``{"field", "message", "insight_ids": [...], "severity"}``. On PostgreSQL the page's index is one query
(``jsonb_array_elements`` unnests the cited ids, a window function keeps the newest runs per insight and
counts them all) and the per-insight run filter is a JSONB containment test
(``warnings @> '[{"insight_ids": ["KL-1"]}]'``) that the GIN index of migration 0006 serves. Other
databases (SQLite) read the warnings of the runs that have any and group them in Python.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from training.models import TrainingRun


@dataclass
class InsightRuns:
    """The runs whose launch cited one insight: how many, and the newest ones."""

    total: int = 0
    runs: list[TrainingRun] = field(default_factory=list)


def _cited_ids(warnings: Any) -> set[str]:
    if not isinstance(warnings, list):
        return set()
    out: set[str] = set()
    for w in warnings:
        ids = w.get("insight_ids") if isinstance(w, dict) else None
        if isinstance(ids, list):
            out.update(i for i in ids if isinstance(i, str))
    return out


_PG_INDEX = """
SELECT insight_id, run_id, total FROM (
  SELECT ids.insight_id, r.id AS run_id,
         row_number() OVER (PARTITION BY ids.insight_id ORDER BY r.id DESC) AS rank,
         count(*) OVER (PARTITION BY ids.insight_id) AS total
  FROM {table} r
  CROSS JOIN LATERAL (
    SELECT DISTINCT jsonb_array_elements_text(w -> 'insight_ids') AS insight_id
    FROM jsonb_array_elements(r.warnings) w
    WHERE jsonb_typeof(w -> 'insight_ids') = 'array'
  ) ids
  WHERE jsonb_typeof(r.warnings) = 'array' AND r.warnings <> '[]'::jsonb
) cited
WHERE rank <= %s
"""


def insight_runs(*, per_insight: int = 8) -> dict[str, InsightRuns]:
    """insight id -> the number of runs whose launch cited it and the newest ``per_insight`` of them."""
    pairs: list[tuple[str, int]] = []
    totals: dict[str, int] = {}
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_PG_INDEX.format(table=TrainingRun._meta.db_table), [per_insight])
            for insight_id, run_id, total in cursor.fetchall():
                pairs.append((insight_id, run_id))
                totals[insight_id] = total
    else:
        cited: dict[str, list[int]] = defaultdict(list)
        for run_id, warnings in (
            TrainingRun.objects.exclude(warnings=[]).order_by("-id").values_list("id", "warnings")
        ):
            for insight_id in _cited_ids(warnings):
                cited[insight_id].append(run_id)
        for insight_id, ids in cited.items():
            totals[insight_id] = len(ids)
            pairs.extend((insight_id, run_id) for run_id in ids[:per_insight])
    runs = (
        TrainingRun.objects.select_related("created_by")
        .only("id", "name", "status", "created_at", "created_by__username", "config")
        .in_bulk({run_id for _, run_id in pairs})
    )
    out: dict[str, InsightRuns] = {i: InsightRuns(total=t) for i, t in totals.items()}
    for insight_id, run_id in sorted(pairs, key=lambda p: -p[1]):
        if run_id in runs:
            out[insight_id].runs.append(runs[run_id])
    return out


def runs_citing(queryset: QuerySet[TrainingRun], insight_id: str) -> QuerySet[TrainingRun]:
    """``queryset`` narrowed to the runs whose launch warnings cite ``insight_id``."""
    if connection.vendor == "postgresql":
        return queryset.filter(warnings__contains=[{"insight_ids": [insight_id]}])
    ids = [
        run_id
        for run_id, warnings in queryset.exclude(warnings=[]).values_list("id", "warnings")
        if insight_id in _cited_ids(warnings)
    ]
    return queryset.filter(id__in=ids)


__all__ = ["InsightRuns", "insight_runs", "runs_citing"]
