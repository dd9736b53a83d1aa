"""REST API of the curation app (mounted under ``/api/``).

- ``GET /api/problems/`` — paginated (``page``, ``page_size`` <= 500), filtered by ``platform``,
  ``difficulty`` (easy|medium|hard|unknown), ``stage``, ``io_mode``, ``tag``, ``contest_date_from``,
  ``contest_date_to``; ``ordering`` by id, title, rating, contest_date, difficulty, test_count,
  created_at (prefix ``-`` for descending). Lists carry no statements or tests.
- ``GET /api/problems/<id>/`` — statement, limits, tests summary with a few samples, constraint
  results, duplicate links, version history, reference solutions.
- ``GET|POST /api/releases/`` (create: curator), ``GET /api/releases/<id>/``,
  ``GET /api/releases/<id>/export?format=jsonl|parquet`` (streamed; schema in ``curation.export``).
- ``GET|POST /api/imports/`` (POST multipart ``file``, ``format``, ``run_pipeline``: curator),
  ``GET /api/imports/<id>/`` (with the per-row error report), ``POST /api/imports/<id>/resume/`` (curator:
  run a failed import again on its server-side file).
"""

from __future__ import annotations

import tempfile
from typing import Any

import django_filters
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation.export import iter_jsonl, write_parquet
from curation.models import DatasetRelease, Difficulty, ImportBatch, IOMode, Problem, Stage
from curation.selectors import import_batch_list, problem_detail, release_list, tag_filter
from curation.selectors_search import problem_search
from curation.serializers import (
    ImportBatchDetailSerializer,
    ImportBatchSerializer,
    ImportUploadSerializer,
    ProblemDetailSerializer,
    ProblemListSerializer,
    ReleaseCreateSerializer,
    ReleaseSerializer,
)
from curation.services import UploadError, import_batch_create, import_batch_resume, release_create
from webapp.roles import ReadViewerWriteCurator
from webapp.streaming import attachment, file_parts


class StandardPagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class ProblemFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(
        method="filter_search",
        help_text="Search title and statement (PostgreSQL full-text search, web-search syntax: words, "
        '"a phrase", -excluded; results ranked by relevance unless `ordering` is given).',
    )
    platform = django_filters.CharFilter(field_name="platform__name", help_text="Platform key, e.g. leetcode.")
    difficulty = django_filters.ChoiceFilter(
        choices=[(value, label) for value, label in Difficulty.choices if value] + [("unknown", "unknown")],
        method="filter_difficulty",
    )
    stage = django_filters.ChoiceFilter(choices=Stage.choices)
    io_mode = django_filters.ChoiceFilter(choices=IOMode.choices)
    tag = django_filters.CharFilter(method="filter_tag", help_text="Problems having this tag.")
    contest_date_from = django_filters.DateFilter(field_name="contest_date", lookup_expr="gte")
    contest_date_to = django_filters.DateFilter(field_name="contest_date", lookup_expr="lte")

    class Meta:
        model = Problem
        fields = ["q", "platform", "difficulty", "stage", "io_mode", "tag", "contest_date_from", "contest_date_to"]

    def filter_search(self, queryset: Any, name: str, value: str) -> Any:
        return problem_search(queryset, value)

    def filter_difficulty(self, queryset: Any, name: str, value: str) -> Any:
        return queryset.filter(difficulty="" if value == "unknown" else value)

    def filter_tag(self, queryset: Any, name: str, value: str) -> Any:
        return queryset.filter(tag_filter(value))


class ProblemList(generics.ListAPIView):
    """Problems (no statements or tests; see the detail endpoint)."""

    serializer_class = ProblemListSerializer
    pagination_class = StandardPagination
    filterset_class = ProblemFilter
    filter_backends = [django_filters.rest_framework.DjangoFilterBackend, OrderingFilter]
    ordering_fields = ["id", "title", "rating", "contest_date", "difficulty", "test_count", "created_at"]
    ordering = ["id"]

    def get_queryset(self) -> Any:
        return Problem.objects.list_fields()

    def filter_queryset(self, queryset: Any) -> Any:
        """Searches come back best match first (ties by id) unless the request names an ``ordering``."""
        queryset = super().filter_queryset(queryset)
        if self.request.query_params.get("q", "").strip() and not self.request.query_params.get("ordering"):
            queryset = queryset.order_by("-rank", "id")
        return queryset


class ProblemDetail(generics.RetrieveAPIView):
    serializer_class = ProblemDetailSerializer
    queryset = Problem.objects.none()

    def get_object(self) -> Problem:
        try:
            return problem_detail(problem_id=int(self.kwargs["pk"]))
        except Problem.DoesNotExist:
            raise Http404("no such problem") from None


