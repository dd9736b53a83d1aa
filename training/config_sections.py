"""Sections of the MicroCoder-GRPO run configuration (``training.config``): one frozen dataclass per
section, each field with a help string and ``__post_init__`` checks whose errors say how to fix it.

These are the method's sections (temperature, mask, clip, reward); the sections of what a run reads
and runs on (dataset, rollout engine, prompt rendering, held-out evaluation) are in
``training.config_run_sections``. ``ConfigError`` and the field helpers live here so every config
module shares them. The whole tree
(``GRPOConfig``) is in ``training.config_schema``; loading, overrides and the field catalogue in
``training.config``, which re-exports every name (import from there).

This module imports nothing from Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


class ConfigError(ValueError):
    """A configuration value is invalid; the message says which field and how to fix it."""


def _help(text: str) -> dict[str, str]:
    return {"help": text}


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ConfigError(message)


@dataclass(frozen=True)
class TemperatureStage:
    """One stage of a staged schedule: ``value`` applies from step ``start_step`` (1-based) on."""

    start_step: int = field(metadata=_help("First training step (1-based) at which this stage applies."))
    value: float = field(metadata=_help("Sampling and training temperature during this stage."))

    def __post_init__(self) -> None:
        _require(self.start_step >= 0, f"temperature.stages: start_step must be >= 0, got {self.start_step}.")
        _require(
            0.0 < self.value <= 4.0,
            f"temperature.stages: value must be in (0, 4], got {self.value}; MicroCoder uses 0.6-1.8.",
        )


@dataclass(frozen=True)
class TemperatureConfig:
    policy: Literal["constant", "staged", "diversity"] = field(
        default="constant",
        metadata=_help(
            "How T is chosen: 'constant' uses temperature.value; 'staged' follows temperature.stages "
            "(low -> high, e.g. 0.6 until step 140 then 1.8); 'diversity' samples the initial policy at "
            "each of temperature.candidates before step 1 and picks the lowest T whose diversity reaches "
            "temperature.target_diversity (later stages from temperature.stages, if any, still apply)."
        ),
    )
    value: float = field(
        default=1.2,
        metadata=_help("The temperature of the 'constant' policy. MicroCoder's main runs use 1.2."),
    )
    stages: tuple[TemperatureStage, ...] = field(
        default=(),
        metadata=_help(
            "Staged schedule as a list of {start_step, value}, sorted by start_step; the first stage "
            "starts at step 0 or 1. Under 'diversity' the stage that starts the run takes the selected T."
        ),
    )
    candidates: tuple[float, ...] = field(
        default=(0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8),
        metadata=_help("Temperatures the 'diversity' policy measures before training, ascending."),
    )
    target_diversity: float = field(
        default=0.7,
        metadata=_help(
            "On the scale of the `diversity` metric (training.temperature): the mean, over a group's "
            "pairs of responses, of the token-level Levenshtein distance between their first "
            "temperature.diversity_tokens tokens divided by the longer length; range [0, 1], 0 = "
            "identical responses, 1 = nothing in common. The 'diversity' policy picks the lowest "
            "candidate whose initial diversity reaches this value (the level diversity converges to "
            "in training; starting below it makes training fail, arXiv 2603.07777). 0.7 is the level "
            "the paper's diversity converged to (~0.71 at T = 1.2 on Qwen3-4B); the paper does not "
            "publish its metric, so read 0.7 as a starting point and check the `diversity` curve of "
            "a short run. If no candidate reaches it, the most diverse candidate is used."
        ),
    )
    selection_prompts: int = field(
        default=16,
        metadata=_help(
            "Groups (of group_size samples; prompts repeat when there are fewer problems) the probe "
            "samples per candidate temperature. The probe's noise must be smaller than the gap between "
            "neighbouring candidates: on the toy model, bench/temperature_probe.py measured the worst "
            "neighbouring pair's spread over seeds / gap at 0.96 with 4 groups, 0.48 with 8 and 0.39 "
            "with 16 (README, 'Presets and method defaults'); 16 leaves a margin. Rerun the bench on "
            "your model (--model) to size it there."
        ),
    )
    diversity_tokens: int = field(
        default=256,
        metadata=_help(
            "Diversity is measured on the first N tokens of each response, both during selection (which "
            "therefore generates only N tokens per sample) and in the per-step `diversity` metric."
        ),
    )
    diversity_groups: int = field(
        default=16,
        metadata=_help(
            "The per-step `diversity` metric uses the step's first N groups (prompts are shuffled, so a "
            "random subset; the edit distances cost O(G^2 N^2) per group); 0 = every group."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.policy in ("constant", "staged", "diversity"),
            f"temperature.policy must be constant, staged or diversity, got {self.policy!r}.",
        )
        _require(
            0.0 < self.value <= 4.0,
            f"temperature.value must be in (0, 4], got {self.value}; MicroCoder's main runs use 1.2.",
        )
        starts = [s.start_step for s in self.stages]
        _require(
            starts == sorted(starts) and len(set(starts)) == len(starts),
            f"temperature.stages must have strictly increasing start_step values, got {starts}.",
        )
        if self.policy == "staged":
            _require(
                bool(self.stages) and self.stages[0].start_step <= 1,
                "temperature.policy 'staged' needs temperature.stages whose first stage starts at step 0 "
                "or 1, "
                "e.g. [{start_step: 0, value: 0.6}, {start_step: 140, value: 1.8}].",
            )
        if self.policy == "diversity":
            _require(
                len(self.candidates) >= 1 and list(self.candidates) == sorted(set(self.candidates)),
                f"temperature.candidates must be distinct and ascending, got {list(self.candidates)}.",
            )
            _require(
                all(0.0 < t <= 4.0 for t in self.candidates),
                f"temperature.candidates must lie in (0, 4], got {list(self.candidates)}.",
            )
        _require(
            0.0 <= self.target_diversity <= 1.0,
            "temperature.target_diversity is a normalized edit distance in [0, 1], got "
            f"{self.target_diversity}.",
        )
        _require(self.selection_prompts >= 1, "temperature.selection_prompts must be >= 1.")
        _require(self.diversity_tokens >= 1, "temperature.diversity_tokens must be >= 1.")
        _require(self.diversity_groups >= 0, "temperature.diversity_groups must be >= 0 (0 = every group).")


@dataclass(frozen=True)
class MaskConfig:
    policy: Literal["conditional", "all", "none"] = field(
        default="conditional",
        metadata=_help(
            "Truncation mask: 'conditional' (MicroCoder: mask a truncated response only when its answer is "
            "not judged wrong, its tail is not a repetition loop and a Bernoulli(mask.probability) draw "
            "succeeds), 'all' (mask every truncated response: TRL / DeepCoder overlong filtering), 'none'."
        ),
    )
    probability: float = field(
        default=0.1,
        metadata=_help(
            "p of the Bernoulli draw of the conditional mask. 0.1 is the paper's setting; 0.3 "
            "already behaves like masking all."
        ),
    )
    repeat_window: int = field(
        default=128,
        metadata=_help(
            "m of condition (c), the paper's exact test (arXiv 2603.07777, MicroCoder-GRPO): a truncated "
            "response whose last m tokens equal the m tokens before them is a repetition loop and keeps "
            "its negative signal (never masked). The paper uses m = 128."
        ),
    )
    ngram_loop_test: bool = field(
        default=False,
        metadata=_help(
            "Also count a tail as a loop when its share of repeated n-grams over the last 2*m tokens "
            "reaches mask.ngram_repeat_threshold (catches loops whose period does not divide m). Off by "
            "default: not in the paper, an opt-in for ablations."
        ),
    )
    ngram_size: int = field(
        default=4,
        metadata=_help("n of the opt-in n-gram loop test (mask.ngram_loop_test)."),
    )
    ngram_repeat_threshold: float = field(
        default=0.5,
        metadata=_help(
            "The opt-in n-gram loop test (mask.ngram_loop_test) counts a tail whose share of repeated "
            "n-grams reaches this value as a loop."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.policy in ("conditional", "all", "none"),
            f"mask.policy must be conditional, all or none, got {self.policy!r}.",
        )
        _require(
            0.0 <= self.probability <= 1.0,
            f"mask.probability is a probability in [0, 1], got {self.probability}; the paper uses 0.1.",
        )
        _require(self.repeat_window >= 1, f"mask.repeat_window must be >= 1 token, got {self.repeat_window}.")
        _require(self.ngram_size >= 1, f"mask.ngram_size must be >= 1, got {self.ngram_size}.")
        _require(
            0.0 < self.ngram_repeat_threshold <= 1.0,
            f"mask.ngram_repeat_threshold must be in (0, 1], got {self.ngram_repeat_threshold}.",
        )


@dataclass(frozen=True)
class ClipConfig:
    eps_low: float = field(
        default=0.2,
        metadata=_help("Lower clip: the ratio is clipped at 1 - eps_low for negative advantages."),
    )
    eps_high: float = field(
        default=0.28,
        metadata=_help(
            "Upper clip ('clip-higher'): the ratio is clipped at 1 + eps_high for positive "
            "advantages. DAPO's 0.28 is the default; a value above eps_low sustains diversity."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            0.0 < self.eps_low < 1.0, f"clip.eps_low must be in (0, 1), got {self.eps_low}; default 0.2."
        )
        _require(
            0.0 < self.eps_high <= 10.0,
            f"clip.eps_high must be in (0, 10], got {self.eps_high}; default 0.28.",
        )


@dataclass(frozen=True)
class RewardConfig:
    checker: Literal["problem", "lenient", "strict"] = field(
        default="problem",
        metadata=_help(
            "Output comparison of the judge: 'problem' uses each problem's own checker (lenient fallback "
            "chain unless the problem says otherwise), 'lenient' forces the MicroCoder chain, 'strict' the "
            "LiveCodeBench-style baseline (only for comparisons: its false negatives slow learning)."
        ),
    )
    mode: Literal["pass_fail", "fraction"] = field(
        default="pass_fail",
        metadata=_help(
            "'pass_fail': 1 when every test passes, else 0; 'fraction': the share of tests passed."
        ),
    )
    workers: int | None = field(
        default=None, metadata=_help("Parallel judge processes; empty = the evaluator's default (CPU count).")
    )
    max_tests: int | None = field(
        default=None,
        metadata=_help(
            "Judge at most this many tests per problem (hundreds of tests stall training); empty = all."
        ),
    )
    overlong_buffer_ratio: float = field(
        default=0.0,
        metadata=_help(
            "DAPO's overlong reward shaping (arXiv 2503.14476, Sec. 3.4, eq. 13): L_cache as a share of "
            "L_max = max_response_length. A response of length |y| gets an extra reward of 0 when "
            "|y| <= L_max - L_cache, ((L_max - L_cache) - |y|) / L_cache inside the buffer (down to -1 "
            "at the cap), times reward.overlong_penalty_factor. DAPO used L_cache = 4096 of L_max = 20480 "
            "(0.2). 0 = off (MicroCoder and GRPO: the truncation mask handles long responses)."
        ),
    )
    overlong_penalty_factor: float = field(
        default=1.0,
        metadata=_help("Scale of the overlong penalty (1.0 in DAPO's recipe); used only with a buffer."),
    )
    overlap: bool = field(
        default=True,
        metadata=_help(
            "Judge each prompt's group as soon as its samples are finished, in a background thread, "
            "while later groups still generate (the judge runs in sandboxed subprocesses, so this hides "
            "judging behind generation: timing/reward_wait_s is the part left over). Off = judge the "
            "whole batch after generation. Rewards are the same either way."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.checker in ("problem", "lenient", "strict"),
            f"reward.checker must be problem, lenient or strict, got {self.checker!r}.",
        )
        _require(
            self.mode in ("pass_fail", "fraction"),
            f"reward.mode must be pass_fail or fraction, got {self.mode!r}.",
        )
        _require(self.workers is None or self.workers >= 1, "reward.workers must be >= 1 or empty.")
        _require(self.max_tests is None or self.max_tests >= 1, "reward.max_tests must be >= 1 or empty.")
        _require(
            0.0 <= self.overlong_buffer_ratio < 1.0,
            "reward.overlong_buffer_ratio is L_cache / L_max in [0, 1), got "
            f"{self.overlong_buffer_ratio}; DAPO's is 0.2, 0 turns the shaping off.",
        )
        _require(
            self.overlong_penalty_factor >= 0.0,
            f"reward.overlong_penalty_factor must be >= 0, got {self.overlong_penalty_factor}.",
        )
