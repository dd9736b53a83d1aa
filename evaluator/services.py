"""Evaluation jobs (writes): submit, verify references, run, cancel, fail.

Contracts:

- ``evaluation_submit`` and ``references_verify`` create a ``queued`` job and, unless told not to,
  enqueue ``evaluator.tasks.run_evaluation`` once the surrounding transaction commits.
- ``evaluation_run`` is the task body. It moves a job ``queued``/``running`` -> ``running`` ->
  ``succeeded`` (or ``failed``), judging in chunks with the evaluator core (``judge_batch``) and
  committing progress (and, for verify jobs, each reference verdict) after every chunk, then
  publishing ``job.progress``. It is idempotent: a finished job is returned untouched, and a job left
  ``running`` by a crashed or retried worker starts over from scratch. Infrastructure failures raise
  ``EvaluationInfrastructureError`` (or a database error) so the task can retry; a problem with the
  job itself (bad data) marks it ``failed`` with the reason and returns.
- A reference solution judged ``IE`` (the judge could not run it) is never reported to curation as
  rejected: its constraint stays pending and the job's result says why.
- ``evaluation_cancel`` stops a job between chunks; verdicts already recorded stay recorded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from curation.constraints import ConstraintConfig
from curation.models import Problem, ReferenceSolution
from curation.services import problem_judge_case, problem_set_reference_verdict
from evaluator import judge_batch
from evaluator.models import EvaluationJob
from webapp import realtime
from webapp.roles import ADMIN, has_role

log = logging.getLogger(__name__)

Job = EvaluationJob
Status = EvaluationJob.Status
Kind = EvaluationJob.Kind

#: the largest submission accepted (characters); bigger is not a solution but an upload
MAX_CODE_CHARS = 200_000
#: checker kinds the evaluator understands (DESIGN.md section 4)
CHECKER_KINDS = ("lenient", "strict", "icpc")
#: longest text kept per field of a per-test result (stdout/stderr excerpts stay readable, rows stay small)
MAX_RESULT_TEXT = 500
#: the most problems one verify job may cover
MAX_VERIFY_PROBLEMS = 20_000
#: verdict keys stored in a job's results
_VERDICT_KEYS = ("verdict", "passed", "total", "method", "elapsed_s")


class EvaluationError(ValueError):
    """The request cannot become a job (unknown problem, empty code, bad checker ...)."""


class EvaluationInfrastructureError(RuntimeError):
    """Judging could not run at all (the judge pool broke); retrying later may succeed."""


# ------------------------------------------------------------------------------------------ create


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
) -> EvaluationJob:
    """Create a ``submission`` job judging ``code`` on problem ``problem_id``.

    ``checker`` overrides the problem's checker for this job only. ``enqueue=False`` leaves the job
    ``queued`` for the caller to run (``evaluation_run``) or enqueue (``evaluation_enqueue``) itself.
    Raises ``EvaluationError`` for an unknown problem, empty or oversized code, or a bad checker.
    """
    if not isinstance(code, str) or not code.strip():
        raise EvaluationError("code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise EvaluationError(f"code has {len(code)} characters; at most {MAX_CODE_CHARS} are accepted")
    checker = validate_checker(checker)
    problem = Problem.objects.filter(pk=problem_id).only("id").first()
    if problem is None:
        raise EvaluationError(f"problem {problem_id} does not exist")
    job = EvaluationJob.objects.create(
        kind=Kind.SUBMISSION,
        created_by=_real_user(user),
        problem=problem,
        code=code,
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
        progress_total=len(_verify_plan(ids)[0]),
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


def _real_user(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


# ------------------------------------------------------------------------------------------ run


@dataclass(frozen=True)
class _Item:
    """One judged unit: a submission, or one reference solution of one problem."""

    problem_id: int
    solution_id: int | None = None


@dataclass
class _ProblemTally:
    """Verify jobs: what the reference solutions of one problem got so far."""

    expected: int
    solutions: list[dict[str, Any]] = field(default_factory=list)


def evaluation_run(*, job_id: int) -> EvaluationJob:
    """Execute job ``job_id`` (see the module docstring for the state machine and error contract)."""
    job = _start(job_id)
    if job is None:
        return EvaluationJob.objects.get(pk=job_id)
    try:
        if job.kind == Kind.SUBMISSION:
            items: list[_Item] = [_Item(problem_id=int(job.problem_id or 0))]
            unjudgeable: list[int] = []
        else:
            problem_ids = sorted(job.problems.values_list("id", flat=True))
            items, unjudgeable = _verify_plan(problem_ids)
    except Exception as exc:  # noqa: BLE001 - a job whose data cannot be read fails with the reason
        log.exception("evaluation job %s: cannot plan", job_id)
        return evaluation_fail(job_id=job_id, error=f"cannot plan the job: {exc}")

    if unjudgeable:
        _record_skipped(job_id, unjudgeable)
    tallies: dict[int, _ProblemTally] = {}
    for item in items:
        tallies.setdefault(item.problem_id, _ProblemTally(expected=0)).expected += 1

    for chunk in _chunks(items, _chunk_size()):
        try:
            cases = _cases(job, chunk)
        except Exception as exc:  # noqa: BLE001 - see above: bad stored data fails the job
            log.exception("evaluation job %s: cannot build cases", job_id)
            return evaluation_fail(job_id=job_id, error=f"cannot build the judge cases: {exc}")
        verdicts = _judge(cases, stop_on_first_failure=job.stop_on_first_failure)
        if not _record_chunk(job, chunk, verdicts, tallies):
            return EvaluationJob.objects.get(pk=job_id)  # cancelled meanwhile
    return _finish(job_id)


def evaluation_run_inline(*, job_id: int) -> EvaluationJob:
    """Run job ``job_id`` now, in this process (a request judging a small submission). There is no
    retry here, so an infrastructure failure marks the job ``failed`` instead of raising."""
    try:
        return evaluation_run(job_id=job_id)
    except EvaluationInfrastructureError as exc:
        log.exception("evaluation job %s: infrastructure failure while judging inline", job_id)
        return evaluation_fail(job_id=job_id, error=f"infrastructure error: {exc}")


def _start(job_id: int) -> EvaluationJob | None:
    """Claim the job: None when it is already finished (a duplicate delivery), else the running job."""
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().get(pk=job_id)
        if job.is_finished:
            log.info("evaluation job %s is already %s; nothing to do", job_id, job.status)
            return None
        if job.status == Status.RUNNING:
            log.warning("evaluation job %s was left running (worker restart or retry); starting over", job_id)
        job.status = Status.RUNNING
        job.started_at = timezone.now()
        job.progress_done = 0
        job.results = []
        job.error = ""
        job.save(update_fields=["status", "started_at", "progress_done", "results", "error", "updated_at"])
        _publish(job)
        return job


def _verify_plan(problem_ids: Sequence[int]) -> tuple[list[_Item], list[int]]:
    """(items to judge, problems with no judgeable reference solution), in problem then solution order."""
    languages = {lang.lower() for lang in ConstraintConfig.from_settings().judge_languages}
    rows = (
        ReferenceSolution.objects.filter(problem_id__in=list(problem_ids))
        .order_by("problem_id", "order", "id")
        .values_list("id", "problem_id", "language")
    )
    items = [_Item(problem_id=pid, solution_id=sid) for sid, pid, lang in rows if lang.lower() in languages]
    covered = {item.problem_id for item in items}
    return items, [pid for pid in problem_ids if pid not in covered]


def _chunk_size() -> int:
    configured = int(getattr(settings, "EVALUATION_CHUNK_SIZE", 0) or 0)
    if configured > 0:
        return configured
    workers = int(getattr(settings, "EVALUATOR_WORKERS", 0) or 0) or (os.cpu_count() or 1)
    # a few cases per worker keeps the pool busy while progress still moves every few seconds
    return max(4, 2 * workers)


def _chunks(items: list[_Item], size: int) -> Iterator[list[_Item]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _cases(job: EvaluationJob, chunk: list[_Item]) -> list[dict[str, Any]]:
    """The evaluator cases of ``chunk``; case ids are the item's position so verdicts map back."""
    if job.kind == Kind.SUBMISSION:
        case = problem_judge_case(chunk[0].problem_id, job.code)
        if job.checker:
            case["checker"] = dict(job.checker)
        case["id"] = "0"
        return [case]
    codes = dict(
        ReferenceSolution.objects.filter(pk__in=[i.solution_id for i in chunk]).values_list("id", "code")
    )
    cases = []
    for n, item in enumerate(chunk):
        if item.solution_id not in codes:
            raise EvaluationError(f"reference solution {item.solution_id} was deleted during the job")
        case = problem_judge_case(item.problem_id, codes[item.solution_id])
        case["id"] = str(n)
        cases.append(case)
    return cases


