"""Celery tasks of the curation app: thin wrappers that take ids and call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError

from curation.services.difficulty import scoring_fail, scoring_run
from curation.services.uploads import import_batch_run

_IMPORT_TIME_LIMIT = int(settings.IMPORT_TASK_TIME_LIMIT)
#: the soft limit fails the batch with its reason (and what it committed) before the hard kill
_IMPORT_SOFT_TIME_LIMIT = max(1, _IMPORT_TIME_LIMIT - min(30, _IMPORT_TIME_LIMIT // 10))
_IMPORT_DB_RETRIES = 5


@shared_task(
    bind=True,
    name="curation.tasks.import_file",
    time_limit=_IMPORT_TIME_LIMIT,
    soft_time_limit=_IMPORT_SOFT_TIME_LIMIT,
    acks_late=True,
    reject_on_worker_lost=True,  # a worker that dies mid-import leaves the message to be redelivered
    max_retries=None,
)
def import_file(self: Any, batch_id: int) -> dict[str, object]:
    """Run the ``ImportBatch`` ``batch_id`` to a terminal state (see ``import_batch_run``); a failure
    is recorded on the batch for the curator. A redelivery after a worker died takes over the batch
    once its heartbeat is ``IMPORT_LEASE_TIMEOUT_S`` old (importing again is safe: committed rows come
    back unchanged); a copy delivered while a live worker still runs it looks again after that long,
    since with Redis it may be the batch's only message left. A database outage is retried."""
    try:
        outcome = import_batch_run(batch_id=batch_id)
    except (DatabaseError, OSError) as exc:
        if self.request.is_eager or self.request.retries >= _IMPORT_DB_RETRIES:
            raise
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc
    if outcome.busy_s is not None and not self.request.is_eager:
        raise self.retry(countdown=outcome.busy_s, max_retries=None)
    batch = outcome.batch
    return {"batch_id": batch.pk, "status": batch.status, "summary": batch.summary()}


_SCORING_TIME_LIMIT = int(settings.SCORING_TASK_TIME_LIMIT)
# the soft limit leaves a little time to record the failure before the hard kill
_SCORING_SOFT_TIME_LIMIT = max(1, _SCORING_TIME_LIMIT - min(30, _SCORING_TIME_LIMIT // 10))


@shared_task(
    bind=True,
    name="curation.tasks.score_problems_job",
    time_limit=_SCORING_TIME_LIMIT,
    soft_time_limit=_SCORING_SOFT_TIME_LIMIT,
    acks_late=True,
    reject_on_worker_lost=True,  # a worker killed mid-scoring leaves the message to be redelivered
)
def score_problems_job(self: Any, scoring_id: int) -> dict[str, object]:
    """Run scoring ``scoring_id`` (see ``scoring_run``): resumes a job a dead worker left ``running``,
    skipping every sample already stored; after ``SCORING_MAX_ATTEMPTS`` deliveries that all died the
    job fails. The soft time limit and any unexpected error fail the job with the reason."""
    try:
        job = scoring_run(scoring_id=scoring_id)
    except SoftTimeLimitExceeded:
        scoring_fail(scoring_id=scoring_id, reason=f"the scoring exceeded its time limit of {_SCORING_SOFT_TIME_LIMIT} s")
        raise
    except Exception as exc:
        scoring_fail(scoring_id=scoring_id, reason=f"{type(exc).__name__}: {exc}")
        raise
    return job.progress_event()
