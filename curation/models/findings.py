"""Pipeline findings about a problem: constraint outcomes and duplicate links."""

from __future__ import annotations

from django.db import models

from curation.models.problems import Problem


class ConstraintKind(models.TextChoices):
    HARD = "hard", "hard"
    SOFT = "soft", "soft"


class ConstraintStatus(models.TextChoices):
    PASSED = "passed", "passed"
    FAILED = "failed", "failed"
    PENDING = "pending", "pending"


class ConstraintResult(models.Model):
    """The latest outcome of one constraint on one problem, with the reason in words."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="constraint_results")
    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=4, choices=ConstraintKind.choices)
    status = models.CharField(max_length=8, choices=ConstraintStatus.choices)
    reason = models.TextField()
    checked_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["problem_id", "kind", "name"]
        constraints = [models.UniqueConstraint(fields=["problem", "name"], name="curation_constraint_unique")]

    def __str__(self) -> str:
        return f"{self.problem_id} {self.name}={self.status}"


class DuplicateKind(models.TextChoices):
    EXACT = "exact", "exact (same canonical statement)"
    NEAR = "near", "near (MinHash/LSH)"


class DuplicateLink(models.Model):
    """``problem`` (the later one) duplicates ``duplicate_of`` (the earlier one). Never deletes either."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="duplicate_links")
    duplicate_of = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="duplicated_by")
    kind = models.CharField(max_length=8, choices=DuplicateKind.choices)
    similarity = models.FloatField(help_text="Estimated Jaccard similarity of the statements' shingles.")
    explanation = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem_id", "-similarity"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "duplicate_of"], name="curation_duplicate_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.problem_id} ~ {self.duplicate_of_id} ({self.kind})"
