"""Sweeps: expand a specification into runs, validate every run before creating any, launch, cancel, clone.

A specification is a sparse base config (nested, may name a ``preset``) and three axes, crossed in this
order: ``override_sets`` (a list of ``{dotted path: value}`` variants, e.g. three temperature schedules;
an optional ``"_label"`` key names a variant), ``axes`` (grid axes ``{"path", "values"}``, e.g.
``mask.policy x mask.probability`` or ``preset``) and ``seeds``. Each combination's overrides are applied
to a copy of the base config; ``training.config.config_from_dict`` resolves a ``preset`` first, then the
base values, then the overrides (CONTRACTS "Presets"), so a preset axis really gives each run its preset.

Nothing is created unless every expanded config validates and no two resolve to the same config; the
number of runs is capped by ``settings.SWEEP_MAX_RUNS``. The runs are ordinary ``TrainingRun`` rows
made by ``run_create`` and started with ``run_start`` (the ``gpu`` queue), so everything a run does
(lease, resume, live metrics) is unchanged.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from training.config import field_paths
from training.models import TERMINAL_STATUSES, Sweep, TrainingRun
from training.services.runs import config_validate, run_cancel, run_create, run_start
from webapp.roles import TRAINER, can_manage

#: the key of an override set that names it (not a config path)
LABEL_KEY = "_label"
#: the top-level key naming a preset (CONTRACTS "Presets"); an axis may sweep it
PRESET_KEY = "preset"
#: how many per-run errors a failed validation lists before "and N more"
MAX_LISTED_ERRORS = 8
_DEFAULT_MAX_RUNS = 64


def max_runs() -> int:
    """The most runs one sweep may launch (``SWEEP_MAX_RUNS``)."""
    return int(getattr(settings, "SWEEP_MAX_RUNS", _DEFAULT_MAX_RUNS))


@dataclass(frozen=True)
class SweepPoint:
    """One run of a sweep: its position, the overrides that make it, a label and its config dict."""

    index: int
    overrides: dict[str, Any]
    label: str
    config: dict[str, Any]


# --- shape checks --------------------------------------------------------------------------------


@functools.cache
def _known_paths() -> tuple[frozenset[str], frozenset[str]]:
    """(leaf field paths, section prefixes) of the config tree."""
    leaves = frozenset(field_paths())
    return leaves, frozenset(p.rsplit(".", 1)[0] for p in leaves if "." in p)


def _check_path(path: Any, where: str) -> str:
    """A dotted path an override may set: a leaf field, a whole section, or ``preset``."""
    if not isinstance(path, str) or not path.strip():
        raise ValidationError({"axes": [f"{where}: a config path must be a non-empty string, got {path!r}"]})
    path = path.strip()
    leaves, sections = _known_paths()
    if path == PRESET_KEY or path in leaves or path in sections:
        return path
    close = difflib.get_close_matches(path, sorted(leaves | sections | {PRESET_KEY}), n=1)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise ValidationError({"axes": [f"{where}: unknown config field {path!r}{hint}"]})


def _fmt(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _check_spec(
    base_config: Any, override_sets: Any, axes: Any, seeds: Any
) -> tuple[dict[str, Any], list[dict[str, Any]], list[tuple[str, list[Any]]], list[int]]:
    """Normalized ``(base, override_sets, axes, seeds)``; raises ``ValidationError`` naming the bad part."""
    if not isinstance(base_config, Mapping):
        raise ValidationError({"base_config": ["must be a JSON object (a nested config)"]})
    base = _nested(dict(base_config))
    if not isinstance(override_sets, list):
        raise ValidationError({"override_sets": ["must be a list of {dotted path: value} objects"]})
    sets: list[dict[str, Any]] = []
    for i, item in enumerate(override_sets, 1):
        if not isinstance(item, Mapping):
            raise ValidationError({"override_sets": [f"override set {i} must be an object, got {item!r}"]})
        clean: dict[str, Any] = {}
        for key, value in item.items():
            if key == LABEL_KEY:
                if not isinstance(value, str):
                    raise ValidationError(
                        {"override_sets": [f"override set {i}: {LABEL_KEY} must be a string"]}
                    )
                clean[LABEL_KEY] = value.strip()
                continue
            try:
                clean[_check_path(key, f"override set {i}")] = value
            except ValidationError as exc:
                raise ValidationError({"override_sets": exc.message_dict["axes"]}) from exc
        if not any(k != LABEL_KEY for k in clean):
            raise ValidationError({"override_sets": [f"override set {i} changes nothing"]})
        sets.append(clean)
    if not isinstance(axes, list):
        raise ValidationError({"axes": ['must be a list of {"path": ..., "values": [...]} objects']})
    grid: list[tuple[str, list[Any]]] = []
    for i, axis in enumerate(axes, 1):
        if not isinstance(axis, Mapping) or "path" not in axis or "values" not in axis:
            raise ValidationError(
                {"axes": [f'axis {i} must look like {{"path": "mask.probability", "values": [...]}}']}
            )
        path = _check_path(axis["path"], f"axis {i}")
        values = axis["values"]
        if not isinstance(values, list) or not values:
            raise ValidationError({"axes": [f"axis {i} ({path}): values must be a non-empty list"]})
        if len({_fmt(v) for v in values}) != len(values):
            raise ValidationError({"axes": [f"axis {i} ({path}): a value is listed twice"]})
        if path == "seed":
            raise ValidationError({"axes": [f"axis {i}: sweep seeds with the seeds axis, not a grid axis"]})
        if any(path == p for p, _ in grid):
            raise ValidationError({"axes": [f"axis {i}: {path} is already an axis"]})
        clashing = [n for n, s in enumerate(sets, 1) if path in s]
        if clashing:
            raise ValidationError(
                {"axes": [f"axis {i}: {path} is also set by override set {clashing[0]}; set it in one place"]}
            )
        grid.append((path, list(values)))
    if not isinstance(seeds, list) or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise ValidationError({"seeds": ["must be a list of integers"]})
    if any(not 0 <= s < 2**32 for s in seeds):
        raise ValidationError({"seeds": ["seeds are integers from 0 to 4294967295"]})
    if len(set(seeds)) != len(seeds):
        raise ValidationError({"seeds": ["a seed is listed twice"]})
    if seeds and any("seed" in s for s in sets):
        raise ValidationError({"seeds": ["an override set also sets seed; use one or the other"]})
    return base, sets, grid, list(seeds)


def _nested(data: dict[str, Any]) -> dict[str, Any]:
    """A config dict whose dotted top-level keys (``{"mask.probability": 0.2}``) are nested."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        _set_dotted(out, key, _nested(value) if isinstance(value, dict) else value)
    return out


