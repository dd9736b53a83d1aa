"""Evaluation jobs (reads)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from curation.models import Problem
from curation.selectors import ReleaseFilter, problems_for_release
from evaluator.models import EvaluationJob
from webapp.roles import CURATOR, TRAINER, can_manage, has_role

#: default for ``settings.EVALUATION_SYNC_MAX_TESTS``: a submission with at most this many tests may be
#: judged inside the request (``?wait=1``, the judge page); bigger ones always go to the queue
SYNC_MAX_TESTS = 200
#: the most problems one filter may select for a verify job
VERIFY_FILTER_LIMIT = 5000

_LIST_FIELDS = (
    "id", "kind", "status", "created_by__username", "problem__id", "problem__title", "progress_done",
    "progress_total", "error", "created_at", "started_at", "finished_at", "updated_at", "created_by_id",
    "problem_id", "stop_on_first_failure",
)


def user_can_submit(user: Any) -> bool:
    """Judging code (submissions, the judge page) needs the trainer or the curator role."""
    return has_role(user, TRAINER) or has_role(user, CURATOR)


def user_can_cancel(*, job: EvaluationJob, user: Any) -> bool:
    """A job may be cancelled by its creator (while a trainer or curator) or an admin — the owner rule
    of :func:`webapp.roles.can_manage`; whether it still can be is the service's call."""
    return can_manage(user, job.created_by_id, roles=(TRAINER, CURATOR))


def job_list(*, filters: dict[str, Any] | None = None) -> QuerySet[EvaluationJob]:
    """Jobs, newest first, without code or results. Filters: ``kind``, ``status``, ``problem`` (id),
    ``created_by`` (user id); empty values are ignored."""
    qs = EvaluationJob.objects.select_related("created_by", "problem").only(*_LIST_FIELDS)
    f = {k: v for k, v in (filters or {}).items() if v not in (None, "")}
    if "kind" in f:
        qs = qs.filter(kind=f["kind"])
    if "status" in f:
        qs = qs.filter(status=f["status"])
    if "problem" in f:
        qs = qs.filter(problem_id=int(f["problem"]))
    if "created_by" in f:
        qs = qs.filter(created_by_id=int(f["created_by"]))
    return qs.order_by("-created_at", "-id")


def job_detail(*, job_id: int) -> EvaluationJob:
    """One job with everything (raises ``EvaluationJob.DoesNotExist``)."""
    return EvaluationJob.objects.select_related("created_by", "problem").get(pk=job_id)


def job_problem_ids(*, job: EvaluationJob) -> list[int]:
    """The problems a job covers, in id order."""
    if job.kind == EvaluationJob.Kind.SUBMISSION:
        return [job.problem_id] if job.problem_id else []
    return sorted(job.problems.values_list("id", flat=True))


def sync_max_tests() -> int:
    return int(getattr(settings, "EVALUATION_SYNC_MAX_TESTS", SYNC_MAX_TESTS))


def submission_fits_request(*, problem_id: int) -> bool:
    """Whether judging one submission on ``problem_id`` is small enough to run inside a request."""
    count = Problem.objects.filter(pk=problem_id).values_list("test_count", flat=True).first()
    return count is not None and count <= sync_max_tests()


def problems_to_verify(*, spec: dict[str, Any], limit: int = VERIFY_FILTER_LIMIT) -> list[int]:
    """Problem ids selected by a release-style filter spec (``curation.selectors.ReleaseFilter``), at
    most ``limit`` (lowest ids first). Raises ``ValueError`` for a bad spec."""
    selected = problems_for_release(ReleaseFilter.from_dict(spec))
    return list(selected.values_list("id", flat=True)[: max(0, min(limit, VERIFY_FILTER_LIMIT))])


def problem_choices(*, limit: int = 300) -> list[tuple[int, str]]:
    """(id, label) of recent problems for the judge page's picker."""
    rows = Problem.objects.select_related("platform").only("id", "title", "external_id", "platform__name")
    return [(p.pk, f"{p.pk} · {p.platform.name}/{p.external_id} · {p.title}") for p in rows.order_by("-id")[:limit]]
