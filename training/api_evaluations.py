"""REST API of model evaluations (mounted under ``/api/`` by ``webapp.urls``).

- ``GET  /api/model-evaluations/``                      list (any role); ``POST`` creates **and starts** one
- ``GET  /api/model-evaluations/<id>/``                 detail with summary, selection, contamination report
- ``POST /api/model-evaluations/<id>/cancel/``          the creator or an admin
- ``GET  /api/model-evaluations/<id>/problems/``        per-problem results (``?outcome=solved|unsolved|infra|contaminated``)
- ``GET  /api/model-evaluations/<id>/problems/<problem_id>/samples/``  the judged samples of one problem
- ``GET  /api/model-evaluations/<id>/pass-rates/``      JSONL ``{"platform", "external_id", "passed", "attempts"}``
- ``GET  /api/model-evaluations/compare/?ids=1,2[,3]``  aggregates, flips, McNemar, paired bootstrap

Who creates: a trainer evaluates anything; a curator may evaluate an OpenAI-compatible endpoint (the
difficulty calibration needs measured pass rates, and an endpoint loads no weights on the GPU nodes),
never a local model. Bad input answers 400 naming the field.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from training import selectors_evaluation as selectors
from training.models_evaluation import (
    EvalEngine,
    ModelEvaluation,
    ModelEvaluationProblem,
    ModelEvaluationSample,
)
from training.services.evaluations import (
    model_evaluation_can_cancel,
    model_evaluation_cancel,
    model_evaluation_create,
    model_evaluation_start,
)
from webapp.roles import CURATOR, TRAINER, VIEWER, IsViewer, has_role


def can_create(user: Any, engine: str) -> bool:
    """Trainers create any evaluation; curators only endpoint (``openai``) evaluations."""
    return has_role(user, TRAINER) or (engine == EvalEngine.OPENAI and has_role(user, CURATOR))


class ReadViewerCreateTrainerOrCurator(BasePermission):
    """Reads: any role. Writes: trainer or curator (the view narrows what a curator may create)."""

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return has_role(request.user, VIEWER)
        return has_role(request.user, TRAINER) or has_role(request.user, CURATOR)


class ModelEvaluationSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    label = serializers.CharField(read_only=True)
    release_name = serializers.SerializerMethodField()
    is_terminal = serializers.BooleanField(read_only=True)

    class Meta:
        model = ModelEvaluation
        fields = [
            "id", "label", "name", "engine", "model", "run", "checkpoint_step", "base_url", "release", "release_name",
            "problem_filter", "k", "temperature", "top_p", "max_tokens", "seed", "cutoff_date",
            "exclude_before_cutoff", "contamination", "contamination_release", "status", "is_terminal", "reason",
            "cancel_requested", "queue", "attempts", "problems_total", "problems_done", "samples_total",
            "samples_done", "created_by", "created_at", "started_at", "finished_at",
        ]
        read_only_fields = fields

    def get_release_name(self, evaluation: ModelEvaluation) -> str:
        return str(evaluation.release)


class ModelEvaluationDetailSerializer(ModelEvaluationSerializer):
    class Meta(ModelEvaluationSerializer.Meta):
        fields = [*ModelEvaluationSerializer.Meta.fields, "summary", "selection", "contamination_report"]
        read_only_fields = fields


class ModelEvaluationCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    engine = serializers.ChoiceField(choices=EvalEngine.choices)
    model = serializers.CharField(max_length=1000, required=False, allow_blank=True, default="")
    run_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    checkpoint_step = serializers.IntegerField(required=False, allow_null=True, default=None)
    base_url = serializers.CharField(max_length=1000, required=False, allow_blank=True, default="")
    release_id = serializers.IntegerField()
    problem_filter = serializers.DictField(required=False, default=dict,
                                           help_text='{"platform", "difficulty", "io_mode", "limit"}')
    k = serializers.IntegerField(required=False, default=4)
    temperature = serializers.FloatField(required=False, default=0.6)
    top_p = serializers.FloatField(required=False, default=0.95)
    max_tokens = serializers.IntegerField(required=False, default=4096)
    seed = serializers.IntegerField(required=False, default=0)
    cutoff_date = serializers.DateField(required=False, allow_null=True, default=None)
    exclude_before_cutoff = serializers.BooleanField(required=False, default=True)
    contamination = serializers.ChoiceField(choices=["off", "flag", "exclude"], required=False, default="off")
    contamination_release_id = serializers.IntegerField(required=False, allow_null=True, default=None)


class ProblemResultSerializer(serializers.ModelSerializer):
    class Meta:
        model = ModelEvaluationProblem
        fields = ["problem", "key", "platform", "external_id", "difficulty", "contest_date", "io_mode", "attempts",
                  "passed", "infra_errors", "pass_at_1", "pass_at_k", "verdicts", "contaminated", "overlap"]
        read_only_fields = fields


class SampleSerializer(serializers.ModelSerializer):
    completion = serializers.CharField(read_only=True)

    class Meta:
        model = ModelEvaluationSample
        fields = ["index", "verdict", "passed", "infra_error", "method", "elapsed_s", "completion"]
        read_only_fields = fields


def _drf_error(exc: DjangoValidationError) -> ValidationError:
    return ValidationError(exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages})


class ModelEvaluationListCreate(generics.ListCreateAPIView):
    """Model evaluations, newest first. POST validates, creates and starts one (queue ``gpu`` for local
    models, ``evaluate`` for endpoints)."""

    permission_classes = [ReadViewerCreateTrainerOrCurator]
    serializer_class = ModelEvaluationSerializer
    filterset_fields = ["status", "engine", "release"]
    ordering_fields = ["created_at", "id"]

    def get_queryset(self) -> Any:
        return selectors.model_evaluation_list()

    @extend_schema(request=ModelEvaluationCreateSerializer, responses={201: ModelEvaluationDetailSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        incoming = ModelEvaluationCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = dict(incoming.validated_data)
        if not can_create(request.user, data["engine"]):
            raise PermissionDenied("curators evaluate OpenAI-compatible endpoints only; local models need a trainer")
        try:
            with transaction.atomic():
                evaluation = model_evaluation_create(user=request.user, **data)
                model_evaluation_start(evaluation_id=evaluation.pk)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from exc
        evaluation = selectors.model_evaluation_get(evaluation_id=evaluation.pk)
        return Response(ModelEvaluationDetailSerializer(evaluation).data, status=status.HTTP_201_CREATED)


class ModelEvaluationDetail(generics.RetrieveAPIView):
    """One evaluation: settings, status with reason, progress, summary, selection, contamination report."""

    permission_classes = [IsViewer]
    serializer_class = ModelEvaluationDetailSerializer

    def get_queryset(self) -> Any:
        return selectors.model_evaluation_list()


class ModelEvaluationCancel(APIView):
    """Cancel: a queued job ends at once, a running one after its current sample. Creator or admin only."""

    permission_classes = [ReadViewerCreateTrainerOrCurator]

    @extend_schema(request=None, responses={200: ModelEvaluationDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        evaluation = get_object_or_404(ModelEvaluation, pk=pk)
        if not model_evaluation_can_cancel(evaluation=evaluation, user=request.user):
            raise PermissionDenied("only the evaluation's creator or an admin may cancel it")
        try:
            model_evaluation_cancel(evaluation_id=pk, user=request.user)
        except DjangoPermissionDenied as exc:
            raise PermissionDenied(str(exc)) from exc
        return Response(ModelEvaluationDetailSerializer(selectors.model_evaluation_get(evaluation_id=pk)).data)


class ModelEvaluationProblems(generics.ListAPIView):
    """Per-problem results in release order (paginated)."""

    permission_classes = [IsViewer]
    serializer_class = ProblemResultSerializer
    filter_backends: list[Any] = []

    @extend_schema(parameters=[OpenApiParameter("outcome", OpenApiTypes.STR,
                                                description="solved | unsolved | infra | contaminated"),
                               OpenApiParameter("platform", OpenApiTypes.STR)])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        pk = int(self.kwargs["pk"])
        get_object_or_404(ModelEvaluation.objects.only("id"), pk=pk)
        outcome = self.request.query_params.get("outcome", "")
        if outcome not in ("", "solved", "unsolved", "infra", "contaminated"):
            raise ValidationError({"outcome": ["must be solved, unsolved, infra or contaminated"]})
        return selectors.model_evaluation_problems(
            evaluation_id=pk, outcome=outcome, platform=self.request.query_params.get("platform", "")
        )


class ModelEvaluationSamples(APIView):
    """The judged samples of one problem (completions decompressed)."""

    permission_classes = [IsViewer]

    @extend_schema(responses={200: SampleSerializer(many=True)})
    def get(self, request: Request, pk: int, problem_id: int) -> Response:
        get_object_or_404(ModelEvaluation.objects.only("id"), pk=pk)
        rows = selectors.model_evaluation_samples(evaluation_id=pk, problem_id=problem_id)
        return Response(SampleSerializer(rows, many=True).data)


def pass_rates_response(evaluation_id: int) -> HttpResponse:
    """The JSONL download of an evaluation's pass rates (shared with the page's download link)."""
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n"
                   for r in selectors.model_evaluation_export_rows(evaluation_id=evaluation_id))
    response = HttpResponse(body.encode("utf-8"), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="model-evaluation-{int(evaluation_id)}-pass-rates.jsonl"'
    return response


class ModelEvaluationPassRates(APIView):
    """Per-problem pass rates as JSONL, one ``{"platform", "external_id", "passed", "attempts"}`` a line
    (infrastructure errors excluded from ``attempts``): the difficulty calibration imports this file."""

    permission_classes = [IsViewer]

    @extend_schema(responses={(200, "application/x-ndjson"): OpenApiTypes.BINARY})
    def get(self, request: Request, pk: int) -> HttpResponse:
        get_object_or_404(ModelEvaluation.objects.only("id"), pk=pk)
        return pass_rates_response(pk)


def parse_ids(raw: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]``; raises DRF ``ValidationError`` naming ``ids``."""
    parts = [p.strip() for p in (raw or "").split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        raise ValidationError({"ids": [f"comma-separated evaluation ids, got {raw!r}"]})
    ids = list(dict.fromkeys(int(p) for p in parts))
    if len(ids) < 2:
        raise ValidationError({"ids": ["choose at least two different evaluations to compare"]})
    return ids


class ModelEvaluationCompare(APIView):
    """Two or more evaluations: aggregates with 95 % intervals, and every later one against the first
    (the baseline): per-problem flips, McNemar p-value, paired bootstrap of the pass@1 difference, and
    the reading in plain words."""

    permission_classes = [IsViewer]

    @extend_schema(parameters=[OpenApiParameter("ids", OpenApiTypes.STR, required=True,
                                                description="Comma-separated ids; the first is the baseline.")],
                   responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request) -> Response:
        ids = parse_ids(request.query_params.get("ids", ""))
        try:
            return Response(selectors.model_evaluation_compare(evaluation_ids=ids))
        except ModelEvaluation.DoesNotExist as exc:
            raise ValidationError({"ids": [str(exc)]}) from exc


urlpatterns = [
    path("model-evaluations/", ModelEvaluationListCreate.as_view(), name="model-evaluation-api-list"),
    path("model-evaluations/compare/", ModelEvaluationCompare.as_view(), name="model-evaluation-api-compare"),
    path("model-evaluations/<int:pk>/", ModelEvaluationDetail.as_view(), name="model-evaluation-api-detail"),
    path("model-evaluations/<int:pk>/cancel/", ModelEvaluationCancel.as_view(), name="model-evaluation-api-cancel"),
    path("model-evaluations/<int:pk>/problems/", ModelEvaluationProblems.as_view(),
         name="model-evaluation-api-problems"),
    path("model-evaluations/<int:pk>/problems/<int:problem_id>/samples/", ModelEvaluationSamples.as_view(),
         name="model-evaluation-api-samples"),
    path("model-evaluations/<int:pk>/pass-rates/", ModelEvaluationPassRates.as_view(),
         name="model-evaluation-api-pass-rates"),
]
