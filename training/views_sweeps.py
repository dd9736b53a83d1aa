"""Pages of sweeps and run comparison: sweep list, create form (check, then launch), sweep detail with
its runs' statuses live, cancel, and the comparison page ``/training/compare/?runs=1,2,3`` (or
``?sweep=<id>``) whose charts ``webapp/static/js/compare.js`` draws from ``/api/runs/compare/``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from training import selectors_sweeps
from training.models import Sweep
from training.services import series, sweeps
from webapp.roles import TRAINER, VIEWER, can_manage, role_required


@dataclass(frozen=True)
class Example:
    """A ready-made sweep the form can load: the paper's ablations."""

    key: str
    title: str
    preset: str = ""
    override_sets: str = ""
    axes: str = ""
    seeds: str = ""


EXAMPLES: tuple[Example, ...] = (
    Example("presets", "GRPO vs DAPO vs MicroCoder-GRPO", axes="preset: [grpo, dapo, microcoder]\n"),
    Example(
        "mask",
        "Mask policy x probability",
        axes="mask.policy: [conditional, all]\nmask.probability: [0.1, 0.3, 1.0]\n",
    ),
    Example(
        "temperature",
        "Three temperature schedules",
        override_sets=(
            "- _label: constant 1.2\n  temperature.policy: constant\n  temperature.value: 1.2\n"
            "- _label: staged 0.6 -> 1.8\n  temperature.policy: staged\n"
            "  temperature.stages: [{start_step: 1, value: 0.6}, {start_step: 140, value: 1.8}]\n"
            "- _label: diversity-chosen\n  temperature.policy: diversity\n"
        ),
    ),
    Example(
        "kl-clip", "KL coefficient x clip-higher", axes="kl_coef: [0.0, 0.04]\nclip.eps_high: [0.2, 0.28]\n"
    ),
    Example("seeds", "Three seeds of MicroCoder-GRPO", preset="microcoder", seeds="0, 1, 2"),
)
_EXAMPLES = {e.key: e for e in EXAMPLES}


def _preset_names() -> list[str]:
    try:
        from training.presets import preset_names
    except ImportError:  # presets are optional for the form; a posted "preset" is validated by the core
        return []
    return list(preset_names())


def _releases() -> list[Any]:
    from curation.models import DatasetRelease

    return list(DatasetRelease.objects.order_by("-id")[:200])


def _yaml(value: Any) -> str:
    if value in (None, {}, []):
        return ""
    return yaml.safe_dump(value, sort_keys=False, default_flow_style=None, allow_unicode=True)


def _load_yaml(text: str, field: str, kind: type, example: str) -> Any:
    if not text.strip():
        return kind()
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValidationError({field: [f"not valid YAML: {exc}"]}) from exc
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise ValidationError({field: [f"must be a YAML {kind.__name__}, e.g. {example}"]})
    return value


def _parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.replace(",", " ").split():
        try:
            seeds.append(int(part))
        except ValueError as exc:
            raise ValidationError(
                {"seeds": [f"seeds are integers separated by commas, got {part!r}"]}
            ) from exc
    return seeds


def _int_or_none(raw: str) -> int | None:
    return selectors_sweeps.as_id(raw)


def spec_from_form(post: Any) -> dict[str, Any]:
    """The sweep specification a submitted form describes; ``ValidationError`` naming the form field."""
    base = _load_yaml(post.get("base_config", ""), "base_config", dict, "{max_steps: 300}")
    preset = post.get("preset", "").strip()
    if preset:
        if "preset" in base and base["preset"] != preset:
            raise ValidationError(
                {
                    "base_config": [
                        f"the base config names preset {base['preset']!r} but the preset field says {preset!r}"
                    ]
                }
            )
        base = {"preset": preset, **{k: v for k, v in base.items() if k != "preset"}}
    axes_map = _load_yaml(post.get("axes", ""), "axes", dict, "{mask.probability: [0.1, 0.3]}")
    axes = []
    for path, values in axes_map.items():
        if not isinstance(values, list):
            raise ValidationError({"axes": [f"{path}: list the values, e.g. {path}: [a, b]"]})
        axes.append({"path": str(path), "values": values})
    return {
        "base_config": base,
        "override_sets": _load_yaml(
            post.get("override_sets", ""),
            "override_sets",
            list,
            "[{temperature.value: 1.0}, {temperature.value: 1.2}]",
        ),
        "axes": axes,
        "seeds": _parse_seeds(post.get("seeds", "")),
        "release_id": _int_or_none(post.get("release_id", "")),
        "heldout_release_id": _int_or_none(post.get("heldout_release_id", "")),
    }


