"""The rollout engine interface shared by the transformers and vLLM engines, and its seeding contract.

``RolloutEngine.generate(prompts, *, n, temperature, max_new_tokens, seed, sample_seeds=None,
on_group=None)``:

- ``sample_seeds``: one int per sample, ``len(prompts) * n`` of them, prompt-major (row ``i * n + j``
  is sample j of prompt i). Sample (i, j) then depends only on its own seed and the weights, not on
  which other prompts share the batch nor on how many processes split the step (the trainer derives
  them with ``training.data.sample_seed(seed, step, global_prompt_position, j)``). Without them the
  engine derives them from ``seed`` with ``resolve_sample_seeds``.
- ``on_group(prompt_index, completions)`` is called, in the caller's thread, as soon as all n samples
  of prompt ``prompt_index`` are finished, so judging can start while later groups still generate.
  ``GroupTracker`` does the bookkeeping for an engine that learns about samples one at a time.
- An engine may also accept ``on_sample(row, completion)`` (not required by the protocol; the
  transformers engine does): called the moment each response is finished. ``rollout_and_judge`` uses
  it when offered, since a group finishes only when its longest response does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import torch

#: ``on_group(prompt_index, that prompt's n completions)``.
GroupCallback = Callable[[int, list["Completion"]], None]
#: ``on_sample(row, completion)``: an engine-specific extension (the transformers engine offers it), row
#: ``i * n + j`` of the prompt-major output, called the moment that response is finished.
SampleCallback = Callable[[int, "Completion"], None]


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
        sample_seeds: Sequence[int] | None = None,
        on_group: GroupCallback | None = None,
    ) -> list[Completion]: ...

    def sync_weights(self, model: torch.nn.Module) -> None:
        """Make the engine sample from ``model``'s current weights (no-op when it shares them)."""
        ...

    def close(self) -> None: ...


def resolve_sample_seeds(seed: int, n_prompts: int, n: int, sample_seeds: Sequence[int] | None) -> list[int]:
    """The per-sample seeds of a ``generate`` call: ``sample_seeds`` checked, or derived from ``seed``
    (``sample_seed(seed, 0, i, j)``) when not given."""
    from training.data import sample_seed

    if sample_seeds is None:
        return [sample_seed(seed, 0, i, j) for i in range(n_prompts) for j in range(n)]
    seeds = [int(s) for s in sample_seeds]
    if len(seeds) != n_prompts * n:
        raise ValueError(f"sample_seeds holds {len(seeds)} seeds for {n_prompts} prompts x {n} samples")
    return seeds


class GroupTracker:
    """Collects finished samples (in any order) and calls ``on_group`` once a prompt has all n, with
    them in sample order (row ``i * n + j`` of the prompt-major output)."""

    def __init__(
        self, n: int, on_group: GroupCallback | None, on_sample: SampleCallback | None = None
    ) -> None:
        self.n = n
        self.on_group = on_group
        self.on_sample = on_sample
        self.groups: dict[int, dict[int, Completion]] = {}

    def add(self, row: int, completion: Completion) -> None:
        group = self.groups.setdefault(completion.prompt_index, {})
        if row in group:
            raise RuntimeError(f"sample row {row} finished twice")
        group[row] = completion
        if self.on_sample is not None:
            self.on_sample(row, completion)
        if len(group) == self.n and self.on_group is not None:
            self.on_group(completion.prompt_index, [group[r] for r in sorted(group)])


__all__ = [
    "Completion",
    "GroupCallback",
    "GroupTracker",
    "RolloutEngine",
    "SampleCallback",
    "resolve_sample_seeds",
]
