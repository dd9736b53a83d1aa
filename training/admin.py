from django.contrib import admin

from training.models import (
    Checkpoint,
    MetricChunk,
    ModelEvaluation,
    ModelEvaluationProblem,
    RunSample,
    Sweep,
    TrainingRun,
)


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


@admin.register(Sweep)
class SweepAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "created_by", "created_at", "cancel_requested"]
    search_fields = ["name"]
    readonly_fields = ["cloned_from", "created_at"]


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


@admin.register(ModelEvaluation)
class ModelEvaluationAdmin(admin.ModelAdmin):
    list_display = ["id", "engine", "model", "release", "status", "samples_done", "samples_total", "created_by",
                    "created_at"]
    list_filter = ["status", "engine"]
    search_fields = ["name", "model", "reason"]
    readonly_fields = ["summary", "selection", "contamination_report", "attempts", "lease_owner", "heartbeat_at",
                       "celery_task_id", "started_at", "finished_at"]


@admin.register(ModelEvaluationProblem)
class ModelEvaluationProblemAdmin(admin.ModelAdmin):
    list_display = ["evaluation", "key", "passed", "attempts", "infra_errors", "contaminated"]
    list_filter = ["contaminated"]
    search_fields = ["key"]
