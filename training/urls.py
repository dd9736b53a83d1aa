from django.urls import path

from training import views, views_evaluations, views_insights, views_sweeps

app_name = "training"

urlpatterns = [
    path("runs/", views.run_list, name="run-list"),
    path("insights/", views_insights.insights_page, name="insights"),
    path("runs/new/", views.run_create, name="run-create"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="run-cancel"),
    path("sweeps/", views_sweeps.sweep_list, name="sweep-list"),
    path("sweeps/new/", views_sweeps.sweep_create, name="sweep-create"),
    path("sweeps/<int:sweep_id>/", views_sweeps.sweep_detail, name="sweep-detail"),
    path("sweeps/<int:sweep_id>/cancel/", views_sweeps.sweep_cancel, name="sweep-cancel"),
    path("compare/", views_sweeps.compare, name="compare"),
    path("evaluations/", views_evaluations.evaluation_list, name="model-eval-list"),
    path("evaluations/new/", views_evaluations.evaluation_create, name="model-eval-create"),
    path("evaluations/compare/", views_evaluations.evaluation_compare, name="model-eval-compare"),
    path("evaluations/<int:evaluation_id>/", views_evaluations.evaluation_detail, name="model-eval-detail"),
    path("evaluations/<int:evaluation_id>/cancel/", views_evaluations.evaluation_cancel, name="model-eval-cancel"),
    path("evaluations/<int:evaluation_id>/problems/<int:problem_id>/", views_evaluations.evaluation_problem,
         name="model-eval-problem"),
    path("evaluations/<int:evaluation_id>/pass-rates.jsonl", views_evaluations.evaluation_pass_rates,
         name="model-eval-pass-rates"),
]
