"""Writes of the training app (HackSoft-style services). Import from here:

``run_create``, ``run_start``, ``run_execute``, ``run_cancel``, ``config_validate``, ``checkpoints_sync``,
``metrics_record``, ``metrics_bulk_record``, ``metrics_truncate_after``, ``samples_record``.
"""

from training.services.metrics import (
    metrics_bulk_record,
    metrics_record,
    metrics_truncate_after,
    sample_dict,
    samples_record,
)
from training.services.runs import (
    checkpoints_sync,
    config_validate,
    run_cancel,
    run_create,
    run_execute,
    run_output_dir,
    run_start,
)

__all__ = [
    "checkpoints_sync",
    "config_validate",
    "metrics_bulk_record",
    "metrics_record",
    "metrics_truncate_after",
    "run_cancel",
    "run_create",
    "run_execute",
    "run_output_dir",
    "run_start",
    "sample_dict",
    "samples_record",
]
