"""The memory planner (training.memory_plan): model shapes, the per-GPU estimate, advice, and the estimate
against a measured CPU peak."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from training.config import config_from_dict
from training.memory_plan import (
    GIB,
    KNOWN_SHAPES,
    ModelShape,
    model_shape,
    plan_for_config,
    plan_memory,
    uses_checkpointing,
)
from training.memory_probe import TINY_SHAPE, measure, tiny_update_config

TINY = TINY_SHAPE


def _config(**values: Any) -> Any:
    return config_from_dict({"model": "Qwen/Qwen3-1.7B", **values})


def test_it_knows_the_qwen3_shapes_with_their_published_parameter_counts() -> None:
    billions = {s.name: round(s.params / 1e9, 1) for s in KNOWN_SHAPES.values()}
    assert billions == {
        "Qwen/Qwen3-0.6B": 0.6,
        "Qwen/Qwen3-1.7B": 1.7,
        "Qwen/Qwen3-4B": 4.0,
        "Qwen/Qwen3-8B": 8.2,
    }
    assert model_shape("Qwen/Qwen3-4B-Instruct-2507") == KNOWN_SHAPES["qwen/qwen3-4b"]


def test_it_reads_the_shape_from_a_local_model_directory(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    shape = model_shape(str(tmp_path))
    assert (shape.hidden_size, shape.num_layers, shape.num_kv_heads, shape.vocab_size) == (128, 4, 2, 32768)


def test_it_reads_the_shape_from_the_hugging_face_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = tmp_path / "models--acme--coder-1b" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({**TINY, "hidden_size": 256}))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    assert model_shape("acme/coder-1b").hidden_size == 256


def test_it_says_where_it_looked_for_an_unknown_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(ValueError, match="unknown model shape.*Qwen/Qwen3-8B"):
        model_shape("acme/unknown-7b")
    assert "error" in plan_for_config(_config(model="acme/unknown-7b"))


def test_it_shards_weights_gradients_and_optimizer_state_over_fsdp_gpus() -> None:
    shape = KNOWN_SHAPES["qwen/qwen3-8b"]
    one, four = plan_memory(_config(), shape, 1), plan_memory(_config(), shape, 4)
    for key in ("weights", "gradients", "optimizer"):
        assert four.component(key) == pytest.approx(one.component(key) / 4, rel=1e-6)
    assert one.component("optimizer") == 2 * one.component("weights") == 2 * shape.params * 4
    assert four.component("activations") == one.component("activations")  # per-GPU micro-batch unchanged


NO_AUTO_CHECKPOINTING = {"memory": {"checkpointing_min_params": 0}}


def test_it_counts_far_fewer_activations_with_gradient_checkpointing() -> None:
    shape = KNOWN_SHAPES["qwen/qwen3-1.7b"]
    off = plan_memory(_config(**NO_AUTO_CHECKPOINTING), shape)
    on = plan_memory(_config(gradient_checkpointing=True, **NO_AUTO_CHECKPOINTING), shape)
    assert on.component("activations") < off.component("activations") / 10
    assert (
        off.alternatives["activations_with_checkpointing"]
        == on.alternatives["activations_with_checkpointing"]
    )


def test_it_checkpoints_by_itself_above_the_size_threshold_like_the_trainer() -> None:
    shape = KNOWN_SHAPES["qwen/qwen3-1.7b"]  # 1.7 B parameters >= the default 500 M threshold
    auto = plan_memory(_config(), shape)
    forced = plan_memory(_config(gradient_checkpointing=True), shape)
    assert uses_checkpointing(_config(), shape)
    assert auto.component("activations") == forced.component("activations")
    assert "on by itself" in next(c.note for c in auto.components if c.key == "activations")
    assert not any("gradient_checkpointing: true" in a for a in auto.advice)
    above = _config(memory={"checkpointing_min_params": shape.params + 1})
    assert not uses_checkpointing(above, shape)
    assert plan_memory(above, shape).component("activations") > 10 * auto.component("activations")
    assert not uses_checkpointing(_config(**NO_AUTO_CHECKPOINTING), shape)  # 0: only when forced


def test_a_token_budget_sizes_the_micro_batch_instead_of_the_sample_count() -> None:
    shape = KNOWN_SHAPES["qwen/qwen3-1.7b"]
    seq = _config().max_prompt_length + _config().max_response_length  # a full-length sequence
    by_count = plan_memory(_config(micro_batch_size=2, **NO_AUTO_CHECKPOINTING), shape)
    by_tokens = plan_memory(
        _config(micro_batch_size=8, memory={"checkpointing_min_params": 0, "micro_batch_tokens": 2 * seq}),
        shape,
    )  # the sample count no longer matters
    for key in ("activations", "logits"):
        assert by_tokens.component(key) == by_count.component(key), key
    # packed shorter samples fill the budget: a budget between 2 and 3 sequences costs more than 2
    between = plan_memory(
        _config(memory={"checkpointing_min_params": 0, "micro_batch_tokens": 5 * seq // 2}), shape
    )
    assert between.component("activations") > by_count.component("activations")
    # a budget below one sequence: one sample per pass, never less
    one = plan_memory(_config(memory={"checkpointing_min_params": 0, "micro_batch_tokens": 100}), shape)
    single = plan_memory(_config(micro_batch_size=1, **NO_AUTO_CHECKPOINTING), shape)
    assert one.component("activations") == single.component("activations")


def test_it_advises_a_smaller_token_budget_that_fits() -> None:
    seq = _config().max_prompt_length + _config().max_response_length
    config = _config(memory={"micro_batch_tokens": 64 * seq}, rollout={"engine": "vllm"})
    plan = plan_memory(config, KNOWN_SHAPES["qwen/qwen3-1.7b"])
    assert not plan.fits
    advice = next(a for a in plan.advice if "memory.micro_batch_tokens" in a)
    assert not any("micro_batch_size" in a for a in plan.advice)  # ignored under a token budget
    best = int(advice.split(" to ")[1].split(" ")[0])
    assert best % seq == 0 and best < 64 * seq
    smaller = config.replace(**{"memory.micro_batch_tokens": best})
    assert plan_memory(smaller, KNOWN_SHAPES["qwen/qwen3-1.7b"]).fits


def test_it_counts_a_reference_model_only_with_a_kl_term() -> None:
    shape = KNOWN_SHAPES["qwen/qwen3-1.7b"]
    assert plan_memory(_config(), shape).component("reference") == 0
    assert plan_memory(_config(kl_coef=0.04), shape).component("reference") > 0


def test_it_says_which_settings_to_change_when_the_default_8k_run_does_not_fit() -> None:
    plan = plan_memory(_config(**NO_AUTO_CHECKPOINTING), KNOWN_SHAPES["qwen/qwen3-1.7b"])
    assert not plan.fits
    text = " ".join(plan.advice)
    assert "gradient_checkpointing: true" in text
    assert "rollout.batch_size" in text and "micro_batch_size" in text


def test_it_fits_a_checkpointed_vllm_run_of_the_1_7b_model_on_one_h200() -> None:
    config = _config(gradient_checkpointing=True, micro_batch_size=1, **{"rollout": {"engine": "vllm"}})
    plan = plan_memory(config, KNOWN_SHAPES["qwen/qwen3-1.7b"])
    assert plan.fits and plan.advice == ()
    assert plan.component("vllm") == pytest.approx(0.35 * plan.capacity_bytes, rel=1e-3)  # type: ignore[operator]


def test_it_advises_more_gpus_for_the_8b_model() -> None:
    config = _config(gradient_checkpointing=True, micro_batch_size=1, **{"rollout": {"engine": "vllm"}})
    plan = plan_memory(config, KNOWN_SHAPES["qwen/qwen3-8b"], gpu_bytes=80 * GIB)
    assert not plan.fits
    assert any("Shard over" in a and "--nproc_per_node" in a for a in plan.advice)


def test_it_has_no_gpu_budget_for_a_cpu_run() -> None:
    plan = plan_memory(_config(device="cpu"), KNOWN_SHAPES["qwen/qwen3-0.6b"])
    assert plan.capacity_bytes is None and plan.fits and plan.advice == ()
    assert "autocast_weights" not in {c.key for c in plan.components}  # no autocast on CPU by default


# --- the estimate against a measurement ------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc (peak RSS reset)")
@pytest.mark.parametrize("checkpointing", [False, True])
def test_it_estimates_the_measured_peak_of_a_tiny_model_update_within_20_percent(checkpointing: bool) -> None:
    """Measured (``training.memory_probe``): a subprocess builds a tiny Qwen3 (4 layers, hidden 128,
    vocabulary 32768, so the log-prob head runs in 512-token chunks) and runs the trainer's own ``policy_update`` (forward, log-probs, loss, backward, AdamW
    step) twice on a 4 x 512-token micro-batch on CPU in float32. Memory is the process's resident size
    from /proc: glibc is told to serve every allocation above 64 KiB with mmap (MALLOC_MMAP_THRESHOLD_), so
    freed tensors leave the resident set at once and it tracks live tensors; a warm-up update on a
    throwaway model pays for lazy imports and kernels first; then the baseline is read, the kernel's peak
    counter (VmHWM) is reset through /proc/self/clear_refs, and the peak over model creation and both
    updates (the second one with AdamW's moments alive) is VmHWM - baseline. The planner's update phase
    (weights, gradients, moments, activations, logits) must be within 20 % of it, and its model state
    within 20 % of the resident growth after the first update."""
    config = tiny_update_config(checkpointing=checkpointing)
    measured = measure(TINY, config)
    shape = ModelShape.from_hf_config("tiny", TINY)
    assert measured["params"] == shape.params
    plan = plan_memory(config_from_dict(config), shape)
    update = sum(c.bytes for c in plan.components if c.phase == "update")
    state = sum(plan.component(k) for k in ("weights", "gradients", "optimizer"))
    assert update == pytest.approx(measured["total"], rel=0.2), (update, measured)
    assert state == pytest.approx(measured["state"], rel=0.2), (state, measured)
    assert (
        plan.component("activations") + plan.component("logits") > 0.6 * update
    )  # the estimated part matters


def test_it_adds_vllms_share_to_the_update_only_when_vllm_does_not_sleep() -> None:
    shape = KNOWN_SHAPES["qwen/qwen3-8b"]
    values = {"gradient_checkpointing": True, "micro_batch_size": 1}
    awake = plan_memory(_config(**values, rollout={"engine": "vllm", "sleep_level": 0}), shape)
    asleep = plan_memory(_config(**values, rollout={"engine": "vllm", "sleep_level": 2}), shape)
    update = sum(c.bytes for c in awake.components if c.phase == "update")
    assert awake.total_bytes == update + awake.component("vllm")
    assert asleep.total_bytes == max(update, asleep.total_bytes) < awake.total_bytes
    assert any("rollout.sleep_level: 2" in a for a in awake.advice)


def test_it_advises_a_lower_vllm_share_when_rollouts_crowd_the_trained_state() -> None:
    config = _config(
        gradient_checkpointing=True,
        micro_batch_size=1,
        rollout={"engine": "vllm", "sleep_level": 2, "gpu_memory_utilization": 0.9},
    )
    plan = plan_memory(config, KNOWN_SHAPES["qwen/qwen3-4b"])
    assert not plan.fits
    assert any("lower rollout.gpu_memory_utilization from 0.9 to 0.50" in a for a in plan.advice)
