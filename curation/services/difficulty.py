"""Scoring jobs: score a frozen selection of problems on the five-dimension matrix.

Idempotent per (scoring, problem, sample index): ``scoring_run`` hands the core a ``skip`` hook that
returns the samples already stored, and stores new ones (``on_sample``, committed at least every
``FLUSH_SECONDS``) with ``ON CONFLICT DO NOTHING`` on the unique (scoring, problem, index) constraint.
A worker killed mid-job loses at most the last second of samples; the redelivered task re-scores only
the missing indices and never stores a sample twice.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from curation.difficulty import ProblemInput, Sample, get_scorer, normalize_weights, score_problems
from curation.models import JobStatus, Problem, ReleaseItem, ScoringJob, ScoringResult, ScoringSample
from curation.selectors import ReleaseFilter, problems_for_release
from webapp import realtime
from webapp.jobs_feed import job_changed
from webapp.roles import CURATOR, can_manage

BACKENDS = ("heuristic", "openai")
MAX_SAMPLES = 10
#: results are committed (and progress published) at least every this many problems
FLUSH_EVERY = 20
FLUSH_SECONDS = 1.0


def problem_input(problem: Problem) -> ProblemInput:
    """What a scorer sees of a stored problem: never its platform label, rating or bucket."""
    return ProblemInput(
        id=str(problem.pk),
        statement=problem.statement,
        solutions=tuple(s.code for s in problem.solutions.all()),
        tags=tuple(str(t) for t in (problem.tags or [])),
        starter_code=problem.starter_code,
        io_mode=problem.io_mode,
        platform=problem.platform.name,
        external_id=problem.external_id,
        title=problem.title,
    )


def _selection(
    *, release_id: int | None, filter_spec: dict[str, Any] | None, problem_ids: Sequence[int] | None
) -> list[int]:
    if release_id is not None:
        return list(ReleaseItem.objects.filter(release_id=release_id).order_by("problem_id")
                    .values_list("problem_id", flat=True))
    if problem_ids:
        ids = sorted({int(i) for i in problem_ids})
        found = set(Problem.objects.filter(pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise ValueError(f"problem_ids: unknown problem id(s) {missing[:10]}")
        return ids
    spec = ReleaseFilter.from_dict(filter_spec or {})
    return list(problems_for_release(spec).order_by("pk").values_list("pk", flat=True))


@transaction.atomic
def scoring_create(
    *,
    backend: str,
    user: Any = None,
    model: str = "",
    prompt_version: str = "",
    weights: dict[str, float] | None = None,
    samples: int = 3,
    release_id: int | None = None,
    filter_spec: dict[str, Any] | None = None,
    problem_ids: Sequence[int] | None = None,
    enqueue: bool = True,
) -> ScoringJob:
    """Create a scoring of the problems of release ``release_id``, or ``problem_ids``, or those
    ``filter_spec`` (a ``ReleaseFilter`` dict) selects; the selection is frozen now. Raises
    ``ValueError`` whose message starts with the offending field. Enqueues ``score_problems_job``
    after commit unless ``enqueue`` is false."""
    if backend not in BACKENDS:
        raise ValueError(f"backend: must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise ValueError(f"samples: must be an integer from 1 to {MAX_SAMPLES}, got {samples!r}")
    try:
        resolved_weights = normalize_weights(weights)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"weights: {exc}") from exc
    try:
        ids = _selection(release_id=release_id, filter_spec=filter_spec, problem_ids=problem_ids)
    except ValueError as exc:
        message = str(exc)
        raise ValueError(message if message.startswith("problem_ids") else f"filter_spec: {message}") from exc
    if not ids:
        raise ValueError("problem_ids: the selection is empty; nothing to score")
    job = ScoringJob.objects.create(
        backend=backend, model=model, prompt_version=prompt_version, weights=resolved_weights,
        samples_per_problem=samples, release_id=release_id, filter_spec=filter_spec or {},
        problem_ids=ids, progress_total=len(ids),
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    if enqueue:
        from curation.tasks import score_problems_job

        transaction.on_commit(lambda: score_problems_job.delay(job.pk))
    return job


def _inputs(problem_ids: list[int], chunk: int = 500) -> Iterator[ProblemInput]:
    """The problems in id order, loaded a chunk at a time (a 20,000-problem job stays small)."""
    for start in range(0, len(problem_ids), chunk):
        problems = (Problem.objects.filter(pk__in=problem_ids[start:start + chunk]).select_related("platform")
                    .prefetch_related("solutions").order_by("pk"))
        yield from (problem_input(p) for p in problems)


def _publish(job: ScoringJob) -> None:
    realtime.publish_on_commit(realtime.scoring_group(job.pk), realtime.SCORING_PROGRESS, job.progress_event())
    job_changed(job)  # the jobs view's log and live list


def _finish(job_id: int, *, status: str, reason: str) -> ScoringJob:
    with transaction.atomic():
        job = ScoringJob.objects.select_for_update().get(pk=job_id)
        if job.is_finished:
            return job
        job.status, job.reason, job.finished_at = status, reason, timezone.now()
        job.save(update_fields=["status", "reason", "finished_at", "updated_at"])
        _publish(job)
    return job


def scoring_fail(*, scoring_id: int, reason: str) -> ScoringJob:
    """Mark a scoring failed with ``reason`` (a finished one is left as it is)."""
    return _finish(scoring_id, status=str(JobStatus.FAILED), reason=reason)


def scoring_cancel(*, scoring_id: int, user: Any) -> ScoringJob:
    """Cancel a scoring. Only its creator or an admin may; raises ``PermissionDenied`` otherwise. The
    worker notices at its next flush and stops; stored samples stay."""
    job = ScoringJob.objects.get(pk=scoring_id)
    if not can_manage(user, job.created_by_id, roles=(CURATOR,)):
        raise PermissionDenied("only the scoring's creator or an admin may cancel it")
    return _finish(scoring_id, status=str(JobStatus.CANCELLED), reason=f"cancelled by {user.get_username()}")


def _store_samples(job: ScoringJob, rows: Iterable[tuple[str, Sample]]) -> None:
    ScoringSample.objects.bulk_create(
        [
            ScoringSample(
                scoring=job, problem_id=int(pid), index=s.index, dimensions=s.dimensions,
                rationales=s.rationales, raw=s.raw, prompt_tokens=s.prompt_tokens,
                completion_tokens=s.completion_tokens,
            )
            for pid, s in rows
        ],
        ignore_conflicts=True,  # the unique (scoring, problem, index) makes a replayed sample a no-op
    )


def _flush(job: ScoringJob, samples: list[tuple[str, Sample]], results: list[Any]) -> bool:
    """Commit the buffered samples and finished results; refresh progress. Returns False when the job
    was cancelled or failed meanwhile (the caller stops)."""
    with transaction.atomic():
        _store_samples(job, samples)
        # a finished problem's samples go in with its result (stored ones are no-ops)
        _store_samples(job, [(r.id, s) for r in results for s in r.samples])
        for r in results:
            ScoringResult.objects.update_or_create(
                scoring=job, problem_id=int(r.id),
                defaults={"score": r.score, "dimensions": r.dimensions, "error": r.error or ""},
            )
        current = ScoringJob.objects.select_for_update().get(pk=job.pk)
        tokens = ScoringSample.objects.filter(scoring=job).aggregate(p=Sum("prompt_tokens"), c=Sum("completion_tokens"))
        stored = ScoringResult.objects.filter(scoring=job)
        current.progress_done = stored.count()
        current.error_count = stored.exclude(error="").count()
        current.prompt_tokens, current.completion_tokens = tokens["p"] or 0, tokens["c"] or 0
        current.save(update_fields=["progress_done", "error_count", "prompt_tokens", "completion_tokens",
                                    "updated_at"])
        _publish(current)
    samples.clear()
    results.clear()
    return current.status == JobStatus.RUNNING


class _Buffer:
    """Samples and results waiting to be committed; flushed every ``FLUSH_EVERY`` problems or
    ``FLUSH_SECONDS``. The core calls ``on_sample`` in this (the caller's) thread."""

    def __init__(self, job: ScoringJob) -> None:
        self.job = job
        self.samples: list[tuple[str, Sample]] = []
        self.results: list[Any] = []
        self.last = time.monotonic()
        self.running = True

    def due(self) -> bool:
        return len(self.results) >= FLUSH_EVERY or time.monotonic() - self.last >= FLUSH_SECONDS

    def flush(self) -> bool:
        self.last = time.monotonic()
        self.running = _flush(self.job, self.samples, self.results)
        return self.running

    def on_sample(self, problem_id: str, sample: Sample) -> None:
        self.samples.append((problem_id, sample))
        if self.running and time.monotonic() - self.last >= FLUSH_SECONDS:
            self.flush()


def scoring_run(*, scoring_id: int, scorer_options: dict[str, Any] | None = None) -> ScoringJob:
    """The task body: score every problem of the job without a stored result, reusing stored samples.
    Safe to call again after a crash (see the module docstring); a finished job is returned as is.
    A scorer that cannot be built (bad backend options, missing key) fails the job with the reason.
    Results are committed every ``FLUSH_EVERY`` problems or ``FLUSH_SECONDS``, whichever comes first."""
    with transaction.atomic():
        job = ScoringJob.objects.select_for_update().get(pk=scoring_id)
        if job.is_finished:
            return job
        if job.attempts >= int(settings.SCORING_MAX_ATTEMPTS):
            # every earlier delivery died without finishing (OOM, a kill): stop redelivering forever
            return _finish(job.pk, status=str(JobStatus.FAILED),
                           reason=f"the scoring worker died {job.attempts} times before finishing "
                                  "(SCORING_MAX_ATTEMPTS); the samples it stored are kept")
        job.status = JobStatus.RUNNING
        job.attempts += 1
        job.started_at = job.started_at or timezone.now()
        job.save(update_fields=["status", "attempts", "started_at", "updated_at"])
    try:
        options: dict[str, Any] = {"model": job.model} if job.model else {}
        if job.backend == "openai":
            options["concurrency"] = int(settings.SCORING_CONCURRENCY)
        scorer = get_scorer(job.backend, **options, **(scorer_options or {}))
    except Exception as exc:  # noqa: BLE001 - any construction error ends the job with its reason
        return scoring_fail(scoring_id=job.pk, reason=f"the {job.backend} scorer could not start: {exc}")
    ScoringJob.objects.filter(pk=job.pk).update(model=scorer.model, prompt_version=scorer.prompt_version)
    done = set(ScoringResult.objects.filter(scoring=job).values_list("problem_id", flat=True))
    stored = {
        (str(s.problem_id), s.index): Sample(
            index=s.index, dimensions=s.dimensions, rationales=s.rationales, raw=s.raw,
            prompt_tokens=s.prompt_tokens, completion_tokens=s.completion_tokens,
        )
        for s in ScoringSample.objects.filter(scoring=job).exclude(problem_id__in=done)
    }
    todo = sorted(pid for pid in job.problem_ids if pid not in done)
    buffer = _Buffer(job)
    results = score_problems(
        _inputs(todo), scorer,
        samples=job.samples_per_problem, weights=job.weights,
        concurrency=int(settings.SCORING_CONCURRENCY) if job.backend == "openai" else 1,
        skip=lambda pid, index: stored.get((pid, index)),
        on_sample=buffer.on_sample,
    )
    for result in results:
        buffer.results.append(result)
        if not buffer.running or buffer.due() and not buffer.flush():
            return ScoringJob.objects.get(pk=job.pk)  # cancelled or failed meanwhile
    if not buffer.flush():
        return ScoringJob.objects.get(pk=job.pk)
    job.refresh_from_db()
    if job.error_count and job.error_count == job.progress_total:
        return _finish(job.pk, status=str(JobStatus.FAILED), reason=f"no problem could be scored ({job.error_count} errors)")
    reason = f"{job.error_count} problem(s) could not be scored" if job.error_count else ""
    return _finish(job.pk, status=str(JobStatus.SUCCEEDED), reason=reason)
