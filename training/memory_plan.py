"""Memory planner: per-GPU memory of a run before it is launched, and what to change when it does not fit.

``plan_memory(config, shape, gpus)`` adds up, per GPU:

- the update phase: trained weights, gradients and AdamW's two moments (in ``dtype``; divided by the
  number of GPUs under FSDP, plus the all-gather buffer of two decoder layers), the bfloat16 copies of
  the weights autocast keeps for the backward pass, the reference model (only with ``kl_coef > 0``),
  the activations autograd saves for one micro-batch (with or without gradient checkpointing, which is
  on when the trainer turns it on: ``gradient_checkpointing: true`` or a model of at least
  ``memory.checkpointing_min_params`` parameters, as ``training.modeling.wants_gradient_checkpointing``)
  and the logits of the trainer's chunked log-probability head (``training.logprobs``, on one process
  and under FSDP alike; the full ``(tokens, vocabulary)`` path's figure is kept in ``alternatives`` for
  comparison);
- the rollout phase: vLLM's share ``rollout.gpu_memory_utilization`` of the GPU (its weights plus KV
  cache), or the transformers engine's KV cache for ``rollout.batch_size`` sequences.

Without vLLM's sleep mode the rollout engine keeps its memory through the update, so the two add up.

A micro-batch is ``micro_batch_size`` full-length sequences, or with ``memory.micro_batch_tokens`` (the
trainer packs samples while their padded size stays within the budget, a longer sample alone) at most
``max(budget, prompt + response length)`` padded tokens, of which the completions' share at full length.

The activation model is per token and per decoder layer, in elements: ``6h + 5q + 4kv + 4I`` saved
tensors (h hidden, q = heads x head_dim, kv = kv_heads x head_dim, I intermediate; the norms' inputs and
outputs, the q/k/v projections before and after their norms, the attention output, the MLP's gate, up,
activation and product), no (length x length) term (flash/memory-efficient attention). With
checkpointing only each layer's input is kept, and one layer is recomputed at a time (after the logits
stage, so the larger of the two counts). The chunked head holds two float32 ``(chunk, V)`` blocks at its
peak (plus the bfloat16 matmul output under autocast), the head's weight gradient and the completions'
hidden states; the full path would hold ``2B + 1`` float32 ``(C, V)`` blocks. These coefficients were
checked against measured CPU peaks of tiny Qwen3 models (``training.memory_probe``,
``bench/memory_plan.py``, tests/training/test_memory_plan.py: within a few per cent); the GPU
mixed-precision terms follow the same tensors at bfloat16 width except the float32 norms.

``model_shape(name)`` (``training.model_shapes``, re-exported here) knows Qwen3-0.6B/1.7B/4B/8B without
any download, and reads ``config.json`` from a local model directory or the Hugging Face cache otherwise.

This module imports nothing from Django or torch.
"""

from __future__ import annotations

import math
from typing import Any

from training.config import GRPOConfig
from training.memory_estimate import (
    DEFAULT_GPU_BYTES,
    GIB,
    RESERVE_BYTES,
    MemoryComponent,
    MemoryPlan,
    _estimate,
    _gib,
    _phase,
    _sleep_mode,
    uses_checkpointing,
)
from training.model_shapes import KNOWN_SHAPES, ModelShape, model_shape


def plan_memory(
    config: GRPOConfig,
    model_shape: ModelShape,
    gpus: int = 1,
    *,
    gpu_bytes: int | None = None,
) -> MemoryPlan:
    """Estimate per-GPU memory of ``config`` on ``gpus`` GPUs (FSDP shards the trained state), with
    advice when it does not fit.

    ``gpu_bytes``: memory of one GPU (default: an H200); a CPU run (``device: cpu``) has no GPU budget
    and always fits."""
    plan = _estimate(config, model_shape, gpus, gpu_bytes=gpu_bytes)
    advice = _advice(config, model_shape, plan, gpus=gpus, gpu_bytes=gpu_bytes)
    return MemoryPlan(**{**plan.__dict__, "advice": tuple(advice)})


