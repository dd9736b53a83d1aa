from django.contrib import admin

from evaluator.models import EvaluationJob


@admin.register(EvaluationJob)
class EvaluationJobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "problem", "progress_done", "progress_total", "created_by", "created_at")
    list_filter = ("kind", "status")
    search_fields = ("id", "problem__title", "created_by__username")
    raw_id_fields = ("problem", "problems", "created_by")  # 20,000+ problems: no select widgets
    readonly_fields = ("created_at", "updated_at", "started_at", "finished_at", "celery_task_id")
