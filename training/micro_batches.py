"""Micro-batches of the update: by sample count, or packed by a padded-token budget.

A micro-batch is laid out as left-padded prompts + right-padded responses (``training.update.
batch_tensors``), so its size in tokens is samples x (longest prompt + longest response). With a
budget, samples are taken longest first and packed greedily while that padded size fits; a sample
longer than the budget goes alone. The order of samples inside a minibatch does not change the
update: its gradient is the sum over micro-batches.

This module imports nothing from Django.
"""

from __future__ import annotations

from collections.abc import Sequence

from training.rollout.base import Completion


def padded_tokens(
    indices: Sequence[int], prompts: Sequence[Sequence[int]], comps: Sequence[Completion]
) -> int:
    """Tokens of the padded (samples, prompt + response) tensor of a micro-batch."""
    if not indices:
        return 0
    width_p = max(len(prompts[comps[i].prompt_index]) for i in indices)
    width_c = max(max(comps[i].length for i in indices), 1)
    return len(indices) * (width_p + width_c)


def micro_batches(
    indices: Sequence[int],
    prompts: Sequence[Sequence[int]],
    comps: Sequence[Completion],
    *,
    max_samples: int,
    max_tokens: int = 0,
) -> list[list[int]]:
    """Split ``indices`` (into ``comps``) into micro-batches: ``max_samples`` at a time in order when
    ``max_tokens`` is 0, else longest first, packed while the padded size stays within ``max_tokens``."""
    if max_samples < 1:
        raise ValueError("max_samples must be >= 1")
    items = list(indices)
    if max_tokens <= 0:
        return [items[s : s + max_samples] for s in range(0, len(items), max_samples)]

    def size(i: int) -> tuple[int, int]:
        return len(prompts[comps[i].prompt_index]), max(comps[i].length, 1)

    order = sorted(items, key=lambda i: (-sum(size(i)), i))
    out: list[list[int]] = []
    current: list[int] = []
    width_p = width_c = 0
    for i in order:
        p, c = size(i)
        wp, wc = max(width_p, p), max(width_c, c)
        if current and (len(current) + 1) * (wp + wc) > max_tokens:
            out.append(current)
            current, wp, wc = [], p, c
        current.append(i)
        width_p, width_c = wp, wc
    if current:
        out.append(current)
    return out


__all__ = ["micro_batches", "padded_tokens"]
