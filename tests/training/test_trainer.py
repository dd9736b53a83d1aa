"""The training loop on the toy task: metrics, sample table, IE handling, checkpoints and resuming."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from training.checkpoint import JsonlLog, latest_checkpoint, load_trainer_state
from training.metrics_names import EVERY_STEP
from training.trainer import Trainer

DOCUMENTED = set(EVERY_STEP)  # the shared list (training.metrics_names)
SAMPLE_FIELDS = {"prompt", "completion", "reward", "verdict", "length", "truncated", "masked"}


def _collect() -> tuple[list[tuple[int, dict[str, float]]], Callable[[int, dict[str, float]], None]]:
    seen: list[tuple[int, dict[str, float]]] = []
    return seen, lambda step, metrics: seen.append((step, metrics))


def test_every_step_reports_the_documented_metrics_and_a_sample_table(toy_config: Callable[..., Any]) -> None:
    seen, on_metrics = _collect()
    tables: list[tuple[int, list[dict[str, Any]]]] = []
    cfg = toy_config(max_steps=2)
    Trainer(cfg, on_metrics=on_metrics, on_samples=lambda s, rows: tables.append((s, rows))).train()
    assert [s for s, _ in seen] == [1, 2]
    for _, metrics in seen:
        assert DOCUMENTED <= set(metrics)
        assert all(isinstance(v, float) for v in metrics.values())
    assert [s for s, _ in tables] == [1, 2]
    assert len(tables[0][1]) == cfg.prompts_per_step * cfg.group_size
    assert SAMPLE_FIELDS <= set(tables[0][1][0])
    logged = JsonlLog(Path(cfg.output_dir) / "metrics.jsonl").read()
    assert [r["step"] for r in logged] == [1, 2]
    assert (Path(cfg.output_dir) / "config.yaml").is_file()


def test_no_kl_means_no_reference_model_and_no_kl_metric(toy_config: Callable[..., Any]) -> None:
    seen, on_metrics = _collect()
    trainer = Trainer(toy_config(max_steps=1), on_metrics=on_metrics, write_logs=False)
    trainer.train()
    assert trainer.reference is None and "kl" not in seen[0][1]


def test_a_kl_coefficient_loads_the_reference_and_reports_kl(toy_config: Callable[..., Any]) -> None:
    seen, on_metrics = _collect()
    trainer = Trainer(
        toy_config(max_steps=2, kl_coef=0.1, skip_zero_advantage=False),
        on_metrics=on_metrics,
        write_logs=False,
    )
    trainer.train()
    assert trainer.reference is not None
    assert seen[0][1]["kl"] == pytest.approx(0.0, abs=1e-6)  # step 1: policy == reference
    assert seen[1][1]["kl"] > 0.0


def _judge_with_ie(every: int) -> Callable[..., list[dict[str, Any]]]:
    from evaluator import judge_batch

    def judge(cases: list[dict[str, Any]], **kw: Any) -> list[dict[str, Any]]:
        out = judge_batch(cases, **kw)
        for i, v in enumerate(out):
            if i % every == 0:
                out[i] = {**v, "verdict": "IE"}
        return out

    return judge


def test_infrastructure_errors_are_counted_and_left_out_of_the_loss(toy_config: Callable[..., Any]) -> None:
    pytest.importorskip("evaluator.runner")
    seen, on_metrics = _collect()
    tables: list[list[dict[str, Any]]] = []
    Trainer(
        toy_config(max_steps=1),
        judge=_judge_with_ie(4),
        on_metrics=on_metrics,
        write_logs=False,
        on_samples=lambda s, rows: tables.append(rows),
    ).train()
    rows = tables[0]
    ie = [r for r in rows if r["verdict"] == "IE"]
    assert ie and all(r["reward"] is None and r["advantage"] == 0.0 for r in ie)
    assert seen[0][1]["eval/infra_error_rate"] == pytest.approx(len(ie) / len(rows))


def test_a_stopped_run_resumes_without_lost_or_repeated_steps(toy_config: Callable[..., Any]) -> None:
    full_seen, on_full = _collect()
    full_cfg = toy_config(max_steps=4, checkpoint_interval=2)
    Trainer(full_cfg.replace(output_dir=full_cfg.output_dir + "-full"), on_metrics=on_full).train()

    cfg = toy_config(max_steps=4, checkpoint_interval=2)
    first, on_first = _collect()
    result = Trainer(cfg, on_metrics=on_first, should_stop=lambda: len(first) == 3).train()
    assert result.stopped and result.last_step == 3
    resumed_at: list[int] = []
    second, on_second = _collect()
    result = Trainer(cfg, on_metrics=on_second, on_resume=resumed_at.append).train()
    assert resumed_at == [3] and result.resumed_from == 3 and result.last_step == 4
    assert [s for s, _ in second] == [4]
    logged = JsonlLog(Path(cfg.output_dir) / "metrics.jsonl").read()
    assert [r["step"] for r in logged] == [1, 2, 3, 4]
    # The resumed run continues exactly: same rewards and losses as the uninterrupted run.
    for (_, a), (_, b) in zip(full_seen, first + second):
        assert a["reward"] == b["reward"]
        assert a["loss"] == pytest.approx(b["loss"], abs=1e-6)


def test_resuming_cuts_logged_steps_after_the_checkpoint(toy_config: Callable[..., Any]) -> None:
    cfg = toy_config(max_steps=3, checkpoint_interval=2)
    Trainer(cfg, should_stop=lambda: False).train()
    log = JsonlLog(Path(cfg.output_dir) / "metrics.jsonl")
    # Simulate a kill after step 3 was logged but before its checkpoint: drop checkpoint 3.
    import shutil

    ckpt = latest_checkpoint(cfg.output_dir)
    assert ckpt is not None and ckpt.name.endswith("00000003")
    shutil.rmtree(ckpt)
    log.append({"step": 4, "reward": 0.0})  # a stray line from the killed process
    result = Trainer(cfg.replace(max_steps=3)).train()
    assert result.resumed_from == 2
    assert [r["step"] for r in log.read()] == [1, 2, 3]


def test_a_checkpoint_holds_weights_optimizer_rng_and_policy_state(toy_config: Callable[..., Any]) -> None:
    cfg = toy_config(
        max_steps=2,
        checkpoint_interval=1,
        checkpoint_keep=1,
        temperature__policy="diversity",
        temperature__candidates=[0.8, 1.4],
        temperature__selection_prompts=2,
        temperature__diversity_tokens=12,
    )
    trainer = Trainer(cfg)
    trainer.train()
    ckpt = latest_checkpoint(cfg.output_dir)
    assert ckpt is not None and (ckpt / "model" / "model.safetensors").is_file()
    assert sorted(p.name for p in ckpt.parent.glob("checkpoint-*")) == [ckpt.name]  # keep=1 pruned step 1
    state = load_trainer_state(ckpt)
    assert (
        state["step"] == 2
        and state["optimizer"]["state"]
        and {"python", "numpy", "torch"} <= set(state["rng"])
    )
    selection = state["temperature_policy"]["selection"]
    assert [t for t, _ in selection["measurements"]] == [0.8, 1.4]
    assert selection["chosen"] in (0.8, 1.4)
    assert (
        json.loads((Path(cfg.output_dir) / "temperature_selection.json").read_text())["chosen"]
        == selection["chosen"]
    )


def test_a_half_written_checkpoint_is_ignored(toy_config: Callable[..., Any], tmp_path: Path) -> None:
    cfg = toy_config(max_steps=1)
    Trainer(cfg).train()
    root = Path(cfg.output_dir) / "checkpoints"
    (root / "checkpoint-00000009").mkdir()  # no COMPLETE marker: a kill mid-write
    (root / "latest").write_text("checkpoint-00000009")
    found = latest_checkpoint(cfg.output_dir)
    assert found is not None and found.name == "checkpoint-00000001"


def test_one_update_per_rollout_is_exactly_on_policy(toy_config: Callable[..., Any]) -> None:
    seen, on_metrics = _collect()
    Trainer(
        toy_config(max_steps=2, skip_zero_advantage=False), on_metrics=on_metrics, write_logs=False
    ).train()
    assert all(m["policy/ratio_max_dev"] == 0.0 for _, m in seen)


def test_later_updates_of_a_rollout_see_ratios_away_from_one(toy_config: Callable[..., Any]) -> None:
    seen, on_metrics = _collect()
    Trainer(
        toy_config(max_steps=2, minibatch_prompts=2, learning_rate=5e-3, skip_zero_advantage=False),
        on_metrics=on_metrics,
        write_logs=False,
    ).train()
    assert any(m["policy/ratio_max_dev"] > 1e-3 for _, m in seen)


def test_the_sampled_and_trained_logprobs_agree(toy_config: Callable[..., Any]) -> None:
    seen, on_metrics = _collect()
    Trainer(
        toy_config(max_steps=1, skip_zero_advantage=False), on_metrics=on_metrics, write_logs=False
    ).train()
    assert seen[0][1]["rollout/logprob_abs_diff"] < 1e-4


class _EngineWithoutEntropy:
    """Wraps the transformers engine the way a vLLM engine behaves: no entropies, explicit weight syncs."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.syncs = 0

    def generate(self, prompts: list[list[int]], **kw: Any) -> list[Any]:
        from dataclasses import replace

        return [replace(c, entropy_sum=None) for c in self.inner.generate(prompts, **kw)]

    def sync_weights(self, model: Any) -> None:
        self.syncs += 1

    def close(self) -> None:
        self.inner.close()


def test_an_engine_without_entropies_gets_them_from_the_update_and_weights_after_each_step(
    toy_config: Callable[..., Any],
) -> None:
    cfg = toy_config(max_steps=2, skip_zero_advantage=False, mask__policy="none")
    reference, on_reference = _collect()
    Trainer(
        cfg.replace(output_dir=cfg.output_dir + "-ref"), on_metrics=on_reference, write_logs=False
    ).train()
    seen, on_metrics = _collect()
    trainer = Trainer(cfg, on_metrics=on_metrics, write_logs=False)
    trainer.setup()
    wrapped = _EngineWithoutEntropy(trainer.engine)
    trainer.engine = wrapped
    trainer.train()
    assert wrapped.syncs == 2
    assert seen[0][1]["entropy"] == pytest.approx(reference[0][1]["entropy"], abs=1e-4)
