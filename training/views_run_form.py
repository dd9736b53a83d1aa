"""The run create form.

Start from a preset (``?preset=dapo``) or from a previous run (``?from=<id>``); the fields that matter
first (model, release, steps, response length, temperature, mask, KL/clip) come first and the rest fold
into one collapsible section per config section. Every render of a valid config shows the insight
warnings next to the field they concern and the memory plan (``training.memory_plan``); with JavaScript
(``static/js/run_form.js``) they follow the edits live through ``POST /api/runs/check/``. The resolved
YAML can be copied or downloaded (``action=yaml``), and a YAML file uploaded (``action=upload``) fills
the form, each invalid value reported next to its field. Everything works without JavaScript.
"""

from __future__ import annotations

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
from training.config import ConfigError, FieldInfo, config_from_dict, describe_fields
from training.form_values import (
    SERVER_FIELDS,
    config_from_values,
    error_field,
    format_value,
    literal_options,
    nullable,
    values_from_config,
)
from training.insights import INSIGHTS, Insight
from training.memory_plan import plan_for_config
from training.models import TrainingRun
from training.presets import PRESETS
from webapp.roles import TRAINER, role_required

#: the fields that matter first, in this order (the release is its own select beside them)
ESSENTIAL_FIELDS: tuple[str, ...] = (
    "model",
    "max_steps",
    "max_response_length",
    "temperature.policy",
    "temperature.value",
    "temperature.stages",
    "mask.policy",
    "mask.probability",
    "kl_coef",
    "clip.eps_low",
    "clip.eps_high",
)
#: folded sections in form order; top-level fields go to "run"
_SECTION_LABELS: dict[str, str] = {
    "run": "Run and optimizer",
    "dataset": "Dataset",
    "clip": "Clip",
    "temperature": "Temperature",
    "mask": "Truncation mask",
    "reward": "Reward (evaluator)",
    "dynamic_sampling": "Dynamic sampling",
    "rollout": "Rollout engine",
    "prompt": "Prompt",
    "eval": "Held-out evaluation",
}
#: suggestions for the model field besides models earlier runs used
_MODEL_SUGGESTIONS = ("Qwen/Qwen3-1.7B", "Qwen/Qwen3-4B-Instruct-2507", "Qwen/Qwen3-8B")
#: an uploaded config file larger than this is refused (configs are a few KB)
MAX_UPLOAD_BYTES = 256 * 1024


@dataclass
class FormField:
    """One config field as the create form renders it."""

    info: FieldInfo
    value: str
    widget: str  # "text" | "select" | "textarea"
    options: list[tuple[str, str]] = field(default_factory=list)
    insights: list[Insight] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    readonly: bool = False

    @property
    def dom_id(self) -> str:
        return "f-" + self.info.path  # dots are valid in ids and keep anchors readable


@dataclass
class FormSection:
    key: str
    label: str
    fields: list[FormField]

    @property
    def warning_count(self) -> int:
        return sum(len(f.warnings) for f in self.fields)

    @property
    def has_error(self) -> bool:
        return any(f.error for f in self.fields)


def _form_field(
    info: FieldInfo, values: dict[str, str], by_field: dict[str, list[dict[str, Any]]], errors: dict[str, str]
) -> FormField:
    base, is_nullable = nullable(info.type)
    options = literal_options(base)
    if options is not None:
        widget, opts = "select", [(o, o) for o in options]
    elif base == "bool":
        widget = "select"
        opts = ([("", "(default)")] if is_nullable else []) + [("true", "true"), ("false", "false")]
    else:
        long_text = base.startswith("list") or info.path == "prompt.system_prompt"
        widget, opts = ("textarea" if long_text else "text"), []
    return FormField(
        info=info,
        value=values.get(info.path, format_value(info.default, info.type)),
        widget=widget,
        options=opts,
        insights=[i for i in INSIGHTS if i.config_field == info.path],
        warnings=by_field.get(info.path, []),
        error=errors.get(info.path, ""),
        readonly=info.path in SERVER_FIELDS,
    )


