"""The one place that owns channel-layer group names and event types.

Services publish *after commit* (``publish_on_commit``); consumers authenticate, join the groups
named here and forward events unchanged to the browser as JSON ``{"type": ..., "data": ...}``.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)

#: event types (the ``type`` the browser sees)
RUN_METRICS = "run.metrics"  # data: {"run_id", "step", "metrics": {name: value}}
RUN_STATUS = "run.status"  # data: {"run_id", "status", "message"}
RUN_SAMPLES = "run.samples"  # data: {"run_id", "step", "samples": [...]}
JOB_PROGRESS = "job.progress"  # data: {"job_id", "status", "done", "total"}
IMPORT_PROGRESS = "import.progress"  # data: ImportBatch.progress_event() ({"batch_id", "status", "rows", "errors", ...})
MODEL_EVALUATION_PROGRESS = "model_evaluation.progress"  # data: ModelEvaluation.progress_event()
SCORING_PROGRESS = "scoring.progress"  # data: {"scoring_id", "status", "done", "total", "errors", "reason", tokens}
JOBS_UPDATE = "jobs.update"  # data: webapp.jobs.JobRow.event() plus "log": the job's new log lines

EVENT_TYPES = (
    RUN_METRICS, RUN_STATUS, RUN_SAMPLES, JOB_PROGRESS, IMPORT_PROGRESS, SCORING_PROGRESS,
    MODEL_EVALUATION_PROGRESS, JOBS_UPDATE,
)

#: the group of the jobs view: every job kind's progress publication also reaches it
JOBS_GROUP = "jobs"


def run_group(run_id: int) -> str:
    return f"run-{int(run_id)}"


def job_group(job_id: int) -> str:
    return f"evaljob-{int(job_id)}"


def import_group(batch_id: int) -> str:
    return f"import-{int(batch_id)}"


def model_evaluation_group(evaluation_id: int) -> str:
    return f"modeleval-{int(evaluation_id)}"


def scoring_group(scoring_id: int) -> str:
    return f"scoring-{int(scoring_id)}"


def channel_message(event_type: str, data: dict[str, Any]) -> dict[str, Any]:
    """The channel-layer message: consumers route every event through their ``forward`` handler."""
    if event_type not in EVENT_TYPES:
        raise ValueError(f"unknown event type {event_type!r}; add it to webapp.realtime.EVENT_TYPES")
    return {"type": "forward", "event": event_type, "data": data}


def publish(group: str, event_type: str, data: dict[str, Any]) -> None:
    """Send now. A broken channel layer is logged, never raised: live updates are best effort,
    the database stays the source of truth."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(group, channel_message(event_type, data))
    except Exception:  # noqa: BLE001 - see docstring
        log.exception("publishing %s to %s failed", event_type, group)


def publish_on_commit(group: str, event_type: str, data: dict[str, Any]) -> None:
    """Publish once the current transaction commits (immediately outside a transaction)."""
    transaction.on_commit(lambda: publish(group, event_type, data))
