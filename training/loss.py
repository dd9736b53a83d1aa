"""MicroCoder-GRPO math: group-relative advantages, token log-probabilities, the clipped loss.

Objective per token t of sample i (maximized; the loss is its negation):
    min(rho * A_i, clip(rho, 1 - eps_low, 1 + eps_high) * A_i) - beta * KL_k3
with rho = exp(logp_theta - logp_old), both log-probabilities at the training temperature T
(logits / T), and A_i = (r_i - mean(r)) / (std(r) + eps) * (1 - M_i): the group statistics use every
non-IE reward of the group (masked samples included), then the mask zeroes masked advantages.

Aggregation (``loss_aggregation``) is token-level by default (DAPO, arXiv 2503.14476, Sec. 3.3; used
by MicroCoder-GRPO): the sum over all loss tokens of a minibatch divided by the number of loss tokens
of that minibatch. ``sequence`` is the original GRPO's (DeepSeekMath, arXiv 2402.03300, eq. 3): each
loss sample's token mean, then the mean over the minibatch's loss samples, so a long response weighs
as much as a short one. A sample is a loss sample unless it is masked (M_i = 1) or its
reward is an infrastructure error; masked samples leave the loss entirely (as in overlong filtering)
so they neither push nor dilute the gradient of the others.

``std`` is the population standard deviation of the group's valid rewards (ddof = 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

ADVANTAGE_EPS = 1e-4


@dataclass(frozen=True)
class GroupAdvantages:
    """Per-sample advantages plus the group statistics the metrics report."""

    advantages: list[float]  # 0.0 for masked and IE samples
    group_mean: list[float]  # per group; nan when the group has no valid reward
    group_std: list[float]  # per group; nan when the group has no valid reward


def group_advantages(
    rewards: Sequence[float | None],
    group_size: int,
    masked: Sequence[bool],
    *,
    eps: float = ADVANTAGE_EPS,
) -> GroupAdvantages:
    """A_i = (r_i - mean) / (std + eps) * (1 - M_i); ``None`` rewards (IE) get 0 and stay out of the stats.

    ``rewards`` is laid out group-major: samples ``g*G .. g*G+G-1`` answer the same prompt.
    """
    n = len(rewards)
    if n % group_size != 0:
        raise ValueError(f"{n} rewards do not split into groups of {group_size}")
    if len(masked) != n:
        raise ValueError("rewards and masked must have the same length")
    adv = [0.0] * n
    means: list[float] = []
    stds: list[float] = []
    for g in range(n // group_size):
        idx = range(g * group_size, (g + 1) * group_size)
        valid = [rewards[i] for i in idx if rewards[i] is not None]
        if not valid:
            means.append(float("nan"))
            stds.append(float("nan"))
            continue
        vals = torch.tensor(valid, dtype=torch.float64)
        mean = float(vals.mean())
        std = float(vals.std(unbiased=False))
        means.append(mean)
        stds.append(std)
        for i in idx:
            r = rewards[i]
            if r is None or masked[i]:
                continue
            adv[i] = (r - mean) / (std + eps)
    return GroupAdvantages(advantages=adv, group_mean=means, group_std=stds)


def overlong_penalty(length: int, max_length: int, buffer: int, factor: float = 1.0) -> float:
    """DAPO's soft overlong punishment (arXiv 2503.14476, eq. 13) with L_max = ``max_length`` and
    L_cache = ``buffer``: 0 when length <= L_max - L_cache, ((L_max - L_cache) - length) / L_cache inside
    the buffer (-1 at L_max), -1 beyond; times ``factor``. ``buffer`` = 0 turns it off (always 0)."""
    if buffer <= 0:
        return 0.0
    start = max_length - buffer
    if length <= start:
        return 0.0
    if length > max_length:
        return -factor
    return factor * (start - length) / buffer


def shaped_rewards(
    rewards: Sequence[float | None], lengths: Sequence[int], max_length: int, buffer: int, factor: float
) -> list[float | None]:
    """The rewards advantages are computed from: judge reward + overlong penalty (IE stays None)."""
    return [
        None if r is None else r + overlong_penalty(n, max_length, buffer, factor)
        for r, n in zip(rewards, lengths, strict=True)
    ]


def selective_log_softmax(logits: torch.Tensor, ids: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """log softmax(logits / T)[ids] without materializing the full log-softmax for all rows at once.

    logits: (B, L, V); ids: (B, L) -> (B, L) float32. Computed row by row so the peak extra memory
    is one (L, V) float32 block instead of (B, L, V).
    """
    out = []
    for row_logits, row_ids in zip(logits, ids):
        scaled = row_logits.float() / temperature  # (L, V)
        picked = scaled.gather(-1, row_ids.unsqueeze(-1)).squeeze(-1)  # (L,)
        out.append(picked - torch.logsumexp(scaled, dim=-1))
    return torch.stack(out)


@torch.no_grad()
def token_entropy(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """Entropy of softmax(logits / T) per position: (B, L, V) -> (B, L), row by row for memory."""
    out = []
    for row in logits:
        scaled = row.float() / temperature
        logp = torch.log_softmax(scaled, dim=-1)
        out.append(-(logp.exp() * logp).sum(-1))
    return torch.stack(out)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi_theta || pi_ref) per token: exp(d) - d - 1 with d = ref - logp."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1.0


@dataclass(frozen=True)
class LossStats:
    """Token counts (not means) so micro-batches can be summed before dividing."""

    tokens: float
    clipped_low: float
    clipped_high: float
    kl_sum: float
    ratio_max_dev: float = 0.0  # max |rho - 1| over loss tokens: 0 on-policy, > 0 off-policy


def clipped_policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    token_mask: torch.Tensor,
    *,
    eps_low: float,
    eps_high: float,
    normalizer: float,
    ref_logp: torch.Tensor | None = None,
    kl_coef: float = 0.0,
    aggregation: str = "token",
) -> tuple[torch.Tensor, LossStats]:
    """Clipped surrogate loss of one micro-batch.

    logp, old_logp, token_mask: (B, L); advantages: (B,). ``token_mask`` is 1 on the response tokens of
    loss samples. ``normalizer`` is, for ``aggregation="token"``, the loss-token count of the whole
    minibatch the micro-batch belongs to (summing micro-batch losses gives the minibatch's token
    mean); for ``"sequence"``, its loss-sample count (summing gives the mean of per-sample means).
    A token counts as low-clipped when rho < 1 - eps_low with A < 0, high-clipped when
    rho > 1 + eps_high with A > 0 (where the clip removes its gradient), as TRL reports them.
    """
    mask = token_mask.to(logp.dtype)
    adv = advantages.to(logp.dtype).unsqueeze(-1)  # (B, 1)
    ratio = torch.exp(logp - old_logp)  # (B, L)
    unclipped = ratio * adv
    clipped = torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high) * adv
    per_token = -torch.minimum(unclipped, clipped)  # (B, L)
    kl_sum = 0.0
    if ref_logp is not None and kl_coef > 0.0:
        kl = k3_kl(logp, ref_logp)
        per_token = per_token + kl_coef * kl
        kl_sum = float((kl.detach() * mask).sum())
    if aggregation == "token":
        loss = (per_token * mask).sum() / max(normalizer, 1.0)
    elif aggregation == "sequence":
        per_sample = (per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)  # (B,)
        loss = per_sample.sum() / max(normalizer, 1.0)
    else:
        raise ValueError(f"unknown loss aggregation {aggregation!r}; use token or sequence")
    with torch.no_grad():
        low = ((ratio < 1.0 - eps_low) & (adv < 0)).to(mask.dtype) * mask
        high = ((ratio > 1.0 + eps_high) & (adv > 0)).to(mask.dtype) * mask
        dev = float(((ratio - 1.0).abs() * mask).max()) if mask.numel() else 0.0
        stats = LossStats(
            tokens=float(mask.sum()),
            clipped_low=float(low.sum()),
            clipped_high=float(high.sum()),
            kl_sum=kl_sum,
            ratio_max_dev=dev,
        )
    return loss, stats


__all__ = [
    "ADVANTAGE_EPS",
    "GroupAdvantages",
    "LossStats",
    "clipped_policy_loss",
    "group_advantages",
    "k3_kl",
    "overlong_penalty",
    "selective_log_softmax",
    "shaped_rewards",
    "token_entropy",
]
