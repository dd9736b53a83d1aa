"""Model evaluations: pass@k of a model or checkpoint on a dataset release (issue 8, the Django layer).

:class:`ModelEvaluation` is one job: a model source (an engine and a model: a local path or Hugging
Face id, a training run's checkpoint, or an OpenAI-compatible endpoint's served model name with its
base URL; the API key is never stored, workers read it from their environment), a release with an
optional problem filter, the sampling settings, the model's training cut-off and the contamination
options. It ends in a terminal status with a reason whatever happens. Its ``summary`` holds
``training.evaluate.summarize`` output (pass@1, pass@k with 95 % intervals, breakdowns, infra error
rate).

:class:`ModelEvaluationProblem` is one evaluated problem's result; :class:`ModelEvaluationSample` one
sample, unique on ``(evaluation, problem, index)``: a resumed job passes the stored samples to the core
as ``done`` and only generates the missing indices, so no sample is ever generated or stored twice.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from curation.models.blobs import compress_text, decompress_text


class EvalEngine(models.TextChoices):
    TRANSFORMERS = "transformers", "transformers (local model, CPU or GPU)"
    VLLM = "vllm", "vLLM (local model, GPU)"
    OPENAI = "openai", "OpenAI-compatible endpoint"


#: engines that load weights in the worker: they run on the ``gpu`` queue; endpoints on ``evaluate``
LOCAL_ENGINES = frozenset({EvalEngine.TRANSFORMERS, EvalEngine.VLLM})


class EvalStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


EVAL_TERMINAL_STATUSES = frozenset({EvalStatus.SUCCEEDED, EvalStatus.FAILED, EvalStatus.CANCELLED})


class Contamination(models.TextChoices):
    OFF = "off", "no n-gram check"
    FLAG = "flag", "flag overlapping problems"
    EXCLUDE = "exclude", "exclude overlapping problems"


class ModelEvaluation(models.Model):
    """One evaluation job: model x release (x filter) x settings -> k judged samples per problem."""

    name = models.CharField(max_length=200, blank=True, help_text="Display label; empty = model and settings.")
    engine = models.CharField(max_length=16, choices=EvalEngine.choices)
    model = models.CharField(
        max_length=1000, help_text="Local path, Hugging Face id, or the endpoint's served model name."
    )
    run = models.ForeignKey(
        "training.TrainingRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="evaluations",
        help_text="The training run whose checkpoint is evaluated (None: a model outside the product).",
    )
    checkpoint_step = models.IntegerField(null=True, blank=True, help_text="The run's checkpoint step, if any.")
    base_url = models.CharField(max_length=1000, blank=True, help_text="Endpoint URL (openai engine only).")
    release = models.ForeignKey(
        "curation.DatasetRelease", on_delete=models.PROTECT, related_name="model_evaluations"
    )
    problem_filter = models.JSONField(
        default=dict, blank=True,
        help_text='Optional narrowing of the release: {"platform", "difficulty", "io_mode", "limit"}.',
    )
    k = models.PositiveIntegerField(default=4, help_text="Samples per problem.")
    temperature = models.FloatField(default=0.6)
    top_p = models.FloatField(default=0.95)
    max_tokens = models.PositiveIntegerField(default=4096)
    seed = models.IntegerField(default=0)
    cutoff_date = models.DateField(null=True, blank=True, help_text="The model's training cut-off date.")
    exclude_before_cutoff = models.BooleanField(
        default=True, help_text="Evaluate only problems whose contest date is after the cut-off."
    )
    contamination_release = models.ForeignKey(
        "curation.DatasetRelease", null=True, blank=True, on_delete=models.PROTECT,
        related_name="contamination_checks", help_text="The training release checked for 13-gram overlap.",
    )
    contamination = models.CharField(max_length=8, choices=Contamination.choices, default=Contamination.OFF)
    status = models.CharField(max_length=16, choices=EvalStatus.choices, default=EvalStatus.QUEUED, db_index=True)
    reason = models.TextField(blank=True, help_text="Why the job is in its status (the error of a failed one).")
    cancel_requested = models.BooleanField(default=False)
    queue = models.CharField(max_length=16, blank=True)
    celery_task_id = models.CharField(max_length=255, blank=True)
    node = models.CharField(max_length=255, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="How many times a worker started the job.")
    lease_owner = models.CharField(max_length=255, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    problems_total = models.PositiveIntegerField(default=0)
    problems_done = models.PositiveIntegerField(default=0)
    samples_total = models.PositiveIntegerField(default=0)
    samples_done = models.PositiveIntegerField(default=0)
    selection = models.JSONField(
        default=dict, blank=True,
        help_text="How the problems were chosen: release size, excluded by cut-off / contamination, evaluated.",
    )
    contamination_report = models.JSONField(
        default=dict, blank=True, help_text="problem key -> {overlap, matched_train_ids, excluded}, flagged only."
    )
    summary = models.JSONField(default=dict, blank=True, help_text="training.evaluate.summarize output.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="model_evaluations"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"model evaluation #{self.pk} ({self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in EVAL_TERMINAL_STATUSES

    @property
    def is_local(self) -> bool:
        return self.engine in LOCAL_ENGINES

    @property
    def label(self) -> str:
        """Model and settings in words (``training.selectors.model_evaluation_label``)."""
        model = self.model.rstrip("/").rsplit("/", 2)
        short = "/".join(model[-2:]) if len(model) > 1 else self.model
        if self.run_id is not None and self.checkpoint_step is not None:
            short = f"run #{self.run_id} step {self.checkpoint_step}"
        base = self.name or short
        return f"{base} ({self.engine}, k={self.k}, T={self.temperature:g}, top_p={self.top_p:g})"

    @property
    def headline(self) -> dict[str, Any]:
        """The summary's headline numbers under template-friendly keys (``pass@1`` is no template name)."""
        return summary_headline(self.summary or {})

    def progress_event(self) -> dict[str, Any]:
        """The ``model_evaluation.progress`` payload (also the websocket snapshot)."""
        return {
            "evaluation_id": self.pk, "status": self.status, "reason": self.reason,
            "cancel_requested": self.cancel_requested,
            "problems_done": self.problems_done, "problems_total": self.problems_total,
            "samples_done": self.samples_done, "samples_total": self.samples_total,
            "pass@1": (self.summary or {}).get("pass@1"),
        }


