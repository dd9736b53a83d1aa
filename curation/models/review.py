"""Spot-checks: review queues (a stratified sample), verdicts per reviewer, adjudication.

An item needs ``required_reviews`` verdicts (1, or 2 for the double-reviewed share). Its final
verdict is the adjudication when there is one, else the verdict all its reviewers agree on; items
whose reviewers disagree wait in the adjudication queue.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models.problems import Problem


class Verdict(models.TextChoices):
    ACCEPT = "accept", "accept"
    REJECT = "reject", "reject"
    NEEDS_FIX = "needs_fix", "needs fix"


#: reason codes a reject / needs-fix verdict may carry
REASON_CODES: dict[str, str] = {
    "statement_unclear": "statement unclear or ambiguous",
    "statement_incomplete": "statement incomplete (missing constraints, format, examples)",
    "wrong_tests": "tests wrong",
    "weak_tests": "tests too weak",
    "wrong_reference": "reference solution wrong",
    "wrong_difficulty": "difficulty bucket wrong",
    "format_mismatch": "I/O format does not match the statement",
    "duplicate": "duplicate of another problem",
    "other": "other (see note)",
}


class ReviewQueue(models.Model):
    name = models.CharField(max_length=200)
    release = models.ForeignKey(
        "curation.DatasetRelease", null=True, blank=True, on_delete=models.CASCADE, related_name="review_queues"
    )
    filter_spec = models.JSONField(default=dict, blank=True)
    sample_size = models.PositiveIntegerField()
    double_review_share = models.FloatField(default=0.2)
    seed = models.IntegerField(default=0)
    strata = models.JSONField(default=dict, help_text="'platform/bucket' -> [population, sampled].")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return self.name


class ReviewItem(models.Model):
    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="items")
    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="review_items")
    position = models.PositiveIntegerField()
    platform = models.CharField(max_length=64)
    bucket = models.CharField(max_length=8, blank=True)
    required_reviews = models.PositiveSmallIntegerField(default=1)

    class Meta:
        ordering = ["queue_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["queue", "problem"], name="curation_reviewitem_unique"),
            models.UniqueConstraint(fields=["queue", "position"], name="curation_reviewitem_position"),
        ]


class ReviewAssignment(models.Model):
    """A reviewer was handed this item (by "next item"); the verdict may follow later."""

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="curation_reviewassignment_unique"),
        ]


class ReviewVerdict(models.Model):
    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="verdicts")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_verdicts")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    reason_codes = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="curation_reviewverdict_unique"),
        ]


class Adjudication(models.Model):
    """The final word on an item whose reviewers disagreed."""

    item = models.OneToOneField(ReviewItem, on_delete=models.CASCADE, related_name="adjudication")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    note = models.TextField(blank=True)
    adjudicator = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