def _set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    node = target
    parts = dotted.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = json.loads(json.dumps(value))  # a private copy: runs never share a list


def sweep_size(*, override_sets: Sequence[Any], axes: Sequence[Any], seeds: Sequence[Any]) -> int:
    """How many runs a specification expands to (without expanding it)."""
    n = max(1, len(override_sets)) * max(1, len(seeds))
    for axis in axes:
        values = axis.get("values") if isinstance(axis, Mapping) else None
        n *= len(values) if isinstance(values, list) and values else 1
    return n


def sweep_expand(
    *,
    base_config: Mapping[str, Any],
    override_sets: Sequence[Mapping[str, Any]] = (),
    axes: Sequence[Mapping[str, Any]] = (),
    seeds: Sequence[int] = (),
) -> list[SweepPoint]:
    """The runs of a specification, in order (override sets outermost, then each axis, seeds innermost).

    Pure: checks the specification's shape (``ValidationError`` naming the part) and the cap, but does not
    validate the configs (see :func:`sweep_validate`).
    """
    base, sets, grid, seed_list = _check_spec(
        base_config,
        list(override_sets) if isinstance(override_sets, list | tuple) else override_sets,
        list(axes) if isinstance(axes, list | tuple) else axes,
        list(seeds) if isinstance(seeds, list | tuple) else seeds,
    )
    size = sweep_size(override_sets=sets, axes=[{"values": v} for _, v in grid], seeds=seed_list)
    if size > max_runs():
        parts = [f"{len(sets)} override sets"] if sets else []
        parts += [f"{len(values)} {path}" for path, values in grid]
        parts += [f"{len(seed_list)} seeds"] if seed_list else []
        raise ValidationError(
            {
                "__all__": [
                    f"this sweep expands to {size} runs ({' x '.join(parts)}); the limit is {max_runs()} "
                    "(setting SWEEP_MAX_RUNS): drop values or split it into several sweeps"
                ]
            }
        )
    points: list[SweepPoint] = []
    grid_values = itertools.product(*[values for _, values in grid]) if grid else [()]
    seed_axis: list[int | None] = list(seed_list) or [None]
    combos = itertools.product(sets or [{}], list(grid_values), seed_axis)
    for index, (variant, values, seed) in enumerate(combos):
        overrides: dict[str, Any] = {k: v for k, v in variant.items() if k != LABEL_KEY}
        overrides.update({path: value for (path, _), value in zip(grid, values)})
        if seed is not None:
            overrides["seed"] = seed
        label_parts = (
            [variant[LABEL_KEY]]
            if variant.get(LABEL_KEY)
            else [f"{k}={_fmt(v)}" for k, v in variant.items() if k != LABEL_KEY]
        )
        label_parts += [f"{path}={_fmt(value)}" for (path, _), value in zip(grid, values)]
        if seed is not None:
            label_parts.append(f"seed={seed}")
        config = json.loads(json.dumps(base))
        for path, value in overrides.items():
            _set_dotted(config, path, value)
        points.append(
            SweepPoint(
                index=index, overrides=overrides, label=", ".join(label_parts) or "base", config=config
            )
        )
    return points


