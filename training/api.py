"""REST API of training runs (mounted under ``/api/``).

- ``GET  /api/runs/``                      list (any role); ``POST`` creates **and starts** a run (trainer)
- ``POST /api/runs/check/``                validate a config: resolved config, insight warnings (each with
                                            links to /training/insights/) and the memory plan (trainer)
- ``GET  /api/runs/<id>/``                 detail with resolved config and checkpoints (any role)
- ``POST /api/runs/<id>/cancel/``          request cancellation (the run's creator, or an admin)
- ``GET  /api/runs/<id>/metrics/?names=a,b&max_points=N[&min_step=&max_step=]``  downsampled series
- ``GET  /api/runs/<id>/samples/[?step=N]`` one step's sample table (default: the newest step)
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from training import selectors, services
from training.config import ConfigError
from training.form_values import config_from_values, error_field, values_from_config
from training.memory_plan import plan_for_config
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


def insight_url(insight_id: str, request: Request | None = None) -> str:
    """The insight's anchor on the insights page (absolute when a request is at hand)."""
    url = reverse("training:insights") + f"#insight-{insight_id}"
    return request.build_absolute_uri(url) if request is not None else url


def with_insight_links(warnings: list[dict[str, Any]], request: Request | None) -> list[dict[str, Any]]:
    """``check_config`` warnings with ``insight_urls``: one link per cited insight."""
    return [
        {**w, "insight_urls": [insight_url(i, request) for i in w.get("insight_ids", [])]}
        if isinstance(w, dict)
        else w
        for w in warnings
    ]


class RunDetailSerializer(RunSerializer):
    checkpoints = CheckpointSerializer(many=True, read_only=True)
    metric_names = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "config", "checkpoints", "metric_names"]
        read_only_fields = fields

    def get_metric_names(self, run: TrainingRun) -> list[str]:
        return selectors.run_metric_names(run_id=run.pk)


def _preset_choices() -> list[str]:
    from training.presets import preset_names

    return preset_names()


class RunCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    preset = serializers.ChoiceField(
        choices=_preset_choices(),
        required=False,
        allow_blank=True,
        default="",
        help_text="Start from a method preset (training.presets: its values first, then config, then overrides); "
        "stored as the config's `preset` field. Same as config.preset.",
    )
    config = serializers.DictField(
        required=False,
        default=dict,
        help_text="Nested config (the YAML shape of training.config.GRPOConfig).",
    )
    overrides = serializers.DictField(
        required=False,
        default=dict,
        help_text='Dotted-path changes applied on top, e.g. {"mask.probability": 0.2}.',
    )
    release_id = serializers.IntegerField(required=False, allow_null=True, default=None)
    heldout_release_id = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Held-out release evaluated during training (exported and set as eval.release).",
    )


def _config_dict(data: dict[str, Any]) -> dict[str, Any]:
    """``config`` with ``overrides`` applied, validated by the core (400 with its message when invalid)."""
    from training.config import config_from_dict

    config = dict(data.get("config") or {})
    if data.get("preset"):
        if config.get("preset") not in (None, "", data["preset"]):
            raise ValidationError(
                {"preset": [f"preset {data['preset']!r} differs from config.preset {config['preset']!r}"]}
            )
        config["preset"] = data["preset"]
    overrides = dict(data.get("overrides") or {})
    if not overrides:
        return config
    try:
        return config_from_dict(config).replace(**overrides).to_dict()
    except (ConfigError, TypeError, ValueError) as exc:
        raise ValidationError({"config": [str(exc)]}) from exc


def _drf_error(exc: DjangoValidationError) -> ValidationError:
    return ValidationError(exc.message_dict if hasattr(exc, "error_dict") else {"detail": exc.messages})


class WarningSerializer(serializers.Serializer):
    """A ``check_config`` warning: the field, why, and the insight ids behind it."""

    field = serializers.CharField()
    message = serializers.CharField()
    insight_ids = serializers.ListField(child=serializers.CharField())
    insight_urls = serializers.ListField(
        child=serializers.CharField(), help_text="The insights page, per insight."
    )
    severity = serializers.CharField()


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
                    config_dict=_config_dict(data),
                    release_id=data["release_id"],
                    user=request.user,
                    heldout_release_id=data["heldout_release_id"],
                )
                services.run_start(run_id=run.pk)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from exc
        run = selectors.run_get(run_id=run.pk)
        return Response(
            RunDetailSerializer(run, context={"request": request}).data, status=status.HTTP_201_CREATED
        )


class RunConfigCheck(APIView):
    """Validate a config without creating a run: the resolved config (also as YAML and as run-form strings),
    the insight warnings and the per-GPU memory plan (``training.memory_plan``; ``gpus``: how many GPUs
    FSDP shards over, default 1). ``form`` (the run form's live check): ``{dotted path: string}`` parsed
    like the form's submission, over ``config``; a 400 then names the fields (``fields``)."""

    permission_classes = [IsTrainer]
    parser_classes = [StrictJSONParser]  # a nested config is JSON; a form or multipart body gets 415

    @extend_schema(
        request=RunCreateSerializer(partial=True),
        responses={
            200: inline_serializer(
                "ConfigCheck",
                {
                    "config": serializers.DictField(),
                    "warnings": WarningSerializer(many=True),
                    "memory": serializers.DictField(
                        help_text="training.memory_plan.MemoryPlan as a dict (components, total_bytes, fits, "
                        "advice...), or {error, model} when the model's shape is unknown."
                    ),
                    "yaml": serializers.CharField(help_text="The resolved config as YAML."),
                    "form": serializers.DictField(
                        child=serializers.CharField(), help_text="The resolved config as run-form strings."
                    ),
                },
            )
        },
    )
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):  # a JSON list or string: say so instead of failing to merge
            raise ValidationError(
                {"non_field_errors": ["expected a JSON object with config and/or overrides"]}
            )
        data = dict(request.data)
        gpus = data.pop("gpus", 1)
        if isinstance(gpus, bool) or not isinstance(gpus, int) or not 1 <= gpus <= 1024:
            raise ValidationError({"gpus": [f"must be an integer from 1 to 1024, got {gpus!r}"]})
        form = data.pop("form", None)
        if form is not None and not (
            isinstance(form, dict) and all(isinstance(v, str) for v in form.values())
        ):
            raise ValidationError({"form": ["must map dotted field paths to the strings a form submits"]})
        incoming = RunCreateSerializer(data={"name": "check", **data})
        incoming.is_valid(raise_exception=True)
        validated = dict(incoming.validated_data)
        if form:
            parsed, _, field_errors = config_from_values(form)
            if field_errors:
                raise ValidationError({"fields": field_errors})
            validated["config"] = _merge(dict(validated.get("config") or {}), parsed)
        try:
            config, warnings = services.config_validate(_config_dict(validated))
        except DjangoValidationError as exc:
            messages = (
                exc.message_dict.get("config", exc.messages) if hasattr(exc, "error_dict") else exc.messages
            )
            fields = {f: m for m in messages if (f := error_field(m))}
            raise ValidationError({"config": messages, "fields": fields}) from exc
        return Response(
            {
                "config": config.to_dict(),
                "warnings": with_insight_links(warnings, request),
                "memory": plan_for_config(config, gpus),
                "yaml": config.to_yaml(),
                "form": values_from_config(config.to_dict()),
            }
        )


def _merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Nested ``changes`` over ``base`` (sections merged key by key)."""
    out = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


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
