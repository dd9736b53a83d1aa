"""Pages of the training app: run list, run detail, cancel. The create form is in
``training.views_run_form`` (re-exported here for the URLconf)."""

from __future__ import annotations

from typing import Any

import yaml
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from training import selectors, services
from training.config import ConfigError, config_from_dict
from training.insights import INSIGHTS_BY_ID
from training.models import TrainingRun
from training.selectors_insights import runs_citing
from training.views_run_form import run_create
from webapp.roles import TRAINER, VIEWER, can_manage, role_required

#: the chart panels of the run page: (title, metric names drawn together)
CHART_PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Reward", ("reward",)),
    ("Held-out pass@1 / pass@k", ("eval/pass@1", "eval/pass@k")),
    ("Reward std", ("reward_std", "frac_reward_zero_std")),
    ("Mean completion length", ("completions/mean_length",)),
    ("Clipped (truncated) ratio", ("completions/clipped_ratio",)),
    ("Conditional mask ratio", ("mask/conditional_masked_ratio",)),
    ("Temperature", ("temperature", "temperature/stage")),
    ("Diversity", ("diversity",)),
    ("Entropy", ("entropy",)),
    ("Timing (s)", ("timing/generate_s", "timing/reward_s", "timing/update_s")),
    ("Infra error rate", ("eval/infra_error_rate",)),
)


@role_required(VIEWER)
def run_list(request: HttpRequest) -> HttpResponse:
    qs = selectors.run_list()
    status = request.GET.get("status", "")
    if status:
        qs = qs.filter(status=status)
    insight = request.GET.get("insight", "")
    if insight:
        if insight not in INSIGHTS_BY_ID:
            raise Http404(f"no insight {insight!r}")
        qs = runs_citing(qs, insight)
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "training/run_list.html",
        {
            "page": page,
            "status": status,
            "insight": INSIGHTS_BY_ID.get(insight),
            "statuses": [s for s, _ in TrainingRun._meta.get_field("status").choices],
        },
    )


def _config_yaml(config: dict[str, Any]) -> str:
    """The stored config in the core's field order (PostgreSQL's jsonb does not keep key order)."""
    try:
        return config_from_dict(config).to_yaml()
    except (ConfigError, TypeError, ValueError):  # a config written by an older core: show it as stored
        return yaml.safe_dump(config, sort_keys=True)


@role_required(VIEWER)
def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    try:
        run = selectors.run_get(run_id=run_id)
    except TrainingRun.DoesNotExist as exc:
        raise Http404("no such run") from exc
    panels = [{"title": t, "series": list(names)} for t, names in CHART_PANELS]
    known = {n for _, names in CHART_PANELS for n in names}
    return render(
        request,
        "training/run_detail.html",
        {
            "run": run,
            "checkpoints": selectors.run_checkpoints(run_id=run_id),
            "config_yaml": _config_yaml(run.config),
            "panels": panels,
            "other_metrics": [n for n in selectors.run_metric_names(run_id=run_id) if n not in known],
            "can_cancel": can_manage(request.user, run.created_by_id)
            and not run.is_terminal
            and not run.cancel_requested,
        },
    )


@role_required(TRAINER)
@require_POST
def run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    if not TrainingRun.objects.filter(pk=run_id).exists():
        raise Http404("no such run")
    run = services.run_cancel(
        run_id=run_id, user=request.user
    )  # PermissionDenied (403) unless the owner rule allows
    messages.success(request, f"Cancellation of run #{run_id} requested ({run.status}).")
    return redirect("training:run-detail", run_id=run_id)


__all__ = ["run_cancel", "run_create", "run_detail", "run_list"]
