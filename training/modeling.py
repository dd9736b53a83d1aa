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


__all__ = ["eos_token_ids", "load_causal_lm", "resolve_autocast", "resolve_device", "resolve_dtype"]
