"""Server-rendered curation pages. Viewers read everything; curators import and create releases.
Problem pages live in ``views_problems``."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from curation.forms import ImportForm, ReleaseCreateForm
from curation.models import DatasetRelease, ImportBatch, ReleaseItem
from curation.selectors import import_batch_list, release_list
from curation.selectors_review import release_review_stats
from curation.services import UploadError, import_batch_create, release_create
from webapp.roles import CURATOR, VIEWER, role_required

PAGE_SIZE = 50


@role_required(CURATOR)
def import_view(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        form = ImportForm(request.POST, request.FILES)
        if form.is_valid():
            try:
                batch = import_batch_create(
                    uploaded_file=form.cleaned_data["file"], format=form.cleaned_data["format"],
                    user=request.user, run_pipeline=form.cleaned_data["run_pipeline"],
                )
            except UploadError as exc:
                form.add_error("file", str(exc))
            else:
                messages.success(request, f"Import #{batch.pk} of {batch.filename} started.")
                return redirect("curation:import-detail", pk=batch.pk)
    else:
        form = ImportForm()
    return render(request, "curation/import.html", {"form": form, "batches": import_batch_list()[:20]})


@role_required(VIEWER)
def import_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    batch = get_object_or_404(ImportBatch.objects.select_related("user"), pk=pk)
    return render(request, "curation/import_detail.html", {"batch": batch})


@role_required(VIEWER)
def release_list_view(request: HttpRequest) -> HttpResponse:
    page = Paginator(release_list(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "curation/release_list.html", {"page": page})


@role_required(VIEWER)
def release_detail_view(request: HttpRequest, pk: int) -> HttpResponse:
    release = get_object_or_404(release_list(), pk=pk)
    items = (
        ReleaseItem.objects.filter(release=release)
        .select_related("problem")
        .only("id", "content_hash", "difficulty", "stage", "platform", "problem__id", "problem__title",
              "problem__slug", "problem_version_id")
        .order_by("id")
    )
    page = Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "curation/release_detail.html", {
        "release": release, "page": page, "review": release_review_stats(release_id=release.pk),
        "dropped": Paginator(release.dropped or [], PAGE_SIZE).get_page(request.GET.get("dropped_page")),
        "hard_share": _hard_shares(release),
    })


def _hard_shares(release: DatasetRelease) -> tuple[float, float] | None:
    """Hard share of the filter's problems before the hard-share selection and of the release after."""
    before = release.counts_before_selection or {}
    if release.target_hard_share is None or not sum(before.values()) or not release.problem_count:
        return None
    hard_after = (release.counts_by_difficulty or {}).get("hard", 0)
    return before.get("hard", 0) / sum(before.values()), hard_after / release.problem_count


@role_required(CURATOR)
def release_create_view(request: HttpRequest) -> HttpResponse:
    form = ReleaseCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            release = release_create(
                name=form.cleaned_data["name"], filter_spec=form.cleaned_data["filter"], user=request.user,
                description=form.cleaned_data.get("description") or "",
                target_hard_share=form.cleaned_data.get("target_hard_share"),
            )
        except ValueError as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Release {release} created with {release.problem_count} problems.")
            return redirect("curation:release-detail", pk=release.pk)
    return render(request, "curation/release_create.html", {"form": form})

