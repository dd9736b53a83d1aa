"""Loading a causal LM for training or evaluation: device, dtype and autocast resolution, eos ids.

Shared by the trainer (``training.trainer``) and model evaluation (``training.evaluate``).
This module imports nothing from Django; transformers is imported when a model is loaded.
"""

from __future__ import annotations

import typing
from typing import Any

import torch


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def resolve_dtype(name: str) -> torch.dtype:
    if name == "auto":
        return torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[name]


def resolve_autocast(name: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of forward passes, or None for none."""
    if name == "bf16" or (name == "auto" and device.type == "cuda"):
        return torch.bfloat16
    return None


def load_causal_lm(path: str, dtype: torch.dtype, device: torch.device) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    try:
        model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    except TypeError:  # transformers < 4.56 spells it torch_dtype
        model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=dtype)
    return typing.cast(torch.nn.Module, model.to(device))  # type: ignore[arg-type]


def parameter_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def wants_gradient_checkpointing(model: torch.nn.Module, forced: bool, min_params: int) -> bool:
    """Gradient checkpointing for this policy: when ``forced`` (``gradient_checkpointing: true``) or when
    it has at least ``min_params`` parameters (``memory.checkpointing_min_params``; 0 = never by size)."""
    return forced or (min_params > 0 and parameter_count(model) >= min_params)


def is_gradient_checkpointing(model: torch.nn.Module) -> bool:
    """Whether ``model`` recomputes activations in the backward pass (either transformers spelling)."""
    for name in ("is_activation_checkpointing", "is_gradient_checkpointing"):
        if hasattr(type(model), name) or name in vars(model):
            return bool(getattr(model, name))
    return False


def enable_gradient_checkpointing(model: torch.nn.Module) -> None:
    """Recompute each decoder layer's activations in the backward pass (non-reentrant checkpointing,
    which needs no input that requires grad); a model without support raises a clear error."""
    kwargs = {"use_reentrant": False}
    # transformers 5 renamed it activation_checkpointing_enable (the old name warns, goes in v6).
    new = getattr(model, "activation_checkpointing_enable", None)
    if callable(new):
        new(activation_checkpointing_kwargs=kwargs)
        return
    old = getattr(model, "gradient_checkpointing_enable", None)
    if not callable(old):
        raise ValueError(f"{type(model).__name__} does not support gradient checkpointing")
    old(gradient_checkpointing_kwargs=kwargs)


def eos_token_ids(tokenizer: Any, model: Any) -> list[int]:
    """End-of-sequence ids: the tokenizer's plus the generation config's (Qwen3 has two)."""
    ids: set[int] = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    gen_cfg = getattr(model, "generation_config", None)
    extra = getattr(gen_cfg, "eos_token_id", None) if gen_cfg is not None else None
    if isinstance(extra, int):
        ids.add(extra)
    elif isinstance(extra, list | tuple):
        ids.update(int(x) for x in extra)
    if not ids:
        raise ValueError("the tokenizer defines no eos token: set tokenizer.eos_token before training")
    return sorted(ids)


__all__ = [
    "enable_gradient_checkpointing",
    "eos_token_ids",
    "is_gradient_checkpointing",
    "load_causal_lm",
    "parameter_count",
    "resolve_autocast",
    "resolve_device",
    "resolve_dtype",
    "wants_gradient_checkpointing",
]
