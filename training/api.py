"""REST API of training runs (mounted under ``/api/``).

- ``GET  /api/runs/``                      list (any role); ``POST`` creates **and starts** a run (trainer)
- ``POST /api/runs/check/``                validate a config: resolved config, insight warnings (each with
                                            links to /training/insights/) and the memory plan (trainer)
- ``GET  /api/runs/<id>/``                 detail with resolved config and checkpoints (any role)
- ``POST /api/runs/<id>/cancel/``          request cancellation (the run's creator, or an admin)
- ``GET  /api/runs/<id>/metrics/?names=a,b&max_points=N[&min_step=&max_step=]``  downsampled series
- ``GET  /api/runs/<id>/samples/[?step=N]`` one step's sample table (default: the newest step)

The config side (the create serializer with its preset, the check view) is in ``training.api_config``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from training import selectors, services
from training.api_config import (
    RunConfigCheck,
    RunCreateSerializer,
    drf_error,
    submitted_config,
    with_insight_links,
)
from training.models import Checkpoint, TrainingRun
from webapp.input_guards import StrictJSONParser
from webapp.roles import IsTrainer, IsViewer, ReadViewerWriteTrainer


class CheckpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = Checkpoint
        fields = ["step", "path", "created_at"]


class RunSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    release_name = serializers.SerializerMethodField()
    is_terminal = serializers.BooleanField(read_only=True)

    class Meta:
        model = TrainingRun
        fields = [
            "id",
            "name",
            "status",
            "is_terminal",
            "cancel_requested",
            "node",
            "celery_task_id",
            "attempts",
            "created_by",
            "release",
            "release_name",
            "output_dir",
            "last_step",
            "latest_metrics",
            "warnings",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "updated_at",
            "heldout_release",
        ]
        read_only_fields = fields

    def get_release_name(self, run: TrainingRun) -> str | None:
        return str(run.release) if run.release_id else None

    def to_representation(self, instance: TrainingRun) -> dict[str, Any]:
        data = super().to_representation(instance)
        data["warnings"] = with_insight_links(data.get("warnings") or [], self.context.get("request"))
        return dict(data)


class RunDetailSerializer(RunSerializer):
    checkpoints = CheckpointSerializer(many=True, read_only=True)
    metric_names = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "config", "checkpoints", "metric_names"]
        read_only_fields = fields

    def get_metric_names(self, run: TrainingRun) -> list[str]:
        return selectors.run_metric_names(run_id=run.pk)


class RunListCreate(generics.ListCreateAPIView):
    """Training runs, newest first. POST (trainer) validates the config, creates the run and starts it."""

    permission_classes = [ReadViewerWriteTrainer]
    parser_classes = [StrictJSONParser]  # a nested config is JSON; a form or multipart body gets 415
    serializer_class = RunSerializer
    filterset_fields = ["status"]
    ordering_fields = ["created_at", "id", "last_step"]

    def get_queryset(self) -> Any:
        return selectors.run_list()

    @extend_schema(request=RunCreateSerializer, responses={201: RunDetailSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        incoming = RunCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        try:
            with transaction.atomic():
                run = services.run_create(
                    name=data["name"],
                    config_dict=submitted_config(data),
                    release_id=data["release_id"],
                    user=request.user,
                    heldout_release_id=data["heldout_release_id"],
                )
                services.run_start(run_id=run.pk)
        except DjangoValidationError as exc:
            raise drf_error(exc) from exc
        run = selectors.run_get(run_id=run.pk)
        return Response(
            RunDetailSerializer(run, context={"request": request}).data, status=status.HTTP_201_CREATED
        )


class RunDetail(generics.RetrieveAPIView):
    """One run: status, resolved config, warnings, checkpoints and the names of its metrics."""

    permission_classes = [IsViewer]
    serializer_class = RunDetailSerializer

    def get_queryset(self) -> Any:
        return selectors.run_list().prefetch_related("checkpoints")


class RunCancel(APIView):
    """Request cancellation: a queued run ends at once, a running one after its current step. Only the
    run's creator (a trainer) or an admin may cancel it (403 otherwise)."""

    permission_classes = [IsTrainer]

    @extend_schema(request=None, responses={200: RunDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        get_object_or_404(TrainingRun, pk=pk)
        services.run_cancel(run_id=pk, user=request.user)
        return Response(RunDetailSerializer(selectors.run_get(run_id=pk), context={"request": request}).data)


def _int_param(request: Request, name: str, default: int | None) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ValidationError({name: [f"must be an integer, got {raw!r}"]}) from exc


class RunMetrics(APIView):
    """Metric series downsampled for charts (M4: per bucket the first, min, max and last point)."""

    permission_classes = [IsViewer]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "names", OpenApiTypes.STR, description="Comma-separated metric names; default: all."
            ),
            OpenApiParameter(
                "max_points",
                OpenApiTypes.INT,
                description=f"Points per series at most ({selectors.MIN_POINTS}-{selectors.MAX_POINTS}; "
                f"default {selectors.DEFAULT_POINTS}). Charts ask for 4 x their pixel width.",
            ),
            OpenApiParameter("min_step", OpenApiTypes.INT, description="First step to include."),
            OpenApiParameter("max_step", OpenApiTypes.INT, description="Last step to include."),
        ],
        responses={
            200: inline_serializer(
                "RunMetricSeries",
                {
                    "run_id": serializers.IntegerField(),
                    "last_step": serializers.IntegerField(allow_null=True),
                    "max_points": serializers.IntegerField(),
                    "series": serializers.DictField(
                        child=inline_serializer(
                            "MetricSeries",
                            {
                                "steps": serializers.ListField(child=serializers.IntegerField()),
                                "values": serializers.ListField(
                                    child=serializers.FloatField(allow_null=True)
                                ),
                                "total": serializers.IntegerField(),
                            },
                        )
                    ),
                },
            )
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(TrainingRun.objects.only("id", "last_step"), pk=pk)
        raw = request.query_params.get("names", "")
        names = [n.strip() for n in raw.split(",") if n.strip()] or selectors.run_metric_names(run_id=pk)
        max_points = _int_param(request, "max_points", selectors.DEFAULT_POINTS)
        assert max_points is not None
        clamped = min(max(max_points, selectors.MIN_POINTS), selectors.MAX_POINTS)
        series = selectors.run_metric_series(
            pk,
            names,
            clamped,
            min_step=_int_param(request, "min_step", None),
            max_step=_int_param(request, "max_step", None),
        )
        return Response({"run_id": pk, "last_step": run.last_step, "max_points": clamped, "series": series})


@extend_schema_serializer(component_name="RunSample")  # "Sample" is a model evaluation's sample
class SampleSerializer(serializers.Serializer):
    """One row of a step's sample table (``extra``: other fields the trainer reported)."""

    index = serializers.IntegerField()
    prompt = serializers.CharField()
    completion = serializers.CharField()
    reward = serializers.FloatField(allow_null=True)
    verdict = serializers.CharField()
    length = serializers.IntegerField()
    truncated = serializers.BooleanField()
    masked = serializers.BooleanField()
    extra = serializers.DictField(required=False)


class RunSamples(APIView):
    """The sample table of one step (``step`` omitted: the newest step with samples)."""

    permission_classes = [IsViewer]

    @extend_schema(
        parameters=[
            OpenApiParameter("step", OpenApiTypes.INT, description="Training step; default: newest.")
        ],
        responses={
            200: inline_serializer(
                "RunSampleTable",
                {
                    "run_id": serializers.IntegerField(),
                    "step": serializers.IntegerField(allow_null=True),
                    "steps": serializers.ListField(child=serializers.IntegerField()),
                    "samples": SampleSerializer(many=True),
                },
            )
        },
    )
    def get(self, request: Request, pk: int) -> Response:
        get_object_or_404(TrainingRun.objects.only("id"), pk=pk)
        step, rows = selectors.run_samples(run_id=pk, step=_int_param(request, "step", None))
        return Response(
            {
                "run_id": pk,
                "step": step,
                "steps": selectors.run_sample_steps(run_id=pk),
                "samples": [services.sample_dict(r) for r in rows],
            }
        )


urlpatterns = [
    path("runs/", RunListCreate.as_view(), name="run-api-list"),
    path("runs/check/", RunConfigCheck.as_view(), name="run-api-check"),
    path("runs/<int:pk>/", RunDetail.as_view(), name="run-api-detail"),
    path("runs/<int:pk>/cancel/", RunCancel.as_view(), name="run-api-cancel"),
    path("runs/<int:pk>/metrics/", RunMetrics.as_view(), name="run-api-metrics"),
    path("runs/<int:pk>/samples/", RunSamples.as_view(), name="run-api-samples"),
]
