"""It learns: the warm-started tiny model is trained with evaluator rewards until the reward rises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from training.trainer import Trainer


@pytest.mark.slow
def test_mean_reward_rises_on_the_toy_coding_task(toy_config: Callable[..., Any]) -> None:
    pytest.importorskip("evaluator.runner")
    rewards: list[float] = []
    cfg = toy_config(
        max_steps=40,
        group_size=8,
        prompts_per_step=4,
        micro_batch_size=32,
        learning_rate=1e-3,
        samples_per_step=0,
    )
    Trainer(cfg, on_metrics=lambda step, m: rewards.append(m["reward"]), write_logs=False).train()
    first, last = sum(rewards[:8]) / 8, sum(rewards[-8:]) / 8
    print(f"reward first 8 steps {first:.3f}, last 8 steps {last:.3f}")
    # The warm start picks the right program about a quarter of the time; GRPO must re-map statements.
    assert first < 0.45
    assert last - first >= 0.15, f"reward went from {first:.3f} to {last:.3f}"
