"""REST API of the difficulty matrix and spot-checks (mounted under ``/api/``). Viewers read,
curators write; cancelling a scoring follows the owner rule (its creator or an admin).

- ``GET|POST /api/scorings/``, ``GET /api/scorings/<id>/``, ``GET /api/scorings/<id>/results/`` (paginated),
  ``POST /api/scorings/<id>/cancel/``
- ``GET|POST /api/pass-rate-sets/`` (POST multipart ``name``, ``target_model``, ``file`` (JSONL
  ``{platform, external_id, passed, attempts}``) or ``name`` + ``evaluation_id``), ``GET /api/pass-rate-sets/<id>/``
- ``GET|POST /api/calibrations/``, ``GET /api/calibrations/<id>/``, ``GET /api/calibrations/<id>/problems/``
  (paginated per-problem difficulties), ``POST /api/calibrations/<id>/apply/``
- ``GET|POST /api/review-queues/``, ``GET /api/review-queues/<id>/`` (with ``stats``),
  ``GET /api/review-queues/<id>/next/`` (curator; 204 when done), ``POST /api/review-items/<id>/verdict/``
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from curation.api import StandardPagination
from curation.models import (
    CalibratedDifficulty,
    Calibration,
    PassRateSet,
    ReviewItem,
    ReviewQueue,
    ScoringJob,
    ScoringResult,
)
from curation.selectors_difficulty import calibration_list, pass_rate_set_list, scoring_list
from curation.selectors_review import queue_stats, review_queue_list
from curation.serializers_difficulty import (
    CalibratedDifficultySerializer,
    CalibrationCreateSerializer,
    CalibrationSerializer,
    PassRateSetSerializer,
    PassRateUploadSerializer,
    ReviewItemSerializer,
    ReviewQueueCreateSerializer,
    ReviewQueueSerializer,
    ScoringCreateSerializer,
    ScoringResultSerializer,
    ScoringSerializer,
    VerdictSerializer,
)
from curation.services.calibration import (
    calibration_apply,
    calibration_create,
    pass_rate_set_from_evaluation,
    pass_rate_set_upload,
)
from curation.services.difficulty import scoring_cancel, scoring_create
from curation.services.review import review_next_item, review_queue_create, review_verdict_submit
from webapp.roles import IsCurator, ReadViewerWriteCurator


def field_error(exc: ValueError, default: str = "non_field_errors") -> ValidationError:
    """A service's ``"field: message"`` ValueError as a 400 naming that field."""
    text = str(exc)
    head, sep, rest = text.partition(": ")
    if sep and head.replace("_", "").replace("/", "").isalnum() and " " not in head:
        return ValidationError({head: [rest]})
    return ValidationError({default: [text]})


