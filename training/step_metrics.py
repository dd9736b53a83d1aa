"""Per-step metrics and the sample table of a GRPO step, as pure functions of the step's results.

``step_metrics`` computes the rollout-side metrics of ``training.metrics_names`` (rewards, lengths,
masks, diversity, verdict shares ...) from what the step sampled and judged; the update-side ones
(loss, clip ratios, entropy, kl ...) come from ``training.update.policy_update`` and timings from the
loop. ``finite_metrics`` drops undefined values so every logged metric is a finite float.

This module imports nothing from Django and does no tensor work.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from training.masking import MaskDecision
from training.metrics_names import VERDICTS
from training.rewards import RewardResult
from training.rollout.base import Completion
from training.temperature import diversity, reward_nonconstant_fraction


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; NaN for no values (dropped later by ``finite_metrics``)."""
    return float(sum(values) / len(values)) if values else float("nan")


def step_metrics(
    comps: Sequence[Completion],
    results: Sequence[RewardResult],
    masks: Sequence[MaskDecision],
    group_std: Sequence[float],
    rewards: Sequence[float | None],
    *,
    group_size: int,
    temperature: float,
    temperature_stage: int,
    diversity_groups: int,
    diversity_tokens: int,
    num_tokens: int,
    epoch: float,
) -> dict[str, float]:
    """The rollout-side metrics of one step. Samples are prompt-major groups of ``group_size``;
    ``rewards[i]`` is None for an infrastructure error; ``diversity_groups`` = 0 measures every group."""
    n = len(comps)
    valid = [r for r in rewards if r is not None]
    groups = [list(range(g * group_size, (g + 1) * group_size)) for g in range(n // group_size)]
    stds = [s for s in group_std if not math.isnan(s)]
    lengths = [c.length for c in comps]
    terminated = [c.length for c in comps if not c.truncated]
    truncated = sum(1 for c in comps if c.truncated)
    masked = sum(1 for m in masks if m.masked)
    verdicts = Counter(r.verdict for r in results)
    group_rewards = [[float(r) for i in g if (r := rewards[i]) is not None] for g in groups]
    m: dict[str, float] = {
        "reward": mean(valid),
        "reward_std": mean(stds),
        "frac_reward_zero_std": mean([1.0 if s == 0.0 else 0.0 for s in stds]),
        "completions/mean_length": mean(lengths),
        "completions/min_length": float(min(lengths)) if lengths else float("nan"),
        "completions/max_length": float(max(lengths)) if lengths else float("nan"),
        "completions/mean_terminated_length": mean(terminated),
        "completions/clipped_ratio": truncated / n if n else float("nan"),
        "mask/conditional_masked_ratio": masked / n if n else float("nan"),
        "mask/truncated_masked_ratio": masked / truncated if truncated else 0.0,
        "temperature": temperature,
        "temperature/stage": float(temperature_stage),
        "diversity": diversity(
            [[comps[i].token_ids for i in g] for g in groups[: diversity_groups or None]], diversity_tokens
        ),
        "diversity/reward_nonconstant_frac": reward_nonconstant_fraction(group_rewards),
        "eval/infra_error_rate": verdicts.get("IE", 0) / n if n else float("nan"),
        "eval/no_answer_rate": verdicts.get("NA", 0) / n if n else float("nan"),
        "num_tokens": float(num_tokens),
        "epoch": epoch,
    }
    for verdict in VERDICTS:
        m[f"verdict/{verdict}"] = verdicts.get(verdict, 0) / n if n else 0.0
    return m


def finite_metrics(metrics: Mapping[str, float | None]) -> dict[str, float]:
    """Only the defined, finite values, as floats (undefined metrics are omitted, never NaN)."""
    return {k: float(v) for k, v in metrics.items() if v is not None and math.isfinite(float(v))}


def sample_rows(
    step: int,
    *,
    limit: int,
    idx: Sequence[int],
    comps: Sequence[Completion],
    texts: Sequence[str],
    results: Sequence[RewardResult],
    masks: Sequence[MaskDecision],
    advantages: Sequence[float],
    problem_ids: Sequence[str],
    prompt_texts: Sequence[str],
) -> list[dict[str, Any]]:
    """The step's sample table: the first ``limit`` samples (-1 = all). ``idx[g]`` is the problem index
    of group ``g``; ``problem_ids`` / ``prompt_texts`` are indexed by problem."""
    count = len(comps) if limit < 0 else min(limit, len(comps))
    rows = []
    for i in range(count):
        c = comps[i]
        pi = idx[c.prompt_index]
        rows.append(
            {
                "step": step,
                "index": i,
                "group": c.prompt_index,
                "problem_id": problem_ids[pi],
                "prompt": prompt_texts[pi],
                "completion": texts[i],
                "reward": results[i].reward,
                "verdict": results[i].verdict,
                "passed": results[i].passed,
                "total": results[i].total,
                "length": c.length,
                "truncated": c.truncated,
                "masked": masks[i].masked,
                "repetition_loop": not masks[i].no_loop,
                "advantage": advantages[i],
            }
        )
    return rows


__all__ = ["finite_metrics", "mean", "sample_rows", "step_metrics"]
