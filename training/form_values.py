"""Config values as the run form shows and submits them: one string per dotted field.

Shared by the run form (``training.views_run_form``) and ``POST /api/runs/check/`` (its ``form`` key), so
the page without JavaScript and the live check parse a value the same way and name the same field in
their errors. Lists and sections are inline YAML (``[{start_step: 0, value: 0.6}]``).

This module imports nothing from Django.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

import yaml

from training.config import describe_fields

#: fields the server sets itself (never taken from a form or an uploaded file)
SERVER_FIELDS = frozenset({"output_dir"})


def literal_options(type_name: str) -> list[str] | None:
    """``"'a' | 'b'"`` -> ``["a", "b"]``; None when the type is not a Literal."""
    parts = [p.strip() for p in type_name.split("|")]
    try:
        values = [ast.literal_eval(p) for p in parts]
    except (ValueError, SyntaxError):
        return None
    return [v for v in values if isinstance(v, str)] or None


def nullable(type_name: str) -> tuple[str, bool]:
    """``"int | null"`` -> ``("int", True)``."""
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
    base, is_nullable = nullable(type_name)
    text = raw.strip()
    if base == "str":
        return raw
    if text == "":
        if is_nullable:
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
    if literal_options(base) is not None:
        return text
    try:
        return yaml.safe_load(text)  # lists and sections, e.g. [{start_step: 0, value: 0.6}]
    except yaml.YAMLError as exc:
        raise ValueError(f"not valid YAML: {exc}") from exc


def set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    node = target
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def get_dotted(source: Mapping[str, Any], dotted: str, default: Any) -> Any:
    node: Any = source
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


def values_from_config(config: Mapping[str, Any]) -> dict[str, str]:
    """Form strings of every field a user sets, from a (resolved or partial) nested config."""
    return {
        f.path: format_value(get_dotted(config, f.path, f.default), f.type)
        for f in describe_fields()
        if f.path not in SERVER_FIELDS
    }


def config_from_values(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """(nested config, the raw strings used, per-field parse errors) from submitted form strings; fields
    absent from ``values`` are left out (the config's defaults, or its preset's, apply)."""
    config: dict[str, Any] = {}
    raw_values: dict[str, str] = {}
    errors: dict[str, str] = {}
    for info in describe_fields():
        if info.path in SERVER_FIELDS or info.path not in values:
            continue
        raw = values.get(info.path)
        raw = "" if raw is None else str(raw)
        raw_values[info.path] = raw
        try:
            set_dotted(config, info.path, parse_value(raw, info.type))
        except ValueError as exc:
            errors[info.path] = str(exc)
    return config, raw_values, errors


def error_field(message: str) -> str | None:
    """The dotted field a core ``ConfigError`` message is about (its messages start with the path, e.g.
    ``clip.eps_low must be in (0, 1)``), or None. The longest matching path wins."""
    head = message.strip().split(" ", 1)[0].rstrip(":,")
    head = head.split("[", 1)[0]  # temperature.stages[1].value -> temperature.stages
    paths = sorted((f.path for f in describe_fields()), key=len, reverse=True)
    for path in paths:
        if head == path or head.startswith(path + "."):
            return path
    return None


__all__ = [
    "SERVER_FIELDS",
    "config_from_values",
    "error_field",
    "format_value",
    "get_dotted",
    "literal_options",
    "nullable",
    "parse_value",
    "set_dotted",
    "values_from_config",
]
