"""The method's defaults act on the tiny model: with the default minibatches the clip engages."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from training.config import GRPOConfig
from training.tiny import TOY_TASKS
from training.trainer import Trainer


def _program_judge(cases: Sequence[Mapping[str, Any]], **_: Any) -> list[dict[str, Any]]:
    """A fast stand-in for the sandbox on the toy task: AC when the code is the problem's own program
    (recognized by its tests' first expected output), WA otherwise. 256 samples judge in microseconds."""
    expected = {"6\n": "double", "4\n": "increment", "9\n": "square", "-3\n": "negate"}
    programs = {name: program for name, _, program in TOY_TASKS}
    out = []
    for case in cases:
        want = programs[expected[case["tests"][0]["output"]]]
        ok = case["code"].strip() == want
        n = len(case["tests"])
        out.append(
            {"id": case.get("id"), "verdict": "AC" if ok else "WA", "passed": n if ok else 0, "total": n}
        )
    return out


def _run(cfg: GRPOConfig) -> list[dict[str, float]]:
    seen: list[dict[str, float]] = []
    trainer = Trainer(cfg, judge=_program_judge, on_metrics=lambda s, m: seen.append(m), write_logs=False)
    try:
        trainer.train()
    finally:
        trainer.close()
    return seen


def test_with_the_default_minibatches_the_clip_engages(toy_config: Callable[..., Any]) -> None:
    defaults = GRPOConfig()
    cfg = toy_config(
        max_steps=2,
        prompts_per_step=defaults.prompts_per_step,
        minibatch_prompts=defaults.minibatch_prompts,
        group_size=2,
        max_response_length=16,
        micro_batch_size=32,
    )
    assert cfg.updates_per_rollout == 4 and (cfg.clip.eps_low, cfg.clip.eps_high) == (0.2, 0.28)
    seen = _run(cfg)
    assert all(m["policy/ratio_max_dev"] > 0.0 for m in seen)  # later minibatches are off-policy
    assert any(m["clip_ratio/region_mean"] > 0.0 for m in seen)


def test_one_minibatch_per_rollout_leaves_the_clip_idle(toy_config: Callable[..., Any]) -> None:
    cfg = toy_config(
        max_steps=2, prompts_per_step=8, minibatch_prompts=8, group_size=2, max_response_length=16
    )
    seen = _run(cfg)
    assert all(m["policy/ratio_max_dev"] == 0.0 and m["clip_ratio/region_mean"] == 0.0 for m in seen)


def test_minibatches_are_contiguous_whole_groups_of_the_fixed_size() -> None:
    from training.update import minibatch_indices

    # 4 groups of 2 samples, 2 updates -> 2 groups (4 samples) per update
    assert minibatch_indices(4, 2, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # dynamic sampling ran short: 3 groups for 4 updates -> one group per update
    assert minibatch_indices(3, 2, 4) == [[0, 1], [2, 3], [4, 5]]