class ReleaseListCreate(generics.ListCreateAPIView):
    """Releases; POST (curator) builds one from a filter spec."""

    permission_classes = [ReadViewerWriteCurator]
    serializer_class = ReleaseSerializer
    pagination_class = StandardPagination
    filter_backends = [OrderingFilter]
    ordering_fields = ["id", "name", "created_at", "problem_count"]
    ordering = ["-id"]

    def get_queryset(self) -> Any:
        return release_list()

    @extend_schema(request=ReleaseCreateSerializer, responses={201: ReleaseSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = ReleaseCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            release = release_create(
                name=data.validated_data["name"], filter_spec=data.validated_data["filter_spec"],
                user=request.user, description=data.validated_data["description"],
                target_hard_share=data.validated_data.get("target_hard_share"),
            )
        except ValueError as exc:
            raise ValidationError({"filter_spec": [str(exc)]}) from exc
        body = ReleaseSerializer(release, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED)


class ReleaseDetail(generics.RetrieveAPIView):
    serializer_class = ReleaseSerializer

    def get_queryset(self) -> Any:
        return release_list()


class JSONLinesRenderer(BaseRenderer):
    """Lets DRF's ``?format=jsonl`` negotiate; the export view streams its own bytes. Errors are JSON."""

    media_type = "application/x-ndjson"
    format = "jsonl"
    charset: str | None = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None) -> bytes:
        return JSONRenderer().render(data)


class ParquetRenderer(JSONLinesRenderer):
    media_type = "application/vnd.apache.parquet"
    format = "parquet"
    charset = None


class ReleaseExport(APIView):
    """Stream the release as JSONL (default) or Parquet. Rows follow ``curation.export``'s schema."""

    renderer_classes = [JSONLinesRenderer, ParquetRenderer, JSONRenderer]

    def handle_exception(self, exc: Exception) -> Response:
        """Errors (404, 401, ...) are JSON whatever format was asked for, as the schema documents them."""
        response = super().handle_exception(exc)
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["jsonl", "parquet"], description="Export format.")],
        responses={(200, "application/x-ndjson"): OpenApiTypes.BINARY,
                   (200, "application/vnd.apache.parquet"): OpenApiTypes.BINARY},
    )
    def get(self, request: Request, pk: int) -> Any:
        release = get_object_or_404(DatasetRelease, pk=pk)
        fmt = request.query_params.get("format", "jsonl")
        stem = f"{release.name}-v{release.version}"
        if fmt == "parquet":
            tmp = tempfile.TemporaryFile(suffix=".parquet")  # closed (and so deleted) by file_parts
            write_parquet(release, tmp)
            tmp.seek(0)
            response = attachment(request, file_parts(tmp), filename=f"{stem}.parquet",
                                  content_type=ParquetRenderer.media_type)
        else:
            response = attachment(request, iter_jsonl(release), filename=f"{stem}.jsonl",
                                  content_type="application/x-ndjson; charset=utf-8")
        response["X-Release-Content-Hash"] = release.content_hash
        return response


@extend_schema_view(get=extend_schema(exclude=True))
class ReleaseExportAlias(ReleaseExport):
    """``.../export/`` with a trailing slash, for clients that add one; documented once without it."""


class ImportListCreate(generics.ListCreateAPIView):
    """Import batches; POST (curator, multipart) uploads a file and runs it as a Celery task."""

    permission_classes = [ReadViewerWriteCurator]
    serializer_class = ImportBatchSerializer
    pagination_class = StandardPagination
    parser_classes = [MultiPartParser, FormParser]
    filter_backends: list[Any] = []

    def get_queryset(self) -> Any:
        return import_batch_list()

    @extend_schema(request={"multipart/form-data": ImportUploadSerializer}, responses={201: ImportBatchDetailSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        data = ImportUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            batch = import_batch_create(
                uploaded_file=data.validated_data["file"], format=data.validated_data["format"],
                user=request.user, run_pipeline=data.validated_data["run_pipeline"],
            )
        except UploadError as exc:
            raise ValidationError({"file": [str(exc)]}) from exc
        batch.refresh_from_db()  # with eager Celery the import has already run
        return Response(ImportBatchDetailSerializer(batch).data, status=status.HTTP_201_CREATED)


class ImportDetail(generics.RetrieveAPIView):
    serializer_class = ImportBatchDetailSerializer
    queryset = ImportBatch.objects.select_related("user")


class ImportResume(APIView):
    """POST (curator): run a failed import again on its server-side file (``import_batch_resume``);
    400 with the reason when it did not fail or its file is gone (an upload: upload it again)."""

    permission_classes = [ReadViewerWriteCurator]

    @extend_schema(request=None, responses={202: ImportBatchDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        get_object_or_404(ImportBatch, pk=pk)
        try:
            batch = import_batch_resume(batch_id=pk)
        except UploadError as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        batch.refresh_from_db()  # with eager Celery the import has already run again
        return Response(ImportBatchDetailSerializer(batch).data, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("problems/", ProblemList.as_view(), name="api-problem-list"),
    path("problems/<int:pk>/", ProblemDetail.as_view(), name="api-problem-detail"),
    path("releases/", ReleaseListCreate.as_view(), name="api-release-list"),
    path("releases/<int:pk>/", ReleaseDetail.as_view(), name="api-release-detail"),
    path("releases/<int:pk>/export", ReleaseExport.as_view(), name="api-release-export"),
    path("releases/<int:pk>/export/", ReleaseExportAlias.as_view()),
    path("imports/", ImportListCreate.as_view(), name="api-import-list"),
    path("imports/<int:pk>/", ImportDetail.as_view(), name="api-import-detail"),
    path("imports/<int:pk>/resume/", ImportResume.as_view(), name="api-import-resume"),
]
