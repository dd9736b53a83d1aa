from __future__ import annotations

from django.apps import apps
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.defaults import page_not_found

from webapp.roles import VIEWER, role_required, user_roles

#: (label, app.Model) counted on the dashboard
_DASHBOARD_COUNTS = (
    ("Problems", "curation.Problem"),
    ("Releases", "curation.DatasetRelease"),
    ("Evaluation jobs", "evaluator.EvaluationJob"),
    ("Training runs", "training.TrainingRun"),
)


@role_required(VIEWER)
def home(request: HttpRequest) -> HttpResponse:
    counts = []
    for label, model_name in _DASHBOARD_COUNTS:
        try:
            model = apps.get_model(model_name)
        except LookupError:
            continue
        counts.append((label, model.objects.count()))
    return render(request, "home.html", {"counts": counts, "roles": sorted(user_roles(request.user))})


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """``handler404``: API paths answer in the API's JSON error shape, pages with the HTML page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return page_not_found(request, exception or Exception("not found"))
