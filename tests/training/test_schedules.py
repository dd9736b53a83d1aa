"""Learning-rate schedules on hand-computed values (training.schedules) and the trainer's use of them."""

from __future__ import annotations

import math

import pytest

from training.schedules import learning_rate_at


def _lr(step: int, schedule: str, warmup: int = 0, max_steps: int = 10, min_ratio: float = 0.0) -> float:
    return learning_rate_at(
        step, peak=1.0, schedule=schedule, warmup_steps=warmup, max_steps=max_steps, min_ratio=min_ratio
    )


def test_warm_up_rises_linearly_to_the_peak_at_the_last_warm_up_step() -> None:
    assert [_lr(s, "constant", warmup=4) for s in (1, 2, 3, 4, 5)] == [0.25, 0.5, 0.75, 1.0, 1.0]


def test_constant_stays_at_the_peak_to_the_end() -> None:
    assert {_lr(s, "constant") for s in range(1, 11)} == {1.0}


def test_linear_decays_to_the_floor_at_max_steps() -> None:
    # warm-up 2 of 10 steps: progress (step - 2) / 8 after it
    assert _lr(6, "linear", warmup=2, min_ratio=0.2) == pytest.approx(1.0 - 0.8 * 0.5)
    assert _lr(10, "linear", warmup=2, min_ratio=0.2) == pytest.approx(0.2)


def test_cosine_is_half_way_at_half_progress_and_ends_at_the_floor() -> None:
    assert _lr(5, "cosine", max_steps=10) == pytest.approx(0.5)
    assert _lr(10, "cosine", max_steps=10, min_ratio=0.1) == pytest.approx(0.1)
    assert _lr(1, "cosine", max_steps=10) == pytest.approx((1 + math.cos(math.pi * 0.1)) / 2)


def test_decaying_schedules_never_rise_after_warm_up() -> None:
    for schedule in ("linear", "cosine"):
        values = [_lr(s, schedule, warmup=3, max_steps=20) for s in range(3, 21)]
        assert all(b <= a for a, b in zip(values, values[1:]))


def test_an_unknown_schedule_or_a_zero_step_is_refused() -> None:
    with pytest.raises(ValueError, match="constant, linear, cosine"):
        _lr(1, "exponential")
    with pytest.raises(ValueError, match="1-based"):
        _lr(0, "constant")


def test_the_trainer_follows_the_configured_schedule() -> None:
    from training.config import GRPOConfig
    from training.trainer import Trainer

    cfg = GRPOConfig().replace(
        learning_rate=1e-5, lr_schedule="cosine", lr_warmup_steps=10, max_steps=110, lr_min_ratio=0.0
    )
    trainer = Trainer(cfg, write_logs=False)
    assert trainer.learning_rate(5) == pytest.approx(5e-6)
    assert trainer.learning_rate(60) == pytest.approx(5e-6)
    assert trainer.learning_rate(110) == pytest.approx(0.0, abs=1e-12)
