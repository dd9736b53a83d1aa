"""The MicroCoder-GRPO run configuration.

One frozen dataclass tree, loaded from YAML (``load_config``) with optional dotted overrides
(``mask.probability=0.2``). Every field carries a help string (``field(metadata={"help": ...})``) and
``__post_init__`` checks whose errors say how to fix the value. ``describe_fields()`` lists every
field with its dotted path, type, default and help text; the UI renders these next to the training
insights of ``training.insights`` (each insight names one of these dotted paths).

Defaults are MicroCoder-GRPO's (../shared/INSIGHTS.md; each field's help names its source):
conditional truncation mask with p = 0.1 and the paper's exact 128-token repetition test, no KL (and
then no reference model), asymmetric clip 0.2 / 0.28 acting on 4 minibatch updates per rollout,
token-level loss, constant T = 1.2, constant learning rate 1e-6.

Presets (``training.presets``: ``grpo``, ``dapo``, ``microcoder``) are starting configs: a dict or
file with ``preset: NAME`` (or ``load_config(..., preset=NAME)``) gets the preset's values first, then
its own values, then the overrides, so every field can still be changed.

Layout: the section dataclasses live in ``training.config_sections`` (the method's) and
``training.config_run_sections`` (dataset, rollout, prompt, evaluation), the tree ``GRPOConfig`` in
``training.config_schema``; this module loads and overrides configs, lists the fields for the UI and
re-exports every public name, so ``from training.config import ...`` is the one import path.

This module imports nothing from Django.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from training.config_memory import MemoryConfig
from training.config_run_sections import DatasetConfig, EvalConfig, PromptConfig, RolloutConfig
from training.config_schema import DynamicSamplingConfig, GRPOConfig, _to_plain
from training.config_sections import (
    ClipConfig,
    ConfigError,
    MaskConfig,
    RewardConfig,
    TemperatureConfig,
    TemperatureStage,
)

# --- (de)serialization -------------------------------------------------------------------------


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Literal:
        return " | ".join(repr(a) for a in typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        return " | ".join("null" if a is type(None) else _type_name(a) for a in typing.get_args(tp))
    if origin is tuple:
        return f"list[{_type_name(typing.get_args(tp)[0])}]"
    if dataclasses.is_dataclass(tp):
        return "section"
    return getattr(tp, "__name__", str(tp))


def _coerce(tp: Any, value: Any, path: str) -> Any:
    """Convert a YAML value to the field type ``tp`` or raise a ConfigError naming ``path``."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if isinstance(value, tp):
            return value
        if (
            isinstance(tp, type)
            and tp is TemperatureStage
            and isinstance(value, list | tuple)
            and len(value) == 2
        ):
            value = {"start_step": value[0], "value": value[1]}
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path} must be a mapping of fields, got {value!r}.")
        return _build(tp, value, path)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        errors = []
        for a in non_none:
            try:
                return _coerce(a, value, path)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{path}: invalid value {value!r}.")
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            raise ConfigError(f"{path} must be one of {', '.join(map(repr, allowed))}, got {value!r}.")
        return value
    if origin is tuple:
        (item_tp, _ellipsis) = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise ConfigError(f"{path} must be a list, got {value!r}.")
        return tuple(_coerce(item_tp, v, f"{path}[{i}]") for i, v in enumerate(value))
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path} must be true or false, got {value!r}.")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{path} must be an integer, got {value!r}.")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{path} must be a number, got {value!r}.")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path} must be a string, got {value!r}.")
        return value
    return value


