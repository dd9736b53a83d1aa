"""Rollout engines behind one interface (``RolloutEngine``): ``transformers`` and ``vllm``."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from training.rollout.base import Completion, RolloutEngine
from training.rollout.hf import TransformersEngine


def make_engine(
    kind: str,
    *,
    model: torch.nn.Module,
    model_path: str,
    pad_token_id: int,
    eos_token_ids: Sequence[int],
    max_model_len: int,
    batch_size: int = 0,
    gpu_memory_utilization: float = 0.35,
    enforce_eager: bool = False,
    dtype: str = "bfloat16",
    seed: int = 0,
    autocast_dtype: torch.dtype | None = None,
    sleep_level: int = 2,
) -> RolloutEngine:
    """Build the engine named by ``rollout.engine``. ``vllm`` loads ``model_path`` itself and then
    receives ``model``'s weights (which may already differ from ``model_path`` after a resume)."""
    if kind == "transformers":
        return TransformersEngine(
            model,
            pad_token_id=pad_token_id,
            eos_token_ids=eos_token_ids,
            batch_size=batch_size,
            autocast_dtype=autocast_dtype,
        )
    if kind == "vllm":
        from training.rollout.vllm_engine import VLLMEngine

        engine = VLLMEngine(
            model_path,
            eos_token_ids=eos_token_ids,
            max_model_len=max_model_len,
            gpu_memory_utilization=gpu_memory_utilization,
            dtype=dtype,
            enforce_eager=enforce_eager,
            seed=seed,
            sleep_level=sleep_level,
        )
        engine.sync_weights(model)
        return engine
    raise ValueError(f"unknown rollout engine {kind!r}: use transformers or vllm")


__all__ = ["Completion", "RolloutEngine", "TransformersEngine", "make_engine"]
