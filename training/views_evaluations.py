"""Pages of model evaluations: list, create form, detail (live progress, aggregate, breakdowns, per-problem
table, contamination report), one problem's samples, the pass-rate download and the comparison page.

Who sees what: viewers read everything; trainers create any evaluation, curators endpoint evaluations
(``training.api_evaluations.can_create``); the creator or an admin cancels.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from training import selectors_evaluation as selectors
from training.api_evaluations import can_create, pass_rates_response
from training.models import Checkpoint
from training.models_evaluation import (
    Contamination,
    EvalEngine,
    EvalStatus,
    ModelEvaluation,
    summary_headline,
)
from training.services.evaluations import (
    model_evaluation_can_cancel,
    model_evaluation_cancel,
    model_evaluation_create,
    model_evaluation_start,
)
from webapp.roles import CURATOR, TRAINER, VIEWER, has_role, role_required

#: the breakdown tables of the detail page: (title, summary key)
BREAKDOWNS = (("Platform", "by_platform"), ("Difficulty", "by_difficulty"), ("Contest month", "by_month"),
              ("IO mode", "by_io_mode"))
#: what the form keeps between a failed submission and its re-render
_FORM_FIELDS = ("name", "source", "checkpoint", "local_engine", "model", "endpoint_model", "base_url", "release_id",
                "platform", "difficulty", "io_mode", "limit", "k", "temperature", "top_p", "max_tokens", "seed",
                "cutoff_date", "contamination", "contamination_release_id")


def _get(evaluation_id: int) -> ModelEvaluation:
    try:
        return selectors.model_evaluation_get(evaluation_id=evaluation_id)
    except ModelEvaluation.DoesNotExist as exc:
        raise Http404("no such model evaluation") from exc


@role_required(VIEWER)
def evaluation_list(request: HttpRequest) -> HttpResponse:
    qs = selectors.model_evaluation_list()
    status = request.GET.get("status", "")
    if status in EvalStatus.values:
        qs = qs.filter(status=status)
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(request, "training/evaluations/list.html", {
        "page": page, "status": status, "statuses": EvalStatus.values,
        "can_create": has_role(request.user, TRAINER) or has_role(request.user, CURATOR),
    })


def _int_or_none(raw: str, field: str, errors: dict[str, str]) -> int | None:
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        errors[field] = f"must be an integer, got {raw!r}"
        return None


def _parse_form(post: Any, errors: dict[str, str]) -> dict[str, Any]:
    """The create form's POST as ``model_evaluation_create`` keywords (parse errors go to ``errors``)."""
    source = post.get("source", "local")
    kwargs: dict[str, Any] = {"name": post.get("name", "")}
    if source == "checkpoint":
        run_raw, _, step_raw = post.get("checkpoint", "").partition(":")
        kwargs.update(engine=post.get("local_engine", EvalEngine.TRANSFORMERS),
                      run_id=_int_or_none(run_raw, "checkpoint", errors),
                      checkpoint_step=_int_or_none(step_raw, "checkpoint", errors))
        if "checkpoint" not in errors and kwargs["run_id"] is None:
            errors["checkpoint"] = "choose a run's checkpoint"
    elif source == "endpoint":
        kwargs.update(engine=EvalEngine.OPENAI, model=post.get("endpoint_model", ""), base_url=post.get("base_url", ""))
    else:
        kwargs.update(engine=post.get("local_engine", EvalEngine.TRANSFORMERS), model=post.get("model", ""))
    kwargs["release_id"] = _int_or_none(post.get("release_id", ""), "release_id", errors)
    kwargs["problem_filter"] = {key: post.get(key, "") for key in ("platform", "difficulty", "io_mode", "limit")}
    for key in ("k", "temperature", "top_p", "max_tokens", "seed"):
        if post.get(key, "").strip():
            kwargs[key] = post.get(key).strip()
    raw_date = post.get("cutoff_date", "").strip()
    if raw_date:
        try:
            kwargs["cutoff_date"] = dt.date.fromisoformat(raw_date)
        except ValueError:
            errors["cutoff_date"] = f"must be a date YYYY-MM-DD, got {raw_date!r}"
    kwargs["exclude_before_cutoff"] = post.get("exclude_before_cutoff") == "on"
    kwargs["contamination"] = post.get("contamination", Contamination.OFF)
    kwargs["contamination_release_id"] = _int_or_none(post.get("contamination_release_id", ""),
                                                      "contamination_release_id", errors)
    return kwargs


_ERROR_FIELD = {"run_id": "checkpoint", "checkpoint_step": "checkpoint", "problem_filter": "platform",
                "engine": "source"}


