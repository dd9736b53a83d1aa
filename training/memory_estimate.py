"""The per-GPU memory estimate behind ``training.memory_plan``: the components (weights, gradients,
optimizer state, activations with and without checkpointing, logits full and chunked, vLLM or the
transformers KV cache, FSDP sharding) of one config on one model shape, as a ``MemoryPlan`` without
advice. ``training.memory_plan`` adds the advice and is the one import path.

This module imports nothing from Django and no torch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from training.config import GRPOConfig
from training.model_shapes import ModelShape

GIB = 1024**3
#: one H200 as torch reports it (141 GB of HBM3e = about 139.8 GiB usable).
DEFAULT_GPU_BYTES = int(139.8 * GIB)
#: CUDA context, allocator fragmentation and NCCL buffers we do not model: kept free.
RESERVE_BYTES = int(4 * GIB)
_ADAM_STATES = 2


@dataclass(frozen=True)
class MemoryComponent:
    key: str
    label: str
    bytes: int
    phase: str  # "update" | "rollout"
    note: str = ""


@dataclass(frozen=True)
class MemoryPlan:
    """Per-GPU memory estimate. ``total_bytes`` is the peak: update + rollout without sleep mode, else
    the larger of the two; ``alternatives`` holds the figures of the settings not chosen."""

    model: str
    params: int
    gpus: int
    device: str
    components: tuple[MemoryComponent, ...]
    total_bytes: int
    capacity_bytes: int | None
    fits: bool
    advice: tuple[str, ...]
    alternatives: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def component(self, key: str) -> int:
        return sum(c.bytes for c in self.components if c.key == key)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["components"] = [asdict(c) for c in self.components]
        out["total_gib"] = round(self.total_bytes / GIB, 2)
        out["capacity_gib"] = None if self.capacity_bytes is None else round(self.capacity_bytes / GIB, 2)
        out["advice"] = list(self.advice)
        out["notes"] = list(self.notes)
        return out


def _dtype_bytes(name: str) -> int:
    return 2 if name in ("bfloat16", "float16") else 4


def _autocast_bf16(config: GRPOConfig, on_gpu: bool) -> bool:
    return config.mixed_precision == "bf16" or (config.mixed_precision == "auto" and on_gpu)


def _chunk_tokens(config: GRPOConfig) -> int:
    """Tokens per log-prob chunk of the trainer's chunked head (``training.logprobs``): a config field
    when the config has one, else 0 (automatic: as many tokens as fit 2**24 logits)."""
    for name in ("logprob_chunk_tokens", "logprobs_chunk_tokens"):
        value = getattr(config, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0


def _chunk_len(vocab: int, chunk_tokens: int) -> int:
    return chunk_tokens if chunk_tokens > 0 else max(16, (1 << 24) // max(vocab, 1))


def uses_checkpointing(config: GRPOConfig, shape: ModelShape) -> bool:
    """Whether the trainer checkpoints this policy: ``training.modeling.wants_gradient_checkpointing``'s
    rule (forced, or at least ``memory.checkpointing_min_params`` parameters; 0 = only when forced) on
    the shape's parameter count."""
    min_params = config.memory.checkpointing_min_params
    return config.gradient_checkpointing or (min_params > 0 and shape.params >= min_params)


@dataclass(frozen=True)
class _MicroBatch:
    """The largest forward/backward pass of the update: padded tokens and completion tokens in it."""

    tokens: int
    completion_tokens: int
    label: str