def _judge(cases: list[dict[str, Any]], *, stop_on_first_failure: bool) -> list[dict[str, Any]]:
    workers = int(getattr(settings, "EVALUATOR_WORKERS", 0) or 0) or None
    try:
        verdicts = judge_batch(cases, workers=workers, stop_on_first_failure=stop_on_first_failure)
    except Exception as exc:  # noqa: BLE001 - the judge reports bad code as verdicts; raising means it broke
        raise EvaluationInfrastructureError(f"the judge failed: {exc}") from exc
    if len(verdicts) != len(cases):
        raise EvaluationInfrastructureError(f"the judge returned {len(verdicts)} verdicts for {len(cases)} cases")
    return list(verdicts)


def compact_verdict(verdict: dict[str, Any]) -> dict[str, Any]:
    """The part of an evaluator verdict a job stores: the summary, the sandbox and checker used, and per
    test its status, method, times and short excerpts (texts cut to ``MAX_RESULT_TEXT`` characters)."""
    out = {k: verdict.get(k) for k in _VERDICT_KEYS}
    out["tests"] = [_compact_test(t) for t in verdict.get("tests") or [] if isinstance(t, dict)]
    for key in ("message", "sandbox", "checker"):
        if verdict.get(key):
            out[key] = _cut(verdict[key])
    return out


