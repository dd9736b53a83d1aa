"""Pages of the jobs view: ``/jobs/`` (every kind in one list, live), ``/jobs/<kind>/<id>/`` (one job's
progress and log, live) and ``/jobs/<kind>/<id>/cancel/`` (POST: the kind's own cancel service)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from webapp.jobs import ACTIVE, STATUSES
from webapp.jobs_feed import job_log
from webapp.jobs_kinds import KINDS
from webapp.jobs_selectors import JobFilterError, JobFilters, job_page, job_row_or_404
from webapp.roles import VIEWER, role_required, user_roles


def _live_context(request: HttpRequest) -> dict[str, object]:
    """What the page's script needs to draw a cancel control on a row that arrives live (the server
    checks again on POST): the user's id and roles."""
    return {"viewer_id": request.user.pk, "viewer_roles": " ".join(sorted(user_roles(request.user)))}


@require_GET
@role_required(VIEWER)
def job_list(request: HttpRequest) -> HttpResponse:
    try:
        filters = JobFilters.from_query(request.GET)
    except JobFilterError as exc:
        return HttpResponseBadRequest(str(exc), content_type="text/plain")
    page = job_page(filters=filters, user=request.user)
    rows = [(row, row.can_cancel(request.user)) for row in page.rows]
    context = {
        "page": page,
        "rows": rows,
        "filters": filters,
        "kinds": [(k.key, k.label) for k in KINDS.values()],
        "statuses": [ACTIVE, *STATUSES],
        "query": filters.query(page=1),
        "next_url": request.get_full_path(),
        **_live_context(request),
    }
    if request.GET.get("fragment") == "rows":
        return render(request, "jobs/_rows.html", context)
    return render(request, "jobs/list.html", context)


@require_GET
@role_required(VIEWER)
def job_detail(request: HttpRequest, kind: str, job_id: int) -> HttpResponse:
    row = job_row_or_404(kind, job_id)
    context = {
        "row": row,
        "can_cancel": row.can_cancel(request.user),
        "log": job_log(kind=kind, job_id=job_id),
        "next_url": request.get_full_path(),
        **_live_context(request),
    }
    if request.GET.get("fragment") == "log":
        return render(request, "jobs/_log.html", context)
    return render(request, "jobs/detail.html", context)


@require_POST
@role_required(VIEWER)
def job_cancel(request: HttpRequest, kind: str, job_id: int) -> HttpResponse:
    row = job_row_or_404(kind, job_id)
    cancel = KINDS[kind].cancel
    if cancel is None:
        messages.error(request, f"{row.kind_label} jobs cannot be cancelled; they end on their own.")
    elif not row.can_cancel(request.user) and not row.terminal:
        raise PermissionDenied("only the job's creator or an admin may cancel it")
    elif row.terminal:
        messages.info(request, f"{row.kind_label} #{row.id} had already ended ({row.status}).")
    else:
        cancel(job_id=job_id, user=request.user)
        messages.success(request, f"{row.kind_label} #{row.id}: cancellation requested.")
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = ""
    return redirect(target or "jobs:detail", *(() if target else (kind, job_id)))
