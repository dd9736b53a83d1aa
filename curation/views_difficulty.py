"""Pages of the difficulty matrix: scorings (live progress, comparison), pass-rate sets, calibrations.
Viewers read; curators create, cancel (own scorings; admins any) and apply."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from curation.difficulty import DIMENSION_LABELS, DIMENSIONS
from curation.forms_difficulty import CalibrationForm, PassRateUploadForm, ScoringForm
from curation.models import CalibratedDifficulty, PassRate, ScoringResult
from curation.selectors_difficulty import (
    calibration_chart_svg,
    calibration_list,
    pass_rate_set_list,
    scoring_compare,
    scoring_list,
)
from curation.services.calibration import (
    calibration_apply,
    calibration_create,
    pass_rate_set_from_evaluation,
    pass_rate_set_upload,
)
from curation.services.difficulty import scoring_cancel, scoring_create
from webapp.roles import CURATOR, VIEWER, can_manage, has_role, role_required

PAGE_SIZE = 50


@role_required(VIEWER)
def scoring_list_view(request: HttpRequest) -> HttpResponse:
    form = ScoringForm(request.POST or None)
    if request.method == "POST":
        if not has_role(request.user, CURATOR):
            raise PermissionDenied("the curator role is required")
        if form.is_valid():
            try:
                job = scoring_create(backend=form.cleaned_data["backend"], model=form.cleaned_data["model"],
                                     samples=form.cleaned_data["samples"], weights=form.weights(),
                                     release_id=form.cleaned_data["release"], user=request.user)
            except ValueError as exc:
                form.add_error(None, str(exc))
            else:
                messages.success(request, f"Scoring #{job.pk} of {job.progress_total} problems queued.")
                return redirect("difficulty:scoring-detail", pk=job.pk)
    page = Paginator(scoring_list(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "curation/difficulty/scoring_list.html", {"page": page, "form": form})


@role_required(VIEWER)
def scoring_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(scoring_list(), pk=pk)
    results = ScoringResult.objects.filter(scoring=job).select_related("problem").only(
        "id", "score", "dimensions", "error", "problem__id", "problem__title").order_by("-score", "problem_id")
    page = Paginator(results, PAGE_SIZE).get_page(request.GET.get("page"))
    for r in page:
        r.dims = [r.dimensions.get(d) for d in DIMENSIONS]  # type: ignore[attr-defined]
    return render(request, "curation/difficulty/scoring_detail.html", {
        "job": job, "page": page, "ws_path": f"/ws/scorings/{job.pk}/",
        "dimension_labels": [DIMENSION_LABELS[d] for d in DIMENSIONS],
        "can_cancel": not job.is_finished and can_manage(request.user, job.created_by_id, roles=(CURATOR,)),
        "others": scoring_list().exclude(pk=job.pk).filter(status="succeeded")[:50],
    })


@require_POST
@role_required(CURATOR)
def scoring_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    scoring_cancel(scoring_id=get_object_or_404(scoring_list(), pk=pk).pk, user=request.user)
    messages.success(request, f"Scoring #{pk} cancelled.")
    return redirect("difficulty:scoring-detail", pk=pk)


@role_required(VIEWER)
def scoring_compare_view(request: HttpRequest) -> HttpResponse:
    try:
        a_id, b_id = int(request.GET.get("a", "")), int(request.GET.get("b", ""))
    except ValueError:
        return render(request, "curation/difficulty/scoring_compare.html",
                      {"error": "choose two scorings (a and b)", "scorings": scoring_list()[:100]}, status=400)
    a, b = get_object_or_404(scoring_list(), pk=a_id), get_object_or_404(scoring_list(), pk=b_id)
    comparison = scoring_compare(a=a, b=b)
    diffs = [(DIMENSION_LABELS[d], comparison.dimension_diff.get(d)) for d in DIMENSIONS]
    return render(request, "curation/difficulty/scoring_compare.html",
                  {"a": a, "b": b, "c": comparison, "diffs": diffs, "scorings": scoring_list()[:100]})


@role_required(VIEWER)
def calibration_list_view(request: HttpRequest) -> HttpResponse:
    form = CalibrationForm(request.POST if request.POST.get("form") == "calibration" else None)
    upload = PassRateUploadForm(request.POST if request.POST.get("form") == "passrates" else None,
                                request.FILES or None)
    if request.method == "POST":
        if not has_role(request.user, CURATOR):
            raise PermissionDenied("the curator role is required")
        if request.POST.get("form") == "calibration" and form.is_valid():
            try:
                calibration = calibration_create(
                    name=form.cleaned_data["name"], scoring_id=form.cleaned_data["scoring"],
                    pass_rate_set_id=form.cleaned_data["pass_rate_set"], method=form.cleaned_data["method"],
                    easy_below=form.cleaned_data["easy_below"], hard_from=form.cleaned_data["hard_from"],
                    user=request.user)
            except ValueError as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("difficulty:calibration-detail", pk=calibration.pk)
        elif request.POST.get("form") == "passrates" and upload.is_valid():
            data = upload.cleaned_data
            try:
                if data.get("evaluation_id"):
                    prs = pass_rate_set_from_evaluation(evaluation_id=data["evaluation_id"], user=request.user,
                                                        name=data["name"])
                else:
                    prs = pass_rate_set_upload(name=data["name"], target_model=data["target_model"],
                                               lines=data["file"].read().splitlines(), user=request.user,
                                               filename=data["file"].name or "")
            except (ValueError, UnicodeDecodeError) as exc:
                upload.add_error(None, str(exc))
            else:
                messages.success(request, f"Pass-rate set {prs} stored: {prs.rates.count()} problems matched, "
                                          f"{prs.unmatched_count} rows unmatched.")
                return redirect("difficulty:calibration-list")
    return render(request, "curation/difficulty/calibration_list.html", {
        "calibrations": calibration_list()[:100], "pass_rate_sets": pass_rate_set_list()[:100],
        "form": form, "upload": upload,
    })


@role_required(VIEWER)
def calibration_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    calibration = get_object_or_404(calibration_list().defer(None), pk=pk)
    rows = CalibratedDifficulty.objects.filter(calibration=calibration).select_related("problem").only(
        "problem__id", "problem__title", "score", "predicted_pass_rate", "measured_passed", "measured_attempts",
        "difficulty", "bucket").order_by("-difficulty", "problem_id")
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "curation/difficulty/calibration_detail.html", {
        "calibration": calibration, "page": page,
        "chart": mark_safe(calibration_chart_svg(calibration=calibration)),  # numbers and fixed text only
        "measured": PassRate.objects.filter(pass_rate_set=calibration.pass_rate_set_id).count(),
    })


@require_POST
@role_required(CURATOR)
def calibration_apply_view(request: HttpRequest, pk: int) -> HttpResponse:
    calibration = get_object_or_404(calibration_list(), pk=pk)
    written = calibration_apply(calibration_id=calibration.pk, user=request.user)
    messages.success(request, f"{written} problems now carry the buckets of {calibration}.")
    return redirect("difficulty:calibration-detail", pk=pk)
