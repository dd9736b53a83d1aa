"""REST API of sweeps and run comparisons (mounted under ``/api/``).

- ``GET  /api/sweeps/``               list with derived status and run counts (any role)
- ``POST /api/sweeps/``               validate the whole sweep, create its runs and start them (trainer)
- ``GET  /api/sweeps/<id>/``          detail: the specification and every run with its status (any role)
- ``POST /api/sweeps/<id>/cancel/``   cancel every unfinished run (the sweep's creator, or an admin)
- ``POST /api/sweeps/<id>/clone/``    a new sweep with the same specification, launched (trainer)
- ``GET  /api/runs/compare/?runs=1,2&metrics=a,b&points=N``  bucketed overlay series, min/max kept (any role)
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from training import selectors_sweeps
from training.models import Sweep, TrainingRun
from training.services import series, sweeps
from webapp.input_guards import StrictJSONParser
from webapp.roles import IsTrainer, IsViewer, ReadViewerWriteTrainer


class SweepRunSerializer(serializers.ModelSerializer):
    """A run as a sweep lists it: its status and the combination it was made from."""

    reward = serializers.SerializerMethodField()

    class Meta:
        model = TrainingRun
        fields = [
            "id",
            "name",
            "status",
            "cancel_requested",
            "last_step",
            "sweep_overrides",
            "reward",
            "started_at",
            "finished_at",
            "error",
        ]
        read_only_fields = fields

    def get_reward(self, run: TrainingRun) -> float | None:
        value = (run.latest_metrics or {}).get("reward")
        return float(value) if isinstance(value, int | float) else None


class SweepSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    status = serializers.SerializerMethodField()
    run_count = serializers.IntegerField(read_only=True)
    counts = serializers.SerializerMethodField()
    compare_url = serializers.SerializerMethodField()

    class Meta:
        model = Sweep
        fields = [
            "id",
            "name",
            "description",
            "status",
            "run_count",
            "counts",
            "cancel_requested",
            "created_by",
            "base_config",
            "override_sets",
            "axes",
            "seeds",
            "release",
            "heldout_release",
            "cloned_from",
            "compare_url",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    def get_status(self, sweep: Sweep) -> str:
        return selectors_sweeps.sweep_status(sweep)

    def get_counts(self, sweep: Sweep) -> dict[str, int]:
        return selectors_sweeps.sweep_counts(sweep)

    def get_compare_url(self, sweep: Sweep) -> str:
        return f"{reverse('training:compare')}?sweep={sweep.pk}"


class SweepDetailSerializer(SweepSerializer):
    runs = serializers.SerializerMethodField()

    class Meta(SweepSerializer.Meta):
        fields = [*SweepSerializer.Meta.fields, "runs"]
        read_only_fields = fields

    @extend_schema_field(SweepRunSerializer(many=True))
    def get_runs(self, sweep: Sweep) -> list[dict[str, Any]]:
        return SweepRunSerializer(selectors_sweeps.sweep_runs(sweep_id=sweep.pk), many=True).data  # type: ignore[return-value]


class AxisSerializer(serializers.Serializer):
    path = serializers.CharField(help_text='A dotted config path or "preset", e.g. "mask.probability".')
    values = serializers.ListField(child=serializers.JSONField(), allow_empty=False)


class SweepCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    base_config = serializers.DictField(
        required=False,
        default=dict,
        help_text='Sparse nested config every run starts from; may name a preset: {"preset": "dapo"}.',
    )
    override_sets = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        default=list,
        help_text='Variants, each {dotted path: value} (optional "_label"), e.g. three temperature schedules.',
    )
    axes = AxisSerializer(many=True, required=False, default=list)
    seeds = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=2**32 - 1), required=False, default=list
    )
    release_id = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1
    )
    heldout_release_id = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=2**63 - 1
    )


class SweepCloneSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


def _drf_error(exc: DjangoValidationError) -> ValidationError:
    if hasattr(exc, "error_dict"):
        detail = {("non_field_errors" if k == "__all__" else k): v for k, v in exc.message_dict.items()}
        return ValidationError(detail)
    return ValidationError({"non_field_errors": exc.messages})


class SweepListCreate(generics.ListCreateAPIView):
    """Sweeps, newest first. POST (trainer) validates every run of the sweep, then creates and starts them."""

    permission_classes = [ReadViewerWriteTrainer]
    parser_classes = [StrictJSONParser]
    serializer_class = SweepSerializer
    ordering_fields = ["created_at", "id"]

    def get_queryset(self) -> Any:
        return selectors_sweeps.sweep_list()

    @extend_schema(request=SweepCreateSerializer, responses={201: SweepDetailSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        incoming = SweepCreateSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        try:
            sweep = sweeps.sweep_create(
                name=data["name"],
                description=data["description"],
                base_config=data["base_config"],
                override_sets=data["override_sets"],
                axes=[dict(a) for a in data["axes"]],
                seeds=data["seeds"],
                release_id=data["release_id"],
                heldout_release_id=data["heldout_release_id"],
                user=request.user,
            )
        except DjangoValidationError as exc:
            raise _drf_error(exc) from exc
        return Response(
            SweepDetailSerializer(selectors_sweeps.sweep_get(sweep_id=sweep.pk)).data,
            status=status.HTTP_201_CREATED,
        )


class SweepDetail(generics.RetrieveAPIView):
    """One sweep: its specification, derived status and every run with its status."""

    permission_classes = [IsViewer]
    serializer_class = SweepDetailSerializer

    def get_queryset(self) -> Any:
        return selectors_sweeps.sweep_list()


class SweepCancel(APIView):
    """Cancel the whole sweep: queued runs end at once, running ones after their step. Only the sweep's
    creator (a trainer) or an admin may (403 otherwise)."""

    permission_classes = [IsTrainer]

    @extend_schema(request=None, responses={200: SweepDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        get_object_or_404(Sweep, pk=pk)
        sweeps.sweep_cancel(sweep_id=pk, user=request.user)
        return Response(SweepDetailSerializer(selectors_sweeps.sweep_get(sweep_id=pk)).data)


class SweepClone(APIView):
    """Launch a copy of the sweep (same base config, axes, seeds and releases), owned by the caller."""

    permission_classes = [IsTrainer]
    parser_classes = [StrictJSONParser]

    @extend_schema(request=SweepCloneSerializer, responses={201: SweepDetailSerializer})
    def post(self, request: Request, pk: int) -> Response:
        get_object_or_404(Sweep, pk=pk)
        incoming = SweepCloneSerializer(data=request.data if isinstance(request.data, dict) else {})
        incoming.is_valid(raise_exception=True)
        try:
            clone = sweeps.sweep_clone(sweep_id=pk, user=request.user, name=incoming.validated_data["name"])
        except DjangoValidationError as exc:
            raise _drf_error(exc) from exc
        return Response(
            SweepDetailSerializer(selectors_sweeps.sweep_get(sweep_id=clone.pk)).data,
            status=status.HTTP_201_CREATED,
        )


def _points_param(request: Request) -> int:
    raw = request.query_params.get("points", "")
    if raw == "":
        return series.DEFAULT_POINTS
    try:
        return int(raw)
    except ValueError as exc:
        raise ValidationError({"points": [f"must be an integer, got {raw!r}"]}) from exc


class RunCompare(APIView):
    """Overlay series of several runs: per metric a bucket grid shared by the runs, and per run its
    buckets (last step, mean, min, max, count) and a summary from the full series."""

    permission_classes = [IsViewer]

    @extend_schema(
        parameters=[
            OpenApiParameter("runs", OpenApiTypes.STR, required=True, description="Comma-separated run ids."),
            OpenApiParameter(
                "metrics",
                OpenApiTypes.STR,
                description="Comma-separated metric names; default: the comparison page's metrics.",
            ),
            OpenApiParameter(
                "points",
                OpenApiTypes.INT,
                description=f"Buckets per series at most ({series.MIN_POINTS}-{series.MAX_POINTS}; "
                f"default {series.DEFAULT_POINTS}).",
            ),
        ],
        responses={
            200: inline_serializer(
                "RunComparison",
                {
                    "runs": serializers.ListField(child=serializers.DictField()),
                    "points": serializers.IntegerField(),
                    "metrics": serializers.DictField(),
                },
            )
        },
    )
    def get(self, request: Request) -> Response:
        try:
            run_ids = selectors_sweeps.parse_run_ids(
                request.query_params.get("runs", ""), limit=series.MAX_RUNS
            )
        except ValueError as exc:
            raise ValidationError({"runs": [str(exc)]}) from exc
        found, missing = selectors_sweeps.existing_runs(run_ids)
        if missing:
            raise ValidationError({"runs": [f"no such run: {', '.join(map(str, missing))}"]})
        raw = request.query_params.get("metrics", "")
        names = [n.strip() for n in raw.split(",") if n.strip()] or list(selectors_sweeps.COMPARE_METRICS)
        if len(names) > series.MAX_METRICS:
            raise ValidationError(
                {"metrics": [f"at most {series.MAX_METRICS} metrics at once, got {len(names)}"]}
            )
        payload = series.compare_series(run_ids=found, names=names, points=_points_param(request))
        return Response({"runs": series.compare_runs_info(found), **payload})


urlpatterns = [
    path("sweeps/", SweepListCreate.as_view(), name="sweep-api-list"),
    path("sweeps/<int:pk>/", SweepDetail.as_view(), name="sweep-api-detail"),
    path("sweeps/<int:pk>/cancel/", SweepCancel.as_view(), name="sweep-api-cancel"),
    path("sweeps/<int:pk>/clone/", SweepClone.as_view(), name="sweep-api-clone"),
    path("runs/compare/", RunCompare.as_view(), name="run-api-compare"),
]
