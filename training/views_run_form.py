"""The run create form: every config field as a form field (help text, insights, warnings), parsing
of the submitted values, and the ``run_create`` view (check, launch, pre-fill from another run)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from training import selectors, services
from training.config import FieldInfo, describe_fields
from training.insights import ASPECTS, INSIGHTS, Insight
from training.models import TrainingRun
from webapp.roles import TRAINER, role_required

ASPECT_LABELS: dict[str, str] = {
    "evaluator": "Evaluator",
    "temperature": "Temperature",
    "data": "Data",
    "context_length": "Context length",
    "truncation_mask": "Truncation mask",
    "batch_on_policy": "Batch size and on-policy",
    "kl_clip": "KL and clip",
}

#: config sections in form order; top-level fields go to "run"
_SECTION_LABELS: dict[str, str] = {
    "run": "Run",
    "dataset": "Dataset",
    "clip": "Clip",
    "temperature": "Temperature",
    "mask": "Truncation mask",
    "reward": "Reward (evaluator)",
    "rollout": "Rollout engine",
    "prompt": "Prompt",
}
#: fields the server sets itself (shown read-only)
_SERVER_FIELDS = {"output_dir"}
#: suggestions for the model field besides models earlier runs used
_MODEL_SUGGESTIONS = ("Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-8B")


@dataclass
class FormField:
    """One config field as the create form renders it."""

    info: FieldInfo
    value: str
    widget: str  # "text" | "select" | "textarea"
    options: list[tuple[str, str]] = field(default_factory=list)
    insights: list[Insight] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    readonly: bool = False

    @property
    def dom_id(self) -> str:
        return "f-" + self.info.path  # dots are valid in ids and keep anchors readable


def _literal_options(type_name: str) -> list[str] | None:
    """``"'a' | 'b'"`` -> ``["a", "b"]``; None when the type is not a Literal."""
    parts = [p.strip() for p in type_name.split("|")]
    try:
        values = [ast.literal_eval(p) for p in parts]
    except (ValueError, SyntaxError):
        return None
    return [v for v in values if isinstance(v, str)] or None


def _nullable(type_name: str) -> tuple[str, bool]:
    parts = [p.strip() for p in type_name.split("|")]
    return " | ".join(p for p in parts if p != "null"), "null" in parts


def format_value(value: Any, type_name: str) -> str:
    """How a config value appears in a form input (lists and sections as inline YAML)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | dict):
        return yaml.safe_dump(value, default_flow_style=True, sort_keys=False).strip()
    return str(value)


def parse_value(raw: str, type_name: str) -> Any:
    """Turn a submitted string into the value the config expects; raises ValueError saying why."""
    base, nullable = _nullable(type_name)
    text = raw.strip()
    if base == "str":
        return raw
    if text == "":
        if nullable:
            return None
        raise ValueError("a value is required")
    if base == "bool":
        if text.lower() in ("true", "yes", "on", "1"):
            return True
        if text.lower() in ("false", "no", "off", "0"):
            return False
        raise ValueError(f"must be true or false, got {text!r}")
    if base == "int":
        try:
            return int(text)
        except ValueError as exc:
            raise ValueError(f"must be an integer, got {text!r}") from exc
    if base == "float":
        try:
            return float(text)
        except ValueError as exc:
            raise ValueError(f"must be a number, got {text!r}") from exc
    if _literal_options(base) is not None:
        return text
    try:
        return yaml.safe_load(text)  # lists and sections, e.g. [{start_step: 0, value: 0.6}]
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}") from exc


def _set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    node = target
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def _get_dotted(source: dict[str, Any], dotted: str, default: Any) -> Any:
    node: Any = source
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def build_form(values: dict[str, str], warnings: list[dict[str, Any]]) -> list[tuple[str, list[FormField]]]:
    """The form's sections: every config field with its help, insights and current warnings."""
    by_field: dict[str, list[dict[str, Any]]] = {}
    for w in warnings:
        by_field.setdefault(w["field"], []).append(w)
    sections: dict[str, list[FormField]] = {key: [] for key in _SECTION_LABELS}
    for info in describe_fields():
        section = info.path.split(".", 1)[0] if "." in info.path else "run"
        base, nullable = _nullable(info.type)
        options = _literal_options(base)
        if options is not None:
            widget, opts = "select", [(o, o) for o in options]
        elif base == "bool":
            widget = "select"
            opts = ([("", "(default)")] if nullable else []) + [("true", "true"), ("false", "false")]
        else:
            widget, opts = (
                ("textarea" if base.startswith("list") or info.path == "prompt.system_prompt" else "text"),
                [],
            )
        sections.setdefault(section, []).append(
            FormField(
                info=info,
                value=values.get(info.path, format_value(info.default, info.type)),
                widget=widget,
                options=opts,
                insights=[i for i in INSIGHTS if i.config_field == info.path],
                warnings=by_field.get(info.path, []),
                readonly=info.path in _SERVER_FIELDS,
            )
        )
    return [(_SECTION_LABELS.get(k, k), fields) for k, fields in sections.items() if fields]


