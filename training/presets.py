"""Method presets: the baselines the MicroCoder papers compare against, as starting configs.

A preset is a set of dotted-path values applied before a config's own values (``training.config``:
``{"preset": "dapo", "max_steps": 5}`` is a complete config), so every field can still be overridden.
The presets differ only in the choices that define each method; everything else (model, data, batch
and minibatch sizes, lengths) stays at the product's defaults so that runs started from different
presets compare like for like. Sources: ../shared/INSIGHTS.md, "The baselines the papers compare
against", and the papers cited in each preset.

- ``grpo``: DeepSeekMath's GRPO (arXiv 2402.03300, Sec. 4.1-4.2): symmetric clip 0.2, a k3 KL penalty
  against the initial policy with beta = 0.04, per-response loss normalization (each response's token
  mean, then the mean over responses); no truncation mask, constant temperature 1.0 (the baselines have
  no temperature method: the policy is sampled as is).
- ``dapo``: DAPO (arXiv 2503.14476): clip-higher 0.2 / 0.28 (Sec. 3.1), dynamic sampling (Sec. 3.2),
  token-level loss (Sec. 3.3), overlong reward shaping with a soft buffer (Sec. 3.4, L_cache / L_max =
  4096 / 20480), no KL, learning-rate warm-up over 20 steps (Sec. 4.1), constant temperature 1.0.
- ``microcoder``: MicroCoder-GRPO (arXiv 2603.07777): clip-higher and token-level loss, no KL, the
  conditional truncation mask (p = 0.1, m = 128), and the diversity-determined staged temperature: T
  chosen from the initial policy's diversity, then a higher stage (1.8 from step 140, as in the paper's
  staged 0.6 -> 1.8 run). Its values equal the product's defaults except the temperature policy.

This module imports nothing (configs are built in ``training.config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from training.config_sections import ConfigError


@dataclass(frozen=True)
class Preset:
    """A named starting config: ``overrides`` maps dotted config paths to values."""

    name: str
    title: str
    summary: str
    source: str
    overrides: Mapping[str, Any]


_GRPO = Preset(
    name="grpo",
    title="GRPO (DeepSeekMath)",
    summary=(
        "Symmetric clip 0.2, k3 KL penalty (beta 0.04) against the initial policy as reference model, "
        "per-response loss normalization (token mean per response, then mean over responses), no "
        "truncation mask, constant T = 1.0 (the policy sampled as is: GRPO has no temperature method). "
        "The original made one update per rollout; the preset keeps "
        "the product's minibatch updates so the presets differ only in the method (set "
        "minibatch_prompts = prompts_per_step for the single update)."
    ),
    source="Shao et al., DeepSeekMath, arXiv 2402.03300, Sec. 4.1 (eq. 3) and 4.2 (training setup)",
    overrides=MappingProxyType(
        {
            "clip.eps_low": 0.2,
            "clip.eps_high": 0.2,
            "kl_coef": 0.04,
            "loss_aggregation": "sequence",
            "mask.policy": "none",
            "temperature.policy": "constant",
            "temperature.value": 1.0,
            "reward.overlong_buffer_ratio": 0.0,
            "dynamic_sampling.enabled": False,
        }
    ),
)

_DAPO = Preset(
    name="dapo",
    title="DAPO",
    summary=(
        "Clip-higher 0.2 / 0.28; dynamic sampling drops groups whose rewards are all equal and samples "
        "more prompts until the batch is full; token-level loss; overlong reward shaping with a soft "
        "buffer of 0.2 L_max (DAPO: 4096 of 20480 tokens); no KL; 20 warm-up steps; no truncation mask "
        "(the shaping handles long responses); constant T = 1.0 (no temperature method)."
    ),
    source=(
        "Yu et al., DAPO, arXiv 2503.14476, Sec. 3.1 (clip-higher), 3.2 (dynamic sampling), 3.3 "
        "(token-level loss), 3.4 (overlong reward shaping, eq. 13), 4.1 (training details)"
    ),
    overrides=MappingProxyType(
        {
            "clip.eps_low": 0.2,
            "clip.eps_high": 0.28,
            "kl_coef": 0.0,
            "loss_aggregation": "token",
            "mask.policy": "none",
            "temperature.policy": "constant",
            "temperature.value": 1.0,
            "reward.overlong_buffer_ratio": 0.2,
            "reward.overlong_penalty_factor": 1.0,
            "dynamic_sampling.enabled": True,
            "lr_warmup_steps": 20,
        }
    ),
)

_MICROCODER = Preset(
    name="microcoder",
    title="MicroCoder-GRPO",
    summary=(
        "Clip-higher 0.2 / 0.28 and token-level loss, no KL, the conditional truncation mask (p = 0.1, "
        "exact 128-token repetition test), and the diversity-determined staged temperature: the lowest "
        "candidate T whose initial diversity reaches the target, then T = 1.8 from step 140."
    ),
    source=(
        "MicroCoder, 'Breaking Training Bottlenecks', arXiv 2603.07777: MicroCoder-GRPO (objective, "
        "conditional truncation mask, diversity-determined temperature, no KL with clip-higher)"
    ),
    overrides=MappingProxyType(
        {
            "clip.eps_low": 0.2,
            "clip.eps_high": 0.28,
            "kl_coef": 0.0,
            "loss_aggregation": "token",
            "mask.policy": "conditional",
            "mask.probability": 0.1,
            "mask.repeat_window": 128,
            "mask.ngram_loop_test": False,
            "temperature.policy": "diversity",
            "temperature.stages": [{"start_step": 140, "value": 1.8}],
            "reward.overlong_buffer_ratio": 0.0,
            "dynamic_sampling.enabled": False,
        }
    ),
)

PRESETS: dict[str, Preset] = {p.name: p for p in (_GRPO, _DAPO, _MICROCODER)}


def preset_names() -> list[str]:
    """The preset names, in the order the papers compare them (grpo, dapo, microcoder)."""
    return list(PRESETS)


def get_preset(name: str) -> Preset:
    """The preset called ``name``; ConfigError listing the names when there is none."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ConfigError(f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}.") from None


__all__ = ["PRESETS", "Preset", "get_preset", "preset_names"]