def summary_headline(summary: dict[str, Any]) -> dict[str, Any]:
    """``{"pass1", "pass1_ci", "passk", "passk_ci", "infra_error_rate", "problems"}`` of a summary (or of one
    breakdown group of it); missing values are None."""
    ci = summary.get("ci95") or {}

    def interval(name: str) -> Any:
        value = ci.get(name) if isinstance(ci, dict) else None
        return value if value is not None else summary.get(f"{name}_ci95")

    problems = next((summary[k] for k in ("problems", "n", "count") if isinstance(summary.get(k), int)), None)
    return {
        "pass1": summary.get("pass@1"), "pass1_ci": interval("pass@1"),
        "passk": summary.get("pass@k"), "passk_ci": interval("pass@k"),
        "infra_error_rate": summary.get("infra_error_rate"), "problems": problems,
    }


class ModelEvaluationProblem(models.Model):
    """One problem's result in an evaluation (infra errors are excluded from ``attempts``)."""

    evaluation = models.ForeignKey(ModelEvaluation, on_delete=models.CASCADE, related_name="problem_results")
    problem = models.ForeignKey("curation.Problem", on_delete=models.PROTECT, related_name="model_evaluation_results")
    key = models.CharField(max_length=400, help_text="platform:external_id")
    platform = models.CharField(max_length=64)
    external_id = models.CharField(max_length=255)
    difficulty = models.CharField(max_length=16, blank=True, help_text="Bucket easy|medium|hard at release time.")
    contest_date = models.DateField(null=True, blank=True)
    io_mode = models.CharField(max_length=8, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    passed = models.PositiveIntegerField(default=0)
    infra_errors = models.PositiveIntegerField(default=0)
    pass_at_1 = models.FloatField(null=True, blank=True)
    pass_at_k = models.FloatField(null=True, blank=True)
    verdicts = models.JSONField(default=list, blank=True, help_text="Verdict per sample index.")
    contaminated = models.BooleanField(default=False, help_text="13-gram overlap with the training release.")
    overlap = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["evaluation", "id"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "problem"], name="training_modelevalproblem_unique")
        ]

    def __str__(self) -> str:
        return f"{self.evaluation_id}:{self.key} {self.passed}/{self.attempts}"


class ModelEvaluationSample(models.Model):
    """One judged sample; ``completion_z`` is the compressed completion (curation's blob format)."""

    evaluation = models.ForeignKey(ModelEvaluation, on_delete=models.CASCADE, related_name="samples")
    problem = models.ForeignKey("curation.Problem", on_delete=models.PROTECT, related_name="+")
    index = models.IntegerField()
    completion_z = models.BinaryField()
    verdict = models.CharField(max_length=8, blank=True)
    passed = models.BooleanField(default=False)
    infra_error = models.BooleanField(default=False)
    method = models.CharField(max_length=64, blank=True)
    elapsed_s = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["evaluation", "problem", "index"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "problem", "index"], name="training_modelevalsample_unique")
        ]

    def __str__(self) -> str:
        return f"{self.evaluation_id}:{self.problem_id}#{self.index} {self.verdict}"

    @property
    def completion(self) -> str:
        return decompress_text(self.completion_z)

    @completion.setter
    def completion(self, text: str) -> None:
        self.completion_z = compress_text(text)