@role_required(VIEWER)
@require_http_methods(["GET", "POST"])
def evaluation_create(request: HttpRequest) -> HttpResponse:
    """GET: the form (``?run=<id>`` preselects a run's newest checkpoint). POST: create and start."""
    if not (has_role(request.user, TRAINER) or has_role(request.user, CURATOR)):
        raise PermissionDenied("creating a model evaluation needs the trainer or curator role")
    from curation.models import DatasetRelease

    errors: dict[str, str] = {}
    values: dict[str, str] = {"source": "local", "local_engine": "transformers", "k": "4", "temperature": "0.6",
                              "top_p": "0.95", "max_tokens": "4096", "seed": "0", "contamination": "off",
                              "exclude_before_cutoff": "on"}
    if request.method == "POST":
        values = {key: request.POST.get(key, "") for key in (*_FORM_FIELDS, "exclude_before_cutoff")}
        kwargs = _parse_form(request.POST, errors)
        if not errors and not can_create(request.user, kwargs["engine"]):
            errors["source"] = "curators evaluate OpenAI-compatible endpoints only; local models need a trainer"
        if not errors:
            try:
                with transaction.atomic():
                    evaluation = model_evaluation_create(user=request.user, **kwargs)
                    model_evaluation_start(evaluation_id=evaluation.pk)
            except ValidationError as exc:
                for key, msgs in exc.message_dict.items():
                    errors[_ERROR_FIELD.get(key, key)] = "; ".join(msgs)
            else:
                messages.success(request, f"Model evaluation #{evaluation.pk} queued on {evaluation.queue}.")
                return redirect("training:model-eval-detail", evaluation_id=evaluation.pk)
    elif request.GET.get("run", "").isdigit():
        newest = Checkpoint.objects.filter(run_id=int(request.GET["run"])).order_by("-step").first()
        if newest is not None:
            values.update(source="checkpoint", checkpoint=f"{newest.run_id}:{newest.step}")
    checkpoints = [
        (f"{c.run_id}:{c.step}", f"run #{c.run_id} {c.run.name} · step {c.step}")
        for c in Checkpoint.objects.select_related("run").order_by("-run_id", "-step")[:300]
    ]
    return render(request, "training/evaluations/create.html", {
        "values": values, "errors": errors, "checkpoints": checkpoints,
        "releases": list(DatasetRelease.objects.order_by("-id")[:200]),
        "local_engines": [(EvalEngine.TRANSFORMERS, "transformers (CPU or GPU)"), (EvalEngine.VLLM, "vLLM (GPU)")],
        "contamination_choices": Contamination.choices, "is_trainer_user": has_role(request.user, TRAINER),
    })


def _breakdowns(summary: dict[str, Any]) -> list[tuple[str, list[tuple[str, dict[str, Any]]]]]:
    """``[(title, [(group, headline numbers), ...]), ...]`` of the summary's breakdown tables."""
    out = []
    for title, key in BREAKDOWNS:
        table = summary.get(key) or {}
        if isinstance(table, dict) and table:
            rows = [(str(group or "—"), summary_headline(v if isinstance(v, dict) else {}))
                    for group, v in sorted(table.items(), key=lambda kv: str(kv[0]))]
            out.append((title, rows))
    return out


@role_required(VIEWER)
def evaluation_detail(request: HttpRequest, evaluation_id: int) -> HttpResponse:
    evaluation = _get(evaluation_id)
    outcome = request.GET.get("outcome", "")
    problems = selectors.model_evaluation_problems(evaluation_id=evaluation_id, outcome=outcome)
    page = Paginator(problems, 100).get_page(request.GET.get("page"))
    summary = evaluation.summary or {}
    return render(request, "training/evaluations/detail.html", {
        "evaluation": evaluation, "headline": summary_headline(summary),
        "clean": summary_headline(summary["clean"]) if summary.get("clean") else None, "breakdowns": _breakdowns(summary), "page": page, "outcome": outcome,
        "contamination_rows": sorted((evaluation.contamination_report or {}).items()),
        "ws_path": f"/ws/model-evaluations/{evaluation.pk}/",
        "can_cancel": not evaluation.is_terminal and not evaluation.cancel_requested
        and model_evaluation_can_cancel(evaluation=evaluation, user=request.user),
        "others": ModelEvaluation.objects.exclude(pk=evaluation.pk).filter(
            status=EvalStatus.SUCCEEDED).order_by("-id")[:50],
    })


@role_required(VIEWER)
@require_POST
def evaluation_cancel(request: HttpRequest, evaluation_id: int) -> HttpResponse:
    _get(evaluation_id)
    evaluation = model_evaluation_cancel(evaluation_id=evaluation_id, user=request.user)  # 403 if not the owner
    messages.success(request, f"Cancellation of model evaluation #{evaluation_id} requested ({evaluation.status}).")
    return redirect("training:model-eval-detail", evaluation_id=evaluation_id)


@role_required(VIEWER)
def evaluation_problem(request: HttpRequest, evaluation_id: int, problem_id: int) -> HttpResponse:
    evaluation = _get(evaluation_id)
    result = selectors.model_evaluation_problems(evaluation_id=evaluation_id).filter(problem_id=problem_id).first()
    samples = list(selectors.model_evaluation_samples(evaluation_id=evaluation_id, problem_id=problem_id))
    if result is None and not samples:
        raise Http404("this evaluation has no samples of that problem")
    return render(request, "training/evaluations/problem.html", {
        "evaluation": evaluation, "result": result, "samples": samples, "problem_id": problem_id,
    })


@role_required(VIEWER)
def evaluation_pass_rates(request: HttpRequest, evaluation_id: int) -> HttpResponse:
    _get(evaluation_id)
    return pass_rates_response(evaluation_id)


@role_required(VIEWER)
def evaluation_compare(request: HttpRequest) -> HttpResponse:
    """``?ids=1&ids=2`` or ``?ids=1,2``: the first id is the baseline."""
    raw = ",".join(request.GET.getlist("ids"))
    parts = [p.strip() for p in raw.split(",") if p.strip()]
    error = ""
    comparison: dict[str, Any] | None = None
    if parts:
        if not all(p.isdigit() for p in parts):
            error = f"ids must be evaluation numbers, got {raw!r}"
        else:
            try:
                comparison = selectors.model_evaluation_compare(evaluation_ids=[int(p) for p in parts])
            except (ValueError, ModelEvaluation.DoesNotExist) as exc:
                error = str(exc)
    for pair in (comparison or {}).get("pairs", []):
        pair["flip_tables"] = [(f"Solved by #{pair['b']} only", pair["b_only"]),
                               (f"Solved by #{pair['a']} only", pair["a_only"])]
    return render(request, "training/evaluations/compare.html", {
        "comparison": comparison, "error": error, "selected": parts,
        "choices": ModelEvaluation.objects.order_by("-id")[:200],
    }, status=400 if error else 200)
