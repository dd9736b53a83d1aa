"""Difficulty matrix: scoring jobs with every raw sample, pass-rate sets, and calibrations.

The chain a problem page shows, every link stored: ``ScoringSample`` (raw answer, five dimensions,
rationales, tokens) -> ``ScoringResult`` (weighted score) -> ``CalibratedDifficulty`` (predicted or
measured pass rate -> difficulty = 1 - pass rate -> bucket) -> ``Problem.difficulty`` once the
calibration is applied (``difficulty_source="calibrated"``).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from curation.difficulty.core import DIMENSIONS
from curation.models.problems import Problem


class JobStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


TERMINAL_STATUSES = frozenset({JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED})


class ScoringJob(models.Model):
    """Score a frozen selection of problems (``problem_ids``) with one backend / model / prompt version,
    ``samples_per_problem`` independent samples each, combined with ``weights``."""

    backend = models.CharField(max_length=16, help_text="heuristic | openai")
    model = models.CharField(max_length=200, blank=True)
    prompt_version = models.CharField(max_length=64, blank=True)
    weights = models.JSONField(default=dict, help_text="Dimension -> weight (sum 1).")
    samples_per_problem = models.PositiveSmallIntegerField(default=3)
    release = models.ForeignKey(
        "curation.DatasetRelease", null=True, blank=True, on_delete=models.SET_NULL, related_name="scorings"
    )
    filter_spec = models.JSONField(default=dict, blank=True, help_text="The filter the selection came from.")
    problem_ids = models.JSONField(default=list, help_text="The selection, frozen at creation.")
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED, db_index=True)
    reason = models.TextField(blank=True, help_text="Why the job ended as it did (failures, cancellation).")
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    error_count = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    celery_task_id = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveSmallIntegerField(
        default=0, help_text="Deliveries that started the job; a job whose workers keep dying fails after a few."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="scorings"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"scoring #{self.pk} ({self.backend} {self.prompt_version})"

    @property
    def is_finished(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def weight_rows(self) -> list[tuple[str, float]]:
        """``(dimension, weight)`` in the matrix's order (JSONB does not keep key order)."""
        return [(name, float(self.weights[name])) for name in DIMENSIONS if name in self.weights]

    def progress_event(self) -> dict[str, Any]:
        """The ``scoring.progress`` payload (see ``webapp.realtime.SCORING_PROGRESS``)."""
        return {
            "scoring_id": self.pk, "status": self.status, "done": self.progress_done,
            "total": self.progress_total, "errors": self.error_count, "reason": self.reason,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
        }


class ScoringSample(models.Model):
    """One independent sample of one problem: unique per (scoring, problem, index), so a restarted
    worker skips what is stored and can never store a sample twice."""

    scoring = models.ForeignKey(ScoringJob, on_delete=models.CASCADE, related_name="samples")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="scoring_samples")
    index = models.PositiveSmallIntegerField()
    dimensions = models.JSONField(default=dict)
    rationales = models.JSONField(default=dict)
    raw = models.TextField(blank=True, help_text="The raw model answer (or the heuristic's feature JSON).")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["scoring_id", "problem_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["scoring", "problem", "index"], name="curation_scoringsample_unique"),
        ]

    def dimension_rows(self) -> list[tuple[str, float, str]]:
        """``(dimension, value, rationale)`` in the matrix's order (JSONB does not keep key order)."""
        order = {name: i for i, name in enumerate(DIMENSIONS)}
        names = sorted(self.dimensions, key=lambda name: (order.get(name, len(order)), name))
        return [(name, self.dimensions[name], str(self.rationales.get(name, ""))) for name in names]


