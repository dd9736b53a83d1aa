"""Django admin for curation models (read-mostly: blobs and hashes are not editable)."""

from __future__ import annotations

from django.contrib import admin

from curation.models import (
    ConstraintResult,
    DatasetRelease,
    DuplicateLink,
    ImportBatch,
    Problem,
    ProblemVersion,
    ReferenceSolution,
    ReleaseItem,
    SourcePlatform,
    TestCase,
)


@admin.register(SourcePlatform)
class SourcePlatformAdmin(admin.ModelAdmin):
    list_display = ["name", "display_name", "url"]
    search_fields = ["name", "display_name"]


class ConstraintResultInline(admin.TabularInline):
    model = ConstraintResult
    extra = 0
    readonly_fields = ["name", "kind", "status", "reason", "checked_at"]


class ReferenceSolutionInline(admin.StackedInline):
    model = ReferenceSolution
    extra = 0


@admin.register(Problem)
class ProblemAdmin(admin.ModelAdmin):
    list_display = ["id", "slug", "platform", "difficulty", "stage", "version", "test_count", "contest_date"]
    list_filter = ["platform", "difficulty", "stage", "io_mode"]
    search_fields = ["slug", "title", "external_id"]
    readonly_fields = ["content_hash", "statement_hash", "version", "test_count", "public_test_count", "import_batch"]
    inlines = [ConstraintResultInline, ReferenceSolutionInline]
    list_select_related = ["platform"]

    def get_queryset(self, request):  # type: ignore[no-untyped-def]
        return super().get_queryset(request).defer("minhash")


@admin.register(ProblemVersion)
class ProblemVersionAdmin(admin.ModelAdmin):
    list_display = ["problem", "version", "content_hash", "test_count", "created_at"]
    readonly_fields = ["problem", "version", "content_hash", "title", "test_count", "import_batch"]
    exclude = ["record_z"]
    raw_id_fields = ["problem"]

    def get_queryset(self, request):  # type: ignore[no-untyped-def]
        return super().get_queryset(request).defer("record_z")


@admin.register(TestCase)
class TestCaseAdmin(admin.ModelAdmin):
    list_display = ["problem", "order", "public"]
    raw_id_fields = ["problem"]
    exclude = ["input_z", "output_z"]
    readonly_fields = ["input", "output"]


@admin.register(DuplicateLink)
class DuplicateLinkAdmin(admin.ModelAdmin):
    list_display = ["problem", "duplicate_of", "kind", "similarity", "explanation"]
    list_filter = ["kind"]
    raw_id_fields = ["problem", "duplicate_of"]


@admin.register(ConstraintResult)
class ConstraintResultAdmin(admin.ModelAdmin):
    list_display = ["problem", "name", "kind", "status", "reason"]
    list_filter = ["kind", "status", "name"]
    raw_id_fields = ["problem"]


@admin.register(ImportBatch)
class ImportBatchAdmin(admin.ModelAdmin):
    list_display = ["id", "format", "filename", "status", "imported_count", "updated_count", "rejected_count",
                    "created_at"]
    list_filter = ["status", "format"]


@admin.register(DatasetRelease)
class DatasetReleaseAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "problem_count", "content_hash", "created_by", "created_at"]
    readonly_fields = ["content_hash", "problem_count", "counts_by_platform", "counts_by_difficulty"]


@admin.register(ReleaseItem)
class ReleaseItemAdmin(admin.ModelAdmin):
    list_display = ["release", "problem", "content_hash", "difficulty", "stage"]
    list_filter = ["release"]
    raw_id_fields = ["release", "problem", "problem_version"]
