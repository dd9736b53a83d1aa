"""Writes of the training app (HackSoft-style services). Import from here:

``run_create``, ``run_start``, ``run_execute``, ``run_cancel``, ``config_validate``, ``checkpoints_sync``,
``run_attempt`` (one lease-guarded execution: ``AttemptOutcome``), ``metrics_record``,
``metrics_bulk_record``, ``metrics_truncate_after``, ``samples_record``; ``LeaseLost`` is raised in a
worker whose run was taken over by another.
"""

from training.services.lease import LeaseLost
from training.services.metrics import (
    metrics_bulk_record,
    metrics_record,
    metrics_truncate_after,
    sample_dict,
    samples_record,
)
from training.services.run_execution import AttemptOutcome, run_attempt, run_execute
from training.services.runs import (
    checkpoints_sync,
    config_validate,
    run_cancel,
    run_create,
    run_output_dir,
    run_start,
)

__all__ = [
    "AttemptOutcome",
    "LeaseLost",
    "checkpoints_sync",
    "config_validate",
    "metrics_bulk_record",
    "metrics_record",
    "metrics_truncate_after",
    "run_cancel",
    "run_attempt",
    "run_create",
    "run_execute",
    "run_output_dir",
    "run_start",
    "sample_dict",
    "samples_record",
]
