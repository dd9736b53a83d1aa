"""Diversity, the temperature selection rule and the schedules on hand-computed cases."""

from __future__ import annotations

import random

import pytest

from training.config import TemperatureConfig, TemperatureStage
from training.temperature import (
    TemperaturePolicy,
    batch_levenshtein,
    choose_temperature,
    diversity,
    group_diversities,
    levenshtein,
    normalized_edit_distance,
    reward_nonconstant_fraction,
)


def _reference_levenshtein(a: list[int], b: list[int]) -> int:
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def test_levenshtein_counts_edits() -> None:
    kitten, sitting = [ord(c) for c in "kitten"], [ord(c) for c in "sitting"]
    assert levenshtein(kitten, sitting) == 3
    assert levenshtein([], [1, 2]) == 2 and levenshtein([1, 2], []) == 2


def test_the_vectorized_distances_match_the_textbook_dp() -> None:
    rng = random.Random(0)
    a = [[rng.randrange(4) for _ in range(rng.randrange(0, 12))] for _ in range(40)]
    b = [[rng.randrange(4) for _ in range(rng.randrange(0, 12))] for _ in range(40)]
    assert batch_levenshtein(a, b).tolist() == [_reference_levenshtein(x, y) for x, y in zip(a, b)]


def test_normalized_distance_is_zero_for_equal_and_one_for_disjoint() -> None:
    assert normalized_edit_distance([1, 2, 3], [1, 2, 3]) == 0.0
    assert normalized_edit_distance([1, 2], [3, 4, 5, 6]) == 1.0
    assert normalized_edit_distance([], []) == 0.0


def test_group_diversity_is_the_mean_pairwise_normalized_distance() -> None:
    # pairs: ([1,2],[1,3]) 1/2, ([1,2],[1,2]) 0, ([1,3],[1,2]) 1/2 -> 1/3
    assert group_diversities([[[1, 2], [1, 3], [1, 2]]], 512) == [pytest.approx(1 / 3)]


def test_diversity_only_looks_at_the_first_n_tokens() -> None:
    assert diversity([[[1, 2, 3, 4], [1, 2, 9, 9]]], max_tokens=2) == 0.0
    assert diversity([[[1, 2, 3, 4], [1, 2, 9, 9]]], max_tokens=4) == 0.5


def test_the_reward_signal_share_counts_groups_with_unequal_rewards() -> None:
    assert reward_nonconstant_fraction([[1.0, 0.0], [1.0, 1.0], [0.0], [0.0, 0.5]]) == 0.5


def test_selection_picks_the_lowest_temperature_reaching_the_target() -> None:
    measured = [(1.8, 0.95), (0.6, 0.55), (1.2, 0.72), (1.0, 0.66)]
    assert choose_temperature(measured, target=0.7) == 1.2


def test_selection_falls_back_to_the_most_diverse_temperature() -> None:
    assert choose_temperature([(0.6, 0.3), (1.0, 0.5), (1.4, 0.5)], target=0.7) == 1.0


def test_the_staged_schedule_switches_at_the_configured_steps() -> None:
    cfg = TemperatureConfig(policy="staged", stages=(TemperatureStage(0, 0.6), TemperatureStage(140, 1.8)))
    policy = TemperaturePolicy(cfg)
    assert [policy.temperature(s) for s in (1, 139, 140, 500)] == [0.6, 0.6, 1.8, 1.8]
    assert [policy.stage(s) for s in (1, 139, 140)] == [0, 0, 1]


def test_the_diversity_policy_uses_the_selected_temperature_then_later_stages() -> None:
    cfg = TemperatureConfig(
        policy="diversity",
        candidates=(0.6, 1.0, 1.4),
        target_diversity=0.7,
        stages=(TemperatureStage(0, 0.1), TemperatureStage(100, 1.8)),
    )
    policy = TemperaturePolicy(cfg)
    assert policy.needs_selection
    result = policy.select(lambda t: {0.6: 0.4, 1.0: 0.75, 1.4: 0.9}[t])
    assert result.chosen == 1.0
    assert [policy.temperature(s) for s in (1, 99, 100)] == [1.0, 1.0, 1.8]


def test_the_policy_state_survives_a_resume() -> None:
    cfg = TemperatureConfig(policy="diversity", candidates=(0.6, 1.2))
    policy = TemperaturePolicy(cfg)
    policy.select(lambda t: t / 2)
    restored = TemperaturePolicy(cfg)
    restored.load_state_dict(policy.state_dict())
    assert not restored.needs_selection and restored.temperature(5) == policy.temperature(5) == 1.2


def test_training_before_selection_is_refused() -> None:
    with pytest.raises(RuntimeError, match="select"):
        TemperaturePolicy(TemperatureConfig(policy="diversity")).temperature(1)
