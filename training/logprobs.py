"""Token log-probabilities and entropies from hidden states, in chunks: no (length x vocabulary) tensor.

The plain way (the model's ``lm_head`` over every position, then ``log_softmax``) keeps the whole
float32 logits for the backward pass: with a Qwen vocabulary (151,936) an 8K-token response costs
about 5 GB per sequence per copy, and autograd holds two or three copies. Here the language-model head
and the log-softmax are one autograd function (``LMHeadLogprobs``) that walks the tokens in chunks:

- forward: for each chunk, logits = h W^T (+ b), divided by the temperature, in float32; keep only
  log p(target) and the log-sum-exp per token (and, if asked, the entropy, which needs no gradient);
- backward: recompute each chunk's logits and turn the incoming gradient g of log p(target) into
  dz = g (onehot(target) - softmax(z)) / T, then dh = dz W and dW += dz^T h.

Peak memory is therefore one chunk of logits (``chunk_tokens x V`` floats, a few of them), whatever
the sequence length. The results equal the plain computation up to float rounding (tests compare
values and gradients with ``torch.allclose`` and ``gradcheck``). The cost is one extra head matmul
in the backward pass (the recomputation), small next to the transformer itself.

``model_logprobs`` applies it to a transformers causal LM: it runs the base model (``model.model``
for Qwen/Llama) for hidden states and the output embedding as the head. Models whose head is not a
plain linear layer (logit soft-capping, scaled logits) use the plain path (``full_logits_logprobs``).
Under FSDP2 (``training.distributed``) the same route runs as a registered forward method of the
sharded root module (``fsdp_chunked_method``), so the head weight is all-gathered for it and its
gradient reduce-scattered: the memory saving holds on every rank of a multi-GPU run.

This module imports nothing from Django.
"""

from __future__ import annotations

import functools
from typing import Any

import torch

#: Default chunk budget: logits of this many elements (64 MiB of float32) exist at once.
CHUNK_ELEMENTS = 1 << 24