def _compact_test(test: dict[str, Any]) -> dict[str, Any]:
    # the runner's per-test record: index, status, method, time_s, wall_s, message, stderr, output
    return {k: _cut(v) for k, v in test.items() if k not in ("input", "expected", "code")}


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_RESULT_TEXT:
        return value[:MAX_RESULT_TEXT] + f"... [{len(value) - MAX_RESULT_TEXT} more characters]"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value[:50]]
    return value


def _verdict_reason(verdict: dict[str, Any]) -> str:
    """One line for curation: ``AC 6/6 (method exact)`` or ``WA 2/6: test 3: <its message>`` (tests
    counted from 1)."""
    head = f"{verdict.get('verdict')} {verdict.get('passed')}/{verdict.get('total')}"
    if verdict.get("verdict") == "AC":
        return f"{head} (method {verdict.get('method') or '?'})"
    for test in verdict.get("tests") or []:
        if isinstance(test, dict) and test.get("status") not in (None, "AC"):
            detail = test.get("message") or test.get("status")
            number = test["index"] + 1 if isinstance(test.get("index"), int) else "?"
            return f"{head}: test {number}: {_cut(str(detail))}"
    detail = verdict.get("message")
    return f"{head}: {_cut(str(detail))}" if detail else head


def _record_chunk(
    job: EvaluationJob, chunk: list[_Item], verdicts: list[dict[str, Any]], tallies: dict[int, _ProblemTally]
) -> bool:
    """Store one judged chunk (and hand reference verdicts to curation) in one transaction.
    False when the job was cancelled meanwhile: the chunk is then discarded."""
    by_id = {str(v.get("id")): v for v in verdicts}
    with transaction.atomic():
        locked = EvaluationJob.objects.select_for_update().get(pk=job.pk)
        if locked.status != Status.RUNNING:
            return False
        results = list(locked.results)
        for n, item in enumerate(chunk):
            verdict = by_id.get(str(n)) or verdicts[n]
            if locked.kind == Kind.SUBMISSION:
                results.append({"problem": item.problem_id, **compact_verdict(verdict)})
                continue
            entry = _record_reference(item, verdict)
            tally = tallies[item.problem_id]
            tally.solutions.append(entry)
            if len(tally.solutions) == tally.expected:
                results.append(_problem_outcome(item.problem_id, tally.solutions))
        locked.results = results
        locked.progress_done += len(chunk)
        locked.save(update_fields=["results", "progress_done", "updated_at"])
        _publish(locked)
    return True


