"""DAPO's dynamic sampling (arXiv 2503.14476, Sec. 3.2): keep only groups that carry a learning signal.

A group whose judged rewards are all equal (all right or all wrong) has zero advantages everywhere and
adds nothing to the gradient. With ``dynamic_sampling.enabled`` the step drops such groups and samples
more prompts, up to ``dynamic_sampling.max_rounds`` extra rounds, until it holds ``prompts_per_step``
groups again. Each extra round asks for about as many prompts as the share of groups kept so far says
will fill the batch (``refill_count``). When the rounds run out the step trains on what it has.

The filter looks at the judge's rewards, before any overlong shaping (DAPO filters on accuracy), and
ignores infrastructure errors (a group needs two different valid rewards to be kept).

``fill_batch`` is generic over the group type so it is tested without a model; the trainer's groups
are ``JudgedGroup`` (one prompt's completions, texts and verdicts). Metrics it feeds
(``training.metrics_names``): ``dynamic_sampling/groups_dropped``, ``dynamic_sampling/groups_refilled``,
``dynamic_sampling/rounds``, ``dynamic_sampling/batch_fill``.

This module imports nothing from Django and does no tensor work.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

import numpy as np

from training.rewards import RewardResult
from training.rollout.base import Completion

G = TypeVar("G")


def has_signal(rewards: Sequence[float | None]) -> bool:
    """True when the group's valid (non-IE) rewards are not all equal: its advantages are not all 0."""
    valid = [r for r in rewards if r is not None]
    return len(valid) >= 2 and max(valid) != min(valid)


def refill_count(missing: int, kept: int, sampled: int, cap: int) -> int:
    """Prompts to sample in the next round: ``missing / (kept share so far)``, at least ``missing``,
    at most ``cap``. With nothing kept yet the share is unknown: sample ``cap``."""
    if missing <= 0:
        return 0
    if kept <= 0 or sampled <= 0:
        return cap
    return max(missing, min(cap, math.ceil(missing * sampled / kept)))


@dataclass(frozen=True)
class FilledBatch(Generic[G]):
    """The groups a step trains on and how dynamic sampling got them."""

    groups: list[G]
    target: int
    dropped: int  # groups sampled this step and dropped for equal rewards
    refilled: int  # kept groups that came from the extra rounds
    rounds: int  # extra sampling rounds run

    def metrics(self) -> dict[str, float]:
        return {
            "dynamic_sampling/groups_dropped": float(self.dropped),
            "dynamic_sampling/groups_refilled": float(self.refilled),
            "dynamic_sampling/rounds": float(self.rounds),
            "dynamic_sampling/batch_fill": len(self.groups) / self.target if self.target else 1.0,
        }


def fill_batch(
    first: Sequence[G],
    sample_more: Callable[[int, int], Sequence[G]],
    rewards_of: Callable[[G], Sequence[float | None]],
    *,
    target: int,
    max_rounds: int,
) -> FilledBatch[G]:
    """Drop the groups of ``first`` without signal and call ``sample_more(round, count)`` (round 1, 2 ...)
    for more until ``target`` groups are kept or ``max_rounds`` extra rounds have run. Extra groups
    beyond ``target`` are left out (the batch size stays fixed)."""
    kept = [g for g in first if has_signal(rewards_of(g))]
    sampled = len(first)
    dropped = sampled - len(kept)
    from_first = len(kept)
    rounds = 0
    while len(kept) < target and rounds < max_rounds:
        rounds += 1
        count = refill_count(target - len(kept), len(kept), sampled, cap=target)
        more = list(sample_more(rounds, count))
        sampled += len(more)
        good = [g for g in more if has_signal(rewards_of(g))]
        dropped += len(more) - len(good)
        kept.extend(good)
    kept = kept[:target]
    return FilledBatch(
        groups=kept, target=target, dropped=dropped, refilled=max(0, len(kept) - from_first), rounds=rounds
    )


@dataclass(frozen=True)
class JudgedGroup:
    """One prompt's judged samples: ``problem_index`` into the trainer's problems."""

    problem_index: int
    completions: list[Completion]
    texts: list[str]
    results: list[RewardResult]

    @property
    def rewards(self) -> list[float | None]:
        return [r.reward for r in self.results]


def split_groups(
    idx: Sequence[int],
    completions: Sequence[Completion],
    texts: Sequence[str],
    results: Sequence[RewardResult],
    group_size: int,
) -> list[JudgedGroup]:
    """Prompt-major flat lists (prompt ``g`` = rows ``g*G .. g*G+G-1``) -> one JudgedGroup per prompt."""
    out = []
    for g, problem in enumerate(idx):
        rows = slice(g * group_size, (g + 1) * group_size)
        out.append(JudgedGroup(problem, list(completions[rows]), list(texts[rows]), list(results[rows])))
    return out


def join_groups(
    groups: Sequence[JudgedGroup],
) -> tuple[list[int], list[Completion], list[str], list[RewardResult]]:
    """Back to flat prompt-major lists: (problem indices, completions with ``prompt_index`` renumbered
    to the group's position, texts, results)."""
    idx = [g.problem_index for g in groups]
    comps = [replace(c, prompt_index=pos) for pos, g in enumerate(groups) for c in g.completions]
    texts = [t for g in groups for t in g.texts]
    results = [r for g in groups for r in g.results]
    return idx, comps, texts, results


def refill_indices(n_problems: int, count: int, *, seed: int, step: int, round_: int) -> list[int]:
    """Problem indices of an extra round: a function of (seed, step, round) only, so a resumed run
    refills with the same prompts (drawn without replacement while ``count <= n_problems``)."""
    rng = np.random.default_rng([seed, step, 2, round_])
    if count <= n_problems:
        return [int(i) for i in rng.permutation(n_problems)[:count]]
    return [int(i) for i in rng.integers(0, n_problems, size=count)]


__all__ = [
    "FilledBatch",
    "JudgedGroup",
    "fill_batch",
    "has_signal",
    "join_groups",
    "refill_count",
    "refill_indices",
    "split_groups",
]
