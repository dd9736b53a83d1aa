"""Celery tasks of the training app (routed to the ``gpu`` queue by ``settings.CELERY_TASK_ROUTES``).

``train_run`` is thin: it takes a run id and calls ``run_attempt``. ``acks_late`` with
``reject_on_worker_lost`` means a worker that dies mid-run (OOM, node loss) does not acknowledge the
message, so the broker redelivers it and the next worker resumes the run from its newest checkpoint.
The soft time limit lets the trainer's exception handler mark the run failed before the hard limit.
On a node with several GPUs the run trains under torchrun in a subprocess the task supervises
(``training.services.run_launch``): CUDA is never initialized inside the forked worker.

A redelivery can also reach a second worker while the first still trains the run (Redis redelivers a
message once it is older than the visibility timeout, dead worker or not). The run lease turns that
copy away without training; the task then retries after the lease could lapse instead of ending,
because with Redis the copy is the run's only message left (restoring it took it from the first
worker), and it must be there to resume the run should its live owner die later. Once the run is
finished, the copy ends.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.conf import settings

from training.services.lease import lease_recheck_countdown
from training.services.run_execution import run_attempt

log = logging.getLogger(__name__)

_TIME_LIMIT = int(settings.TRAINING_TASK_TIME_LIMIT)
#: the soft limit fires up to a minute before the hard one so the run is marked failed, not lost
_SOFT_TIME_LIMIT = max(1, _TIME_LIMIT - min(60, _TIME_LIMIT // 10))


def _visibility_timeout_s() -> float:
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}) or {}
    return float(options.get("visibility_timeout", 3600))


@shared_task(
    bind=True,
    name="training.tasks.train_run",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=None,
    time_limit=_TIME_LIMIT,
    soft_time_limit=_SOFT_TIME_LIMIT,
)
def train_run(self: Any, run_id: int) -> str:
    """Execute training run ``run_id`` to its end; returns its status afterwards. A duplicate delivery of
    a run a live worker trains retries (re-checks the lease) just after that worker's lease could lapse;
    in eager mode (no broker: nothing redelivers) it just returns."""
    outcome = run_attempt(run_id=run_id)
    if outcome.lease_wait_s is not None and not self.request.is_eager:
        countdown = lease_recheck_countdown(outcome.lease_wait_s, _visibility_timeout_s())
        log.info("run %s is trained elsewhere; re-checking its lease in %.1f s", run_id, countdown)
        raise self.retry(countdown=countdown, max_retries=None)
    return outcome.status


# Model evaluation tasks live in their own module; importing it registers them with the workers.
from training.tasks_evaluation import run_model_evaluation  # noqa: E402, F401
