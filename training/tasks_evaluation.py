"""Celery task of model evaluations (imported by ``training.tasks`` so workers register it).

Enqueued by ``model_evaluation_start`` with an explicit queue: ``gpu`` for local models (transformers,
vLLM), ``evaluate`` for OpenAI-compatible endpoints. Thin: it takes the job id and calls
``model_evaluation_attempt``. ``acks_late`` + ``reject_on_worker_lost``: a worker that dies mid-job does
not acknowledge the message, the broker redelivers it, and the next worker resumes the job from its
stored samples once the dead worker's lease lapsed. A copy delivered while a live worker holds the job
re-checks after that lease could lapse (the copy may be the job's only message left). Anything the
service did not turn into a terminal status (an import error, the database gone) marks the job failed
with the reason after the last retry; so does the hard time limit (Celery calls ``on_failure`` in the
worker's main process when it kills a child over the limit, e.g. inside a long native generate call that
the soft limit could not interrupt).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from celery.exceptions import TimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError

from training.services.evaluations import model_evaluation_fail
from training.services.evaluations_run import model_evaluation_attempt

log = logging.getLogger(__name__)

MAX_RETRIES = 3
_TIME_LIMIT = int(settings.MODEL_EVALUATION_TASK_TIME_LIMIT)
#: the soft limit fires up to a minute before the hard one, so the job is marked failed, not lost
_SOFT_TIME_LIMIT = max(1, _TIME_LIMIT - min(60, _TIME_LIMIT // 10))


def _visibility_timeout_s() -> float:
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}) or {}
    return float(options.get("visibility_timeout", 3600))


class ModelEvaluationTask(Task):
    """Marks the job failed when the hard time limit killed the process that ran it."""

    def on_failure(self, exc: Exception, task_id: str, args: Any, kwargs: Any, einfo: Any) -> None:
        evaluation_id = (list(args or []) or [kwargs.get("evaluation_id") if kwargs else None])[0]
        if isinstance(exc, TimeLimitExceeded) and evaluation_id is not None:
            model_evaluation_fail(
                evaluation_id=int(evaluation_id),
                reason=f"the evaluation exceeded its hard time limit of {_TIME_LIMIT} s "
                       "(MODEL_EVALUATION_TASK_TIME_LIMIT); the samples it stored are kept",
            )


@shared_task(
    bind=True,
    base=ModelEvaluationTask,
    name="training.model_evaluations.run",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
    time_limit=_TIME_LIMIT,
    soft_time_limit=_SOFT_TIME_LIMIT,
)
def run_model_evaluation(self: Any, evaluation_id: int) -> str:
    """Run model evaluation ``evaluation_id`` to a terminal status; returns the status afterwards."""
    try:
        attempt = model_evaluation_attempt(evaluation_id=evaluation_id)
    except DatabaseError as exc:
        if self.request.retries >= MAX_RETRIES or self.request.is_eager:
            model_evaluation_fail(evaluation_id=evaluation_id, reason=f"database error after retries: {exc}")
            raise
        raise self.retry(exc=exc, countdown=2 ** (self.request.retries + 1), max_retries=None) from exc
    except Exception as exc:
        model_evaluation_fail(evaluation_id=evaluation_id, reason=f"{type(exc).__name__}: {exc}")
        raise
    if attempt.lease_wait_s is not None and not self.request.is_eager:
        countdown = max(1.0, min(attempt.lease_wait_s + 1.0, _visibility_timeout_s() / 2))
        log.info("model evaluation %s runs elsewhere; re-checking its lease in %.1f s", evaluation_id, countdown)
        raise self.retry(countdown=countdown, max_retries=None)
    return attempt.status
