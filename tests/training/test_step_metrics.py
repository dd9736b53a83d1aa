"""The per-step metrics as pure functions, on hand-computed steps, and the shared metric-name list."""

from __future__ import annotations

import math

import pytest

from training.masking import MaskDecision
from training.metrics_names import CONDITIONAL, EVERY_STEP, HELD_OUT, METRICS, VERDICT_METRICS
from training.rewards import RewardResult
from training.rollout.base import Completion
from training.step_metrics import finite_metrics, sample_rows, step_metrics


def _comp(group: int, length: int, *, truncated: bool = False) -> Completion:
    return Completion(prompt_index=group, token_ids=list(range(length)), logprobs=[0.0] * length, truncated=truncated)


def _result(verdict: str, reward: float | None) -> RewardResult:
    return RewardResult(reward=reward, verdict=verdict, passed=0, total=1, has_code=verdict != "NA")


def _mask(masked: bool) -> MaskDecision:
    return MaskDecision(masked=masked, truncated=masked, not_wrong=True, no_loop=True, draw_hit=masked)


# Two groups of two: group 0 = (AC 1.0, WA 0.0), group 1 = (IE None, truncated NA 0.0, masked).
COMPS = [_comp(0, 4), _comp(0, 6), _comp(1, 2), _comp(1, 8, truncated=True)]
RESULTS = [_result("AC", 1.0), _result("WA", 0.0), _result("IE", None), _result("NA", 0.0)]
REWARDS = [r.reward for r in RESULTS]
MASKS = [_mask(False), _mask(False), _mask(False), _mask(True)]


def _metrics() -> dict[str, float]:
    return step_metrics(
        COMPS, RESULTS, MASKS, [0.5, 0.0], REWARDS,
        group_size=2, temperature=1.2, temperature_stage=1, diversity_groups=0, diversity_tokens=16,
        num_tokens=123, epoch=0.5,
    )


def test_it_averages_rewards_over_judged_samples_only() -> None:
    assert _metrics()["reward"] == pytest.approx(1.0 / 3.0)


def test_it_reports_lengths_truncation_and_mask_shares() -> None:
    m = _metrics()
    assert m["completions/mean_length"] == pytest.approx(5.0)
    assert (m["completions/min_length"], m["completions/max_length"]) == (2.0, 8.0)
    assert m["completions/mean_terminated_length"] == pytest.approx(4.0)
    assert m["completions/clipped_ratio"] == pytest.approx(0.25)
    assert m["mask/conditional_masked_ratio"] == pytest.approx(0.25)
    assert m["mask/truncated_masked_ratio"] == pytest.approx(1.0)


def test_it_reports_group_spread_and_verdict_shares() -> None:
    m = _metrics()
    assert m["reward_std"] == pytest.approx(0.25)
    assert m["frac_reward_zero_std"] == pytest.approx(0.5)
    assert m["diversity/reward_nonconstant_frac"] == pytest.approx(0.5)  # group 1 has one valid reward
    assert m["eval/infra_error_rate"] == pytest.approx(0.25)
    assert m["eval/no_answer_rate"] == pytest.approx(0.25)
    assert m["verdict/AC"] == m["verdict/WA"] == pytest.approx(0.25)
    assert m["verdict/TLE"] == 0.0


def test_it_names_only_documented_metrics() -> None:
    assert set(_metrics()) <= set(METRICS)


def test_undefined_metrics_are_dropped_not_logged_as_nan() -> None:
    assert finite_metrics({"a": 1, "b": float("nan"), "c": None, "d": math.inf}) == {"a": 1.0}


def test_the_sample_table_holds_the_first_rows_with_their_problem() -> None:
    rows = sample_rows(
        3, limit=2, idx=[5, 7], comps=COMPS, texts=["a", "b", "c", "d"], results=RESULTS, masks=MASKS,
        advantages=[1.0, -1.0, 0.0, 0.0], problem_ids=["x"] * 5 + ["p/5", "y", "p/7"],
        prompt_texts=["t"] * 8,
    )
    assert [r["index"] for r in rows] == [0, 1]
    assert rows[0]["problem_id"] == "p/5" and rows[0]["verdict"] == "AC" and rows[1]["advantage"] == -1.0


def test_the_metric_list_splits_into_every_step_conditional_and_held_out() -> None:
    assert set(EVERY_STEP) | CONDITIONAL == set(METRICS)
    assert set(HELD_OUT) <= CONDITIONAL and set(VERDICT_METRICS) <= set(EVERY_STEP)
    assert all(METRICS[name] for name in METRICS)
