from django.urls import path

from evaluator import views

app_name = "evaluator"

urlpatterns = [
    path("jobs/", views.job_list_page, name="job-list"),
    path("jobs/<int:job_id>/", views.job_detail_page, name="job-detail"),
    path("jobs/<int:job_id>/cancel/", views.job_cancel_page, name="job-cancel"),
    path("judge/", views.judge_page, name="judge"),
    path("verify/", views.verify_page, name="verify"),
]
