"""Creating, enqueueing, cancelling and failing evaluation jobs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from curation.constraints import ConstraintConfig
from curation.models import Problem, ReferenceSolution
from evaluator.languages import resolve_language
from evaluator.models import EvaluationJob
from evaluator.selectors import user_can_cancel
from webapp import realtime
from webapp.jobs_feed import job_changed

Status = EvaluationJob.Status
Kind = EvaluationJob.Kind

#: the largest submission accepted (characters); bigger is not a solution but an upload
MAX_CODE_CHARS = 200_000
#: checker kinds the evaluator understands (DESIGN.md section 4)
CHECKER_KINDS = ("lenient", "strict", "icpc")
#: the most problems one verify job may cover
MAX_VERIFY_PROBLEMS = 20_000


class EvaluationError(ValueError):
    """The request cannot become a job (unknown problem, empty code, bad checker ...)."""


class EvaluationInfrastructureError(RuntimeError):
    """Judging could not run at all (the judge pool broke); retrying later may succeed."""


@dataclass(frozen=True)
class Item:
    """One judged unit: a submission, or one reference solution of one problem."""

    problem_id: int
    solution_id: int | None = None


def validate_checker(checker: Any) -> dict[str, Any] | None:
    """``None`` (use the problem's checker) or a checker dict of a known kind; else ``EvaluationError``."""
    if checker is None:
        return None
    if not isinstance(checker, dict) or checker.get("kind") not in CHECKER_KINDS:
        raise EvaluationError(f"checker must be null or an object with kind in {', '.join(CHECKER_KINDS)}")
    return dict(checker)


@transaction.atomic
def evaluation_submit(
    *,
    problem_id: int,
    code: str,
    user: Any,
    checker: dict[str, Any] | None = None,
    stop_on_first_failure: bool = True,
    enqueue: bool = True,
    language: str = "python",
) -> EvaluationJob:
    """Create a ``submission`` job judging ``code`` on problem ``problem_id``.

    ``language`` is ``python``, ``c``, ``cpp`` (aliases such as ``c++`` accepted) or ``auto`` (detected from
    the source: ``evaluator.languages.detect_language``); C and C++ need a stdin problem (a call-mode
    problem calls a Python function). ``checker`` overrides the problem's checker for this job only. ``enqueue=False`` leaves the job
    ``queued`` for the caller to run (``evaluation_run``) or enqueue (``evaluation_enqueue``) itself.
    Raises ``EvaluationError`` for an unknown problem, empty or oversized code, or a bad checker.
    """
    if not isinstance(code, str) or not code.strip():
        raise EvaluationError("code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise EvaluationError(f"code has {len(code)} characters; at most {MAX_CODE_CHARS} are accepted")
    checker = validate_checker(checker)
    try:
        language = resolve_language(language, code)
    except ValueError as exc:
        raise EvaluationError(f"{exc} (or auto)") from exc
    problem = Problem.objects.filter(pk=problem_id).only("id", "io_mode").first()
    if problem is None:
        raise EvaluationError(f"problem {problem_id} does not exist")
    if language != "python" and problem.io_mode != "stdin":
        raise EvaluationError(f"problem {problem_id} calls a Python function ({problem.io_mode} mode): "
                              f"submit Python, not {language}")
    job = EvaluationJob.objects.create(
        kind=Kind.SUBMISSION,
        created_by=_real_user(user),
        problem=problem,
        code=code,
        language=language,
        checker=checker,
        stop_on_first_failure=stop_on_first_failure,
        progress_total=1,
    )
    if enqueue:
        evaluation_enqueue(job_id=job.pk)
    return job


@transaction.atomic
def references_verify(*, problem_ids: Sequence[int], user: Any, enqueue: bool = True) -> EvaluationJob:
    """Create a ``verify_references`` job over ``problem_ids`` (unknown ids are an error).

    Every reference solution in a language the judge runs (``ConstraintConfig.judge_languages``) is
    judged on all tests of its problem; ``progress_total`` counts those solutions.
    """
    ids = sorted({int(i) for i in problem_ids})
    if not ids:
        raise EvaluationError("no problems to verify")
    if len(ids) > MAX_VERIFY_PROBLEMS:
        raise EvaluationError(f"{len(ids)} problems requested; one job verifies at most {MAX_VERIFY_PROBLEMS}")
    found = set(Problem.objects.filter(pk__in=ids).values_list("id", flat=True))
    missing = [i for i in ids if i not in found]
    if missing:
        shown = ", ".join(map(str, missing[:10]))
        raise EvaluationError(f"unknown problem id(s): {shown}{' ...' if len(missing) > 10 else ''}")
    job = EvaluationJob.objects.create(
        kind=Kind.VERIFY_REFERENCES,
        created_by=_real_user(user),
        stop_on_first_failure=True,
        progress_total=len(verify_plan(ids)[0]),
    )
    job.problems.set(ids)
    if enqueue:
        evaluation_enqueue(job_id=job.pk)
    return job


def evaluation_enqueue(*, job_id: int) -> None:
    """Send ``run_evaluation(job_id)`` to the ``evaluate`` queue once the current transaction commits
    (immediately outside one). In zero-config (eager) mode the job runs right then, in-process."""
    from evaluator.tasks import run_evaluation  # the task module imports this one

    def send() -> None:
        result = run_evaluation.apply_async(args=(job_id,))
        # a column-only update: it never overwrites what an (eager or fast) run already saved
        EvaluationJob.objects.filter(pk=job_id).update(celery_task_id=str(result.id or ""))

    transaction.on_commit(send)


def verify_plan(problem_ids: Sequence[int]) -> tuple[list[Item], list[int]]:
    """(items to judge, problems with no judgeable reference solution), in problem then solution order."""
    languages = {lang.lower() for lang in ConstraintConfig.from_settings().judge_languages}
    rows = (
        ReferenceSolution.objects.filter(problem_id__in=list(problem_ids))
        .order_by("problem_id", "order", "id")
        .values_list("id", "problem_id", "language")
    )
    items = [Item(problem_id=pid, solution_id=sid) for sid, pid, lang in rows if lang.lower() in languages]
    covered = {item.problem_id for item in items}
    return items, [pid for pid in problem_ids if pid not in covered]


@transaction.atomic
def evaluation_cancel(*, job_id: int, user: Any) -> EvaluationJob:
    """Cancel a queued or running job (its creator or an admin only; else ``PermissionDenied``).
    A finished job is returned unchanged. A running job stops after the chunk it is judging."""
    job = EvaluationJob.objects.select_for_update().get(pk=job_id)
    if not user_can_cancel(job=job, user=user):
        raise PermissionDenied("only the job's creator or an admin may cancel it")
    if job.is_finished:
        return job
    job.status = Status.CANCELLED
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "finished_at", "updated_at"])
    publish_progress(job)
    return job


@transaction.atomic
def evaluation_fail(*, job_id: int, error: str) -> EvaluationJob:
    """Mark an unfinished job ``failed`` with ``error`` (a finished one is returned unchanged)."""
    job = EvaluationJob.objects.select_for_update().get(pk=job_id)
    if job.is_finished:
        return job
    job.status = Status.FAILED
    job.error = error[:10_000]
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "error", "finished_at", "updated_at"])
    publish_progress(job)
    return job


def publish_progress(job: EvaluationJob) -> None:
    realtime.publish_on_commit(realtime.job_group(job.pk), realtime.JOB_PROGRESS, job.progress_event())
    job_changed(job)  # the jobs view's log and live list


def _real_user(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None
