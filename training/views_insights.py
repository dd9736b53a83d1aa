"""The insights page: the 34 MicroCoder training insights by aspect, each with the config field it
concerns (its default and what each preset sets it to) and the runs whose launch warned about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from training.config import describe_fields
from training.insights import ASPECTS, INSIGHTS, Insight
from training.presets import PRESETS
from training.selectors_insights import InsightRuns, insight_runs
from webapp.roles import VIEWER, role_required

ASPECT_LABELS: dict[str, str] = {
    "evaluator": "Evaluator",
    "temperature": "Temperature",
    "data": "Data",
    "context_length": "Context length",
    "truncation_mask": "Truncation mask",
    "batch_on_policy": "Batch size and on-policy",
    "kl_clip": "KL and clip",
}
#: runs listed per insight (the rest behind the run list's ?insight= filter)
RUNS_PER_INSIGHT = 8


@dataclass
class InsightRow:
    insight: Insight
    field_help: str
    default: Any
    presets: list[tuple[str, Any]]  # (preset name, the value it sets) for presets that set the field
    runs: InsightRuns


def insight_rows() -> list[tuple[str, str, list[InsightRow]]]:
    """(aspect key, label, rows) in the order of ``training.insights.ASPECTS``."""
    fields = {f.path: f for f in describe_fields()}
    cited = insight_runs(per_insight=RUNS_PER_INSIGHT)
    groups: list[tuple[str, str, list[InsightRow]]] = []
    for aspect in ASPECTS:
        rows = []
        for i in INSIGHTS:
            if i.aspect != aspect:
                continue
            info = fields.get(i.config_field)
            rows.append(
                InsightRow(
                    insight=i,
                    field_help=info.help if info else "",
                    default=info.default if info else None,
                    presets=[
                        (p.name, p.overrides[i.config_field])
                        for p in PRESETS.values()
                        if i.config_field in p.overrides
                    ],
                    runs=cited.get(i.id, InsightRuns()),
                )
            )
        groups.append((aspect, ASPECT_LABELS.get(aspect, aspect), rows))
    return groups


@role_required(VIEWER)
def insights_page(request: HttpRequest) -> HttpResponse:
    groups = insight_rows()
    return render(
        request,
        "training/insights.html",
        {
            "groups": groups,
            "insight_count": len(INSIGHTS),
            "runs_per_insight": RUNS_PER_INSIGHT,
        },
    )
