"""Models of the project app: the per-job log the jobs view shows (``webapp.jobs``)."""

from __future__ import annotations

from django.db import models
from django.utils import timezone


class JobEvent(models.Model):
    """One line of a job's log: it started, passed a progress milestone, changed its reason, ended.

    The job models keep only their current state (status, counts, one reason), which cannot say what
    happened when; these rows are the history. They are written by ``webapp.jobs_feed.job_changed``,
    the hook every job kind's progress publication calls, inside the caller's transaction (a rolled
    back change leaves no line). ``kind`` is a key of ``webapp.jobs.KINDS``; ``job_id`` the job's pk
    (no foreign key: one table serves every kind). ``status``/``milestone``/``reason`` are the job's
    state when the line was written, which is what the next call compares against."""

    class Level(models.TextChoices):
        INFO = "info", "info"
        ERROR = "error", "error"

    kind = models.CharField(max_length=32)
    job_id = models.PositiveBigIntegerField()
    at = models.DateTimeField(default=timezone.now)
    level = models.CharField(max_length=8, choices=Level.choices, default=Level.INFO)
    status = models.CharField(max_length=16)
    milestone = models.IntegerField(default=0)
    reason = models.TextField(blank=True)
    message = models.TextField()

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=("kind", "job_id", "id"), name="webapp_jobevent_job")]

    def __str__(self) -> str:
        return f"{self.kind} #{self.job_id} {self.at:%H:%M:%S} {self.message[:60]}"

    def as_dict(self) -> dict[str, object]:
        return {
            "at": self.at.isoformat(),
            "level": self.level,
            "status": self.status,
            "message": self.message,
        }
