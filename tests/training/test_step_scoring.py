"""A step's masks, shaped rewards and advantages (training.step_scoring) on a hand-built batch."""

from __future__ import annotations

import pytest

from training.config import GRPOConfig
from training.rewards import RewardResult
from training.rollout.base import Completion
from training.step_scoring import score_batch


def _comp(group: int, length: int, truncated: bool = False) -> Completion:
    return Completion(group, list(range(100, 100 + length)), [0.0] * length, truncated)


def _res(reward: float | None, verdict: str = "AC") -> RewardResult:
    return RewardResult(reward, verdict, 1, 1, True)


def test_overlong_shaping_changes_the_advantages_but_not_the_judges_rewards() -> None:
    # L_max 8, L_cache 0.25 * 8 = 2: free up to 6 tokens, -0.5 at 7, -1 at 8
    cfg = GRPOConfig().replace(
        group_size=2, max_response_length=8, **{"mask.policy": "none", "reward.overlong_buffer_ratio": 0.25}
    )
    comps = [_comp(0, 4), _comp(0, 7), _comp(1, 8, truncated=True), _comp(1, 3)]
    results = [_res(1.0), _res(1.0), _res(0.0, "NA"), _res(None, "IE")]
    scored = score_batch(cfg, 1, comps, results)
    assert scored.rewards == [1.0, 1.0, 0.0, None]
    assert scored.train_rewards == [1.0, 0.5, -1.0, None]
    assert (
        scored.advantages.advantages[0] > 0 > scored.advantages.advantages[1]
    )  # equal rewards, split by length
    assert scored.metrics() == {"reward/overlong_penalty": pytest.approx((0.0 - 0.5 - 1.0) / 3)}


def test_without_shaping_the_rewards_are_the_judges_and_no_penalty_is_logged() -> None:
    cfg = GRPOConfig().replace(group_size=2, max_response_length=8, **{"mask.policy": "all"})
    comps = [_comp(0, 8, truncated=True), _comp(0, 2)]
    scored = score_batch(cfg, 1, comps, [_res(1.0), _res(0.0, "WA")])
    assert scored.train_rewards == scored.rewards and scored.metrics() == {}
    assert [m.masked for m in scored.masks] == [True, False]  # mask-all: the truncated one
    assert scored.advantages.advantages[0] == 0.0 and scored.advantages.advantages[1] < 0
