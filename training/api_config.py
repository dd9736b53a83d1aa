"""The config side of the runs API: what a client submits (``RunCreateSerializer``: a preset name, a
nested config, dotted overrides), how it becomes one config dict, and ``POST /api/runs/check/``
(``RunConfigCheck``: the resolved config, the insight warnings with links to the insights page and the
memory plan). Routed by ``training.api``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from training import services
from training.config import ConfigError
from training.form_values import config_from_values, error_field, values_from_config
from training.memory_plan import plan_for_config
from webapp.input_guards import StrictJSONParser
from webapp.roles import IsTrainer


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


def submitted_config(data: dict[str, Any]) -> dict[str, Any]:
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


def drf_error(exc: DjangoValidationError) -> ValidationError:
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
            config, warnings = services.config_validate(submitted_config(validated))
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


__all__ = [
    "RunConfigCheck",
    "RunCreateSerializer",
    "WarningSerializer",
    "drf_error",
    "insight_url",
    "submitted_config",
    "with_insight_links",
]
