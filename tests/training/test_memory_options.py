"""Memory options of the update: micro-batches by token budget, automatic gradient checkpointing,
bfloat16 parameters; each leaves the update itself unchanged (up to float rounding)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from training.config import ConfigError, load_config
from training.micro_batches import micro_batches, padded_tokens
from training.modeling import is_gradient_checkpointing, parameter_count, wants_gradient_checkpointing
from training.rollout import Completion
from training.trainer import Trainer


def _comp(prompt_index: int, length: int) -> Completion:
    return Completion(
        prompt_index=prompt_index, token_ids=[1] * length, logprobs=[0.0] * length, truncated=False
    )


PROMPTS = [[1] * 4, [1] * 10]
COMPS = [_comp(0, 3), _comp(1, 20), _comp(0, 8), _comp(1, 1), _comp(0, 30), _comp(0, 2)]


def test_by_count_micro_batches_keep_the_order() -> None:
    assert micro_batches([0, 1, 2, 3, 4], PROMPTS, COMPS, max_samples=2) == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError):
        micro_batches([0], PROMPTS, COMPS, max_samples=0)


@pytest.mark.parametrize("budget", [1, 40, 64, 100, 1000])
def test_token_budget_micro_batches_pack_longest_first_within_the_budget(budget: int) -> None:
    indices = list(range(len(COMPS)))
    batches = micro_batches(indices, PROMPTS, COMPS, max_samples=1, max_tokens=budget)
    assert sorted(i for b in batches for i in b) == indices  # every sample exactly once
    for b in batches:
        assert len(b) == 1 or padded_tokens(b, PROMPTS, COMPS) <= budget  # only a lone sample may exceed
    assert batches[0][0] == 4  # the longest (4 + 30 tokens) first
    if budget >= padded_tokens(indices, PROMPTS, COMPS):
        assert len(batches) == 1


def test_gradient_checkpointing_turns_on_by_model_size_or_when_forced(toy_model_dir: Any) -> None:
    model = torch.nn.Linear(10, 10)  # 110 parameters
    assert parameter_count(model) == 110
    assert not wants_gradient_checkpointing(model, False, 111)
    assert wants_gradient_checkpointing(model, False, 110)
    assert wants_gradient_checkpointing(model, True, 0)
    assert not wants_gradient_checkpointing(model, False, 0)
    with pytest.raises(ConfigError, match="memory.micro_batch_tokens"):
        load_config(None, {"memory.micro_batch_tokens": -1})


def _one_step(cfg: Any) -> tuple[Trainer, dict[str, float]]:
    seen: list[dict[str, float]] = []
    trainer = Trainer(cfg, on_metrics=lambda step, m: seen.append(m), write_logs=False)
    trainer.train()
    return trainer, seen[-1]


def test_token_budget_and_automatic_checkpointing_leave_the_update_unchanged(
    toy_config: Callable[..., Any],
) -> None:
    base_cfg = toy_config(max_steps=1, resume=False, micro_batch_size=16)
    base, base_m = _one_step(base_cfg)
    assert not is_gradient_checkpointing(base.model)  # the tiny model is below the default threshold
    other_cfg = toy_config(
        max_steps=1,
        resume=False,
        micro_batch_size=1,
        memory__micro_batch_tokens=64,
        memory__checkpointing_min_params=1,
    )
    other_cfg = other_cfg.replace(output_dir=other_cfg.output_dir + "-other")
    other, other_m = _one_step(other_cfg)
    assert is_gradient_checkpointing(other.model)  # above the (lowered) size threshold
    assert other_m["reward"] == base_m["reward"]  # the same rollouts
    assert other_m["loss"] == pytest.approx(base_m["loss"], abs=1e-5)
    assert other_m["grad_norm"] == pytest.approx(base_m["grad_norm"], rel=1e-4)
    # Adam's first step is about lr * sign(g): entries whose gradient is ~0 may flip on rounding.
    a = torch.cat([p.detach().flatten() for p in base.model.parameters()])
    b = torch.cat([p.detach().flatten() for p in other.model.parameters()])
    assert float(((a - b).abs() <= 1e-6).float().mean()) > 0.99


def test_bfloat16_parameters_train(toy_config: Callable[..., Any]) -> None:
    trainer, metrics = _one_step(toy_config(max_steps=1, resume=False, dtype="bfloat16"))
    assert all(p.dtype == torch.bfloat16 for p in trainer.model.parameters())
    assert torch.isfinite(torch.tensor(metrics["loss"])) and metrics["grad_norm"] >= 0.0
