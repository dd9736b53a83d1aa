"""Difficulty and spot-check pages (``app_name = "difficulty"``), mounted under ``/curation/``."""

from django.urls import path

from curation import views_difficulty as d
from curation import views_review as r

app_name = "difficulty"

urlpatterns = [
    path("scorings/", d.scoring_list_view, name="scoring-list"),
    path("scorings/compare/", d.scoring_compare_view, name="scoring-compare"),
    path("scorings/<int:pk>/", d.scoring_detail_view, name="scoring-detail"),
    path("scorings/<int:pk>/cancel/", d.scoring_cancel_view, name="scoring-cancel"),
    path("calibrations/", d.calibration_list_view, name="calibration-list"),
    path("calibrations/<int:pk>/", d.calibration_detail_view, name="calibration-detail"),
    path("calibrations/<int:pk>/apply/", d.calibration_apply_view, name="calibration-apply"),
    path("review/", r.queue_list_view, name="queue-list"),
    path("review/adjudication/", r.adjudication_view, name="adjudication"),
    path("review/<int:pk>/", r.queue_detail_view, name="queue-detail"),
    path("review/<int:pk>/review/", r.review_view, name="review"),
    path("review/items/<int:item_id>/verdict/", r.verdict_view, name="verdict"),
]