def _form_from_spec(sweep: Sweep) -> dict[str, str]:
    base = dict(sweep.base_config)
    preset = str(base.pop("preset", "") or "")
    return {
        "name": f"{sweep.name} (clone)",
        "description": sweep.description,
        "preset": preset,
        "base_config": _yaml(base),
        "override_sets": _yaml(sweep.override_sets),
        "axes": "".join(_yaml({a["path"]: a["values"]}) for a in sweep.axes),
        "seeds": ", ".join(str(s) for s in sweep.seeds),
        "release_id": str(sweep.release_id or ""),
        "heldout_release_id": str(sweep.heldout_release_id or ""),
    }


def _errors(exc: ValidationError) -> dict[str, str]:
    if not hasattr(exc, "error_dict"):
        return {"__all__": "; ".join(exc.messages)}
    out: dict[str, str] = {}
    for key, msgs in exc.message_dict.items():
        out["config" if key == "__all__" else key] = "\n".join(msgs)
    return out


@role_required(VIEWER)
def sweep_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(selectors_sweeps.sweep_list(), 50).get_page(request.GET.get("page"))
    rows = [
        {"sweep": s, "status": selectors_sweeps.sweep_status(s), "counts": selectors_sweeps.sweep_counts(s)}
        for s in page.object_list
    ]
    return render(request, "training/sweeps/list.html", {"page": page, "rows": rows})


@role_required(TRAINER)
@require_http_methods(["GET", "POST"])
def sweep_create(request: HttpRequest) -> HttpResponse:
    """GET: the form (``?from=<sweep>`` copies a sweep, ``?example=<key>`` loads one of :data:`EXAMPLES`).
    POST ``action=check`` lists the runs the sweep expands to; ``action=launch`` creates and starts them."""
    errors: dict[str, str] = {}
    points: list[sweeps.SweepPoint] = []
    form: dict[str, str] = {
        "name": "",
        "description": "",
        "preset": "",
        "base_config": "",
        "override_sets": "",
        "axes": "",
        "seeds": "",
        "release_id": "",
        "heldout_release_id": "",
    }
    if request.method == "POST":
        form.update({k: request.POST.get(k, "") for k in form})
        try:
            spec = spec_from_form(request.POST)
            points = sweeps.sweep_expand(
                base_config=spec["base_config"],
                override_sets=spec["override_sets"],
                axes=spec["axes"],
                seeds=spec["seeds"],
            )
            sweeps.sweep_validate(points=points, has_release=spec["release_id"] is not None)
            if request.POST.get("action") == "launch":
                sweep = sweeps.sweep_create(
                    name=form["name"], description=form["description"], user=request.user, **spec
                )
                messages.success(request, f"Sweep #{sweep.pk}: {len(points)} runs queued on the gpu queue.")
                return redirect("training:sweep-detail", sweep_id=sweep.pk)
        except ValidationError as exc:
            errors = _errors(exc)
    else:
        source = request.GET.get("from", "")
        example = _EXAMPLES.get(request.GET.get("example", ""))
        if source:
            source_id = selectors_sweeps.as_id(source)
            sweep = Sweep.objects.filter(pk=source_id).first() if source_id is not None else None
            if sweep is None:
                raise Http404("no such sweep")
            form.update(_form_from_spec(sweep))
        elif example is not None:
            form.update(
                {
                    "name": example.title,
                    "preset": example.preset,
                    "override_sets": example.override_sets,
                    "axes": example.axes,
                    "seeds": example.seeds,
                }
            )
    return render(
        request,
        "training/sweeps/create.html",
        {
            "form": form,
            "errors": errors,
            "points": points if not errors else [],
            "presets": _preset_names(),
            "releases": _releases(),
            "examples": EXAMPLES,
            "max_runs": sweeps.max_runs(),
        },
    )