def sweep_validate(*, points: Sequence[SweepPoint], has_release: bool) -> list[dict[str, Any]]:
    """Validate every point's config; the resolved configs (``to_dict()``), in order.

    Raises one ``ValidationError`` (``{"config": [...]}``) listing every failing run by its number and
    combination with the core's message (which names the field), and one for two combinations that
    resolve to the same config (an override that changes nothing would launch a duplicate run).
    """
    errors: list[str] = []
    resolved: list[dict[str, Any]] = []
    seen: dict[str, SweepPoint] = {}
    for point in points:
        try:
            config, _ = config_validate(point.config)
        except ValidationError as exc:
            for msg in exc.message_dict.get("config", exc.messages):
                errors.append(f"run {point.index + 1} ({point.label}): {msg}")
            continue
        if not has_release and not config.dataset.release.strip():
            errors.append(
                f"run {point.index + 1} ({point.label}): choose a dataset release, or set "
                "dataset.release to a JSONL file"
            )
            continue
        plain = config.to_dict()
        key = json.dumps(plain, sort_keys=True)
        if key in seen:
            errors.append(
                f"runs {seen[key].index + 1} ({seen[key].label}) and {point.index + 1} ({point.label}) "
                "resolve to the same config: an override has no effect (a preset axis needs a base "
                "config that does not set the preset's fields)"
            )
            continue
        seen[key] = point
        resolved.append(plain)
    if errors:
        shown = errors[:MAX_LISTED_ERRORS]
        if len(errors) > len(shown):
            shown.append(f"... and {len(errors) - len(shown)} more")
        raise ValidationError({"config": shown})
    return resolved


# --- lifecycle -----------------------------------------------------------------------------------


def _release_exists(release_id: int | None, field: str) -> None:
    from curation.models import DatasetRelease

    if release_id is not None and not DatasetRelease.objects.filter(pk=release_id).exists():
        raise ValidationError({field: [f"dataset release {release_id} does not exist"]})


def _run_name(sweep_name: str, label: str) -> str:
    name = f"{sweep_name} [{label}]"
    return name if len(name) <= 200 else name[:199] + "…"


