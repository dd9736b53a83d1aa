"""The GRPO policy update of one rollout batch, separate from the loop that drives it.

``policy_update`` runs ``updates_per_rollout`` optimizer updates over minibatches of whole groups
(token-level clipped loss at the training temperature, pi_old from before the first update when
there are several) and returns the update-side metrics of ``training.metrics_names`` (``loss``,
``clip_ratio/*``, ``grad_norm``, ``kl``, ``entropy``, ``policy/ratio_max_dev``,
``rollout/logprob_abs_diff``). ``completion_logprobs`` is the one forward pass it uses.

This module imports nothing from Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from training.config import GRPOConfig
from training.distributed import DistContext
from training.logprobs import model_logprobs
from training.loss import clipped_policy_loss
from training.masking import MaskDecision
from training.micro_batches import micro_batches
from training.rollout import Completion
from training.step_metrics import mean


@dataclass(frozen=True)
class ForwardSetup:
    """How to run forward passes: padding id, device and the autocast dtype (None = none)."""

    pad_id: int
    device: torch.device
    autocast_dtype: torch.dtype | None


def batch_tensors(
    prompts: Sequence[list[int]], comps: Sequence[Completion], pad_id: int, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Left-padded prompts + right-padded completions: ids, attention, positions (B, P+C),
    completion ids and completion mask (B, C), and C."""
    width_p = max(len(prompts[c.prompt_index]) for c in comps)
    width_c = max(max(c.length for c in comps), 1)
    b = len(comps)
    ids = torch.full((b, width_p + width_c), pad_id, dtype=torch.long)
    attn = torch.zeros((b, width_p + width_c), dtype=torch.long)
    comp_ids = torch.full((b, width_c), pad_id, dtype=torch.long)
    comp_mask = torch.zeros((b, width_c), dtype=torch.float32)
    for i, c in enumerate(comps):
        p = prompts[c.prompt_index]
        if p:
            ids[i, width_p - len(p) : width_p] = torch.tensor(p)
            attn[i, width_p - len(p) : width_p] = 1
        if c.length:
            ids[i, width_p : width_p + c.length] = torch.tensor(c.token_ids)
            attn[i, width_p : width_p + c.length] = 1
            comp_ids[i, : c.length] = torch.tensor(c.token_ids)
            comp_mask[i, : c.length] = 1.0
    pos = (attn.cumsum(-1) - 1).clamp(min=0)
    return ids.to(device), attn.to(device), pos.to(device), comp_ids.to(device), comp_mask.to(device), width_c


