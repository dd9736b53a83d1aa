from django.urls import path

from training import views, views_evaluations

app_name = "training"

urlpatterns = [
    path("runs/", views.run_list, name="run-list"),
    path("runs/new/", views.run_create, name="run-create"),
    path("runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path("runs/<int:run_id>/cancel/", views.run_cancel, name="run-cancel"),
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
