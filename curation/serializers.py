"""DRF serializers of the curation API. List serializers read only ``Problem.objects.list_fields()``."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from curation.importers import FORMATS
from curation.models import (
    ConstraintResult,
    DatasetRelease,
    DuplicateLink,
    ImportBatch,
    Problem,
    ProblemVersion,
    ReferenceSolution,
)
from curation.selectors import problem_sample_tests
from curation.services.uploads import AUTO


class ProblemListSerializer(serializers.ModelSerializer):
    platform = serializers.CharField(source="platform.name", read_only=True)

    class Meta:
        model = Problem
        fields = [
            "id", "slug", "platform", "external_id", "title", "io_mode", "difficulty", "difficulty_label",
            "rating", "contest_date", "tags", "stage", "version", "test_count", "content_hash", "created_at",
        ]
        read_only_fields = fields


class ConstraintResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = ConstraintResult
        fields = ["name", "kind", "status", "reason", "checked_at"]


class DuplicateLinkSerializer(serializers.ModelSerializer):
    duplicate_of_slug = serializers.CharField(source="duplicate_of.slug", read_only=True)

    class Meta:
        model = DuplicateLink
        fields = ["duplicate_of", "duplicate_of_slug", "kind", "similarity", "explanation", "created_at"]


class VersionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ProblemVersion
        fields = ["version", "content_hash", "title", "test_count", "import_batch", "created_at"]


class SolutionSerializer(serializers.ModelSerializer):
    class Meta:
        model = ReferenceSolution
        fields = ["id", "language", "verified", "verified_at", "verdict", "verdict_reason"]


class TestSampleSerializer(serializers.Serializer):
    order = serializers.IntegerField()
    public = serializers.BooleanField()
    input = serializers.CharField()
    output = serializers.CharField()


class TestsSummarySerializer(serializers.Serializer):
    count = serializers.IntegerField()
    public = serializers.IntegerField()
    train_test_limit = serializers.IntegerField(allow_null=True)
    samples = TestSampleSerializer(many=True)


class ProblemDetailSerializer(ProblemListSerializer):
    tests = serializers.SerializerMethodField()
    constraint_results = ConstraintResultSerializer(many=True, read_only=True)
    duplicate_links = DuplicateLinkSerializer(many=True, read_only=True)
    versions = VersionSerializer(many=True, read_only=True)
    solutions = SolutionSerializer(many=True, read_only=True)

    class Meta(ProblemListSerializer.Meta):
        fields = ProblemListSerializer.Meta.fields + [
            "statement", "statement_hash", "fn_name", "starter_code", "time_limit_s", "memory_mb", "url",
            "license", "checker", "public_test_count", "train_test_limit", "difficulty_source", "updated_at",
            "tests", "constraint_results", "duplicate_links", "versions", "solutions",
        ]
        read_only_fields = fields

    @extend_schema_field(TestsSummarySerializer)
    def get_tests(self, obj: Problem) -> dict[str, Any]:
        summary = {
            "count": obj.test_count, "public": obj.public_test_count, "train_test_limit": obj.train_test_limit,
            "samples": problem_sample_tests(problem=obj, limit=3),
        }
        return TestsSummarySerializer(summary).data


class ImportBatchSerializer(serializers.ModelSerializer):
    user = serializers.CharField(source="user.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = ImportBatch
        fields = [
            "id", "format", "filename", "user", "status", "message", "run_pipeline", "total_rows",
            "imported_count", "unchanged_count", "updated_count", "rejected_count", "created_at", "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class ImportBatchDetailSerializer(ImportBatchSerializer):
    class Meta(ImportBatchSerializer.Meta):
        fields = ImportBatchSerializer.Meta.fields + ["errors"]
        read_only_fields = fields


class ImportUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A data file, or a .zip of ICPC/Kattis problem packages.")
    format = serializers.ChoiceField(choices=[AUTO, *sorted(FORMATS)], default=AUTO)
    run_pipeline = serializers.BooleanField(
        default=True, help_text="Normalize and check constraints of the imported problems afterwards."
    )


class ReleaseSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True, default=None)
    export_jsonl = serializers.SerializerMethodField()
    export_parquet = serializers.SerializerMethodField()

    class Meta:
        model = DatasetRelease
        fields = [
            "id", "name", "version", "description", "filter_spec", "content_hash", "problem_count",
            "counts_by_platform", "counts_by_difficulty", "created_by", "created_at", "export_jsonl",
            "export_parquet", "target_hard_share", "counts_before_selection",
        ]
        read_only_fields = fields

    def _export_url(self, obj: DatasetRelease, fmt: str) -> str:
        path = f"/api/releases/{obj.pk}/export?format={fmt}"
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    def get_export_jsonl(self, obj: DatasetRelease) -> str:
        return self._export_url(obj, "jsonl")

    def get_export_parquet(self, obj: DatasetRelease) -> str:
        return self._export_url(obj, "parquet")


class ReleaseCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    filter_spec = serializers.JSONField(
        default=dict,
        help_text="ReleaseFilter: platforms, difficulties, stages, io_modes, tags (any of), contest_date_from, "
        "contest_date_to, include_undated, exclude_duplicates.",
    )
    target_hard_share = serializers.FloatField(
        required=False, allow_null=True, min_value=0.01, max_value=1.0, default=None,
        help_text="Drop the easiest problems until hard ones reach this share (e.g. 0.5).",
    )
