"""Celery tasks of the evaluator app (queue ``evaluate``, see ``settings.CELERY_TASK_ROUTES``).

Thin: take the job id, call ``evaluation_run``. Retries live here: an infrastructure failure (the judge
pool broke, the database went away) is retried with exponential back-off; after the last retry, when
the soft time limit hits, or on any other error, the job is marked ``failed`` with the reason. A worker
that dies mid-job leaves its message unacknowledged (``reject_on_worker_lost``): it is redelivered and
the job starts over, so no job stays ``running``; a job delivered more than ``EVALUATION_MAX_ATTEMPTS``
times fails with that reason instead of killing workers forever. Celery enforces time
limits only in the prefork pool (not with ``--pool=solo``); the judge's own per-test and per-solution
limits always apply.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError

from evaluator.services import EvaluationInfrastructureError, evaluation_fail, evaluation_run

#: what a retry may cure; anything else is a bug or bad data and is recorded by the service itself
INFRASTRUCTURE_ERRORS = (EvaluationInfrastructureError, DatabaseError, OSError)
MAX_RETRIES = 3
_TIME_LIMIT = int(settings.EVALUATION_TASK_TIME_LIMIT)
# the soft limit leaves a little time to record the failure before the hard kill
_SOFT_TIME_LIMIT = max(1, _TIME_LIMIT - min(30, _TIME_LIMIT // 10))


@shared_task(
    bind=True,
    name="evaluator.tasks.run_evaluation",
    acks_late=True,
    # a worker killed mid-job (SIGKILL, OOM, node loss) does not acknowledge the message: the broker
    # redelivers it and the next worker starts the job over (``evaluation_run`` resets a running job)
    reject_on_worker_lost=True,
    max_retries=MAX_RETRIES,
    time_limit=_TIME_LIMIT,
    soft_time_limit=_SOFT_TIME_LIMIT,
)
def run_evaluation(self: Any, job_id: int) -> dict[str, Any]:
    """Run evaluation job ``job_id``; returns ``{"job_id", "status", "done", "total"}``."""
    try:
        job = evaluation_run(job_id=job_id)
    except SoftTimeLimitExceeded:
        evaluation_fail(job_id=job_id, error=f"the evaluation exceeded its time limit of {_SOFT_TIME_LIMIT} s")
        raise
    except INFRASTRUCTURE_ERRORS as exc:
        if self.request.retries >= MAX_RETRIES:
            evaluation_fail(job_id=job_id, error=f"infrastructure error after {MAX_RETRIES} retries: {exc}")
            raise
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1)) from exc
    except Exception as exc:
        # a bug or bad data the service did not record itself: the job must not stay running
        evaluation_fail(job_id=job_id, error=f"unexpected error: {type(exc).__name__}: {exc}")
        raise
    return job.progress_event()
