"""The config check that cites the MicroCoder training insights (``training.insights``): valid but
risky choices become ``ConfigWarning``s naming the field, why, and the insight ids. The run still starts;
the UI shows each warning next to its field and links it to the insights page.

This module imports nothing from Django.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from training.config import GRPOConfig


@dataclass(frozen=True)
class ConfigWarning:
    """A risky configuration choice: which field, why, and the insights that say so."""

    field: str
    message: str
    insight_ids: tuple[str, ...]
    severity: Literal["warning", "info"] = "warning"

    def __str__(self) -> str:
        return f"[{self.severity}] {self.field}: {self.message} (insights {', '.join(self.insight_ids)})"


def check_config(config: GRPOConfig) -> list[ConfigWarning]:
    """Flag choices the MicroCoder insights call risky. Valid but risky: the run still starts."""
    out: list[ConfigWarning] = []

    def warn(field: str, message: str, *ids: str, severity: Literal["warning", "info"] = "warning") -> None:
        out.append(ConfigWarning(field, message, tuple(ids), severity))

    if config.kl_coef > 0:
        warn(
            "kl_coef",
            f"KL coefficient {config.kl_coef} > 0 shrinks diversity and tends to give rise-then-fall "
            "accuracy; MicroCoder uses 0 (and then loads no reference model).",
            "KL-1",
            "KL-3",
            "KL-4",
        )
    if config.clip.eps_high <= config.clip.eps_low:
        warn(
            "clip.eps_high",
            f"eps_high {config.clip.eps_high} <= eps_low {config.clip.eps_low}: no clip-higher; "
            "a wider upper clip sustains diversity (default 0.28).",
            "KL-2",
        )

    mask = config.mask
    if mask.policy == "all":
        warn(
            "mask.policy",
            "masking every truncated response drives length to the cap, collapses diversity and "
            "crashes accuracy; prefer 'conditional'.",
            "MASK-4",
            "MASK-2",
        )
    elif mask.policy == "conditional" and mask.probability >= 0.3:
        warn(
            "mask.probability",
            f"p = {mask.probability} already behaves like masking all; the paper uses 0.1.",
            "MASK-3",
            "MASK-2",
        )
    elif mask.policy == "none":
        warn(
            "mask.policy",
            "no truncation mask: truncated correct answers are trained on as failures; "
            "conditional masking was the most stable.",
            "MASK-4",
            severity="info",
        )
    if mask.policy == "conditional" and mask.repeat_window * 2 > config.max_response_length:
        warn(
            "mask.repeat_window",
            f"2 x repeat_window ({2 * mask.repeat_window}) exceeds max_response_length "
            f"({config.max_response_length}): the exact loop test can never fire (the n-gram test still "
            "does).",
            "MASK-5",
            severity="info",
        )

    temp = config.temperature
    if temp.policy == "constant" and temp.value < 1.0:
        warn(
            "temperature.value",
            f"T = {temp.value} may start below the diversity training converges to, and "
            "training then fails (t = 0.6 did on Qwen3); MicroCoder uses 1.2.",
            "TEMP-3",
            "TEMP-2",
        )
    if temp.policy in ("staged", "diversity") and temp.stages:
        values = [s.value for s in temp.stages]
        if any(b < a for a, b in zip(values, values[1:])):
            warn(
                "temperature.stages",
                f"stages {values} go down; tolerance for high T grows during training, so "
                "stages should go from low to high.",
                "TEMP-6",
                "TEMP-7",
            )
        steps = [s.value for s in temp.stages]
        small = any(abs(b - a) < 0.2 for a, b in zip(steps, steps[1:]))
        if len(temp.stages) > 4 or small:
            warn(
                "temperature.stages",
                f"{len(temp.stages)} stages with small increments approximate a continuous "
                "ramp, which can shift diversity irreversibly; use 2-3 stages or a constant.",
                "TEMP-8",
            )
    if temp.policy == "diversity" and temp.target_diversity < 0.5:
        warn(
            "temperature.target_diversity",
            f"target diversity {temp.target_diversity} is low: a temperature "
            "whose initial diversity is below the converged level makes training fail.",
            "TEMP-3",
            severity="info",
        )

    if config.max_response_length < 4096:
        warn(
            "max_response_length",
            f"a cap of {config.max_response_length} tokens is small for Qwen3 code models; "
            "a small cap does lasting damage that later extension does not repair (4K-16K in the papers).",
            "CTX-3",
            "CTX-4",
            "CTX-1",
        )

    if config.prompts_per_step < 32:
        warn(
            "prompts_per_step",
            f"{config.prompts_per_step} prompts per step is a small rollout batch: more "
            "on-policy but less stable; 64 was best.",
            "BATCH-1",
            "BATCH-2",
        )
    elif config.prompts_per_step > 128:
        warn(
            "prompts_per_step",
            f"{config.prompts_per_step} prompts per step is larger than any compared batch "
            "(32 / 64 / 128); 64 was best.",
            "BATCH-2",
            severity="info",
        )
    if config.updates_per_rollout > 4:
        warn(
            "minibatch_prompts",
            f"{config.updates_per_rollout} updates per rollout batch (prompts_per_step "
            f"{config.prompts_per_step} / minibatch_prompts {config.minibatch_prompts}) train far "
            "off-policy; the clip range then bounds most of the update.",
            "BATCH-3",
        )
    elif config.updates_per_rollout == 1 and config.clip.eps_high != config.clip.eps_low:
        warn(
            "minibatch_prompts",
            "one update per rollout batch keeps the ratio at exactly 1, so the clip (and clip-higher) "
            "never acts; a smaller minibatch gives several updates.",
            "BATCH-3",
            "KL-2",
            severity="info",
        )

    if config.reward.checker == "strict":
        warn(
            "reward.checker",
            "the strict grader's false negatives depress the reward and slow learning; use it "
            "only as a baseline.",
            "EVAL-1",
            "EVAL-3",
        )
    return out


__all__ = ["ConfigWarning", "check_config"]
