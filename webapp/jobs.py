"""Every long job of the product behind one small adapter, for the jobs view (``/jobs/``).

A :class:`JobKind` says, for one job model (or one ``kind`` of it), how to list its rows, how to read
one row as a :class:`JobRow` (title, status, progress, reason, owner, detail page), which statuses
mean "ended", and how to cancel it (the kind's own cancel service and owner rule; ``None`` where the
job cannot be cancelled). ``KINDS`` holds them in display order:

- ``import``: curation ``ImportBatch`` (no cancel: a batch commits chunk by chunk and ends on its own);
- ``verification``: evaluator ``EvaluationJob`` of kind ``verify_references``;
- ``evaluation``: evaluator ``EvaluationJob`` of kind ``submission`` (judge jobs);
- ``scoring``: curation difficulty ``ScoringJob``;
- ``model_evaluation``: training ``ModelEvaluation``;
- ``training``: training ``TrainingRun``.

Statuses are read in one vocabulary (``queued running succeeded failed cancelled``): an import's
``pending`` is shown and filtered as ``queued``. Reads live in :mod:`webapp.jobs_selectors`, the log
and the live feed in :mod:`webapp.jobs_feed`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Model, QuerySet
from django.urls import reverse

from webapp.roles import CURATOR, TRAINER, can_manage

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = "queued", "running", "succeeded", "failed", "cancelled"
#: the statuses of the jobs view, in lifecycle order
STATUSES = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
TERMINAL = frozenset({SUCCEEDED, FAILED, CANCELLED})
#: the status filter "active" = not ended yet
ACTIVE = "active"


@dataclass(frozen=True)
class JobRow:
    """One job as the jobs view shows it. ``total`` is None while the amount of work is unknown (an
    import reads its file as it goes): the bar is then indeterminate and ``done`` counts what is done."""

    kind: str
    kind_label: str
    id: int
    title: str
    status: str
    done: int
    total: int | None
    unit: str
    reason: str
    owner_id: int | None
    owner_name: str
    created_at: datetime
    finished_at: datetime | None
    detail_url: str
    cancellable: bool
    manage_roles: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        return f"{self.kind}-{self.id}"

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def percent(self) -> float | None:
        """Progress in percent (0-100), or None when the total is unknown."""
        if self.total is None:
            return None
        if self.total <= 0:
            return 100.0 if self.terminal else 0.0
        return round(100.0 * min(self.done, self.total) / self.total, 1)

    @property
    def progress_text(self) -> str:
        if self.total is None:
            return f"{self.done:,} {self.unit}"
        return f"{self.done:,} / {self.total:,} {self.unit}"

    def can_cancel(self, user: Any) -> bool:
        """Whether ``user`` sees a cancel control: the kind cancels, the job has not ended, and the owner
        rule (``webapp.roles.can_manage`` with the kind's roles) lets ``user`` manage it."""
        return (
            self.cancellable
            and not self.terminal
            and can_manage(user, self.owner_id, roles=self.manage_roles)
        )

    def event(self) -> dict[str, Any]:
        """The ``jobs.update`` payload (``webapp.realtime.JOBS_UPDATE``)."""
        return {
            "kind": self.kind,
            "kind_label": self.kind_label,
            "id": self.id,
            "key": self.key,
            "title": self.title,
            "status": self.status,
            "terminal": self.terminal,
            "done": self.done,
            "total": self.total,
            "percent": self.percent,
            "progress_text": self.progress_text,
            "unit": self.unit,
            "reason": self.reason,
            "owner_id": self.owner_id,
            "owner_name": self.owner_name,
            "created_at": self.created_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "detail_url": self.detail_url,
            "log_url": reverse("jobs:detail", args=(self.kind, self.id)),
            "cancellable": self.cancellable and not self.terminal,
            "manage_roles": list(self.manage_roles),
        }


@dataclass(frozen=True)
class JobKind:
    """The adapter of one job type (see the module docstring)."""

    key: str
    label: str
    queryset: Callable[[], QuerySet[Any]]
    row: Callable[[Any], JobRow]
    matches: Callable[[Model], bool]
    #: our status -> the model's status values it covers
    status_values: Callable[[str], tuple[str, ...]] = field(default=lambda s: (s,))
    owner_field: str = "created_by"
    #: ``cancel(job_id=..., user=...)``: the kind's own service (raises PermissionDenied), or None
    cancel: Callable[..., Any] | None = None
    manage_roles: tuple[str, ...] = ()

    def get(self, job_id: int) -> Any:
        return self.queryset().get(pk=job_id)

    def filtered(self, *, status: str = "", owner_id: int | None = None) -> QuerySet[Any]:
        qs = self.queryset()
        if status == ACTIVE:
            qs = qs.filter(status__in=self.status_values(QUEUED) + self.status_values(RUNNING))
        elif status:
            qs = qs.filter(status__in=self.status_values(status))
        if owner_id is not None:
            qs = qs.filter(**{f"{self.owner_field}_id": owner_id})
        return qs


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
        total=batch.total_rows if finished else None,
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


def _run_cancel(*, job_id: int, user: Any) -> Any:
    from training.services.runs import run_cancel

    return run_cancel(run_id=job_id, user=user)


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
        ),
    )
}


def kind_of(obj: Model) -> JobKind:
    """The kind of a job object; ``LookupError`` for an object no kind covers."""
    for kind in KINDS.values():
        if kind.matches(obj):
            return kind
    raise LookupError(f"no job kind for {obj._meta.label}")
