"""Problems, their versions, tests and reference solutions."""

from __future__ import annotations

from typing import Any

from django.db import models

from curation.models.blobs import decompress_json, decompress_text
from curation.records import ProblemRecord


class SourcePlatform(models.Model):
    """Where problems come from (``leetcode``, ``codeforces``, ``atcoder``, ``kattis`` ...)."""

    name = models.SlugField(max_length=64, unique=True, help_text="Platform key used in records and filters.")
    display_name = models.CharField(max_length=128, blank=True)
    url = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.display_name or self.name


class Stage(models.TextChoices):
    """Pipeline stage: imported -> normalized -> constraints_{pending,passed,failed}, or duplicate."""

    IMPORTED = "imported", "imported"
    NORMALIZED = "normalized", "normalized"
    CONSTRAINTS_PENDING = "constraints_pending", "constraints pending (awaiting the judge)"
    CONSTRAINTS_PASSED = "constraints_passed", "constraints passed"
    CONSTRAINTS_FAILED = "constraints_failed", "constraints failed"
    DUPLICATE = "duplicate", "duplicate"


class IOMode(models.TextChoices):
    STDIN = "stdin", "stdin/stdout"
    CALL = "call", "function call"


class Difficulty(models.TextChoices):
    EASY = "easy", "easy"
    MEDIUM = "medium", "medium"
    HARD = "hard", "hard"
    UNKNOWN = "", "unknown"


class ProblemQuerySet(models.QuerySet["Problem"]):
    #: the columns list pages and list endpoints read (no statement, starter code, signature, tests)
    LIST_FIELDS = (
        "id", "slug", "title", "external_id", "platform__name", "platform__display_name", "io_mode",
        "difficulty", "difficulty_label", "rating", "contest_date", "tags", "stage", "version",
        "test_count", "content_hash", "created_at",
    )

    def list_fields(self) -> ProblemQuerySet:
        return self.select_related("platform").only(*self.LIST_FIELDS)


class Problem(models.Model):
    """The current version of one problem. ``(platform, external_id)`` identifies it across imports;
    ``content_hash`` is ``ProblemRecord.content_hash()`` of the current version."""

    platform = models.ForeignKey(SourcePlatform, on_delete=models.PROTECT, related_name="problems")
    external_id = models.CharField(max_length=255)
    slug = models.SlugField(max_length=255, unique=True)
    title = models.CharField(max_length=500)
    statement = models.TextField()
    statement_hash = models.CharField(
        max_length=64, blank=True, db_index=True, help_text="Hash of the canonical statement (normalize stage)."
    )
    minhash = models.BinaryField(null=True, editable=False, help_text="MinHash signature of the statement.")
    io_mode = models.CharField(max_length=8, choices=IOMode.choices, default=IOMode.STDIN)
    fn_name = models.CharField(max_length=255, blank=True)
    starter_code = models.TextField(blank=True)
    time_limit_s = models.FloatField(default=2.0)
    memory_mb = models.IntegerField(default=256)
    tags = models.JSONField(default=list, blank=True)
    difficulty_label = models.CharField(max_length=64, blank=True, help_text="The platform's own label.")
    rating = models.IntegerField(null=True, blank=True, help_text="Numeric platform rating, if any.")
    difficulty = models.CharField(
        max_length=8, choices=Difficulty.choices, blank=True, default="",
        help_text="Bucket: derived from the platform label/rating on import; the difficulty matrix may overwrite it.",
    )
    difficulty_source = models.CharField(max_length=16, default="platform")
    contest_date = models.DateField(null=True, blank=True)
    url = models.CharField(max_length=1000, blank=True)
    license = models.CharField(max_length=255, blank=True)
    checker = models.JSONField(default=dict, blank=True)
    content_hash = models.CharField(max_length=64)
    version = models.PositiveIntegerField(default=1)
    stage = models.CharField(max_length=24, choices=Stage.choices, default=Stage.IMPORTED)
    test_count = models.PositiveIntegerField(default=0)
    public_test_count = models.PositiveIntegerField(default=0)
    train_test_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="Only the first N tests are used for training (soft test-count cap)."
    )
    normalized_at = models.DateTimeField(null=True, blank=True)
    constraints_checked_at = models.DateTimeField(null=True, blank=True)
    import_batch = models.ForeignKey(
        "ImportBatch", null=True, blank=True, on_delete=models.SET_NULL, related_name="problems"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProblemQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["platform", "external_id"], name="curation_problem_platform_external_id"),
        ]
        indexes = [
            # (platform, bucket) filters with the default id ordering: an index range scan + LIMIT
            models.Index(fields=["platform", "difficulty", "id"], name="curation_pb_plat_diff_id"),
            models.Index(fields=["difficulty", "id"], name="curation_pb_diff_id"),
            models.Index(fields=["stage", "id"], name="curation_pb_stage_id"),
            models.Index(fields=["contest_date"], name="curation_pb_contest_date"),
            models.Index(fields=["io_mode"], name="curation_pb_io_mode"),
        ]

    def __str__(self) -> str:
        return f"{self.platform_id}:{self.external_id}"

    @property
    def is_duplicate(self) -> bool:
        return self.stage == Stage.DUPLICATE


class ProblemVersion(models.Model):
    """One content version of a problem, kept forever: ``record_z`` is the compressed export dict."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64, db_index=True)
    title = models.CharField(max_length=500)
    test_count = models.PositiveIntegerField(default=0)
    record_z = models.BinaryField(help_text="zlib(JSON of ProblemRecord.to_export_dict()).")
    import_batch = models.ForeignKey(
        "ImportBatch", null=True, blank=True, on_delete=models.SET_NULL, related_name="versions"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "version"], name="curation_problemversion_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.problem_id} v{self.version}"

    def export_dict(self) -> dict[str, Any]:
        return decompress_json(self.record_z)

    def record(self) -> ProblemRecord:
        return ProblemRecord.from_export_dict(self.export_dict())


class TestCase(models.Model):
    """One test of the current version. Input/output are stored zlib-compressed (see module docstring)."""

    __test__ = False  # not a pytest test class

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="tests")
    order = models.PositiveIntegerField()
    public = models.BooleanField(default=False, help_text="Shown in the statement (an example).")
    input_z = models.BinaryField()
    output_z = models.BinaryField()

    class Meta:
        ordering = ["problem_id", "order"]
        constraints = [models.UniqueConstraint(fields=["problem", "order"], name="curation_testcase_unique")]

    def __str__(self) -> str:
        return f"{self.problem_id} #{self.order}"

    @property
    def input(self) -> str:
        return decompress_text(self.input_z)

    @property
    def output(self) -> str:
        return decompress_text(self.output_z)


class ReferenceSolution(models.Model):
    """A solution shipped by the source. ``verified`` only once the evaluator judged it ``AC``;
    ``verdict`` is empty until then (the reference constraint stays pending)."""

    problem = models.ForeignKey(Problem, on_delete=models.CASCADE, related_name="solutions")
    order = models.PositiveIntegerField(default=0)
    language = models.CharField(max_length=32, default="python")
    code = models.TextField()
    verified = models.BooleanField(default=False)
    verified_at = models.DateTimeField(null=True, blank=True)
    verdict = models.CharField(max_length=8, blank=True, help_text="Evaluator verdict (AC, WA, TLE ...).")
    verdict_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["problem_id", "order"]

    def __str__(self) -> str:
        return f"{self.problem_id} {self.language} #{self.order}"

    @property
    def judged(self) -> bool:
        return bool(self.verdict)