class ScoringResult(models.Model):
    """The weighted score of one problem in one scoring (``score`` is null when it could not be scored)."""

    scoring = models.ForeignKey(ScoringJob, on_delete=models.CASCADE, related_name="results")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="scoring_results")
    score = models.FloatField(null=True, blank=True)
    dimensions = models.JSONField(default=dict, help_text="Dimension -> mean over the samples.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["scoring_id", "problem_id"]
        constraints = [
            models.UniqueConstraint(fields=["scoring", "problem"], name="curation_scoringresult_unique"),
        ]


class PassRateSource(models.TextChoices):
    EVALUATION = "evaluation", "model evaluation"
    UPLOAD = "upload", "uploaded JSONL"


class PassRateSet(models.Model):
    """Measured per-problem pass rates of one target model (from an evaluation job or a JSONL file)."""

    name = models.CharField(max_length=200)
    target_model = models.CharField(max_length=300)
    source = models.CharField(max_length=16, choices=PassRateSource.choices)
    evaluation_id = models.PositiveIntegerField(null=True, blank=True)
    filename = models.CharField(max_length=255, blank=True)
    row_count = models.PositiveIntegerField(default=0)
    unmatched = models.JSONField(default=list, blank=True, help_text="Rows naming no known problem (first 100).")
    unmatched_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.target_model})"


class PassRate(models.Model):
    pass_rate_set = models.ForeignKey(PassRateSet, on_delete=models.CASCADE, related_name="rates")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="pass_rates")
    passed = models.PositiveIntegerField()
    attempts = models.PositiveIntegerField()

    class Meta:
        ordering = ["pass_rate_set_id", "problem_id"]
        constraints = [
            models.UniqueConstraint(fields=["pass_rate_set", "problem"], name="curation_passrate_unique"),
        ]

    @property
    def rate(self) -> float | None:
        return self.passed / self.attempts if self.attempts else None


class CalibrationMethod(models.TextChoices):
    ISOTONIC = "isotonic", "isotonic"
    LOGISTIC = "logistic", "logistic"


class Calibration(models.Model):
    """A stored, versioned fit score -> pass rate, and the buckets it gives every scored problem."""

    name = models.CharField(max_length=200)
    version = models.PositiveIntegerField(help_text="1, 2, ... per name.")
    scoring = models.ForeignKey(ScoringJob, on_delete=models.PROTECT, related_name="calibrations")
    pass_rate_set = models.ForeignKey(PassRateSet, on_delete=models.PROTECT, related_name="calibrations")
    method = models.CharField(max_length=16, choices=CalibrationMethod.choices)
    fit = models.JSONField(help_text="CalibrationFit.to_dict(): params, curve, CV errors.")
    cv_mae = models.FloatField()
    cv_brier = models.FloatField(null=True, blank=True)
    n_points = models.PositiveIntegerField(help_text="Problems with both a score and a measured pass rate.")
    easy_below = models.FloatField()
    hard_from = models.FloatField()
    counts_by_bucket = models.JSONField(default=dict)
    applied_at = models.DateTimeField(null=True, blank=True)
    applied_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="calibrations"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="curation_calibration_unique")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class CalibratedDifficulty(models.Model):
    """One problem under one calibration: which pass rate decided (measured wins) and the bucket."""

    calibration = models.ForeignKey(Calibration, on_delete=models.CASCADE, related_name="difficulties")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="calibrated_difficulties")
    result = models.ForeignKey(ScoringResult, on_delete=models.CASCADE, related_name="+")
    score = models.FloatField()
    predicted_pass_rate = models.FloatField()
    measured_passed = models.PositiveIntegerField(null=True, blank=True)
    measured_attempts = models.PositiveIntegerField(null=True, blank=True)
    difficulty = models.FloatField(help_text="1 - pass rate (measured when available, else predicted).")
    bucket = models.CharField(max_length=8)

    class Meta:
        ordering = ["calibration_id", "problem_id"]
        constraints = [
            models.UniqueConstraint(fields=["calibration", "problem"], name="curation_calibrateddifficulty_unique"),
        ]

    @property
    def measured(self) -> bool:
        return bool(self.measured_attempts)
