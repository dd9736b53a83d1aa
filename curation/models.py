"""Curation models: problems with their tests, versions and pipeline findings, imports and releases.

Storage rules that keep list pages fast on 20,000+ problems:

- A problem's tests live in ``TestCase`` rows whose input/output are zlib-compressed (``input_z``,
  ``output_z``); list queries never join them. ``Problem.test_count`` is denormalized for lists.
- Every content version of a problem is kept in ``ProblemVersion`` as one zlib-compressed JSON blob of
  ``ProblemRecord.to_export_dict()`` (statement, tests, solutions): the history, the frozen content a
  release pins, and what the exporter streams without touching the ``TestCase`` rows.
- List queries use ``Problem.objects.list_fields()`` (``.only()`` of the columns a list shows).

Business logic lives in ``curation.services``; models only describe data and decode blobs.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from django.conf import settings
from django.db import models

from curation.records import ProblemRecord

#: zlib level for stored blobs: 6 (the default) costs ~3x level 1 on import for ~10 % less space;
#: 3 keeps the 190k-test LeetCodeDataset import well inside its time budget.
ZLIB_LEVEL = 3


#: Values shorter than this are stored raw behind a 0x00 marker byte: most test inputs are a few bytes,
#: where zlib only adds its header and its per-call setup dominated the import of 190k tests.
COMPRESS_MIN_BYTES = 128
_RAW = b"\x00"  # a zlib stream never starts with 0x00 (its first byte is 0x78 for our window size)


def compress_text(text: str) -> bytes:
    """UTF-8 ``text`` as stored in a blob column: zlib, or ``0x00`` + raw bytes when short."""
    data = text.encode("utf-8")
    if len(data) < COMPRESS_MIN_BYTES:
        return _RAW + data
    return zlib.compress(data, ZLIB_LEVEL)


def decompress_text(blob: bytes | memoryview | None) -> str:
    """Inverse of ``compress_text`` (``None`` -> ``""``)."""
    if blob is None:
        return ""
    data = bytes(blob)
    if data[:1] == _RAW:
        return data[1:].decode("utf-8")
    return zlib.decompress(data).decode("utf-8")


def compress_json(value: Any) -> bytes:
    return compress_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def decompress_json(blob: bytes | memoryview | None) -> Any:
    return json.loads(decompress_text(blob)) if blob is not None else None


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
    imported_count = models.PositiveIntegerField(default=0)
    unchanged_count = models.PositiveIntegerField(default=0)
    updated_count = models.PositiveIntegerField(default=0)
    rejected_count = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
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

    def summary(self) -> str:
        return (
            f"{self.imported_count} imported, {self.unchanged_count} unchanged, "
            f"{self.updated_count} updated, {self.rejected_count} rejected"
        )


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
