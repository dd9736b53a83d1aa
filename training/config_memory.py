"""The ``memory`` section of the run configuration: what the update does to fit long responses and
large models (import it from ``training.config``).

- ``checkpointing_min_params``: gradient checkpointing turns itself on for policies at least this
  large (``gradient_checkpointing: true`` forces it at any size; ``training.modeling``);
- ``micro_batch_tokens``: micro-batches of the update cut by a padded-token budget instead of a
  sample count (``training.micro_batches``).

The log-probabilities of the update are always computed by the chunked head (``training.logprobs``):
no (length x vocabulary) logits are kept for the backward pass. bfloat16 parameters are ``dtype``.

This module imports nothing from Django.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from training.config_sections import _help, _require


@dataclass(frozen=True)
class MemoryConfig:
    checkpointing_min_params: int = field(
        default=500_000_000,
        metadata=_help(
            "Gradient checkpointing (recompute each layer's activations in the backward pass) turns on "
            "by itself for policies with at least this many parameters; gradient_checkpointing: true "
            "forces it at any size; 0 = only when forced. At 8K-token responses the activations of "
            "Qwen3-0.6B (28 layers, hidden 1024) already take tens of GB per micro-batch without it, "
            "so the default covers Qwen3-0.6B and larger; tiny test models stay without it."
        ),
    )
    micro_batch_tokens: int = field(
        default=0,
        metadata=_help(
            "Token budget of one forward/backward pass: samples (longest first) are packed into a "
            "micro-batch while its padded size, samples x (longest prompt + longest response), stays "
            "within the budget (a longer sample goes alone). Replaces micro_batch_size's sample count, "
            "so short responses share a pass and long ones do not run out of memory. 0 = use "
            "micro_batch_size. E.g. 32768 for 8K-token responses on one H200."
        ),
    )

    def __post_init__(self) -> None:
        _require(
            self.checkpointing_min_params >= 0,
            f"memory.checkpointing_min_params must be >= 0 (0 = only when forced), got "
            f"{self.checkpointing_min_params}.",
        )
        _require(
            self.micro_batch_tokens >= 0,
            f"memory.micro_batch_tokens must be >= 0 (0 = micro_batch_size samples), got {self.micro_batch_tokens}.",
        )


__all__ = ["MemoryConfig"]