def build_form(
    values: dict[str, str], warnings: list[dict[str, Any]], errors: dict[str, str] | None = None
) -> tuple[list[FormField], list[FormSection]]:
    """(the essential fields, the folded sections): every config field but ``preset`` (the preset
    chooser) with its help, insights, current warnings and parse/validation error."""
    errors = errors or {}
    by_field: dict[str, list[dict[str, Any]]] = {}
    for w in warnings:
        by_field.setdefault(w["field"], []).append(w)
    infos = {f.path: f for f in describe_fields() if f.path != "preset"}
    essentials = [_form_field(infos[p], values, by_field, errors) for p in ESSENTIAL_FIELDS if p in infos]
    sections: dict[str, list[FormField]] = {key: [] for key in _SECTION_LABELS}
    for path, info in infos.items():
        if path in ESSENTIAL_FIELDS:
            continue
        section = path.split(".", 1)[0] if "." in path else "run"
        sections.setdefault(section, []).append(_form_field(info, values, by_field, errors))
    folded = [
        FormSection(k, _SECTION_LABELS.get(k, k.replace("_", " ").capitalize()), fs)
        for k, fs in sections.items()
        if fs
    ]
    return essentials, folded


def _releases() -> list[Any]:
    from curation.models import DatasetRelease

    return list(DatasetRelease.objects.order_by("-id")[:200])


def _int_or_none(raw: str) -> int | None:
    return int(raw) if raw.isdigit() else None


@dataclass
class _FormState:
    """What one render of the form shows."""

    values: dict[str, str] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    name: str = ""
    preset: str = ""
    release_id: int | None = None
    heldout_release_id: int | None = None
    checked: bool = False
    config: Any = None  # the validated GRPOConfig, when the values are valid
    gpus: int = 1


def _validate(state: _FormState, config: dict[str, Any]) -> None:
    """Validate ``config`` (the preset's values first): warnings and the resolved config, or the error
    attached to its field."""
    if state.preset:
        config = {**config, "preset": state.preset}
    try:
        state.config, state.warnings = services.config_validate(config)
        state.checked = True
    except ValidationError as exc:
        for msg in exc.message_dict.get("config", exc.messages):
            key = error_field(msg) or "__all__"
            state.errors[key] = f"{state.errors[key]}; {msg}" if key in state.errors else msg


def _state_from_get(request: HttpRequest) -> _FormState:
    state = _FormState()
    source, preset = request.GET.get("from", ""), request.GET.get("preset", "")
    if source.isdigit():
        base = TrainingRun.objects.filter(pk=int(source)).first()
        if base is not None:
            state.values = values_from_config(base.config)
            state.preset = str(base.config.get("preset") or "")
            state.name = f"{base.name} (copy)"
            state.release_id, state.heldout_release_id = base.release_id, base.heldout_release_id
        else:
            state.errors["__all__"] = f"There is no run #{source} to start from."
    elif preset:
        if preset in PRESETS:
            state.preset = preset
            state.values = values_from_config(config_from_dict({"preset": preset}).to_dict())
        else:
            state.errors["__all__"] = f"Unknown preset {preset!r}; choose one of {', '.join(PRESETS)}."
    if not state.errors:
        config, _, parse_errors = config_from_values(state.values)
        if not parse_errors:
            _validate(state, config)
    return state


