from django.contrib import admin

from training.models import Checkpoint, MetricChunk, RunSample, TrainingRun


class CheckpointInline(admin.TabularInline):
    model = Checkpoint
    extra = 0
    readonly_fields = ["step", "path", "created_at"]


@admin.register(TrainingRun)
class TrainingRunAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "status", "last_step", "node", "attempts", "created_by", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "node", "celery_task_id"]
    readonly_fields = ["latest_metrics", "last_step", "attempts", "celery_task_id", "started_at", "finished_at"]
    inlines = [CheckpointInline]


@admin.register(MetricChunk)
class MetricChunkAdmin(admin.ModelAdmin):
    list_display = ["run", "name", "chunk", "count", "min_step", "max_step"]
    list_filter = ["name"]
    exclude = ["steps", "values"]  # packed binary arrays: not editable by hand
    readonly_fields = ["run", "name", "chunk", "count", "min_step", "max_step"]


@admin.register(RunSample)
class RunSampleAdmin(admin.ModelAdmin):
    list_display = ["run", "step", "index", "verdict", "reward", "length", "truncated", "masked"]
    list_filter = ["verdict", "truncated", "masked"]
