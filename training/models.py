"""Database models of the training app: runs, checkpoints, metric storage and the sample table.

Metric storage is columnar. One :class:`MetricChunk` row holds up to :data:`CHUNK_STEPS` consecutive
steps of one metric of one run as two packed little-endian arrays (``int64`` steps, omitted when
they are consecutive, and ``float64`` values), keyed by ``(run, name, chunk)`` with ``chunk = step // CHUNK_STEPS``. Charting 100,000 steps
of a metric therefore reads ~200 small rows instead of 100,000, and because a step always lands in the
same chunk, recording a step a second time (a resumed run re-emitting steps after its last
checkpoint) replaces the value in place: a step can never be stored twice.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.conf import settings
from django.db import models

#: steps per metric chunk. 512 keeps a chunk's two arrays at <= 8 KiB, so the per-step read-modify-write
#: a live run does stays cheap while a 100k-step chart reads ~196 rows per metric.
CHUNK_STEPS = 512

_STEP_DTYPE = np.dtype("<i8")
_VALUE_DTYPE = np.dtype("<f8")


class RunStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


#: statuses a run never leaves
TERMINAL_STATUSES = frozenset({RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED})


class TrainingRun(models.Model):
    """One MicroCoder-GRPO training run.

    ``config`` is the full resolved core config (``training.config`` ``to_dict()``), exactly what the
    trainer runs with; ``warnings`` are the insight warnings ``check_config`` raised at creation.
    ``last_step``/``latest_metrics`` are a denormalized snapshot of the newest recorded step so list
    pages and the websocket join need no metric-chunk reads. ``lease_owner``/``heartbeat_at`` are the
    execution lease (``training.services.run_execution``): at most one live worker trains a run at a time.
    """

    name = models.CharField(max_length=200)
    config = models.JSONField(help_text="The full resolved trainer config the run executes with.")
    warnings = models.JSONField(default=list, blank=True, help_text="check_config warnings at creation.")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True)
    cancel_requested = models.BooleanField(default=False)
    node = models.CharField(max_length=255, blank=True, help_text="Hostname of the worker executing the run.")
    celery_task_id = models.CharField(max_length=255, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="How many times a worker started the run.")
    lease_owner = models.CharField(
        max_length=255,
        blank=True,
        help_text="The execution holding the run's lease (host:pid:uuid); only it may train and record.",
    )
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the lease owner last proved it is alive; older than TRAINING_LEASE_TIMEOUT_S = stale.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="training_runs"
    )
    release = models.ForeignKey(
        "curation.DatasetRelease",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="training_runs",
        help_text="The dataset release the run trains on (None: the config's dataset.release file).",
    )
    heldout_release = models.ForeignKey(
        "curation.DatasetRelease",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="heldout_runs",
        help_text="Held-out release evaluated during training (exported to eval.release; None: the config's).",
    )
    sweep = models.ForeignKey(
        "training.Sweep", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs",
        help_text="The sweep that launched this run (None: launched on its own).",
    )
    sweep_overrides = models.JSONField(
        default=dict, blank=True, help_text="The sweep combination this run was made from ({dotted path: value})."
    )
    output_dir = models.CharField(max_length=1000, blank=True)
    last_step = models.IntegerField(null=True, blank=True)
    latest_metrics = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk}, {self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


class Checkpoint(models.Model):
    """A checkpoint directory the trainer wrote (weights, optimizer, RNG states) at ``step``."""

    run = models.ForeignKey(TrainingRun, on_delete=models.CASCADE, related_name="checkpoints")
    step = models.IntegerField()
    path = models.CharField(max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run", "step"]
        constraints = [models.UniqueConstraint(fields=["run", "step"], name="training_checkpoint_run_step")]

    def __str__(self) -> str:
        return f"run {self.run_id} step {self.step}"


class MetricChunk(models.Model):
    """Up to :data:`CHUNK_STEPS` ``(step, value)`` points of one metric, sorted by step, unique steps.

    ``steps``/``values`` are packed arrays (see :func:`pack_steps` / :func:`unpack`); ``count`` and
    ``min_step``/``max_step`` mirror them so range filters and sizes need no decoding.
    """

    run = models.ForeignKey(TrainingRun, on_delete=models.CASCADE, related_name="metric_chunks")
    name = models.CharField(max_length=128)
    chunk = models.IntegerField()
    steps = models.BinaryField()
    values = models.BinaryField()
    count = models.IntegerField(default=0)
    min_step = models.IntegerField()
    max_step = models.IntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "name", "chunk"], name="training_metricchunk_run_name_chunk")
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.name} chunk {self.chunk} ({self.count} points)"

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(steps int64, values float64)`` of this chunk (read-only views)."""
        return unpack(self.steps, self.values, self.min_step)

    def set_arrays(self, steps: np.ndarray, values: np.ndarray) -> None:
        """Store sorted, unique ``steps`` with their ``values`` (same length, at least one point)."""
        self.steps = pack_steps(steps)
        self.values = pack_values(values)
        self.count = int(len(steps))
        self.min_step = int(steps[0])
        self.max_step = int(steps[-1])