def completion_logprobs(
    model: torch.nn.Module,
    prompts: Sequence[list[int]],
    comps: Sequence[Completion],
    temperature: float,
    setup: ForwardSetup,
    *,
    want_entropy: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Per-token log-probabilities of the completions at temperature T: (B, C), the mask (B, C),
    and optionally the per-token entropies (B, C). The head runs in chunks of tokens
    (``training.logprobs``): no (C x vocabulary) logits tensor is kept for the backward pass."""
    ids, attn, pos, comp_ids, comp_mask, _ = batch_tensors(prompts, comps, setup.pad_id, setup.device)
    logp, ent = model_logprobs(
        model,
        ids,
        attn,
        pos,
        comp_ids,
        temperature,
        autocast_dtype=setup.autocast_dtype,
        want_entropy=want_entropy,
    )
    return logp, comp_mask, ent


def minibatch_indices(n_groups: int, group_size: int, updates: int) -> list[list[int]]:
    """Sample indices of each optimizer update: ``updates`` contiguous chunks of whole groups, as equal
    as possible (``prompts_per_step / updates = minibatch_prompts`` groups each on a full batch). A
    batch with fewer groups than updates (dynamic sampling ran short) gets one update per group."""
    chunks = [c for c in np.array_split(np.arange(n_groups), min(updates, max(n_groups, 1))) if c.size]
    return [[int(g) * group_size + j for g in chunk for j in range(group_size)] for chunk in chunks]


def policy_update(
    cfg: GRPOConfig,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    setup: ForwardSetup,
    prompts: Sequence[list[int]],
    comps: Sequence[Completion],
    rewards: Sequence[float | None],
    masks: Sequence[MaskDecision],
    advantages: Sequence[float],
    temperature: float,
    *,
    reference: torch.nn.Module | None = None,
    dist: DistContext | None = None,
) -> dict[str, float]:
    """``cfg.updates_per_rollout`` optimizer steps on the batch; returns the update-side metrics.

    A sample enters the loss unless its reward is None (IE) or it is masked; it needs a forward pass
    unless it is empty or (with ``skip_zero_advantage`` and no KL) its advantage is 0 — such samples
    still count in the token normalizer, so loss and gradient are unchanged.

    Under torchrun (``dist``) each process passes its own rows; the token normalizer and the metrics are
    summed over processes and ranks without a chunk run an ``idle_pass`` (``training.distributed``), so
    the summed gradient equals the single-process one."""
    dist = dist if dist is not None else DistContext.single()
    n = len(comps)
    loss_sample = [rewards[i] is not None and not masks[i].masked for i in range(n)]
    need_forward = [
        loss_sample[i]
        and comps[i].length > 0
        and not (cfg.skip_zero_advantage and cfg.kl_coef == 0 and advantages[i] == 0.0)
        for i in range(n)
    ]
    engine_entropy = all(c.entropy_sum is not None for c in comps)
    minibatches = minibatch_indices(n // cfg.group_size, cfg.group_size, cfg.updates_per_rollout)
    mbs = cfg.micro_batch_size
    tokens_cap = cfg.memory.micro_batch_tokens  # > 0: micro-batches by padded tokens, not by count

    # Off-policy updates need pi_old from before the first update (ratio = 1 only for the first).
    old: dict[int, torch.Tensor] = {}
    if len(minibatches) > 1:
        with torch.no_grad():
            todo = [i for i in range(n) if need_forward[i]]
            chunks = micro_batches(todo, prompts, comps, max_samples=mbs, max_tokens=tokens_cap)
            for chunk in dist.padded_chunks(chunks):
                if chunk is None:
                    dist.idle_pass(model, setup, backward=False)
                    continue
                lp, _, _ = completion_logprobs(model, prompts, [comps[i] for i in chunk], temperature, setup)
                for j, i in enumerate(chunk):
                    old[i] = lp[j, : comps[i].length].detach()

    tokens = low = high = kl_sum = ratio_dev = 0.0
    ent_sum = ent_tokens = 0.0
    diff_sum = diff_tokens = 0.0
    losses: list[float] = []
    grad_norms: list[float] = []
    params = [p for p in model.parameters() if p.requires_grad]
    for u, mb in enumerate(minibatches):
        # token: the minibatch's loss tokens; sequence: its loss samples (training.loss)
        per_sample = [comps[i].length if cfg.loss_aggregation == "token" else 1 for i in mb if loss_sample[i]]
        normalizer = dist.sum_floats([float(sum(per_sample))])[0]
        todo = [i for i in mb if need_forward[i]]
        optimizer.zero_grad(set_to_none=False)
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)  # an update without signal still steps (Adam momentum)
        mb_loss = 0.0
        chunks = micro_batches(todo, prompts, comps, max_samples=mbs, max_tokens=tokens_cap)
        for chunk in dist.padded_chunks(chunks):
            if chunk is None:
                dist.idle_pass(model, setup, backward=True)
                continue
            chunk_comps = [comps[i] for i in chunk]
            logp, cmask, ent = completion_logprobs(
                model, prompts, chunk_comps, temperature, setup, want_entropy=not engine_entropy and u == 0
            )
            if u == 0:
                with torch.no_grad():
                    for j, c in enumerate(chunk_comps):
                        engine_lp = torch.tensor(c.logprobs, dtype=torch.float32, device=logp.device)
                        diff_sum += float((logp[j, : c.length].detach() - engine_lp).abs().sum())
                        diff_tokens += c.length
            if ent is not None:
                ent_sum += float((ent * cmask).sum())
                ent_tokens += float(cmask.sum())
            if old:
                old_lp = torch.zeros_like(logp)
                for j, i in enumerate(chunk):
                    old_lp[j, : comps[i].length] = old[i]
            else:
                old_lp = logp.detach()
            ref_lp = None
            if reference is not None:
                with torch.no_grad():
                    ref_lp, _, _ = completion_logprobs(reference, prompts, chunk_comps, temperature, setup)
            adv_t = torch.tensor([advantages[i] for i in chunk], dtype=torch.float32, device=logp.device)
            loss, st = clipped_policy_loss(
                logp,
                old_lp,
                adv_t,
                cmask,
                eps_low=cfg.clip.eps_low,
                eps_high=cfg.clip.eps_high,
                normalizer=normalizer,
                ref_logp=ref_lp,
                kl_coef=cfg.kl_coef,
                aggregation=cfg.loss_aggregation,
            )
            loss.backward()
            mb_loss += float(loss.detach())
            tokens += st.tokens
            low += st.clipped_low
            high += st.clipped_high
            kl_sum += st.kl_sum
            ratio_dev = max(ratio_dev, st.ratio_max_dev)
        if cfg.max_grad_norm > 0:
            grad_norms.append(float(torch.nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)))
        optimizer.step()
        losses.append(mb_loss)

    engine_ent = sum(c.entropy_sum or 0.0 for c in comps)
    total_len = float(sum(c.length for c in comps))
    if dist.is_distributed:  # every process's share of the sums
        sums = [tokens, low, high, kl_sum, ent_sum, ent_tokens, diff_sum, diff_tokens, engine_ent, total_len]
        summed = dist.sum_floats([*sums, *losses])
        tokens, low, high, kl_sum, ent_sum, ent_tokens, diff_sum, diff_tokens = summed[:8]
        engine_ent, total_len, losses = summed[8], summed[9], summed[10:]
        ratio_dev = dist.max_float(ratio_dev)
    out: dict[str, float] = {"loss": mean(losses), "policy/ratio_max_dev": ratio_dev}
    if grad_norms:
        out["grad_norm"] = mean(grad_norms)
    if tokens:
        out["clip_ratio/low_mean"] = low / tokens
        out["clip_ratio/high_mean"] = high / tokens
        out["clip_ratio/region_mean"] = (low + high) / tokens
    else:
        out.update({"clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.0, "clip_ratio/region_mean": 0.0})
    if reference is not None and tokens:
        out["kl"] = kl_sum / tokens
    if engine_entropy:
        if total_len:
            out["entropy"] = engine_ent / total_len
    elif ent_tokens:
        out["entropy"] = ent_sum / ent_tokens
    if diff_tokens:
        out["rollout/logprob_abs_diff"] = diff_sum / diff_tokens
    return out


__all__ = ["ForwardSetup", "batch_tensors", "completion_logprobs", "minibatch_indices", "policy_update"]