def _advice(
    config: GRPOConfig,
    shape: ModelShape,
    plan: MemoryPlan,
    *,
    gpus: int,
    gpu_bytes: int | None,
) -> list[str]:
    """Concrete setting changes, biggest saving first, each checked by re-planning when it is a number."""
    out: list[str] = []
    seq_kv = (config.max_prompt_length + config.max_response_length) * shape.kv_bytes_per_token
    if config.rollout.engine == "vllm" and plan.component("vllm") - shape.params * 2 < seq_kv:
        out.append(
            f"rollout.gpu_memory_utilization {config.rollout.gpu_memory_utilization} leaves vLLM no room for "
            "one full-length sequence's KV cache after its bf16 weights: raise it."
        )
    if plan.fits or plan.capacity_bytes is None:
        return out
    over = plan.total_bytes + RESERVE_BYTES - plan.capacity_bytes
    out.append(f"The estimate is {_gib(over)} over one GPU's {_gib(plan.capacity_bytes)} (4 GiB kept free).")
    alt = plan.alternatives
    if (
        not uses_checkpointing(config, shape)
        and alt["activations_without_checkpointing"] > alt["activations_with_checkpointing"]
    ):
        trial = _estimate(config.replace(gradient_checkpointing=True), shape, gpus, gpu_bytes=gpu_bytes)
        out.append(
            f"Set gradient_checkpointing: true: activations {_gib(alt['activations_without_checkpointing'])} -> "
            f"{_gib(alt['activations_with_checkpointing'])} (update phase {_gib(_phase(plan, 'update'))} -> "
            f"{_gib(_phase(trial, 'update'))})."
        )
    budget = config.memory.micro_batch_tokens
    seq = config.max_prompt_length + config.max_response_length
    if budget > seq:
        best = None
        for k in range(budget // seq, 0, -1):  # whole full-length sequences per pass
            if k * seq < budget and _estimate(config, shape, gpus, gpu_bytes=gpu_bytes, budget=k * seq).fits:
                best = k * seq
                break
        if best is not None:
            out.append(
                f"Lower memory.micro_batch_tokens from {budget} to {best} (same gradients, more passes)."
            )
        else:
            out.append(
                f"Lower memory.micro_batch_tokens from {budget} ({seq}, one full-length sequence, does not "
                "fit either)."
            )
    elif budget <= 0 and config.micro_batch_size > 1:
        best = None
        for mb in range(config.micro_batch_size - 1, 0, -1):
            if _estimate(config, shape, gpus, gpu_bytes=gpu_bytes, micro_batch=mb).fits:
                best = mb
                break
        if best is not None:
            out.append(
                f"Lower micro_batch_size from {config.micro_batch_size} to {best} (same gradients, more passes)."
            )
        else:
            out.append(
                f"Lower micro_batch_size from {config.micro_batch_size} (1 alone does not fit either)."
            )
    engine = config.rollout.engine
    if engine == "vllm":
        state = sum(plan.component(k) for k in ("weights", "gradients", "optimizer", "reference"))
        room = (plan.capacity_bytes - RESERVE_BYTES - state) / plan.capacity_bytes
        share = math.floor(room * 20) / 20  # a utilization that leaves the trained state its room
        needed = (shape.params * 2 + seq_kv) / plan.capacity_bytes  # bf16 weights + one sequence's KV cache
        lower = (
            f"lower rollout.gpu_memory_utilization from {config.rollout.gpu_memory_utilization} to {share:.2f}"
            if max(0.05, needed) <= share < config.rollout.gpu_memory_utilization
            else ""
        )
        if not _sleep_mode(config):
            out.append(
                f"vLLM keeps {_gib(plan.component('vllm'))} through the update: set rollout.sleep_level: 2 "
                "(frees its KV cache and weights during the update)" + (f", or {lower}." if lower else ".")
            )
        elif lower and _phase(plan, "update") + RESERVE_BYTES <= plan.capacity_bytes:
            out.append(f"During rollouts the trained state ({_gib(state)}) and vLLM share the GPU: {lower}.")
    kv = plan.component("rollout_kv")
    if engine == "transformers" and kv > plan.capacity_bytes // 4:
        state = sum(plan.component(k) for k in ("weights", "gradients", "optimizer", "reference"))
        sequences = config.rollout.batch_size or config.prompts_per_step * config.group_size
        room = plan.capacity_bytes - RESERVE_BYTES - state
        fit = max(0, room * sequences // kv) if kv else 0
        out.append(
            f"The transformers engine's KV cache for {sequences} sequences at once is {_gib(kv)}: set "
            + (f"rollout.batch_size to {fit} or less" if fit >= 1 else "rollout.batch_size")
            + " (sequences generated together), or use rollout.engine: vllm."
        )
    for n in (2, 4, 8, 16, 32, 64):
        if n > gpus and _estimate(config, shape, n, gpu_bytes=gpu_bytes).fits:
            out.append(f"Shard over {n} GPUs (torchrun --nproc_per_node {n}, FSDP2).")
            break
    if config.dtype in ("auto", "float32"):
        out.append(
            "dtype: bfloat16 halves weights, gradients and optimizer state, but at RL learning rates (~1e-6) "
            "bfloat16 weights round most updates away: prefer the options above."
        )
    return out


def plan_for_config(config: GRPOConfig, gpus: int = 1, *, gpu_bytes: int | None = None) -> dict[str, Any]:
    """``plan_memory`` for the config's own model as a JSON-ready dict, or ``{"error": ...}`` when its
    shape is unknown (the API and the run form show either)."""
    try:
        shape = model_shape(config.model)
    except ValueError as exc:
        return {"error": str(exc), "model": config.model}
    return plan_memory(config, shape, gpus, gpu_bytes=gpu_bytes).to_dict()


__all__ = [
    "DEFAULT_GPU_BYTES",
    "GIB",
    "KNOWN_SHAPES",
    "MemoryComponent",
    "MemoryPlan",
    "ModelShape",
    "model_shape",
    "plan_for_config",
    "plan_memory",
    "uses_checkpointing",
]
