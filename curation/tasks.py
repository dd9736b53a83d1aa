"""Celery tasks of the curation app: thin wrappers that take ids and call one service."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings

from curation.services.difficulty import scoring_fail, scoring_run
from curation.services.uploads import import_batch_run


@shared_task(
    name="curation.tasks.import_file",
    time_limit=getattr(settings, "IMPORT_TASK_TIME_LIMIT", 3600),
    acks_late=True,
    reject_on_worker_lost=True,  # a worker that dies mid-import leaves the message to be redelivered
)
def import_file(batch_id: int) -> dict[str, object]:
    """Run the pending ``ImportBatch`` ``batch_id`` (see ``import_batch_run``). Not retried: a failure
    is recorded on the batch for the curator. A redelivery after a worker died re-runs a batch left
    ``running`` once it is older than the task's time limit; importing again is safe (unchanged content
    is recognised by its hash)."""
    batch = import_batch_run(batch_id=batch_id)
    return {"batch_id": batch.pk, "status": batch.status, "summary": batch.summary()}


@shared_task(
    bind=True,
    name="curation.tasks.score_problems_job",
    time_limit=int(settings.SCORING_TASK_TIME_LIMIT),
    acks_late=True,
    reject_on_worker_lost=True,  # a worker killed mid-scoring leaves the message to be redelivered
)
def score_problems_job(self: Any, scoring_id: int) -> dict[str, object]:
    """Run scoring ``scoring_id`` (see ``scoring_run``): resumes a job a dead worker left ``running``,
    skipping every sample already stored. An unexpected error fails the job with its reason."""
    try:
        job = scoring_run(scoring_id=scoring_id)
    except Exception as exc:
        scoring_fail(scoring_id=scoring_id, reason=f"{type(exc).__name__}: {exc}")
        raise
    return job.progress_event()
