"""Every long job of the product behind one small adapter, for the jobs view (``/jobs/``).

A :class:`JobKind` says, for one job model (or one ``kind`` of it), how to list its rows, how to read
one row as a :class:`JobRow` (title, status, progress, reason, owner, detail page), which statuses
mean "ended", and how to cancel it (the kind's own cancel service and owner rule; ``None`` where the
job cannot be cancelled). ``webapp.jobs_kinds.KINDS`` holds them in display order:

- ``import``: curation ``ImportBatch`` (no cancel: a batch commits chunk by chunk and ends on its own);
- ``verification``: evaluator ``EvaluationJob`` of kind ``verify_references``;
- ``evaluation``: evaluator ``EvaluationJob`` of kind ``submission`` (judge jobs);
- ``scoring``: curation difficulty ``ScoringJob``;
- ``model_evaluation``: training ``ModelEvaluation``;
- ``training``: training ``TrainingRun``;
- ``sweep``: training ``Sweep`` (status and progress derived from its runs).

Statuses are read in one vocabulary (``queued running succeeded failed cancelled``): an import's
``pending`` is shown and filtered as ``queued``. This module holds the two types; the adapters are in
:mod:`webapp.jobs_kinds`, reads in :mod:`webapp.jobs_selectors`, the log and live feed in
:mod:`webapp.jobs_feed`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Model, QuerySet
from django.urls import reverse

from webapp.roles import can_manage

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = "queued", "running", "succeeded", "failed", "cancelled"
#: the statuses of the jobs view, in lifecycle order
STATUSES = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
TERMINAL = frozenset({SUCCEEDED, FAILED, CANCELLED})
#: the status filter "active" = not ended yet
ACTIVE = "active"


@dataclass(frozen=True)
class JobRow:
    """One job as the jobs view shows it. ``total`` is None while the amount of work is unknown (an
    import of a file whose rows cannot be counted up front, e.g. a JSON document or a folder of
    packages): the bar is then indeterminate and ``done`` counts what is done."""

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
    #: ``(queryset, status) -> queryset`` for kinds whose status is not a column (sweeps)
    filter_status: Callable[[QuerySet[Any], str], QuerySet[Any]] | None = None
    #: ``obj -> (kind key, pk)`` of the job this one belongs to (a sweep's run), whose row changes with it
    parent: Callable[[Any], tuple[str, int] | None] | None = None

    def get(self, job_id: int) -> Any:
        return self.queryset().get(pk=job_id)

    def filtered(self, *, status: str = "", owner_id: int | None = None) -> QuerySet[Any]:
        qs = self.queryset()
        if status and self.filter_status is not None:
            qs = self.filter_status(qs, status)
        elif status == ACTIVE:
            qs = qs.filter(status__in=self.status_values(QUEUED) + self.status_values(RUNNING))
        elif status:
            qs = qs.filter(status__in=self.status_values(status))
        if owner_id is not None:
            qs = qs.filter(**{f"{self.owner_field}_id": owner_id})
        return qs