def pack_steps(steps: np.ndarray) -> bytes:
    """The steps blob; empty when the steps are consecutive (the usual case: one point per step),
    which halves what a chart read transfers. ``unpack`` rebuilds them from ``min_step``."""
    steps = np.asarray(steps, dtype=_STEP_DTYPE)
    if len(steps) and int(steps[-1]) - int(steps[0]) + 1 == len(steps):
        return b""
    return np.ascontiguousarray(steps).tobytes()


def pack_values(values: np.ndarray) -> bytes:
    return np.ascontiguousarray(values, dtype=_VALUE_DTYPE).tobytes()


def unpack(steps: Any, values: Any, min_step: int) -> tuple[np.ndarray, np.ndarray]:
    """Decode a chunk's blobs (``bytes`` or ``memoryview``, as the database driver returns them)."""
    vals = np.frombuffer(values, dtype=_VALUE_DTYPE)
    if len(steps) == 0:
        return np.arange(min_step, min_step + len(vals), dtype=_STEP_DTYPE), vals
    return np.frombuffer(steps, dtype=_STEP_DTYPE), vals


def merge_points(
    old_steps: np.ndarray, old_values: np.ndarray, new_steps: np.ndarray, new_values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Upsert ``new`` points into sorted unique ``old`` points; a step present in both takes the new value.

    Within ``new`` the last occurrence of a step wins. Returns sorted, unique steps and their values.
    """
    steps = np.concatenate([np.asarray(old_steps, dtype=_STEP_DTYPE), np.asarray(new_steps, dtype=_STEP_DTYPE)])
    values = np.concatenate(
        [np.asarray(old_values, dtype=_VALUE_DTYPE), np.asarray(new_values, dtype=_VALUE_DTYPE)]
    )
    # A stable sort keeps equal steps in arrival order, so the last of each run of equal steps is the
    # newest write; keep exactly that one.
    order = np.argsort(steps, kind="stable")
    steps, values = steps[order], values[order]
    keep = np.ones(len(steps), dtype=bool)
    keep[:-1] = steps[1:] != steps[:-1]
    return steps[keep], values[keep]


class RunSample(models.Model):
    """One row of a step's sample table: a prompt, the policy's completion and how it was scored."""

    run = models.ForeignKey(TrainingRun, on_delete=models.CASCADE, related_name="samples")
    step = models.IntegerField()
    index = models.IntegerField(help_text="Position of the sample within its step.")
    prompt = models.TextField(blank=True)
    completion = models.TextField(blank=True)
    reward = models.FloatField(null=True, blank=True, help_text="None for an infrastructure error.")
    verdict = models.CharField(max_length=8, blank=True)
    length = models.IntegerField(default=0, help_text="Completion length in tokens.")
    truncated = models.BooleanField(default=False)
    masked = models.BooleanField(default=False)
    extra = models.JSONField(default=dict, blank=True, help_text="Other per-sample fields the trainer sent.")

    class Meta:
        ordering = ["run", "step", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "step", "index"], name="training_runsample_run_step_index")
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} step {self.step} #{self.index}"


# Model evaluations live in their own module (issue 8); imported here so Django registers them.
from training.models_evaluation import (  # noqa: E402
    Contamination,
    EvalEngine,
    EvalStatus,
    ModelEvaluation,
    ModelEvaluationProblem,
    ModelEvaluationSample,
)

# Sweeps (issue 9): imported here so Django registers the model.
from training.models_sweeps import Sweep  # noqa: E402

__all__ = [
    "CHUNK_STEPS",
    "TERMINAL_STATUSES",
    "Checkpoint",
    "Contamination",
    "EvalEngine",
    "EvalStatus",
    "MetricChunk",
    "ModelEvaluation",
    "ModelEvaluationProblem",
    "ModelEvaluationSample",
    "RunSample",
    "RunStatus",
    "Sweep",
    "TrainingRun",
    "merge_points",
    "pack_steps",
    "pack_values",
    "unpack",
]
