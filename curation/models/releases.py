"""Dataset releases: frozen, content-hashed sets of pinned problem versions."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from curation.models.problems import Problem, ProblemVersion


class DatasetRelease(models.Model):
    """A frozen, content-hashed set of problem versions built from a filter (``ReleaseFilter``)."""

    name = models.CharField(max_length=200)
    version = models.PositiveIntegerField(help_text="1, 2, ... per name.")
    description = models.TextField(blank=True)
    filter_spec = models.JSONField(default=dict)
    content_hash = models.CharField(max_length=64, db_index=True)
    problem_count = models.PositiveIntegerField(default=0)
    counts_by_platform = models.JSONField(default=dict)
    counts_by_difficulty = models.JSONField(default=dict)
    target_hard_share = models.FloatField(
        null=True, blank=True, help_text="Selection target: at least this share of hard problems."
    )
    counts_before_selection = models.JSONField(
        default=dict, blank=True, help_text="Bucket counts the filter matched, before the hard-share selection."
    )
    dropped = models.JSONField(
        default=list, blank=True, help_text="[{problem_id, key, bucket, reason}] the selection removed."
    )
    problems = models.ManyToManyField(Problem, through="ReleaseItem", related_name="releases")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="curation_release_unique")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class ReleaseItem(models.Model):
    """A problem in a release, pinned to the version (and content hash) it had when the release froze,
    with the curation annotations of that moment (bucket, stage, training test cap)."""

    release = models.ForeignKey(DatasetRelease, on_delete=models.CASCADE, related_name="items")
    problem = models.ForeignKey(Problem, on_delete=models.PROTECT, related_name="release_items")
    problem_version = models.ForeignKey(ProblemVersion, on_delete=models.PROTECT, related_name="release_items")
    content_hash = models.CharField(max_length=64)
    platform = models.CharField(max_length=64)
    difficulty = models.CharField(max_length=8, blank=True)
    stage = models.CharField(max_length=24)
    train_test_limit = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["release_id", "id"]
        constraints = [models.UniqueConstraint(fields=["release", "problem"], name="curation_releaseitem_unique")]

    def __str__(self) -> str:
        return f"{self.release_id}:{self.problem_id}@{self.content_hash[:8]}"
