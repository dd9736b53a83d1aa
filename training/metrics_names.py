"""The one list of training metric names: the trainer emits them, the docs, pages and tests read them.

Names are stable (TRL-compatible where TRL has the metric). ``METRICS`` maps each name to a one-line
description; ``EVERY_STEP`` are logged at every step of every run, ``CONDITIONAL`` only when they are
defined (a metric that is undefined at a step, e.g. ``kl`` without a reference model, is omitted rather
than reported as NaN), ``VERDICT_METRICS`` are the per-verdict shares and ``HELD_OUT`` the held-out
evaluation metrics logged on the steps the optional ``eval`` section evaluates.

This module imports nothing (not even torch), so any layer can use it.
"""

from __future__ import annotations

#: verdicts whose share of the step's samples is logged as ``verdict/<V>`` (NA = no program found)
VERDICTS: tuple[str, ...] = ("AC", "WA", "TLE", "MLE", "RE", "CE", "IE", "NA")

METRICS: dict[str, str] = {
    "reward": (
        "Mean reward of the step's judged samples (infrastructure errors left out), as the judge gave it: "
        "before DAPO's overlong shaping, so runs of every preset compare."
    ),
    "reward_std": (
        "Mean over groups of the standard deviation within a group of the rewards the advantages use "
        "(after overlong shaping when it is on)."
    ),
    "frac_reward_zero_std": (
        "Share of the trained batch's groups whose rewards are all equal (no learning signal); about 0 under "
        "dynamic sampling, whose drops are counted by dynamic_sampling/groups_dropped."
    ),
    "completions/mean_length": "Mean response length in tokens.",
    "completions/min_length": "Shortest response of the step, in tokens.",
    "completions/max_length": "Longest response of the step, in tokens.",
    "completions/mean_terminated_length": "Mean length of the responses that ended on their own.",
    "completions/clipped_ratio": "Share of responses that hit max_response_length (truncated).",
    "entropy": (
        "Mean per-token entropy of the sampling distribution (from the transformers engine while "
        "sampling, else from the first update's forward pass)."
    ),
    "clip_ratio/low_mean": "Share of loss tokens clipped at 1 - eps_low.",
    "clip_ratio/high_mean": "Share of loss tokens clipped at 1 + eps_high.",
    "clip_ratio/region_mean": "Share of loss tokens clipped at either end.",
    "mask/conditional_masked_ratio": "Masked share of all samples, whatever the mask policy.",
    "mask/truncated_masked_ratio": "Masked share of the truncated samples.",
    "temperature": "Sampling and training temperature of the step.",
    "temperature/stage": "Index of the temperature stage in force (0 for a constant T).",
    "diversity": (
        "Mean over the step's groups (the first temperature.diversity_groups) of the mean pairwise "
        "token-level Levenshtein distance between the first temperature.diversity_tokens tokens of two "
        "responses, divided by the longer length: 0 = identical responses, 1 = nothing in common."
    ),
    "diversity/reward_nonconstant_frac": "Share of groups whose rewards are not all equal.",
    "timing/generate_s": "Seconds spent sampling the step's responses.",
    "timing/reward_s": "Seconds spent judging them (with reward.overlap, partly while generating).",
    "timing/reward_wait_s": "Seconds of judging not hidden behind generation (after the last sample).",
    "timing/update_s": "Seconds spent in the optimizer updates and the weight sync.",
    "timing/step_s": "Wall seconds of the whole step.",
    "eval/infra_error_rate": "Share of samples whose judging failed (IE): never counted as wrong.",
    "eval/no_answer_rate": "Share of samples without a program to judge (verdict NA).",
    "loss": "Mean policy loss over the step's minibatch updates.",
    "kl": (
        "Mean k3 KL estimate (exp(d) - d - 1, d = ref - policy log-prob) per loss token to the reference "
        "model, the initial policy (only with kl_coef > 0, e.g. the grpo preset)."
    ),
    "reward/overlong_penalty": (
        "Mean DAPO overlong penalty added to the rewards before the advantages, in [-factor, 0] (only "
        "with reward.overlong_buffer_ratio > 0, e.g. the dapo preset)."
    ),
    "dynamic_sampling/groups_dropped": (
        "Groups sampled this step whose judged rewards were all equal and were dropped (only with "
        "dynamic_sampling.enabled)."
    ),
    "dynamic_sampling/groups_refilled": (
        "Groups of the trained batch that came from extra sampling rounds (only with dynamic_sampling)."
    ),
    "dynamic_sampling/rounds": "Extra sampling rounds this step needed (only with dynamic_sampling).",
    "dynamic_sampling/batch_fill": (
        "Trained groups / prompts_per_step: below 1 when max_rounds ran out (only with dynamic_sampling)."
    ),
    "grad_norm": "Mean gradient norm before clipping (only with max_grad_norm > 0).",
    "learning_rate": "Learning rate of the step.",
    "num_tokens": "Cumulative prompt + completion tokens trained on.",
    "epoch": "Passes over the training problems so far.",
    "rollout/tokens_per_s": "Generated tokens per second of generation time.",
    "policy/ratio_max_dev": "Max |rho - 1| over the step's loss tokens (0 with one update per rollout).",
    "rollout/logprob_abs_diff": (
        "Mean |engine logprob - trainer logprob| before the first update (0 up to numerics for "
        "the transformers engine; the vLLM/trainer mismatch otherwise)."
    ),
    **{f"verdict/{v}": f"Share of the step's samples with verdict {v}." for v in VERDICTS},
    "eval/pass@1": "Held-out pass@1 of the current policy on eval.release (eval steps only).",
    "eval/pass@k": "Held-out pass@k (k = eval.k) of the current policy on eval.release (eval steps only).",
    "timing/eval_s": "Wall seconds of the held-out evaluation (eval steps only).",
}

#: metrics that are defined only under some settings (omitted otherwise)
CONDITIONAL: frozenset[str] = frozenset(
    {"kl", "grad_norm", "entropy", "rollout/logprob_abs_diff", "eval/pass@1", "eval/pass@k", "timing/eval_s"}
    | {"reward/overlong_penalty"}
    | {name for name in METRICS if name.startswith("dynamic_sampling/")}
)
#: held-out evaluation metrics (logged on evaluation steps only)
HELD_OUT: tuple[str, ...] = ("eval/pass@1", "eval/pass@k")
VERDICT_METRICS: tuple[str, ...] = tuple(f"verdict/{v}" for v in VERDICTS)
#: logged at every step of every run
EVERY_STEP: tuple[str, ...] = tuple(name for name in METRICS if name not in CONDITIONAL)


__all__ = ["CONDITIONAL", "EVERY_STEP", "HELD_OUT", "METRICS", "VERDICTS", "VERDICT_METRICS"]