def _valid(serializer_class: Any, data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ScoringListCreate(generics.ListAPIView):
    permission_classes = [ReadViewerWriteCurator]
    serializer_class = ScoringSerializer
    pagination_class = StandardPagination

    def get_queryset(self) -> Any:
        return scoring_list()

    @extend_schema(request=ScoringCreateSerializer, responses={201: ScoringSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(ScoringCreateSerializer, request.data)
        try:
            job = scoring_create(
                backend=data["backend"], model=data.get("model", ""), samples=data["samples"],
                weights=data.get("weights"), release_id=data.get("release"), problem_ids=data.get("problem_ids"),
                filter_spec=data.get("filter_spec"), user=request.user,
            )
        except ValueError as exc:
            raise field_error(exc) from exc
        return Response(ScoringSerializer(job).data, status=status.HTTP_201_CREATED)


class ScoringDetail(APIView):
    permission_classes = [ReadViewerWriteCurator]

    @extend_schema(responses={200: ScoringSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(ScoringSerializer(get_object_or_404(scoring_list(), pk=pk)).data)


class ScoringResultList(generics.ListAPIView):
    """Per-problem scores of one scoring (paginated, by problem id)."""

    serializer_class = ScoringResultSerializer
    pagination_class = StandardPagination

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # schema generation: no pk, only the model
            return ScoringResult.objects.none()
        job = get_object_or_404(ScoringJob, pk=self.kwargs["pk"])
        return ScoringResult.objects.filter(scoring=job).order_by("problem_id")


class ScoringCancel(APIView):
    permission_classes = [IsCurator]

    @extend_schema(request=None, responses={200: ScoringSerializer})
    def post(self, request: Request, pk: int) -> Response:
        get_object_or_404(ScoringJob, pk=pk)
        return Response(ScoringSerializer(scoring_cancel(scoring_id=pk, user=request.user)).data)


class PassRateSetListCreate(generics.ListAPIView):
    permission_classes = [ReadViewerWriteCurator]
    serializer_class = PassRateSetSerializer
    pagination_class = StandardPagination
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    def get_queryset(self) -> Any:
        return pass_rate_set_list()

    @extend_schema(request=PassRateUploadSerializer, responses={201: PassRateSetSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(PassRateUploadSerializer, request.data)
        try:
            if data.get("evaluation_id"):
                prs = pass_rate_set_from_evaluation(evaluation_id=data["evaluation_id"], user=request.user,
                                                    name=data["name"])
            else:
                upload = data["file"]
                prs = pass_rate_set_upload(name=data["name"], target_model=data["target_model"],
                                           lines=upload.read().splitlines(), user=request.user,
                                           filename=upload.name or "")
        except UnicodeDecodeError as exc:
            raise ValidationError({"file": ["the file is not UTF-8 text"]}) from exc
        except ValueError as exc:
            raise field_error(exc, default="file") from exc
        return Response(PassRateSetSerializer(prs).data, status=status.HTTP_201_CREATED)


class PassRateSetDetail(generics.RetrieveAPIView):
    serializer_class = PassRateSetSerializer
    queryset = PassRateSet.objects.all()


class CalibrationListCreate(generics.ListAPIView):
    permission_classes = [ReadViewerWriteCurator]
    serializer_class = CalibrationSerializer
    pagination_class = StandardPagination

    def get_queryset(self) -> Any:
        return Calibration.objects.all()

    @extend_schema(request=CalibrationCreateSerializer, responses={201: CalibrationSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(CalibrationCreateSerializer, request.data)
        try:
            calibration = calibration_create(
                name=data["name"], scoring_id=data["scoring"], pass_rate_set_id=data["pass_rate_set"],
                method=data["method"], easy_below=data["easy_below"], hard_from=data["hard_from"], user=request.user,
            )
        except ValueError as exc:
            raise field_error(exc) from exc
        return Response(CalibrationSerializer(calibration).data, status=status.HTTP_201_CREATED)


class CalibrationDetail(APIView):
    @extend_schema(responses={200: CalibrationSerializer})
    def get(self, request: Request, pk: int) -> Response:
        return Response(CalibrationSerializer(get_object_or_404(calibration_list().defer(None), pk=pk)).data)


class CalibratedDifficultyList(generics.ListAPIView):
    """Per-problem score, predicted/measured pass rate, difficulty and bucket (paginated)."""

    serializer_class = CalibratedDifficultySerializer
    pagination_class = StandardPagination

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # schema generation: no pk, only the model
            return CalibratedDifficulty.objects.none()
        calibration = get_object_or_404(Calibration, pk=self.kwargs["pk"])
        return CalibratedDifficulty.objects.filter(calibration=calibration).order_by("problem_id")


class CalibrationApply(APIView):
    permission_classes = [IsCurator]

    @extend_schema(request=None, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request, pk: int) -> Response:
        get_object_or_404(Calibration, pk=pk)
        return Response({"calibration": pk, "problems_updated": calibration_apply(calibration_id=pk, user=request.user)})


class ReviewQueueListCreate(generics.ListAPIView):
    permission_classes = [ReadViewerWriteCurator]
    serializer_class = ReviewQueueSerializer
    pagination_class = StandardPagination

    def get_queryset(self) -> Any:
        return review_queue_list()

    @extend_schema(request=ReviewQueueCreateSerializer, responses={201: ReviewQueueSerializer})
    def post(self, request: Request) -> Response:
        data = _valid(ReviewQueueCreateSerializer, request.data)
        try:
            queue = review_queue_create(
                name=data["name"], release_id=data.get("release"), filter_spec=data.get("filter_spec"),
                sample_size=data["sample_size"], double_review_share=data["double_review_share"],
                seed=data["seed"], user=request.user,
            )
        except ValueError as exc:
            raise field_error(exc) from exc
        return Response(ReviewQueueSerializer(queue).data, status=status.HTTP_201_CREATED)


class ReviewQueueDetail(APIView):
    @extend_schema(responses={200: ReviewQueueSerializer})
    def get(self, request: Request, pk: int) -> Response:
        queue = get_object_or_404(ReviewQueue, pk=pk)
        stats = asdict(queue_stats(queue=queue))
        return Response({**ReviewQueueSerializer(queue).data, "stats": stats})


class ReviewQueueNext(APIView):
    permission_classes = [IsCurator]

    @extend_schema(responses={200: ReviewItemSerializer, 204: None})
    def get(self, request: Request, pk: int) -> Response:
        get_object_or_404(ReviewQueue, pk=pk)
        item = review_next_item(queue_id=pk, user=request.user)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(ReviewItemSerializer(item).data)


class ReviewVerdictCreate(APIView):
    permission_classes = [IsCurator]

    @extend_schema(request=VerdictSerializer, responses={201: OpenApiTypes.OBJECT})
    def post(self, request: Request, pk: int) -> Response:
        get_object_or_404(ReviewItem, pk=pk)
        data = _valid(VerdictSerializer, request.data)
        try:
            row = review_verdict_submit(item_id=pk, user=request.user, verdict=data["verdict"],
                                        reason_codes=data["reason_codes"], note=data["note"])
        except ValueError as exc:
            raise field_error(exc) from exc
        return Response({"item": pk, "verdict": row.verdict, "reason_codes": row.reason_codes, "note": row.note},
                        status=status.HTTP_201_CREATED)


urlpatterns = [
    path("scorings/", ScoringListCreate.as_view(), name="api-scoring-list"),
    path("scorings/<int:pk>/", ScoringDetail.as_view(), name="api-scoring-detail"),
    path("scorings/<int:pk>/results/", ScoringResultList.as_view(), name="api-scoring-results"),
    path("scorings/<int:pk>/cancel/", ScoringCancel.as_view(), name="api-scoring-cancel"),
    path("pass-rate-sets/", PassRateSetListCreate.as_view(), name="api-pass-rate-set-list"),
    path("pass-rate-sets/<int:pk>/", PassRateSetDetail.as_view(), name="api-pass-rate-set-detail"),
    path("calibrations/", CalibrationListCreate.as_view(), name="api-calibration-list"),
    path("calibrations/<int:pk>/", CalibrationDetail.as_view(), name="api-calibration-detail"),
    path("calibrations/<int:pk>/problems/", CalibratedDifficultyList.as_view(), name="api-calibration-problems"),
    path("calibrations/<int:pk>/apply/", CalibrationApply.as_view(), name="api-calibration-apply"),
    path("review-queues/", ReviewQueueListCreate.as_view(), name="api-review-queue-list"),
    path("review-queues/<int:pk>/", ReviewQueueDetail.as_view(), name="api-review-queue-detail"),
    path("review-queues/<int:pk>/next/", ReviewQueueNext.as_view(), name="api-review-queue-next"),
    path("review-items/<int:pk>/verdict/", ReviewVerdictCreate.as_view(), name="api-review-verdict"),
]
