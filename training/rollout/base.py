"""The rollout engine interface shared by the transformers and vLLM engines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch


@dataclass(frozen=True)
class Completion:
    """One sampled response.

    ``token_ids`` include the end-of-sequence token when the model produced one (it is trained on);
    ``logprobs[t]`` is log pi(token_t) at the sampling temperature (logits / T), one per token;
    ``truncated`` means the response reached the length cap without an end-of-sequence token;
    ``entropy_sum`` is the summed per-token entropy of the sampling distribution when the engine can
    compute it (transformers), else None.
    """

    prompt_index: int
    token_ids: list[int]
    logprobs: list[float]
    truncated: bool
    entropy_sum: float | None = None

    @property
    def length(self) -> int:
        return len(self.token_ids)


@runtime_checkable
class RolloutEngine(Protocol):
    """Samples ``n`` responses per prompt. Results are prompt-major: prompt 0's n, then prompt 1's ..."""

    def generate(
        self,
        prompts: list[list[int]],
        *,
        n: int,
        temperature: float,
        max_new_tokens: int,
        seed: int,
    ) -> list[Completion]: ...

    def sync_weights(self, model: torch.nn.Module) -> None:
        """Make the engine sample from ``model``'s current weights (no-op when it shares them)."""
        ...

    def close(self) -> None: ...
