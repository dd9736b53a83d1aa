"""Advantages, log-probabilities and the clipped loss on hand-computed numbers."""

from __future__ import annotations

import math

import pytest
import torch

from training.loss import (
    ADVANTAGE_EPS,
    LossStats,
    clipped_policy_loss,
    group_advantages,
    k3_kl,
    overlong_penalty,
    selective_log_softmax,
    shaped_rewards,
    token_entropy,
)


def test_advantages_are_group_normalized_rewards() -> None:
    # group 1: mean 0.5, population std 0.5; group 2: constant -> all zero
    out = group_advantages([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0], 4, [False] * 8)
    a = 0.5 / (0.5 + ADVANTAGE_EPS)
    assert out.advantages[:4] == pytest.approx([a, -a, -a, a])
    assert out.advantages[4:] == [0.0] * 4
    assert out.group_mean == [0.5, 1.0] and out.group_std == [0.5, 0.0]


def test_infrastructure_errors_stay_out_of_the_group_statistics() -> None:
    out = group_advantages([1.0, None, 0.0, 0.0], 4, [False] * 4)
    mean, std = 1 / 3, math.sqrt(2 / 9)
    assert out.group_mean[0] == pytest.approx(mean)
    assert out.group_std[0] == pytest.approx(std)
    assert out.advantages == pytest.approx(
        [
            (1 - mean) / (std + ADVANTAGE_EPS),
            0.0,
            -mean / (std + ADVANTAGE_EPS),
            -mean / (std + ADVANTAGE_EPS),
        ]
    )


def test_a_masked_sample_counts_in_the_statistics_but_gets_no_advantage() -> None:
    out = group_advantages([1.0, 0.0, 0.0, 0.0], 4, [True, False, False, False])
    std = math.sqrt(3) / 4  # rewards 1,0,0,0: mean 0.25
    assert out.group_std[0] == pytest.approx(std)
    assert out.advantages[0] == 0.0
    assert out.advantages[1] == pytest.approx(-0.25 / (std + ADVANTAGE_EPS))


def test_a_group_of_only_infrastructure_errors_has_no_statistics() -> None:
    out = group_advantages([None, None], 2, [False, False])
    assert out.advantages == [0.0, 0.0] and math.isnan(out.group_mean[0])


def test_log_probabilities_are_taken_at_the_training_temperature() -> None:
    logits = torch.tensor([[[0.0, math.log(3.0)]]])  # T=1: p = (1/4, 3/4)
    ids = torch.tensor([[1]])
    assert float(selective_log_softmax(logits, ids, 1.0)) == pytest.approx(math.log(0.75))
    # T=2: logits/2 = (0, ln sqrt 3): p1 = sqrt3 / (1 + sqrt3)
    assert float(selective_log_softmax(logits, ids, 2.0)) == pytest.approx(
        math.log(math.sqrt(3) / (1 + math.sqrt(3)))
    )


def test_entropy_of_a_uniform_distribution_is_log_v() -> None:
    assert float(token_entropy(torch.zeros(1, 1, 4))) == pytest.approx(math.log(4))


def _loss(ratio: list[float], adv: list[float]) -> tuple[float, LossStats]:
    logp = torch.log(torch.tensor([ratio]).T)  # (B, 1), old logp = 0 -> rho = ratio
    old = torch.zeros_like(logp)
    loss, stats = clipped_policy_loss(
        logp, old, torch.tensor(adv), torch.ones_like(logp), eps_low=0.2, eps_high=0.28, normalizer=len(ratio)
    )
    return float(loss), stats


def test_positive_advantages_are_clipped_at_one_plus_eps_high() -> None:
    loss, stats = _loss([1.5], [1.0])
    assert loss == pytest.approx(-1.28)
    assert stats.clipped_high == 1 and stats.clipped_low == 0


def test_negative_advantages_are_clipped_at_one_minus_eps_low() -> None:
    loss, stats = _loss([0.5], [-1.0])  # -min(-0.5, -0.8) = 0.8
    assert loss == pytest.approx(0.8)
    assert stats.clipped_low == 1 and stats.clipped_high == 0


