"""Executing an evaluation job: the body of ``evaluator.tasks.run_evaluation``."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from curation.models import ReferenceSolution
from curation.services import problem_judge_case, problem_set_reference_verdict
from evaluator import judge_batch
from evaluator.models import EvaluationJob
from evaluator.services.jobs import (
    EvaluationError,
    EvaluationInfrastructureError,
    Item,
    evaluation_fail,
    publish_progress,
    verify_plan,
)
from evaluator.services.verdicts import VERDICT_KEYS, compact_verdict, problem_outcome, verdict_reason

log = logging.getLogger(__name__)

Status = EvaluationJob.Status
Kind = EvaluationJob.Kind


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
            items: list[Item] = [Item(problem_id=int(job.problem_id or 0))]
            unjudgeable: list[int] = []
        else:
            problem_ids = sorted(job.problems.values_list("id", flat=True))
            items, unjudgeable = verify_plan(problem_ids)
    except Exception as exc:  # noqa: BLE001 - a job whose data cannot be read fails with the reason
        log.exception("evaluation job %s: cannot plan", job_id)
        return evaluation_fail(job_id=job_id, error=f"cannot plan the job: {exc}")

    _record_plan(job_id, total=len(items), skipped=unjudgeable)
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
        job.attempts += 1
        if job.attempts > settings.EVALUATION_MAX_ATTEMPTS:
            # a job that kills its workers (or keeps failing) must not be redelivered forever
            job.save(update_fields=["attempts", "updated_at"])
            evaluation_fail(job_id=job_id, error=(
                f"gave up after {settings.EVALUATION_MAX_ATTEMPTS} deliveries: the job's workers kept dying "
                "or its infrastructure kept failing (EVALUATION_MAX_ATTEMPTS)"))
            return None
        job.status = Status.RUNNING
        job.started_at = timezone.now()
        job.progress_done = 0
        job.results = []
        job.error = ""
        job.save(update_fields=["status", "started_at", "progress_done", "results", "error", "attempts",
                                "updated_at"])
        publish_progress(job)
        return job


def _chunk_size() -> int:
    configured = int(getattr(settings, "EVALUATION_CHUNK_SIZE", 0) or 0)
    if configured > 0:
        return configured
    workers = int(getattr(settings, "EVALUATOR_WORKERS", 0) or 0) or (os.cpu_count() or 1)
    # a few cases per worker keeps the pool busy while progress still moves every few seconds
    return max(4, 2 * workers)


def _chunks(items: list[Item], size: int) -> Iterator[list[Item]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _cases(job: EvaluationJob, chunk: list[Item]) -> list[dict[str, Any]]:
    """The evaluator cases of ``chunk``; case ids are the item's position so verdicts map back."""
    if job.kind == Kind.SUBMISSION:
        case = problem_judge_case(chunk[0].problem_id, job.code)
        case["language"] = job.language
        if job.checker:
            case["checker"] = dict(job.checker)
        case["id"] = "0"
        return [case]
    codes = {
        sid: (code, language)
        for sid, code, language in ReferenceSolution.objects.filter(
            pk__in=[i.solution_id for i in chunk]
        ).values_list("id", "code", "language")
    }
    cases = []
    for n, item in enumerate(chunk):
        if item.solution_id not in codes:
            raise EvaluationError(f"reference solution {item.solution_id} was deleted during the job")
        code, language = codes[item.solution_id]
        case = problem_judge_case(item.problem_id, code)
        case["language"] = language  # a C++ reference is compiled and run as C++ (evaluator.languages)
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


def _record_chunk(
    job: EvaluationJob, chunk: list[Item], verdicts: list[dict[str, Any]], tallies: dict[int, _ProblemTally]
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
                results.append(problem_outcome(item.problem_id, tally.solutions))
        locked.results = results
        locked.progress_done += len(chunk)
        locked.save(update_fields=["results", "progress_done", "updated_at"])
        publish_progress(locked)
    return True


def _record_reference(item: Item, verdict: dict[str, Any]) -> dict[str, Any]:
    """Hand one reference verdict to curation (never an ``IE``) and return the job's record of it."""
    entry: dict[str, Any] = {"solution": item.solution_id, **{k: verdict.get(k) for k in VERDICT_KEYS}}
    entry["reason"] = verdict_reason(verdict)
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


def _record_plan(job_id: int, *, total: int, skipped: list[int]) -> None:
    """Store what the job will judge: ``total`` items (solutions may have changed since it was queued)
    and a ``skipped`` result for each problem without a judgeable reference solution."""
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().get(pk=job_id)
        job.progress_total = total
        job.results = list(job.results) + [
            {"problem": pid, "outcome": "skipped", "reason": "no reference solution in a language the judge runs",
             "solutions": []}
            for pid in skipped
        ]
        job.save(update_fields=["progress_total", "results", "updated_at"])


def _finish(job_id: int) -> EvaluationJob:
    with transaction.atomic():
        job = EvaluationJob.objects.select_for_update().get(pk=job_id)
        if job.status == Status.RUNNING:
            job.status = Status.SUCCEEDED
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "finished_at", "updated_at"])
            publish_progress(job)
        return job