def _state_from_upload(request: HttpRequest, state: _FormState) -> None:
    """Fill the form from an uploaded YAML config; errors name the field they concern."""
    upload = request.FILES.get("config_file")
    if upload is None:
        state.errors["config_file"] = "Choose a YAML config file to upload."
        return
    if upload.size is not None and upload.size > MAX_UPLOAD_BYTES:
        state.errors["config_file"] = f"{upload.name} is larger than {MAX_UPLOAD_BYTES // 1024} KB."
        return
    try:
        data = yaml.safe_load(upload.read().decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        state.errors["config_file"] = f"{upload.name} is not valid YAML: {exc}"
        return
    if data is None:
        data = {}
    if not isinstance(data, dict):
        state.errors["config_file"] = f"{upload.name}: the top level of a config file must be a mapping."
        return
    state.preset = str(data.get("preset") or "")
    try:
        resolved = config_from_dict(data).to_dict()
    except (ConfigError, TypeError, ValueError) as exc:
        state.errors[error_field(str(exc)) or "config_file"] = str(exc)
        base: dict[str, Any] = {}
        if state.preset in PRESETS:
            base = config_from_dict({"preset": state.preset}).to_dict()
        state.values = {
            **values_from_config(base),
            **{k: v for k, v in values_from_config(data).items() if _present(data, k)},
        }
        return
    state.values = values_from_config(resolved)
    _validate(state, {k: v for k, v in resolved.items() if k not in SERVER_FIELDS})
    messages.info(request, f"Loaded {upload.name}: review the values, then launch.")


def _present(data: dict[str, Any], dotted: str) -> bool:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _state_from_post(request: HttpRequest) -> _FormState:
    state = _FormState(
        name=request.POST.get("name", "").strip(),
        preset=request.POST.get("preset", "").strip(),
        release_id=_int_or_none(request.POST.get("release_id", "")),
        heldout_release_id=_int_or_none(request.POST.get("heldout_release_id", "")),
        gpus=max(1, min(1024, _int_or_none(request.POST.get("plan_gpus", "")) or 1)),
    )
    if request.POST.get("action") == "upload":
        _state_from_upload(request, state)
        return state
    if state.preset and state.preset not in PRESETS:
        state.errors["preset"] = f"unknown preset {state.preset!r}; choose one of {', '.join(PRESETS)}."
    config, state.values, parse_errors = config_from_values(request.POST)
    state.errors.update(parse_errors)
    if not state.errors:
        _validate(state, config)
    return state


def _memory_view(memory: dict[str, Any]) -> dict[str, Any]:
    """The plan with the display figures the template shows (run_form.js computes the same)."""
    if "error" in memory:
        return memory
    capacity = memory.get("capacity_bytes")
    return {
        **memory,
        "params_b": f"{memory['params'] / 1e9:.2f}",
        "fill_pct": min(100, round(100 * memory["total_bytes"] / capacity)) if capacity else 0,
        "components": [{**c, "gib": f"{c['bytes'] / 2**30:.2f}"} for c in memory["components"]],
    }


def _render(request: HttpRequest, state: _FormState) -> HttpResponse:
    essentials, sections = build_form(state.values, state.warnings, state.errors)
    known = {f.path for f in describe_fields()}
    models = list(dict.fromkeys([*selectors.run_recent_models(), *_MODEL_SUGGESTIONS]))
    memory = _memory_view(plan_for_config(state.config, state.gpus)) if state.config is not None else None
    return render(
        request,
        "training/run_create.html",
        {
            "essentials": essentials,
            "sections": sections,
            "presets": list(PRESETS.values()),
            "preset_fields": ",".join(sorted({k for p in PRESETS.values() for k in p.overrides})),
            "preset": state.preset,
            "recent_runs": list(TrainingRun.objects.order_by("-id").only("id", "name")[:50]),
            "warnings": state.warnings,
            "errors": state.errors,
            "general_errors": {k: v for k, v in state.errors.items() if k not in known or k == "preset"},
            "checked": state.checked and not state.errors,
            "memory": memory,
            "gpus": state.gpus,
            "resolved_yaml": state.config.to_yaml() if state.config is not None else "",
            "name": state.name,
            "release_id": state.release_id,
            "heldout_release_id": state.heldout_release_id,
            "releases": _releases(),
            "models": models,
            "insight_count": len(INSIGHTS),
        },
    )


@role_required(TRAINER)
@require_http_methods(["GET", "POST"])
def run_create(request: HttpRequest) -> HttpResponse:
    """GET: the form (``?preset=NAME`` or ``?from=<run id>`` to start from). POST ``action``: ``check``
    re-renders with the warnings and memory plan, ``yaml`` downloads the resolved config, ``upload`` fills
    the form from a YAML file, ``launch`` creates and starts the run."""
    if request.method != "POST":
        return _render(request, _state_from_get(request))
    state = _state_from_post(request)
    action = request.POST.get("action", "check")
    if action == "yaml" and state.config is not None and not state.errors:
        response = HttpResponse(state.config.to_yaml(), content_type="application/yaml; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="run-config.yaml"'
        return response
    if action == "launch" and not state.errors and state.config is not None:
        config, _, _ = config_from_values(request.POST)
        if state.preset:
            config["preset"] = state.preset
        try:
            with transaction.atomic():
                run = services.run_create(
                    name=state.name,
                    config_dict=config,
                    release_id=state.release_id,
                    user=request.user,
                    heldout_release_id=state.heldout_release_id,
                )
                services.run_start(run_id=run.pk)
        except ValidationError as exc:
            for key, msgs in exc.message_dict.items():
                state.errors["__all__" if key == "config" else key] = "; ".join(msgs)
        else:
            messages.success(request, f"Run #{run.pk} queued on the gpu queue.")
            return redirect("training:run-detail", run_id=run.pk)
    return _render(request, state)