@role_required(VIEWER)
def sweep_detail(request: HttpRequest, sweep_id: int) -> HttpResponse:
    try:
        sweep = selectors_sweeps.sweep_get(sweep_id=sweep_id)
    except Sweep.DoesNotExist as exc:
        raise Http404("no such sweep") from exc
    runs = list(selectors_sweeps.sweep_runs(sweep_id=sweep_id))
    status = selectors_sweeps.sweep_status(sweep)
    return render(
        request,
        "training/sweeps/detail.html",
        {
            "sweep": sweep,
            "runs": runs,
            "status": status,
            "counts": selectors_sweeps.sweep_counts(sweep),
            "axes_yaml": "".join(_yaml({a["path"]: a["values"]}) for a in sweep.axes),
            "override_sets_yaml": _yaml(sweep.override_sets),
            "base_yaml": _yaml(sweep.base_config),
            "compare_url": f"{reverse('training:compare')}?sweep={sweep.pk}",
            "can_cancel": can_manage(request.user, sweep.created_by_id) and status in ("queued", "running"),
        },
    )


@role_required(TRAINER)
@require_POST
def sweep_cancel(request: HttpRequest, sweep_id: int) -> HttpResponse:
    if not Sweep.objects.filter(pk=sweep_id).exists():
        raise Http404("no such sweep")
    sweeps.sweep_cancel(
        sweep_id=sweep_id, user=request.user
    )  # PermissionDenied (403) unless the owner rule allows
    messages.success(
        request,
        f"Cancellation of sweep #{sweep_id} requested: queued runs ended, running ones "
        "stop after their current step.",
    )
    return redirect("training:sweep-detail", sweep_id=sweep_id)


@role_required(VIEWER)
def compare(request: HttpRequest) -> HttpResponse:
    """``?runs=1,2,3`` or ``?sweep=<id>`` (its runs): the overlay page."""
    sweep = None
    left_out = 0
    raw_sweep = request.GET.get("sweep", "")
    try:
        if raw_sweep:
            sweep_id = selectors_sweeps.as_id(raw_sweep)
            if sweep_id is None:
                raise ValueError(f"sweep must be a sweep id, got {raw_sweep!r}")
            sweep = Sweep.objects.filter(pk=sweep_id).first()
            if sweep is None:
                raise Http404("no such sweep")
            run_ids = list(selectors_sweeps.sweep_runs(sweep_id=sweep.pk).values_list("pk", flat=True))
            if not run_ids:
                raise ValueError("this sweep has no runs to compare")
            left_out = max(0, len(run_ids) - series.MAX_RUNS)
            run_ids = run_ids[: series.MAX_RUNS]
        else:
            # ?runs=1,2,3 or the run list's checkboxes: ?runs=1&runs=2
            raw = ",".join(request.GET.getlist("runs"))
            run_ids = selectors_sweeps.parse_run_ids(raw, limit=series.MAX_RUNS)
    except ValueError as exc:
        return HttpResponseBadRequest(f"{exc}. Pick runs on the run list and press Compare selected.")
    found, missing = selectors_sweeps.existing_runs(run_ids)
    if not found:
        raise Http404("none of these runs exists")
    return render(
        request,
        "training/compare.html",
        {
            "sweep": sweep,
            "run_ids": found,
            "missing": missing,
            "left_out": left_out,
            "compare_config": {
                "run_ids": found,
                "panels": selectors_sweeps.compare_panels(),
                "points": series.DEFAULT_POINTS,
            },
        },
    )
