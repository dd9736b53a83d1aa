"""The jobs view (``app_name = "jobs"``), mounted under ``/jobs/``."""

from django.urls import path

from webapp import jobs_views as views

app_name = "jobs"

urlpatterns = [
    path("", views.job_list, name="list"),
    path("<slug:kind>/<int:job_id>/", views.job_detail, name="detail"),
    path("<slug:kind>/<int:job_id>/cancel/", views.job_cancel, name="cancel"),
]