def test_ratios_inside_the_range_are_not_clipped() -> None:
    loss, stats = _loss([1.1, 0.9], [1.0, -1.0])  # (-1.1 + 0.9) / 2
    assert loss == pytest.approx(-0.1)
    assert stats.clipped_low == 0 and stats.clipped_high == 0


def test_the_clip_removes_the_gradient_beyond_the_range() -> None:
    logp = torch.log(torch.tensor([[1.5, 1.1]])).requires_grad_(True)
    loss, _ = clipped_policy_loss(
        logp,
        torch.zeros_like(logp),
        torch.tensor([1.0]),
        torch.ones_like(logp),
        eps_low=0.2,
        eps_high=0.28,
        normalizer=2,
    )
    loss.backward()
    assert logp.grad is not None
    assert logp.grad.tolist()[0] == pytest.approx([0.0, -1.1 / 2])  # d(-rho/2)/dlogp = -rho/2


def test_aggregation_is_token_level_over_the_whole_minibatch() -> None:
    # sample A: 1 token, advantage 2; sample B: 3 tokens, advantage -1; rho = 1 everywhere
    logp = torch.zeros(2, 3)
    mask = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    loss, stats = clipped_policy_loss(
        logp, logp, torch.tensor([2.0, -1.0]), mask, eps_low=0.2, eps_high=0.28, normalizer=4
    )
    assert float(loss) == pytest.approx((-2.0 + 3 * 1.0) / 4)
    assert stats.tokens == 4


def test_sequence_aggregation_averages_each_response_then_the_responses() -> None:
    # the original GRPO: A's mean -2, B's mean +1 (3 tokens of +1 each), over 2 responses
    logp = torch.zeros(2, 3)
    mask = torch.tensor([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    loss, _ = clipped_policy_loss(
        logp,
        logp,
        torch.tensor([2.0, -1.0]),
        mask,
        eps_low=0.2,
        eps_high=0.2,
        normalizer=2,
        aggregation="sequence",
    )
    assert float(loss) == pytest.approx((-2.0 + 1.0) / 2)


def test_the_overlong_penalty_follows_dapos_soft_buffer() -> None:
    # L_max 20, L_cache 4: free up to 16, then linear down to -1 at 20, -1 beyond
    assert [overlong_penalty(n, 20, 4) for n in (10, 16, 17, 18, 20, 25)] == [
        0.0,
        0.0,
        -0.25,
        -0.5,
        -1.0,
        -1.0,
    ]
    assert overlong_penalty(18, 20, 4, factor=0.5) == -0.25
    assert overlong_penalty(20, 20, 0) == 0.0  # no buffer: off


def test_shaped_rewards_keep_infrastructure_errors_out() -> None:
    assert shaped_rewards([1.0, None, 0.0], [18, 20, 10], 20, 4, 1.0) == [0.5, None, 0.0]


def test_k3_kl_is_zero_for_equal_policies_and_matches_its_formula() -> None:
    assert float(k3_kl(torch.tensor(0.3), torch.tensor(0.3))) == 0.0
    d = math.log(2)  # ref twice as likely: exp(d) - d - 1
    assert float(k3_kl(torch.tensor(0.0), torch.tensor(d))) == pytest.approx(2 - d - 1)


def test_the_kl_term_is_added_per_token_with_its_coefficient() -> None:
    logp = torch.zeros(1, 1)
    ref = torch.full((1, 1), math.log(2))
    loss, stats = clipped_policy_loss(
        logp,
        logp,
        torch.tensor([0.0]),
        torch.ones(1, 1),
        eps_low=0.2,
        eps_high=0.28,
        normalizer=1,
        ref_logp=ref,
        kl_coef=0.1,
    )
    assert float(loss) == pytest.approx(0.1 * (1 - math.log(2)))
    assert stats.kl_sum == pytest.approx(1 - math.log(2))
