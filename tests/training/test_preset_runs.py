"""The three presets run on the toy task and each shows its defining behaviour in its metrics.

- grpo: the KL term against the reference model is logged (0 at step 1, > 0 once the policy moved);
- dapo: groups whose rewards are all equal are dropped and refilled, so the trained batch is full and
  every trained group carries a signal; the overlong penalty is logged;
- microcoder: the conditional mask fires only on truncated, not-wrong, non-looping samples (with
  p = 1 it fires on every one of them), and the temperature was chosen from the initial diversity.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from training.masking import WRONG_VERDICTS
from training.metrics_names import METRICS
from training.trainer import Trainer

pytest.importorskip("evaluator.runner")

Seen = list[tuple[int, dict[str, float]]]
Rows = list[dict[str, Any]]


def _run(trainer: Trainer) -> tuple[Seen, Rows]:
    seen: Seen = []
    rows: Rows = []
    trainer.on_metrics = lambda step, metrics: seen.append((step, metrics))
    trainer.on_samples = lambda step, table: rows.extend(table)
    try:
        trainer.train()
    finally:
        trainer.close()
    for _, metrics in seen:  # every emitted name is in the one documented list
        assert set(metrics) <= set(METRICS), set(metrics) - set(METRICS)
    return seen, rows


def test_the_grpo_preset_logs_its_kl_to_the_reference_model(toy_config: Callable[..., Any]) -> None:
    cfg = toy_config(preset="grpo", max_steps=2)
    assert (cfg.kl_coef, cfg.clip.eps_high, cfg.loss_aggregation) == (0.04, 0.2, "sequence")
    trainer = Trainer(cfg, write_logs=False)
    seen, _ = _run(trainer)
    assert trainer.reference is not None
    assert seen[0][1]["kl"] == pytest.approx(0.0, abs=1e-6)  # step 1: policy == reference
    assert seen[1][1]["kl"] > 0.0


def test_the_dapo_preset_drops_groups_with_equal_rewards_and_refills_the_batch(
    toy_config: Callable[..., Any],
) -> None:
    # The toy policy is right about 1 time in 5: groups of 4 are often all wrong.
    cfg = toy_config(preset="dapo", max_steps=3, lr_warmup_steps=0)
    assert cfg.dynamic_sampling.enabled and cfg.kl_coef == 0.0
    seen, rows = _run(Trainer(cfg, write_logs=False))
    assert sum(m["dynamic_sampling/groups_dropped"] for _, m in seen) > 0
    assert sum(m["dynamic_sampling/groups_refilled"] for _, m in seen) > 0
    full = [step for step, m in seen if m["dynamic_sampling/batch_fill"] == 1.0]
    assert full, "some step must have been refilled to a full batch"
    for step, m in seen:
        assert m["reward/overlong_penalty"] <= 0.0
        groups: dict[int, list[Any]] = defaultdict(list)
        for r in rows:
            if r["step"] == step:
                groups[r["group"]].append(r["reward"])
        assert len(groups) == m["dynamic_sampling/batch_fill"] * cfg.prompts_per_step
        # every trained group carries a signal: its judged rewards are not all equal
        assert all(len({x for x in g if x is not None}) > 1 for g in groups.values())
        if step in full:
            assert m["frac_reward_zero_std"] == 0.0


class _LoopingEngine:
    """Makes the first sample of every group a truncated repetition loop (the last m tokens equal the m
    before them), so the mask's condition (c) is exercised on the tiny model."""

    def __init__(self, inner: Any, window: int) -> None:
        self.inner = inner
        self.window = window

    def _loop(self, c: Any, cap: int) -> Any:
        block = (c.token_ids * self.window)[: self.window] if c.token_ids else [5] * self.window
        loop = (block * (cap // self.window + 1))[:cap]
        return replace(c, token_ids=loop, logprobs=[-1.0] * len(loop), truncated=True)

    def generate(self, prompts: list[list[int]], **kw: Any) -> list[Any]:
        n, cap = kw["n"], kw["max_new_tokens"]
        on_group = kw.pop("on_group", None)
        if on_group is not None:  # groups judged early must see the same samples
            kw["on_group"] = lambda i, group: on_group(i, [self._loop(group[0], cap), *group[1:]])
        out = self.inner.generate(prompts, **kw)
        return [self._loop(c, cap) if k % n == 0 else c for k, c in enumerate(out)]

    def sync_weights(self, model: Any) -> None:
        self.inner.sync_weights(model)

    def close(self) -> None:
        self.inner.close()


def test_the_microcoder_preset_masks_only_truncated_not_wrong_non_looping_samples(
    toy_config: Callable[..., Any],
) -> None:
    cfg = toy_config(
        preset="microcoder",
        max_steps=2,
        max_response_length=12,  # short enough that many answers are cut off
        mask__probability=1.0,  # the Bernoulli draw always hits: condition (d) out of the way
        mask__repeat_window=3,
        temperature__candidates=[0.8, 1.4],
        temperature__selection_prompts=2,
    )
    assert cfg.mask.policy == "conditional" and cfg.temperature.policy == "diversity"
    trainer = Trainer(cfg)
    trainer.setup()
    trainer.engine = _LoopingEngine(trainer.engine, window=3)
    seen, rows = _run(trainer)
    assert rows
    for r in rows:
        eligible = r["truncated"] and r["verdict"] not in WRONG_VERDICTS and not r["repetition_loop"]
        assert r["masked"] == eligible, r
    assert any(r["masked"] for r in rows)
    assert any(r["repetition_loop"] and r["truncated"] and not r["masked"] for r in rows)
    chosen = json.loads((Path(cfg.output_dir) / "temperature_selection.json").read_text())["chosen"]
    assert chosen in (0.8, 1.4) and all(m["temperature"] == chosen for _, m in seen)
    for step, m in seen:
        masked = sum(1 for r in rows if r["step"] == step and r["masked"])
        assert m["mask/conditional_masked_ratio"] == pytest.approx(
            masked / (cfg.prompts_per_step * cfg.group_size)
        )
