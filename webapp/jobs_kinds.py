"""The job kinds of the jobs view (see :mod:`webapp.jobs`): one adapter per job type, in display order.

Model imports happen inside the functions: the apps' services import :mod:`webapp.jobs_feed` (which
imports this module) and must not find their own models half-loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import Count, F, Model, Q, QuerySet
from django.urls import reverse

from webapp.jobs import (
    ACTIVE,
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    JobKind,
    JobRow,
)
from webapp.roles import CURATOR, TRAINER


def _owner(obj: Any, attr: str = "created_by") -> tuple[int | None, str]:
    owner_id = getattr(obj, f"{attr}_id")
    user = getattr(obj, attr) if owner_id is not None else None
    return owner_id, (user.get_username() if user is not None else "")


# ------------------------------------------------------------------------------------------ imports


def _imports() -> QuerySet[Any]:
    from curation.models import ImportBatch

    return ImportBatch.objects.select_related("user").defer("errors", "path").order_by("-created_at", "-id")


def _import_row(batch: Any) -> JobRow:
    owner_id, owner_name = _owner(batch, "user")
    status = QUEUED if batch.status == "pending" else str(batch.status)
    finished = status in TERMINAL
    reason = (
        batch.message
        if finished
        else (f"{batch.rejected_count:,} rejected so far" if batch.rejected_count else "")
    )
    return JobRow(
        kind="import",
        kind_label="Import",
        id=batch.pk,
        title=f"{batch.filename} ({batch.format})",
        status=status,
        done=batch.total_rows,
        total=batch.total_rows if finished else batch.expected_rows,  # None: not countable up front
        unit="rows",
        reason=reason,
        owner_id=owner_id,
        owner_name=owner_name,
        created_at=batch.created_at,
        finished_at=batch.finished_at,
        detail_url=reverse("curation:import-detail", args=(batch.pk,)),
        cancellable=False,
        manage_roles=(CURATOR,),
    )


def _import_status_values(status: str) -> tuple[str, ...]:
    return ("pending",) if status == QUEUED else (status,)


# -------------------------------------------------------------------------- judge and verify jobs


def _evaluation_jobs(kind: str) -> Callable[[], QuerySet[Any]]:
    def queryset() -> QuerySet[Any]:
        from evaluator.models import EvaluationJob

        return (
            EvaluationJob.objects.filter(kind=kind)
            .select_related("created_by", "problem")
            .defer("code", "results", "checker", "problem__statement")
            .order_by("-created_at", "-id")
        )

    return queryset


def _evaluation_row(job: Any) -> JobRow:
    owner_id, owner_name = _owner(job)
    if job.kind == "submission":
        key, label = "evaluation", "Judge"
        title = f"submission on #{job.problem_id} {job.problem.title}" if job.problem_id else "submission"
        unit = "solution"
    else:
        key, label, unit = "verification", "Verification", "solutions"
        title = "verify reference solutions"
    return JobRow(
        kind=key,
        kind_label=label,
        id=job.pk,
        title=title,
        status=str(job.status),
        done=job.progress_done,
        total=job.progress_total,
        unit=unit,
        reason=job.error,
        owner_id=owner_id,
        owner_name=owner_name,
        created_at=job.created_at,
        finished_at=job.finished_at,
        detail_url=reverse("evaluator:job-detail", args=(job.pk,)),
        cancellable=True,
        manage_roles=(TRAINER, CURATOR),
    )


def _evaluation_cancel(*, job_id: int, user: Any) -> Any:
    from evaluator.services import evaluation_cancel

    return evaluation_cancel(job_id=job_id, user=user)


# ------------------------------------------------------------------------------------------ scorings


def _scorings() -> QuerySet[Any]:
    from curation.models import ScoringJob

    return (
        ScoringJob.objects.select_related("created_by")
        .defer("problem_ids", "filter_spec")
        .order_by("-created_at", "-id")
    )


def _scoring_row(job: Any) -> JobRow:
    owner_id, owner_name = _owner(job)
    model = f" {job.model}" if job.model else ""
    return JobRow(
        kind="scoring",
        kind_label="Scoring",
        id=job.pk,
        title=f"difficulty: {job.backend}{model} ({job.prompt_version or 'default prompt'})",
        status=str(job.status),
        done=job.progress_done,
        total=job.progress_total,
        unit="problems",
        reason=job.reason,
        owner_id=owner_id,
        owner_name=owner_name,
        created_at=job.created_at,
        finished_at=job.finished_at,
        detail_url=reverse("difficulty:scoring-detail", args=(job.pk,)),
        cancellable=True,
        manage_roles=(CURATOR,),
    )


def _scoring_cancel(*, job_id: int, user: Any) -> Any:
    from curation.services.difficulty import scoring_cancel

    return scoring_cancel(scoring_id=job_id, user=user)


# ------------------------------------------------------------------------------ model evaluations


def _model_evaluations() -> QuerySet[Any]:
    from training.models import ModelEvaluation

    return (
        ModelEvaluation.objects.select_related("created_by")
        .defer("summary", "selection", "contamination_report")
        .order_by("-created_at", "-id")
    )


def _model_evaluation_row(evaluation: Any) -> JobRow:
    owner_id, owner_name = _owner(evaluation)
    return JobRow(
        kind="model_evaluation",
        kind_label="Model evaluation",
        id=evaluation.pk,
        title=evaluation.label,
        status=str(evaluation.status),
        done=evaluation.samples_done,
        total=evaluation.samples_total,
        unit="samples",
        reason=evaluation.reason,
        owner_id=owner_id,
        owner_name=owner_name,
        created_at=evaluation.created_at,
        finished_at=evaluation.finished_at,
        detail_url=reverse("training:model-eval-detail", args=(evaluation.pk,)),
        cancellable=True,
        manage_roles=(TRAINER,) if evaluation.is_local else (TRAINER, CURATOR),
    )


def _model_evaluation_cancel(*, job_id: int, user: Any) -> Any:
    from training.services.evaluations import model_evaluation_cancel

    return model_evaluation_cancel(evaluation_id=job_id, user=user)


# ------------------------------------------------------------------------------------ training runs


def _runs() -> QuerySet[Any]:
    from training.models import TrainingRun

    return (
        TrainingRun.objects.select_related("created_by")
        .defer("warnings", "latest_metrics")
        .order_by("-created_at", "-id")
    )


def _run_row(run: Any) -> JobRow:
    owner_id, owner_name = _owner(run)
    steps = (run.config or {}).get("max_steps")
    reason = run.error or ("cancel requested" if run.cancel_requested and run.status not in TERMINAL else "")
    return JobRow(
        kind="training",
        kind_label="Training run",
        id=run.pk,
        title=run.name,
        status=str(run.status),
        done=run.last_step or 0,
        total=int(steps) if isinstance(steps, int) else None,
        unit="steps",
        reason=reason,
        owner_id=owner_id,
        owner_name=owner_name,
        created_at=run.created_at,
        finished_at=run.finished_at,
        detail_url=reverse("training:run-detail", args=(run.pk,)),
        cancellable=True,
        manage_roles=(TRAINER,),
    )


def _run_sweep(run: Any) -> tuple[str, int] | None:
    return ("sweep", run.sweep_id) if getattr(run, "sweep_id", None) else None


def _run_cancel(*, job_id: int, user: Any) -> Any:
    from training.services.runs import run_cancel

    return run_cancel(run_id=job_id, user=user)


# ------------------------------------------------------------------------------------------- sweeps

_ACTIVE_RUNS = (QUEUED, RUNNING)


def _sweeps() -> QuerySet[Any]:
    from training.models import Sweep

    def n(*statuses: str) -> Count:
        return Count("runs", filter=Q(runs__status__in=statuses))

    return (
        Sweep.objects.select_related("created_by")
        .defer("base_config", "override_sets", "axes", "seeds", "description")
        .annotate(
            n_total=Count("runs"),
            n_running=n(RUNNING),
            n_queued=n(QUEUED),
            n_failed=n(FAILED),
            n_cancelled=n(CANCELLED),
            n_ended=n(*TERMINAL),
        )
        .order_by("-created_at", "-id")
    )


def _sweep_status(s: Any) -> str:
    """``training.Sweep.status_of`` over the annotated counts (a sweep without runs reads ``queued``)."""
    if s.n_running or (s.n_queued and s.n_queued < s.n_total):
        return RUNNING
    if s.n_queued or not s.n_total:
        return QUEUED
    return FAILED if s.n_failed else CANCELLED if s.n_cancelled else SUCCEEDED


def _sweep_filter(qs: QuerySet[Any], status: str) -> QuerySet[Any]:
    idle = Q(n_running=0, n_queued=0, n_total__gt=0)
    running = Q(n_running__gt=0) | Q(n_queued__gt=0, n_queued__lt=F("n_total"))
    queued = Q(n_running=0) & (Q(n_queued=F("n_total")))
    by_status = {
        RUNNING: running,
        QUEUED: queued,
        ACTIVE: running | queued,
        FAILED: idle & Q(n_failed__gt=0),
        CANCELLED: idle & Q(n_failed=0, n_cancelled__gt=0),
        SUCCEEDED: idle & Q(n_failed=0, n_cancelled=0),
    }
    return qs.filter(by_status[status])


def _sweep_row(sweep: Any) -> JobRow:
    if not hasattr(sweep, "n_total"):
        sweep = _sweeps().get(pk=sweep.pk)
    owner_id, owner_name = _owner(sweep)
    status = _sweep_status(sweep)
    parts = [
        f"{count} {word}"
        for count, word in ((sweep.n_failed, "failed"), (sweep.n_cancelled, "cancelled"))
        if count
    ]
    if sweep.cancel_requested and status not in TERMINAL:
        parts.insert(0, "cancel requested")
    return JobRow(
        kind="sweep",
        kind_label="Sweep",
        id=sweep.pk,
        title=sweep.name,
        status=status,
        done=sweep.n_ended,
        total=sweep.n_total,
        unit="runs ended",
        reason=", ".join(parts),
        owner_id=owner_id,
        owner_name=owner_name,
        created_at=sweep.created_at,
        finished_at=None,
        detail_url=reverse("training:sweep-detail", args=(sweep.pk,)),
        cancellable=True,
        manage_roles=(TRAINER,),
    )


def _sweep_cancel(*, job_id: int, user: Any) -> Any:
    from training.services.sweeps import sweep_cancel

    return sweep_cancel(sweep_id=job_id, user=user)


def _is(label: str, kind: str | None = None) -> Callable[[Model], bool]:
    def matches(obj: Model) -> bool:
        return obj._meta.label == label and (kind is None or getattr(obj, "kind", None) == kind)

    return matches


KINDS: dict[str, JobKind] = {
    k.key: k
    for k in (
        JobKind(
            "import",
            "Imports",
            _imports,
            _import_row,
            _is("curation.ImportBatch"),
            status_values=_import_status_values,
            owner_field="user",
            manage_roles=(CURATOR,),
        ),
        JobKind(
            "verification",
            "Verifications",
            _evaluation_jobs("verify_references"),
            _evaluation_row,
            _is("evaluator.EvaluationJob", "verify_references"),
            cancel=_evaluation_cancel,
            manage_roles=(TRAINER, CURATOR),
        ),
        JobKind(
            "evaluation",
            "Judge jobs",
            _evaluation_jobs("submission"),
            _evaluation_row,
            _is("evaluator.EvaluationJob", "submission"),
            cancel=_evaluation_cancel,
            manage_roles=(TRAINER, CURATOR),
        ),
        JobKind(
            "scoring",
            "Difficulty scorings",
            _scorings,
            _scoring_row,
            _is("curation.ScoringJob"),
            cancel=_scoring_cancel,
            manage_roles=(CURATOR,),
        ),
        JobKind(
            "model_evaluation",
            "Model evaluations",
            _model_evaluations,
            _model_evaluation_row,
            _is("training.ModelEvaluation"),
            cancel=_model_evaluation_cancel,
            manage_roles=(TRAINER,),
        ),
        JobKind(
            "training",
            "Training runs",
            _runs,
            _run_row,
            _is("training.TrainingRun"),
            cancel=_run_cancel,
            manage_roles=(TRAINER,),
            parent=_run_sweep,
        ),
        JobKind(
            "sweep",
            "Sweeps",
            _sweeps,
            _sweep_row,
            _is("training.Sweep"),
            cancel=_sweep_cancel,
            manage_roles=(TRAINER,),
            filter_status=_sweep_filter,
        ),
    )
}


def kind_of(obj: Model) -> JobKind:
    """The kind of a job object; ``LookupError`` for an object no kind covers."""
    for kind in KINDS.values():
        if kind.matches(obj):
            return kind
    raise LookupError(f"no job kind for {obj._meta.label}")