def _form_values_from_config(config: dict[str, Any]) -> dict[str, str]:
    return {
        f.path: format_value(_get_dotted(config, f.path, f.default), f.type)
        for f in describe_fields()
        if f.path not in _SERVER_FIELDS
    }


def _config_from_post(post: Any) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """(nested config dict, raw values, per-field parse errors) from the submitted form."""
    config: dict[str, Any] = {}
    raw_values: dict[str, str] = {}
    errors: dict[str, str] = {}
    for info in describe_fields():
        if info.path in _SERVER_FIELDS or info.path not in post:
            continue
        raw = post.get(info.path, "")
        raw_values[info.path] = raw
        try:
            _set_dotted(config, info.path, parse_value(raw, info.type))
        except ValueError as exc:
            errors[info.path] = str(exc)
    return config, raw_values, errors


def _insight_groups() -> list[tuple[str, list[Insight]]]:
    return [(ASPECT_LABELS[a], [i for i in INSIGHTS if i.aspect == a]) for a in ASPECTS]


def _releases() -> list[Any]:
    from curation.models import DatasetRelease

    return list(DatasetRelease.objects.order_by("-id")[:200])


@role_required(TRAINER)
@require_http_methods(["GET", "POST"])
def run_create(request: HttpRequest) -> HttpResponse:
    """GET: the form (``?from=<run id>`` pre-fills another run's config). POST ``action=check``
    re-renders with the insight warnings; ``action=launch`` creates and starts the run."""
    errors: dict[str, str] = {}
    warnings: list[dict[str, Any]] = []
    checked = False
    name = ""
    release_id: int | None = None
    heldout_release_id: int | None = None
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        release_raw = request.POST.get("release_id", "")
        release_id = int(release_raw) if release_raw.isdigit() else None
        heldout_raw = request.POST.get("heldout_release_id", "")
        heldout_release_id = int(heldout_raw) if heldout_raw.isdigit() else None
        config, values, errors = _config_from_post(request.POST)
        if not errors:
            try:
                _, warnings = services.config_validate(config)
                checked = True
            except ValidationError as exc:
                errors["__all__"] = "; ".join(exc.message_dict.get("config", exc.messages))
        if not errors and request.POST.get("action") == "launch":
            try:
                with transaction.atomic():
                    run = services.run_create(
                        name=name,
                        config_dict=config,
                        release_id=release_id,
                        user=request.user,
                        heldout_release_id=heldout_release_id,
                    )
                    services.run_start(run_id=run.pk)
            except ValidationError as exc:
                for key, msgs in exc.message_dict.items():
                    errors["__all__" if key == "config" else key] = "; ".join(msgs)
            else:
                messages.success(request, f"Run #{run.pk} queued on the gpu queue.")
                return redirect("training:run-detail", run_id=run.pk)
    else:
        values = {}
        source = request.GET.get("from", "")
        if source.isdigit():
            base = TrainingRun.objects.filter(pk=int(source)).first()
            if base is not None:
                values = _form_values_from_config(base.config)
                name = f"{base.name} (copy)"
                release_id = base.release_id
                heldout_release_id = base.heldout_release_id
    models = list(dict.fromkeys([*selectors.run_recent_models(), *_MODEL_SUGGESTIONS]))
    return render(
        request,
        "training/run_create.html",
        {
            "sections": build_form(values, warnings),
            "insight_groups": _insight_groups(),
            "insight_count": len(INSIGHTS),
            "warnings": warnings,
            "errors": errors,
            "checked": checked and not errors,
            "name": name,
            "release_id": release_id,
            "heldout_release_id": heldout_release_id,
            "releases": _releases(),
            "models": models,
        },
    )