def _record_reference(item: _Item, verdict: dict[str, Any]) -> dict[str, Any]:
    """Hand one reference verdict to curation (never an ``IE``) and return the job's record of it."""
    entry: dict[str, Any] = {"solution": item.solution_id, **{k: verdict.get(k) for k in _VERDICT_KEYS}}
    entry["reason"] = _verdict_reason(verdict)
    if verdict.get("verdict") == "IE":
        # the judge could not run the solution, which says nothing about the tests: stay pending
        return entry
    try:
        problem_set_reference_verdict(
            problem_id=item.problem_id,
            solution_id=item.solution_id,
            passed=verdict.get("verdict") == "AC",
            verdict=str(verdict.get("verdict") or ""),
            reason=entry["reason"],
        )
    except ReferenceSolution.DoesNotExist:
        entry["reason"] = "the solution was deleted during the job; verdict not recorded"
    return entry


def _problem_outcome(problem_id: int, solutions: list[dict[str, Any]]) -> dict[str, Any]:
    """passed (some solution AC) > pending (some IE) > failed (every solution rejected)."""
    accepted = [s for s in solutions if s["verdict"] == "AC"]
    broken = [s for s in solutions if s["verdict"] == "IE"]
    if accepted:
        outcome, reason = "passed", f"reference solution {accepted[0]['solution']} accepted: {accepted[0]['reason']}"
    elif broken:
        outcome = "pending"
        reason = f"infrastructure error judging reference solution {broken[0]['solution']}: {broken[0]['reason']}"
    else:
        outcome, reason = "failed", f"every reference solution was rejected; first: {solutions[0]['reason']}"
    return {"problem": problem_id, "outcome": outcome, "reason": reason, "solutions": solutions}


def _record_skipped(job_id: int, problem_ids: list[int]) -> None:
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().get(pk=job_id)
        job.results = list(job.results) + [
            {"problem": pid, "outcome": "skipped", "reason": "no reference solution in a language the judge runs",
             "solutions": []}
            for pid in problem_ids
        ]
        job.save(update_fields=["results", "updated_at"])


def _finish(job_id: int) -> EvaluationJob:
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().get(pk=job_id)
        if job.status == Status.RUNNING:
            job.status = Status.SUCCEEDED
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "finished_at", "updated_at"])
            _publish(job)
        return job


def _publish(job: EvaluationJob) -> None:
    realtime.publish_on_commit(realtime.job_group(job.pk), realtime.JOB_PROGRESS, job.progress_event())


# ------------------------------------------------------------------------------------------ stop


@transaction.atomic
def evaluation_cancel(*, job_id: int, user: Any) -> EvaluationJob:
    """Cancel a queued or running job (its creator or an admin only; else ``PermissionDenied``).
    A finished job is returned unchanged. A running job stops after the chunk it is judging."""
    job = EvaluationJob.objects.select_for_update().get(pk=job_id)
    if not (has_role(user, ADMIN) or (job.created_by_id is not None and job.created_by_id == getattr(user, "pk", None))):
        raise PermissionDenied("only the job's creator or an admin may cancel it")
    if job.is_finished:
        return job
    job.status = Status.CANCELLED
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "finished_at", "updated_at"])
    _publish(job)
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
    _publish(job)
    return job
