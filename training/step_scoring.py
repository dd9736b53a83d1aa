"""From a step's judged batch to what the update trains on: masks, shaped rewards and advantages.

``score_batch`` applies, in order: the truncation mask of ``mask.policy`` (``training.masking``; one
pre-drawn uniform per sample from (seed, step), so draws do not depend on which samples are
eligible); DAPO's overlong reward shaping when ``reward.overlong_buffer_ratio > 0``
(``training.loss.overlong_penalty``, L_cache = ratio * max_response_length); and the group-relative
advantages of the shaped rewards with masked samples zeroed (``training.loss.group_advantages``).
The judge's rewards are kept beside the shaped ones: the logged ``reward`` is the judge's, so runs of
every preset compare.

This module imports nothing from Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from training.config import GRPOConfig
from training.loss import GroupAdvantages, group_advantages, shaped_rewards
from training.masking import MaskDecision, compute_masks
from training.rewards import RewardResult
from training.rollout.base import Completion
from training.step_metrics import mean


@dataclass(frozen=True)
class ScoredBatch:
    """Masks, the judge's rewards, the rewards the advantages use, and the advantages."""

    masks: list[MaskDecision]
    rewards: list[float | None]  # the judge's (None = infrastructure error)
    train_rewards: list[float | None]  # after overlong shaping (equal to rewards when it is off)
    advantages: GroupAdvantages
    overlong_shaping: bool

    def metrics(self) -> dict[str, float]:
        """``reward/overlong_penalty`` when shaping is on (the other metrics come from step_metrics)."""
        if not self.overlong_shaping:
            return {}
        penalties = [
            t - r
            for t, r in zip(self.train_rewards, self.rewards, strict=True)
            if t is not None and r is not None
        ]
        return {"reward/overlong_penalty": mean(penalties)}


def score_batch(
    cfg: GRPOConfig, step: int, comps: Sequence[Completion], results: Sequence[RewardResult]
) -> ScoredBatch:
    """Masks, shaped rewards and advantages of a prompt-major batch of ``cfg.group_size`` groups."""
    uniforms = np.random.default_rng([cfg.seed, step, 1]).random(len(comps)).tolist()
    masks = compute_masks(
        cfg.mask.policy,
        [c.token_ids for c in comps],
        [c.truncated for c in comps],
        [r.verdict for r in results],
        uniforms,
        probability=cfg.mask.probability,
        window=cfg.mask.repeat_window,
        ngram_size=cfg.mask.ngram_size,
        ngram_threshold=cfg.mask.ngram_repeat_threshold,
        ngram_test=cfg.mask.ngram_loop_test,
    )
    rewards = [r.reward for r in results]
    buffer = round(cfg.reward.overlong_buffer_ratio * cfg.max_response_length)
    train_rewards = shaped_rewards(
        rewards,
        [c.length for c in comps],
        cfg.max_response_length,
        buffer,
        cfg.reward.overlong_penalty_factor,
    )
    adv = group_advantages(train_rewards, cfg.group_size, [m.masked for m in masks])
    return ScoredBatch(masks, rewards, train_rewards, adv, overlong_shaping=buffer > 0)


__all__ = ["ScoredBatch", "score_batch"]
