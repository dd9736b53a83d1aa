"""Held-out evaluation during training: eval/pass@1 and eval/pass@k every N steps and at the end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from training.config import ConfigError, load_config
from training.metrics_names import HELD_OUT, METRICS
from training.trainer import Trainer


def test_it_logs_held_out_pass_rates_every_n_steps_and_after_the_last(
    toy_config: Callable[..., Any], toy_release: Path
) -> None:
    seen: list[tuple[int, dict[str, float]]] = []
    cfg = toy_config(
        max_steps=3, eval__release=str(toy_release), eval__every_n_steps=2, eval__k=2, eval__max_tokens=24
    )
    Trainer(cfg, on_metrics=lambda step, m: seen.append((step, m)), write_logs=False).train()
    with_eval = [step for step, m in seen if set(HELD_OUT) <= set(m)]
    assert with_eval == [2, 3]
    for step, m in seen:
        if step in with_eval:
            assert 0.0 <= m["eval/pass@1"] <= m["eval/pass@k"] <= 1.0
            assert m["timing/eval_s"] > 0
    assert "eval/pass@1" not in seen[0][1]
    assert set(HELD_OUT) <= set(METRICS)


def test_a_run_without_an_eval_release_never_evaluates(toy_config: Callable[..., Any]) -> None:
    seen: list[dict[str, float]] = []
    Trainer(toy_config(max_steps=1), on_metrics=lambda step, m: seen.append(m), write_logs=False).train()
    assert not set(HELD_OUT) & set(seen[0])


def test_the_eval_section_explains_bad_values() -> None:
    with pytest.raises(ConfigError, match="eval.every_n_steps must be >= 1"):
        load_config(None, {"eval.every_n_steps": 0})
    with pytest.raises(ConfigError, match="eval.temperature"):
        load_config(None, {"eval.temperature": 0})