def _build(cls: type, data: Mapping[str, Any], prefix: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = [k for k in data if k not in names]
    if unknown:
        where = f"{prefix}." if prefix else ""
        raise ConfigError(
            f"unknown field(s) {', '.join(where + k for k in unknown)}; known: {', '.join(names)}."
        )
    kwargs = {k: _coerce(hints[k], v, f"{prefix}.{k}" if prefix else k) for k, v in data.items()}
    return cls(**kwargs)


def config_from_dict(data: Mapping[str, Any]) -> GRPOConfig:
    """Build a validated GRPOConfig from nested plain data (as read from YAML).

    ``data["preset"]`` names a preset of ``training.presets`` whose values are applied first, under
    ``data``'s own. ``updates_per_rollout: U`` (the field this replaced, in stored configs) is read as
    ``minibatch_prompts = prompts_per_step / U``."""
    merged = _with_preset(data, str(data.get("preset") or ""))
    return typing.cast(GRPOConfig, _build(GRPOConfig, _legacy_fields(merged), ""))


def _with_preset(data: Mapping[str, Any], preset: str) -> dict[str, Any]:
    """``data`` merged over the preset's values (``preset`` "" = none); the result names the preset."""
    plain = _deep_copy(dict(data))
    if not preset:
        return plain
    from training.presets import get_preset

    base = _apply_overrides({}, dict(get_preset(preset).overrides))
    merged = _deep_merge(base, plain)
    merged["preset"] = preset
    return merged


def _deep_merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _legacy_fields(data: dict[str, Any]) -> dict[str, Any]:
    if "updates_per_rollout" not in data:
        return data
    out = dict(data)
    updates = out.pop("updates_per_rollout")
    prompts = out.get("prompts_per_step", GRPOConfig.prompts_per_step)
    if isinstance(updates, bool) or not isinstance(updates, int) or updates < 1:
        raise ConfigError(f"updates_per_rollout must be an integer >= 1, got {updates!r}.")
    if "minibatch_prompts" in out:
        raise ConfigError(
            "give minibatch_prompts or updates_per_rollout, not both: updates_per_rollout = "
            "prompts_per_step / minibatch_prompts."
        )
    if not isinstance(prompts, int) or prompts % updates != 0:
        raise ConfigError(
            f"prompts_per_step ({prompts}) must be a multiple of updates_per_rollout ({updates}) so every "
            "minibatch holds whole groups; better, set minibatch_prompts (prompts per optimizer update)."
        )
    out["minibatch_prompts"] = prompts // updates
    return out


def _apply_overrides(data: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    out = _deep_copy(data)
    for dotted, value in overrides.items():
        node = out
        parts = dotted.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = {}
                node[part] = child
            if not isinstance(child, dict):
                raise ConfigError(f"override {dotted!r}: {part!r} is not a section.")
            node = child
        node[parts[-1]] = value
    return out


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data


def parse_override(text: str) -> tuple[str, Any]:
    """``"mask.probability=0.2"`` -> ``("mask.probability", 0.2)``; the value is parsed as YAML."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like section.field=value.")
    key, raw = text.split("=", 1)
    return key.strip(), yaml.safe_load(raw) if raw.strip() else ""


def load_config(
    path: str | Path | None = None,
    overrides: Iterable[str] | Mapping[str, Any] = (),
    preset: str | None = None,
) -> GRPOConfig:
    """Read a YAML config (or start from the defaults when ``path`` is None) and apply overrides.

    ``overrides`` are ``"dotted.path=value"`` strings (values parsed as YAML) or a mapping of dotted
    paths to values. ``preset`` (or a ``preset`` key of the file or overrides) names a preset whose
    values come first: preset, then file, then overrides. Unknown fields, unknown presets and invalid
    values raise ConfigError with a fix-it message.
    """
    data: dict[str, Any] = {}
    if path is not None:
        loaded = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path}: the top level of a config file must be a mapping.")
        data = loaded or {}
    items = dict(
        overrides.items() if isinstance(overrides, Mapping) else (parse_override(o) for o in overrides)
    )
    name = str(items.get("preset") or preset or data.get("preset") or "")
    return config_from_dict(_apply_overrides(_with_preset(data, name), items))


# --- field catalogue for the UI ------------------------------------------------------------------


@dataclass(frozen=True)
class FieldInfo:
    """One configurable field: ``path`` is dotted (``mask.probability``)."""

    path: str
    type: str
    default: Any
    help: str


def describe_fields(cls: type = GRPOConfig, prefix: str = "") -> list[FieldInfo]:
    """Every leaf field of the config tree with its dotted path, type name, default and help text."""
    hints = typing.get_type_hints(cls)
    out: list[FieldInfo] = []
    for f in dataclasses.fields(cls):
        path = f"{prefix}{f.name}"
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp) and isinstance(tp, type) and tp is not TemperatureStage:
            out.extend(describe_fields(tp, prefix=f"{path}."))
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        out.append(
            FieldInfo(
                path=path, type=_type_name(tp), default=_to_plain(default), help=f.metadata.get("help", "")
            )
        )
    return out


def field_paths() -> list[str]:
    """Dotted paths of every leaf field (``describe_fields`` without the details)."""
    return [f.path for f in describe_fields()]


def get_field(config: Any, path: str) -> Any:
    """The value at a dotted path of a config (``get_field(cfg, "clip.eps_high")``)."""
    value = config
    for part in path.split("."):
        value = getattr(value, part)
    return value


__all__: Sequence[str] = (
    "ClipConfig",
    "ConfigError",
    "DatasetConfig",
    "DynamicSamplingConfig",
    "EvalConfig",
    "FieldInfo",
    "GRPOConfig",
    "MaskConfig",
    "MemoryConfig",
    "PromptConfig",
    "RewardConfig",
    "RolloutConfig",
    "TemperatureConfig",
    "TemperatureStage",
    "config_from_dict",
    "describe_fields",
    "field_paths",
    "get_field",
    "load_config",
    "parse_override",
)
