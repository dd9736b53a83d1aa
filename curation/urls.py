"""Curation pages (``app_name = "curation"``), mounted under ``/curation/``."""

from django.urls import path

from curation import views, views_problems

app_name = "curation"

urlpatterns = [
    path("problems/", views_problems.problem_list_view, name="problem-list"),
    path("problems/<int:pk>/", views_problems.problem_detail_view, name="problem-detail"),
    path("problems/<int:pk>/tests/<int:order>/<str:part>/", views_problems.problem_test_download_view,
         name="problem-test-download"),
    path("imports/", views.import_view, name="import"),
    path("imports/<int:pk>/", views.import_detail_view, name="import-detail"),
    path("releases/", views.release_list_view, name="release-list"),
    path("releases/new/", views.release_create_view, name="release-create"),
    path("releases/<int:pk>/", views.release_detail_view, name="release-detail"),
]
