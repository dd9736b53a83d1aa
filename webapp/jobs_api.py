"""REST API of the jobs view (mounted under ``/api/``).

- ``GET /api/jobs/`` — every kind's jobs, newest first (any role), with the filters of ``/jobs/``:
  ``kind``, ``status`` (``active`` = queued or running), ``mine=1``, ``page``. Each item is the
  ``jobs.update`` row (``webapp.jobs.JobRow.event``) plus ``can_cancel`` for the caller.
- ``GET /api/jobs/<kind>/<id>/`` — one job's row and its log lines (any role).
- ``POST /api/jobs/<kind>/<id>/cancel/`` — the kind's own cancel service under the owner rule: 200 with
  the row, 403 for anyone but the creator or an admin, 409 for a kind that cannot be cancelled.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from webapp.jobs import JobRow
from webapp.jobs_feed import job_log
from webapp.jobs_kinds import KINDS
from webapp.jobs_selectors import JobFilterError, JobFilters, job_page, job_row, job_row_or_404
from webapp.roles import VIEWER, IsViewer


def _item(row: JobRow, user: Any) -> dict[str, Any]:
    return {**row.event(), "can_cancel": row.can_cancel(user)}


class JobList(APIView):
    permission_classes = [IsViewer]

    @extend_schema(
        operation_id="jobs_list",
        parameters=[
            OpenApiParameter("kind", str, enum=list(KINDS)),
            OpenApiParameter(
                "status", str, enum=["active", "queued", "running", "succeeded", "failed", "cancelled"]
            ),
            OpenApiParameter("mine", bool),
            OpenApiParameter("page", int),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        try:
            filters = JobFilters.from_query(request.query_params)
        except JobFilterError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        page = job_page(filters=filters, user=request.user)
        return Response(
            {
                "count": page.count,
                "page": page.number,
                "num_pages": page.num_pages,
                "results": [_item(row, request.user) for row in page.rows],
            }
        )


class JobDetail(APIView):
    permission_classes = [IsViewer]

    @extend_schema(operation_id="jobs_retrieve", responses=OpenApiTypes.OBJECT)
    def get(self, request: Request, kind: str, job_id: int) -> Response:
        row = job_row_or_404(kind, job_id)
        return Response(
            {**_item(row, request.user), "log": [e.as_dict() for e in job_log(kind=kind, job_id=job_id)]}
        )


class IsViewerAnyMethod(IsViewer):
    """Any role, for reads and for the cancel post (whose service applies the owner rule)."""

    write_role = VIEWER


class JobCancel(APIView):
    """Any role may ask; the owner rule decides (the kind's own service raises ``PermissionDenied``)."""

    permission_classes = [IsViewerAnyMethod]

    @extend_schema(operation_id="jobs_cancel", request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request, kind: str, job_id: int) -> Response:
        row = job_row_or_404(kind, job_id)
        cancel = KINDS[kind].cancel
        if cancel is None:
            return Response(
                {"detail": f"{row.kind_label} jobs cannot be cancelled"}, status=status.HTTP_409_CONFLICT
            )
        if not row.terminal:
            if not row.can_cancel(request.user):
                raise PermissionDenied("only the job's creator or an admin may cancel it")
            cancel(job_id=job_id, user=request.user)
        return Response(_item(job_row(kind=kind, job_id=job_id), request.user))


urlpatterns = [
    path("jobs/", JobList.as_view(), name="api-jobs"),
    path("jobs/<slug:kind>/<int:job_id>/", JobDetail.as_view(), name="api-job-detail"),
    path("jobs/<slug:kind>/<int:job_id>/cancel/", JobCancel.as_view(), name="api-job-cancel"),
]