def _micro_batch(
    config: GRPOConfig, micro_batch: int | None = None, budget: int | None = None
) -> _MicroBatch:
    """``micro_batch`` (samples) or ``budget`` (tokens) override the config's (the advice's search)."""
    seq = config.max_prompt_length + config.max_response_length
    budget = config.memory.micro_batch_tokens if budget is None else budget
    if budget > 0 and micro_batch is None:
        tokens = max(budget, seq)
        return _MicroBatch(tokens, -(-tokens * config.max_response_length // seq), f"{tokens} padded tokens")
    mb = micro_batch or config.micro_batch_size
    return _MicroBatch(mb * seq, mb * config.max_response_length, f"{mb} x {seq} tokens")


@dataclass(frozen=True)
class _Sizes:
    """Bytes of the activation and logits terms for one micro-batch (see the module docstring)."""

    activations_full: int
    activations_checkpointed: int
    logits_full: int
    logits_chunked: int


def _sizes(
    config: GRPOConfig,
    shape: ModelShape,
    *,
    micro_batch: _MicroBatch,
    autocast: bool,
    act_bytes: int,
    param_bytes: int,
) -> _Sizes:
    h, inter = shape.hidden_size, shape.intermediate_size
    q, kv = shape.num_heads * shape.head_dim, shape.num_kv_heads * shape.head_dim
    tokens = micro_batch.tokens
    comp_tokens = micro_batch.completion_tokens
    # per token and layer: norms (their inputs and outputs: float32 inside Qwen's RMSNorm under autocast)
    norm = 6 * h * (4 if autocast else act_bytes)
    layer = norm + (5 * q + 4 * kv + 4 * inter) * act_bytes  # (B, T, .) tensors autograd saves
    per_layer = tokens * layer
    acts_full = shape.num_layers * per_layer
    layer_inputs = shape.num_layers * tokens * h * act_bytes
    # the recompute of one layer plus its backward's transient gradients (2I + 2h per token)
    recompute = per_layer + tokens * (2 * inter + 2 * h) * act_bytes
    logit_bytes = 2 if autocast else act_bytes
    vocab = shape.vocab_size
    # logits (B, C, V) + the float32 scaled copy autograd saves per row + one row's temporaries
    logits_full = comp_tokens * vocab * (logit_bytes + 4) + config.max_response_length * vocab * 4
    # chunked head: two float32 (chunk, V) blocks (the logits and softmax / their gradient; plus the bf16
    # matmul output under autocast), the head's weight gradient it returns, the completions' hidden states
    chunk = min(_chunk_len(vocab, _chunk_tokens(config)), comp_tokens)
    head_grad = vocab * h * param_bytes
    logits_chunked = chunk * vocab * (8 + (2 if autocast else 0)) + head_grad + comp_tokens * h * act_bytes
    return _Sizes(acts_full, layer_inputs + recompute, logits_full, logits_chunked)


def _estimate(
    config: GRPOConfig,
    model_shape: ModelShape,
    gpus: int,
    *,
    gpu_bytes: int | None = None,
    micro_batch: int | None = None,
    budget: int | None = None,
) -> MemoryPlan:
    """The estimate without advice; ``micro_batch`` (samples) or ``budget`` (``memory.micro_batch_tokens``)
    override the config's (the advice's search)."""
    if gpus < 1:
        raise ValueError(f"gpus must be >= 1, got {gpus}")
    shape = model_shape
    on_gpu = config.device != "cpu"
    capacity = (gpu_bytes or DEFAULT_GPU_BYTES) if on_gpu else None
    pbytes = _dtype_bytes("float32" if config.dtype == "auto" else config.dtype)
    autocast = _autocast_bf16(config, on_gpu)
    act_bytes = 2 if autocast else pbytes
    micro = _micro_batch(config, micro_batch, budget)
    params = shape.params
    sharded = math.ceil(params / gpus)

    comps: list[MemoryComponent] = []

    def add(key: str, label: str, nbytes: int, phase: str = "update", note: str = "") -> None:
        comps.append(MemoryComponent(key, label, int(nbytes), phase, note))

    fsdp = f" (1/{gpus} under FSDP)" if gpus > 1 else ""
    add(
        "weights", "Trained weights", sharded * pbytes, note=f"{params / 1e9:.2f} B params x {pbytes} B{fsdp}"
    )
    add("gradients", "Gradients", sharded * pbytes)
    add("optimizer", "AdamW moments", sharded * pbytes * _ADAM_STATES, note="two states per parameter")
    if gpus > 1:
        add(
            "fsdp_buffers",
            "FSDP all-gather buffers",
            2 * shape.layer_params * (2 if autocast else pbytes),
            note="two decoder layers unsharded (current + prefetch)",
        )
    if autocast and pbytes == 4:
        cast = params * 2 if gpus == 1 else 2 * shape.layer_params * 2
        add("autocast_weights", "bf16 weight copies (autocast)", cast, note="kept for the backward pass")
    if config.kl_coef > 0:
        add(
            "reference",
            "Reference model (KL)",
            sharded * pbytes,
            note="kl_coef > 0; loaded in dtype, no gradients",
        )

    sizes = _sizes(
        config, shape, micro_batch=micro, autocast=autocast, act_bytes=act_bytes, param_bytes=pbytes
    )
    logits = sizes.logits_chunked  # the trainer's path (training.update.completion_logprobs)
    seq = config.max_prompt_length + config.max_response_length
    h = shape.hidden_size
    layer_inputs = shape.num_layers * micro.tokens * h * act_bytes
    recompute = sizes.activations_checkpointed - layer_inputs
    if uses_checkpointing(config, shape):
        why = (
            ""
            if config.gradient_checkpointing
            else f"; on by itself: {params / 1e9:.2f} B params >= memory.checkpointing_min_params"
        )
        # the logits stage and one layer's recompute come one after the other: count the larger
        add(
            "activations",
            "Activations (checkpointed)",
            layer_inputs + max(0, recompute - logits),
            note=f"layer inputs of {micro.label}; one layer recomputed at a time ({_gib(recompute)}){why}",
        )
    else:
        add("activations", "Activations", sizes.activations_full, note=f"micro-batch {micro.label}")
    comp_tokens = micro.completion_tokens
    add(
        "logits",
        "Logits (chunked log-probs)",
        logits,
        note=f"chunks of {min(_chunk_len(shape.vocab_size, _chunk_tokens(config)), comp_tokens)}"
        f" of {comp_tokens} completion tokens x {shape.vocab_size} vocabulary "
        f"(full logits: {_gib(sizes.logits_full)})",
    )

    sleep = _sleep_mode(config)
    notes: list[str] = []
    kv_per_token = shape.kv_bytes_per_token
    sequences = math.ceil(config.prompts_per_step * config.group_size / gpus)
    kv_needed_all = sequences * seq * kv_per_token
    if config.rollout.engine == "vllm":
        reserved = int(config.rollout.gpu_memory_utilization * (capacity or DEFAULT_GPU_BYTES))
        add(
            "vllm",
            "vLLM weights + KV cache",
            reserved,
            phase="rollout",
            note=f"gpu_memory_utilization {config.rollout.gpu_memory_utilization}",
        )
        kv_budget = reserved - params * 2
        if seq * kv_per_token <= kv_budget < kv_needed_all:
            notes.append(
                f"vLLM's KV cache holds about {kv_budget // (seq * kv_per_token)} of the {sequences} sequences "
                "of a step at full length; the rest wait (slower rollouts, same results)."
            )
    else:
        batch = config.rollout.batch_size or config.prompts_per_step * config.group_size
        kv_bytes = batch * seq * 2 * shape.num_layers * shape.num_kv_heads * shape.head_dim * act_bytes
        add(
            "rollout_kv",
            "Generation KV cache (transformers)",
            kv_bytes,
            phase="rollout",
            note=f"{batch} sequences x {seq} tokens",
        )
    update = sum(c.bytes for c in comps if c.phase == "update")
    rollout = sum(c.bytes for c in comps if c.phase == "rollout")
    state = sum(c.bytes for c in comps if c.key in ("weights", "gradients", "optimizer", "reference"))
    if config.rollout.engine == "vllm" and sleep:
        total = max(update, state + rollout)
        notes.append("vLLM sleeps during the update: its memory and the update's do not add up.")
    elif config.rollout.engine == "vllm":
        total = update + rollout
    else:  # the transformers engine's cache is freed before the update
        total = max(update, state + rollout)
    fits = capacity is None or total + RESERVE_BYTES <= capacity
    return MemoryPlan(
        model=shape.name,
        params=params,
        gpus=gpus,
        device=config.device,
        components=tuple(comps),
        total_bytes=total,
        capacity_bytes=capacity,
        fits=fits,
        advice=(),
        alternatives={
            "activations_without_checkpointing": sizes.activations_full,
            "activations_with_checkpointing": sizes.activations_checkpointed,
            "logits_full": sizes.logits_full,
            "logits_chunked": sizes.logits_chunked,
        },
        notes=tuple(notes),
    )


def _sleep_mode(config: GRPOConfig) -> bool:
    rollout = config.rollout
    for name in ("sleep_mode", "enable_sleep_mode", "sleep"):
        value = getattr(rollout, name, None)
        if isinstance(value, bool):
            return value
    level = getattr(rollout, "sleep_level", None)
    return isinstance(level, int) and level > 0


def _phase(plan: MemoryPlan, phase: str) -> int:
    return sum(c.bytes for c in plan.components if c.phase == phase)


def _gib(n: int) -> str:
    return f"{n / GIB:.1f} GiB"
