"""Celery tasks of the training app (routed to the ``gpu`` queue by ``settings.CELERY_TASK_ROUTES``).

``train_run`` is thin: it takes a run id and calls ``run_execute``. ``acks_late`` with
``reject_on_worker_lost`` means a worker that dies mid-run (OOM, node loss) does not acknowledge the
message, so the broker redelivers it and the next worker resumes the run from its newest checkpoint.
The soft time limit lets the trainer's exception handler mark the run failed before the hard limit.
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from training.services import run_execute

_TIME_LIMIT = int(settings.TRAINING_TASK_TIME_LIMIT)
#: the soft limit fires up to a minute before the hard one so the run is marked failed, not lost
_SOFT_TIME_LIMIT = max(1, _TIME_LIMIT - min(60, _TIME_LIMIT // 10))


@shared_task(
    name="training.tasks.train_run",
    acks_late=True,
    reject_on_worker_lost=True,
    time_limit=_TIME_LIMIT,
    soft_time_limit=_SOFT_TIME_LIMIT,
)
def train_run(run_id: int) -> str:
    """Execute training run ``run_id`` to its end; returns its final status."""
    return run_execute(run_id=run_id)
