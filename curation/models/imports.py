"""Import batches: one file or folder imported, with its per-row error report."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ImportStatus(models.TextChoices):
    PENDING = "pending", "pending"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"


class ImportBatch(models.Model):
    """One import of one file or folder. ``errors`` is a list of ``{"row", "reason", "external_id"}``."""

    format = models.CharField(max_length=32)
    filename = models.CharField(max_length=500)
    path = models.CharField(max_length=1000, help_text="Server-side path that was (or will be) read.")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    status = models.CharField(max_length=10, choices=ImportStatus.choices, default=ImportStatus.PENDING)
    message = models.TextField(blank=True)
    run_pipeline = models.BooleanField(
        default=False, help_text="Run the normalize and constraints stages on the imported problems afterwards."
    )
    total_rows = models.PositiveIntegerField(default=0)
    expected_rows = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Rows the file holds, counted before importing (JSONL and Parquet files); None when unknown.",
    )
    imported_count = models.PositiveIntegerField(default=0)
    unchanged_count = models.PositiveIntegerField(default=0)
    updated_count = models.PositiveIntegerField(default=0)
    rejected_count = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    last_committed_row = models.PositiveIntegerField(
        null=True, blank=True,
        help_text="Row number of the last row of the last committed chunk: every row up to it is stored or "
        "reported as rejected; a failed import left nothing after it.",
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True,
        help_text="Last sign of life of the worker importing it; a running batch silent for longer than "
        "IMPORT_LEASE_TIMEOUT_S is presumed dead and may be taken over by a redelivered task.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"import #{self.pk} {self.format} {self.filename}"

    @property
    def is_finished(self) -> bool:
        return self.status in (ImportStatus.SUCCEEDED, ImportStatus.FAILED)

    def progress_event(self) -> dict[str, object]:
        """The ``import.progress`` event data (``webapp.realtime.IMPORT_PROGRESS``)."""
        return {
            "batch_id": self.pk, "status": self.status, "rows": self.total_rows, "errors": self.rejected_count,
            "expected": self.expected_rows,
            "imported": self.imported_count, "unchanged": self.unchanged_count, "updated": self.updated_count,
            "last_committed_row": self.last_committed_row, "message": self.message,
        }

    def summary(self) -> str:
        return (
            f"{self.imported_count} imported, {self.unchanged_count} unchanged, "
            f"{self.updated_count} updated, {self.rejected_count} rejected"
        )