@transaction.atomic
def sweep_create(
    *,
    name: str,
    base_config: Mapping[str, Any],
    override_sets: Sequence[Mapping[str, Any]] = (),
    axes: Sequence[Mapping[str, Any]] = (),
    seeds: Sequence[int] = (),
    release_id: int | None = None,
    heldout_release_id: int | None = None,
    user: Any = None,
    description: str = "",
    cloned_from: Sweep | None = None,
    launch: bool = True,
) -> Sweep:
    """Validate the whole sweep, then create its runs (and, with ``launch``, start them on ``gpu``).

    All or nothing: any invalid combination, a duplicate, a missing release or more than
    ``SWEEP_MAX_RUNS`` runs raises ``ValidationError`` before a single row is written.
    """
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": ["give the sweep a name"]})
    _release_exists(release_id, "release_id")
    _release_exists(heldout_release_id, "heldout_release_id")
    if release_id is not None and release_id == heldout_release_id:
        raise ValidationError(
            {"heldout_release_id": ["the held-out release must not be the training release"]}
        )
    override_sets, axes, seeds = list(override_sets), list(axes), list(seeds)
    points = sweep_expand(base_config=base_config, override_sets=override_sets, axes=axes, seeds=seeds)
    sweep_validate(points=points, has_release=release_id is not None)
    base, sets, grid, seed_list = _check_spec(base_config, override_sets, axes, seeds)
    sweep = Sweep.objects.create(
        name=name,
        description=description,
        base_config=base,
        override_sets=sets,
        axes=[{"path": p, "values": v} for p, v in grid],
        seeds=seed_list,
        release_id=release_id,
        heldout_release_id=heldout_release_id,
        cloned_from=cloned_from,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    for point in points:
        run = run_create(
            name=_run_name(name, point.label),
            config_dict=point.config,
            release_id=release_id,
            user=user,
            heldout_release_id=heldout_release_id,
        )
        TrainingRun.objects.filter(pk=run.pk).update(sweep=sweep, sweep_overrides=point.overrides)
        if launch:
            run_start(run_id=run.pk)
    return sweep


@transaction.atomic
def sweep_cancel(*, sweep_id: int, user: Any = None) -> Sweep:
    """Cancel every run of the sweep that has not ended (queued ones at once, running ones after their
    step). ``user`` must pass the owner rule on the sweep (its creator holding the trainer role, or an
    admin; ``PermissionDenied`` otherwise); ``None`` is the system itself."""
    sweep = Sweep.objects.select_for_update().get(pk=sweep_id)
    if user is not None and not can_manage(user, sweep.created_by_id, roles=(TRAINER,)):
        raise PermissionDenied("only the sweep's creator or an admin may cancel it")
    sweep.cancel_requested = True
    sweep.save(update_fields=["cancel_requested", "updated_at"])
    live = sweep.runs.exclude(status__in=list(TERMINAL_STATUSES)).order_by("id").values_list("id", flat=True)
    for run_id in list(live):
        run_cancel(run_id=run_id)  # the sweep's owner rule above decided for all of its runs
    return sweep


def sweep_clone(*, sweep_id: int, user: Any, name: str | None = None, launch: bool = True) -> Sweep:
    """A new sweep with the same specification (re-validated against today's config schema), owned by
    ``user`` and launched unless ``launch`` is False."""
    source = Sweep.objects.get(pk=sweep_id)
    spec = source.spec()
    return sweep_create(
        name=(name or "").strip() or f"{source.name} (clone)",
        base_config=spec["base_config"],
        override_sets=spec["override_sets"],
        axes=spec["axes"],
        seeds=spec["seeds"],
        release_id=spec["release_id"],
        heldout_release_id=spec["heldout_release_id"],
        user=user,
        description=source.description,
        cloned_from=source,
        launch=launch,
    )


__all__ = [
    "LABEL_KEY",
    "SweepPoint",
    "max_runs",
    "sweep_cancel",
    "sweep_clone",
    "sweep_create",
    "sweep_expand",
    "sweep_size",
    "sweep_validate",
]