def chunk_tokens_for(vocab_size: int, chunk_tokens: int = 0) -> int:
    """Tokens per chunk: ``chunk_tokens`` when > 0, else as many as fit ``CHUNK_ELEMENTS`` logits."""
    if chunk_tokens > 0:
        return chunk_tokens
    return max(16, CHUNK_ELEMENTS // max(vocab_size, 1))


def _chunk_logits(
    h: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    temperature: float,
    compute_dtype: torch.dtype,
) -> torch.Tensor:
    """Logits / T of one chunk of hidden states, the matmul in ``compute_dtype``, returned in float32
    (float64 when computing in float64, for gradcheck)."""
    z = h.to(compute_dtype) @ weight.to(compute_dtype).t()
    if bias is not None:
        z = z + bias.to(compute_dtype)
    return z.to(_acc(compute_dtype)) / temperature


def _acc(compute_dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if compute_dtype == torch.float64 else torch.float32


class LMHeadLogprobs(torch.autograd.Function):
    """(hidden (N, H), weight (V, H), bias (V,) or None, targets (N,)) -> (log p (N,), entropy (N,)).

    Both outputs are float32; the entropy is zeros unless ``want_entropy`` and carries no gradient."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        hidden: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        targets: torch.Tensor,
        temperature: float,
        chunk_tokens: int,
        compute_dtype: torch.dtype,
        want_entropy: bool,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        n = hidden.shape[0]
        acc = _acc(compute_dtype)
        logp = torch.empty(n, dtype=acc, device=hidden.device)
        lse = torch.empty(n, dtype=acc, device=hidden.device)
        ent = torch.zeros(n, dtype=acc, device=hidden.device)
        with torch.autocast(device_type=hidden.device.type, enabled=False):
            for s in range(0, n, chunk_tokens):
                e = min(s + chunk_tokens, n)
                z = _chunk_logits(hidden[s:e], weight, bias, temperature, compute_dtype)
                lse_c = torch.logsumexp(z, dim=-1)
                lse[s:e] = lse_c
                logp[s:e] = z.gather(-1, targets[s:e].unsqueeze(-1)).squeeze(-1) - lse_c
                if want_entropy:  # -sum p log p on the log-softmax itself (no lse - E[z] cancellation)
                    logp_all = z.sub_(lse_c.unsqueeze(-1))
                    ent[s:e] = -(logp_all.exp() * logp_all).sum(-1)
                del z
        ctx.save_for_backward(hidden, weight, bias, targets, lse)
        ctx.temperature = temperature
        ctx.chunk_tokens = chunk_tokens
        ctx.compute_dtype = compute_dtype
        ctx.mark_non_differentiable(ent)
        return logp, ent

    @staticmethod
    def backward(  # type: ignore[override]
        ctx: Any, grad_logp: torch.Tensor, _grad_ent: torch.Tensor | None
    ) -> tuple[torch.Tensor | None, ...]:
        hidden, weight, bias, targets, lse = ctx.saved_tensors
        temperature, chunk, cdt = ctx.temperature, ctx.chunk_tokens, ctx.compute_dtype
        need_h, need_w, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[2]
        n = hidden.shape[0]
        acc = _acc(cdt)
        grad_h = torch.zeros(hidden.shape, dtype=acc, device=hidden.device) if need_h else None
        grad_w = torch.zeros(weight.shape, dtype=acc, device=weight.device) if need_w else None
        grad_b = torch.zeros(weight.shape[0], dtype=acc, device=weight.device) if need_b else None
        g_all = grad_logp.to(acc)
        w_c = weight.to(cdt)
        with torch.autocast(device_type=hidden.device.type, enabled=False):
            for s in range(0, n, chunk):
                e = min(s + chunk, n)
                g = g_all[s:e]
                if not bool(g.any()):
                    continue  # padding and zero-advantage tokens: no gradient to spread
                z = _chunk_logits(hidden[s:e], weight, bias, temperature, cdt)
                # dz = g * (onehot(target) - softmax(z)) / T, built in place on the recomputed logits.
                dz = z.sub_(lse[s:e].unsqueeze(-1)).exp_().mul_(-(g / temperature).unsqueeze(-1))
                dz.scatter_add_(-1, targets[s:e].unsqueeze(-1), (g / temperature).unsqueeze(-1))
                dz_c = dz.to(cdt)
                if grad_h is not None:
                    grad_h[s:e] = (dz_c @ w_c).to(acc)
                if grad_w is not None:  # accumulated in float32, in place: no (V, H) temporary
                    grad_w.addmm_(dz.t(), hidden[s:e].to(acc))
                if grad_b is not None:
                    grad_b.add_(dz.sum(0))
                del z, dz, dz_c
        return (
            grad_h.to(hidden.dtype) if grad_h is not None else None,
            grad_w.to(weight.dtype) if grad_w is not None else None,
            grad_b.to(bias.dtype) if grad_b is not None and bias is not None else None,
            None,
            None,
            None,
            None,
            None,
        )


def chunked_logprobs(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    temperature: float = 1.0,
    *,
    bias: torch.Tensor | None = None,
    chunk_tokens: int = 0,
    compute_dtype: torch.dtype | None = None,
    want_entropy: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """log softmax((h W^T + b) / T)[targets] and optionally the entropy, for hidden states of any
    leading shape (..., H) and targets (...): returns float32 tensors of the targets' shape.

    ``compute_dtype`` is the dtype of the head matmul (default: the weight's; pass the autocast dtype
    to match an autocast forward pass)."""
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    lead = targets.shape
    h = hidden.reshape(-1, hidden.shape[-1])
    t = targets.reshape(-1)
    if h.shape[0] != t.shape[0]:
        raise ValueError(f"{h.shape[0]} hidden states for {t.shape[0]} targets")
    chunk = chunk_tokens_for(weight.shape[0], chunk_tokens)
    logp, ent = LMHeadLogprobs.apply(
        h, weight, bias, t, float(temperature), chunk, compute_dtype or weight.dtype, want_entropy
    )
    return logp.reshape(lead), ent.reshape(lead) if want_entropy else None


def full_logits_logprobs(
    logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0, *, want_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The plain method on materialized logits (..., V): float32 log p(targets) and the entropy.
    Kept for heads ``model_logprobs`` cannot split, and as the reference the tests compare against."""
    scaled = logits.float() / temperature
    logp_all = torch.log_softmax(scaled, dim=-1)
    logp = logp_all.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    ent = None
    if want_entropy:
        with torch.no_grad():
            ent = -(logp_all.exp() * logp_all).sum(-1)
    return logp, ent


def split_lm_head(model: torch.nn.Module) -> tuple[torch.nn.Module, torch.nn.Linear] | None:
    """(base model returning hidden states, head) of a transformers causal LM whose logits are exactly
    ``last_hidden_state @ W^T + b``; None when the head is anything else.

    The head's weight is read when the log-probabilities are computed, not here: under FSDP2 it is a
    shard outside a forward call and the full (all-gathered) weight only inside one."""
    get_head = getattr(model, "get_output_embeddings", None)
    head = get_head() if callable(get_head) else None
    prefix = getattr(model, "base_model_prefix", "")
    base = getattr(model, prefix, None) if prefix else None
    config = getattr(model, "config", None)
    if not isinstance(head, torch.nn.Linear) or not isinstance(base, torch.nn.Module) or base is model:
        return None
    for attr in ("final_logit_softcapping", "logit_scale", "logits_scaling", "output_multiplier_scale"):
        if getattr(config, attr, None) not in (None, 0, 1, 1.0):
            return None
    return base, head


#: the name under which ``fsdp_chunked_method`` registers the chunked route on an FSDP2 root module
FSDP_METHOD = "microcoder_chunked_logprobs"


def _chunked_forward(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor,
    targets: torch.Tensor,
    temperature: float,
    autocast_dtype: torch.dtype | None,
    want_entropy: bool,
    chunk_tokens: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Base model, then the chunked head: flat (B * C,) log p and entropy (zeros unless asked).

    Under FSDP2 this runs as a registered forward method of the root module, so the head weight read
    here is the all-gathered one and its gradient is reduce-scattered like any other root parameter."""
    from training.rollout.hf import autocast

    parts = split_lm_head(model)
    if parts is None:
        raise ValueError(f"{type(model).__name__} has no plain linear head to run in chunks")
    base, head = parts
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    width_c = targets.shape[1]
    with autocast(input_ids.device, autocast_dtype):
        out = base(
            input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False
        )
        hidden = out[0] if isinstance(out, tuple) else out.last_hidden_state
    hidden = hidden[:, -(width_c + 1) : -1, :]  # the state before each completion token predicts it
    weight = head.weight
    logp, ent = LMHeadLogprobs.apply(
        hidden.reshape(-1, hidden.shape[-1]),
        weight,
        head.bias,
        targets.reshape(-1),
        float(temperature),
        chunk_tokens_for(weight.shape[0], chunk_tokens),
        autocast_dtype or weight.dtype,
        want_entropy,
    )
    return logp, ent


def fsdp_chunked_method(model: torch.nn.Module) -> Any:
    """The chunked route of an FSDP2-sharded model as a forward method of its root module (registered
    with ``torch.distributed.fsdp.register_fsdp_forward_method`` on first use).

    FSDP2 gathers a unit's parameters in the forward pre-hook of the module it wraps, and arms the
    gradient reduce-scatter from that call. Calling the base model and reading ``lm_head.weight``
    directly would skip the root unit (embeddings, final norm, head: all shards). Running the whole
    computation as a root forward method gives the chunked function the full weight, saves it for the
    backward pass like ``nn.Linear`` would, and reduce-scatters its gradient with the root unit's.
    A tied head (``tie_word_embeddings``) is the same parameter as the input embedding, which FSDP2
    keeps as one parameter of the root unit: both gradients add up in it before the reduce-scatter."""
    import types

    from torch.distributed.fsdp import register_fsdp_forward_method

    method = model.__dict__.get(FSDP_METHOD)
    if method is None:
        object.__setattr__(model, FSDP_METHOD, types.MethodType(_chunked_forward, model))
        register_fsdp_forward_method(model, FSDP_METHOD)
        method = model.__dict__[FSDP_METHOD]
    return method


def model_logprobs(
    model: torch.nn.Module,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    position_ids: torch.Tensor,
    targets: torch.Tensor,
    temperature: float,
    *,
    autocast_dtype: torch.dtype | None = None,
    want_entropy: bool = False,
    chunk_tokens: int = 0,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probabilities (B, C) of ``targets`` (B, C), the last C tokens of ``input_ids`` (B, P + C),
    at temperature T, and optionally their entropies: the chunked head when the model allows it, also
    under FSDP2 (``fsdp_chunked_method``)."""
    from torch.distributed.fsdp import FSDPModule

    from training.rollout.hf import autocast, lm_forward

    width_c = targets.shape[1]
    if split_lm_head(model) is None:
        with autocast(input_ids.device, autocast_dtype):
            logits = lm_forward(model, input_ids, attention_mask, position_ids, logits_to_keep=width_c + 1)
            return full_logits_logprobs(logits[:, :-1, :], targets, temperature, want_entropy=want_entropy)
    route = (
        fsdp_chunked_method(model)
        if isinstance(model, FSDPModule)
        else functools.partial(_chunked_forward, model)
    )
    logp, ent = route(
        input_ids,
        attention_mask,
        position_ids,
        targets,
        temperature,
        autocast_dtype,
        want_entropy,
        chunk_tokens,
    )
    return logp.reshape(targets.shape), ent.reshape(targets.shape) if want_entropy else None


__all__ = [
    "CHUNK_ELEMENTS",
    "FSDP_METHOD",
    "LMHeadLogprobs",
    "chunk_tokens_for",
    "chunked_logprobs",
    "fsdp_chunked_method",
    "full_logits_logprobs",
    "model_logprobs",
    "split_lm_head",
]
