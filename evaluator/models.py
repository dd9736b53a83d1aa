"""Evaluation jobs: judging work done by the ``evaluate`` Celery queue, with its progress and results.

Two kinds of job exist:

- ``submission``: one piece of user code judged against one stored problem. ``results`` holds one
  item, the verdict (with a compact per-test list).
- ``verify_references``: every reference solution of a set of problems judged against the problem's
  tests; the outcome per problem is written back to curation (the "reference solution passes" hard
  constraint). ``results`` holds one item per problem.

The job row is the source of truth; websocket progress events are best effort.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


class EvaluationJob(models.Model):
    class Kind(models.TextChoices):
        SUBMISSION = "submission", "Submission"
        VERIFY_REFERENCES = "verify_references", "Verify reference solutions"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    #: statuses a job never leaves
    TERMINAL = frozenset({Status.SUCCEEDED, Status.FAILED, Status.CANCELLED})

    kind = models.CharField(max_length=32, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="evaluation_jobs"
    )
    # submission: the problem judged against; verify_references: unused (see ``problems``)
    problem = models.ForeignKey(
        "curation.Problem", null=True, blank=True, on_delete=models.CASCADE, related_name="submission_jobs"
    )
    problems = models.ManyToManyField("curation.Problem", blank=True, related_name="verification_jobs")
    code = models.TextField(blank=True, help_text="The submitted source (submission jobs only).")
    language = models.CharField(
        max_length=8, default="python", choices=[("python", "Python"), ("c", "C"), ("cpp", "C++")],
        help_text="Language of the submitted source (submission jobs only; verify jobs use each reference's).",
    )
    checker = models.JSONField(
        null=True, blank=True, help_text="Checker override in the evaluator's case format; null = the problem's."
    )
    stop_on_first_failure = models.BooleanField(default=True)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(
        default=0, help_text="Deliveries that started the job (redeliveries after a dead worker, retries)."
    )
    results = models.JSONField(default=list, blank=True, help_text="Compact verdicts, one item per problem.")
    error = models.TextField(blank=True)
    celery_task_id = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [models.Index(fields=("kind", "status"))]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.TERMINAL

    @property
    def verdict(self) -> dict[str, Any] | None:
        """The submission's verdict once judged (None before, and for verify jobs)."""
        if self.kind != self.Kind.SUBMISSION or not self.results:
            return None
        first = self.results[0]
        return first if isinstance(first, dict) else None

    def progress_event(self) -> dict[str, Any]:
        """The ``job.progress`` payload (see ``webapp.realtime.JOB_PROGRESS``)."""
        return {"job_id": self.pk, "status": self.status, "done": self.progress_done, "total": self.progress_total}
