"""The MicroCoder training insights as data, and a config check that cites them.

The papers report 34 insights from 30+ controlled runs, grouped by the insights blog into seven
aspects (../shared/INSIGHTS.md, "Training insights"). Each ``Insight`` is attached to the config field
(dotted path of ``training.config.GRPOConfig``) a user would change to act on it, so the UI can show
it next to that field. ``check_config`` (``training.config_checks``) flags risky choices and cites insight ids.

This module imports nothing from Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Aspect = Literal[
    "evaluator", "temperature", "data", "context_length", "truncation_mask", "batch_on_policy", "kl_clip"
]

ASPECTS: tuple[Aspect, ...] = (
    "evaluator",
    "temperature",
    "data",
    "context_length",
    "truncation_mask",
    "batch_on_policy",
    "kl_clip",
)

_TRAINING = "arXiv 2603.07777 (Breaking Training Bottlenecks)"
_DATA = "arXiv 2603.07779 (Scaling Data Difficulty)"


@dataclass(frozen=True)
class Insight:
    """One finding: ``config_field`` is the dotted path of the field it advises on."""

    id: str
    aspect: Aspect
    config_field: str
    text: str
    source: str


INSIGHTS: tuple[Insight, ...] = (
    # --- evaluator -------------------------------------------------------------------------------
    Insight(
        "EVAL-1",
        "evaluator",
        "reward.checker",
        "A strict grader's false negatives score correct programs as wrong, depress the reward and slow "
        "learning.",
        _DATA,
    ),
    Insight(
        "EVAL-2",
        "evaluator",
        "reward.checker",
        "The gap between a strict and a lenient grader is largest early in training.",
        _DATA,
    ),
    Insight(
        "EVAL-3",
        "evaluator",
        "reward.checker",
        "On the same outputs a higher pass rate means fewer misjudgements: check the judge before tuning "
        "the algorithm.",
        _DATA,
    ),
    Insight(
        "EVAL-4",
        "evaluator",
        "reward.checker",
        "With the lenient fallback chain the training reward was ~0.48 vs ~0.39 on the same outputs and "
        "test accuracy 0.45 vs 0.415 at step 100.",
        _DATA,
    ),
    Insight(
        "EVAL-5",
        "evaluator",
        "reward.max_tests",
        "The reward phase dominates step time when problems carry hundreds of tests: a faster judge (and "
        "capped test counts) made an RL step ~38-40 % shorter.",
        _DATA,
    ),
    # --- temperature -----------------------------------------------------------------------------
    Insight(
        "TEMP-1",
        "temperature",
        "temperature.value",
        "A higher sampling temperature gives more output diversity.",
        _TRAINING,
    ),
    Insight(
        "TEMP-2",
        "temperature",
        "temperature.target_diversity",
        "At a fixed temperature diversity declines during training and converges to similar values across "
        "temperatures.",
        _TRAINING,
    ),
    Insight(
        "TEMP-3",
        "temperature",
        "temperature.target_diversity",
        "If the initial diversity is below the value diversity converges to, diversity keeps falling and "
        "training fails (t = 0.6 on Qwen3-4B: 0.575 -> 0.44, accuracy peaks ~0.51 then drops).",
        _TRAINING,
    ),
    Insight(
        "TEMP-4",
        "temperature",
        "temperature.value",
        "Qwen3 trains stably even at t = 1.8; t = 1.2 held diversity ~0.71 with the best accuracy ~0.645 "
        "and is the main runs' setting.",
        _TRAINING,
    ),
    Insight(
        "TEMP-5",
        "temperature",
        "temperature.candidates",
        "Too high a temperature makes diversity fluctuate (t = 1.8 starts ~0.97, dips to ~0.6).",
        _TRAINING,
    ),
    Insight(
        "TEMP-6",
        "temperature",
        "temperature.stages",
        "Tolerance for high temperature grows during training.",
        _TRAINING,
    ),
    Insight(
        "TEMP-7",
        "temperature",
        "temperature.stages",
        "A staged low -> high schedule (0.6 -> 1.8 at ~step 140) ends above starting high (~0.665).",
        _TRAINING,
    ),
    Insight(
        "TEMP-8",
        "temperature",
        "temperature.policy",
        "Continuous temperature ramps can shift diversity irreversibly: use stages or a constant chosen T.",
        _TRAINING,
    ),
    # --- data ------------------------------------------------------------------------------------
    Insight(
        "DATA-1",
        "data",
        "dataset.release",
        "Hard data raises test accuracy quickly where easy data (DeepCoder's) barely moves it.",
        _DATA,
    ),
    Insight(
        "DATA-2",
        "data",
        "dataset.release",
        "Hard data shows a lower training reward yet better test results: judge a dataset by held-out "
        "accuracy, not by training reward.",
        _DATA,
    ),
    Insight("DATA-3", "data", "dataset.release", "Harder problems grow response length faster.", _DATA),
    Insight(
        "DATA-4",
        "data",
        "dataset.release",
        "Mainstream code datasets are hard for Qwen2.5 but easy for Qwen3; the curated hard set gave 3x "
        "larger gains within 300 steps.",
        _DATA,
    ),
    # --- context length --------------------------------------------------------------------------
    Insight(
        "CTX-1",
        "context_length",
        "max_response_length",
        "A larger response cap gives higher final accuracy.",
        _TRAINING,
    ),
    Insight(
        "CTX-2",
        "context_length",
        "max_response_length",
        "A larger response cap gives faster length growth and more diversity.",
        _TRAINING,
    ),
    Insight(
        "CTX-3",
        "context_length",
        "max_response_length",
        "Starting with a small cap does lasting damage that a later extension does not repair (training at "
        "4K then extending recovers little).",
        _TRAINING,
    ),
    Insight(
        "CTX-4",
        "context_length",
        "max_response_length",
        "The damage of a small cap is worse the smaller the cap and the longer it is kept.",
        _TRAINING,
    ),
    Insight(
        "CTX-5",
        "context_length",
        "max_response_length",
        "Qwen3 response lengths trend upward during RL (Qwen2.5's do not), so the cap binds more as "
        "training goes on.",
        _TRAINING,
    ),
    # --- truncation mask -------------------------------------------------------------------------
    Insight(
        "MASK-1",
        "truncation_mask",
        "mask.policy",
        "Truncation masking gives a fast rise, a fall, then convergence.",
        _TRAINING,
    ),
    Insight(
        "MASK-2",
        "truncation_mask",
        "mask.probability",
        "More masking reaches the first peak sooner, grows length to the cap faster and collapses diversity.",
        _TRAINING,
    ),
    Insight(
        "MASK-3",
        "truncation_mask",
        "mask.probability",
        "Less masking improves for longer and peaks higher; p = 0.1 is the reported setting and p = 0.3 "
        "already behaves like masking all.",
        _TRAINING,
    ),
    Insight(
        "MASK-4",
        "truncation_mask",
        "mask.policy",
        "Mask-all (overlong filtering) drives length to the cap in ~200 steps, collapses diversity "
        "(0.9 -> 0.13) and crashes accuracy; conditional masking is the most stable with the best final "
        "accuracy.",
        _TRAINING,
    ),
    Insight(
        "MASK-5",
        "truncation_mask",
        "mask.repeat_window",
        "A truncated response stuck in a repetition loop must keep its negative signal: never mask it.",
        _TRAINING,
    ),
    # --- batch size and on-policy ----------------------------------------------------------------
    Insight(
        "BATCH-1",
        "batch_on_policy",
        "prompts_per_step",
        "Smaller rollout batches are more on-policy but less stable: diversity converges faster and length "
        "rises then falls.",
        _TRAINING,
    ),
    Insight(
        "BATCH-2",
        "batch_on_policy",
        "prompts_per_step",
        "An intermediate rollout batch was best: 64 prompts of 32 / 64 / 128.",
        _TRAINING,
    ),
    Insight(
        "BATCH-3",
        "batch_on_policy",
        "minibatch_prompts",
        "Every extra update on the same rollout batch moves training off-policy; the clip range is what "
        "bounds those updates, and with a single update per rollout it never acts.",
        _TRAINING,
    ),
    # --- KL and clip -----------------------------------------------------------------------------
    Insight(
        "KL-1",
        "kl_clip",
        "kl_coef",
        "A KL penalty shrinks diversity (0.67 -> ~0.25) and gives rise-then-fall accuracy.",
        _TRAINING,
    ),
    Insight(
        "KL-2",
        "kl_clip",
        "clip.eps_high",
        "Removing KL and raising the upper clip sustains diversity (~0.75), response length (~3K -> 6.5K "
        "tokens) and accuracy.",
        _TRAINING,
    ),
    Insight(
        "KL-3",
        "kl_clip",
        "kl_coef",
        "Continued diversity loss makes training unsustainable: watch the `diversity` metric.",
        _TRAINING,
    ),
    Insight(
        "KL-4",
        "kl_clip",
        "kl_coef",
        "Recipes copied from math RL (with KL) stall or rise-then-fall on Qwen3: RL gains are large on "
        "Qwen2.5 and small on Qwen3 with old recipes.",
        _TRAINING,
    ),
)

INSIGHTS_BY_ID: dict[str, Insight] = {i.id: i for i in INSIGHTS}


def insights_for(config_field: str) -> list[Insight]:
    """The insights attached to one dotted config field (``temperature.*`` matches a whole section)."""
    if config_field.endswith(".*"):
        prefix = config_field[:-1]
        return [i for i in INSIGHTS if i.config_field.startswith(prefix)]
    return [i for i in INSIGHTS if i.config_field == config_field]


# The check lives beside the data it cites; re-exported so ``training.insights`` stays the one import path.
from training.config_checks import ConfigWarning, check_config  # noqa: E402

__all__ = [
    "ASPECTS",
    "INSIGHTS",
    "INSIGHTS_BY_ID",
    "ConfigWarning",
    "Insight",
    "check_config",
    "insights_for",
]
