from __future__ import annotations

from pathlib import Path

import pytest

from training.config import (
    ConfigError,
    GRPOConfig,
    TemperatureStage,
    config_from_dict,
    describe_fields,
    load_config,
)


def test_defaults_follow_the_microcoder_insights() -> None:
    cfg = GRPOConfig()
    assert (cfg.mask.policy, cfg.mask.probability, cfg.mask.repeat_window) == ("conditional", 0.1, 128)
    assert cfg.kl_coef == 0.0
    assert (cfg.clip.eps_low, cfg.clip.eps_high) == (0.2, 0.28)
    assert (cfg.temperature.policy, cfg.temperature.value) == ("constant", 1.2)
    assert cfg.prompts_per_step == 64


def test_it_loads_yaml_and_applies_dotted_overrides(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(
        "model: /models/tiny\nmask:\n  probability: 0.2\ntemperature:\n  policy: staged\n"
        "  stages: [[0, 0.6], {start_step: 140, value: 1.8}]\n"
    )
    cfg = load_config(path, ["mask.policy=all", "max_steps=10"])
    assert cfg.model == "/models/tiny"
    assert (cfg.mask.policy, cfg.mask.probability, cfg.max_steps) == ("all", 0.2, 10)
    assert cfg.temperature.stages == (TemperatureStage(0, 0.6), TemperatureStage(140, 1.8))


def test_it_rejects_an_unknown_field_and_names_it() -> None:
    with pytest.raises(ConfigError, match=r"mask\.probabilty"):
        load_config(None, {"mask.probabilty": 0.2})


def test_an_invalid_probability_error_says_how_to_fix_it() -> None:
    with pytest.raises(ConfigError, match=r"mask.probability is a probability in \[0, 1\].*0\.1"):
        load_config(None, {"mask.probability": 1.5})


def test_a_wrongly_typed_value_names_the_field() -> None:
    with pytest.raises(ConfigError, match="group_size must be an integer"):
        load_config(None, ["group_size=eight"])


def test_minibatches_must_hold_whole_groups() -> None:
    with pytest.raises(
        ConfigError, match=r"prompts_per_step \(6\) must be a multiple of minibatch_prompts \(4\)"
    ):
        load_config(None, {"prompts_per_step": 6, "minibatch_prompts": 4})


def test_a_stored_updates_per_rollout_becomes_the_minibatch_it_implies() -> None:
    cfg = load_config(None, {"prompts_per_step": 8, "updates_per_rollout": 4})
    assert (cfg.minibatch_prompts, cfg.updates_per_rollout) == (2, 4)
    with pytest.raises(ConfigError, match="multiple of updates_per_rollout"):
        load_config(None, {"prompts_per_step": 6, "updates_per_rollout": 4})


def test_a_staged_policy_needs_a_stage_that_starts_the_run() -> None:
    with pytest.raises(ConfigError, match="first stage starts at step 0 or 1"):
        load_config(None, {"temperature.policy": "staged", "temperature.stages": [[10, 1.2]]})


def test_vllm_rollouts_refuse_a_cpu_device() -> None:
    with pytest.raises(ConfigError, match="needs a GPU"):
        load_config(None, {"rollout.engine": "vllm", "device": "cpu"})


def test_to_dict_round_trips_to_an_equal_config() -> None:
    cfg = load_config(
        None,
        {"temperature.policy": "staged", "temperature.stages": [[0, 0.6], [50, 1.6]], "reward.max_tests": 20},
    )
    assert config_from_dict(cfg.to_dict()) == cfg
    assert cfg.to_dict()["temperature"]["stages"] == [
        {"start_step": 0, "value": 0.6},
        {"start_step": 50, "value": 1.6},
    ]


def test_replace_changes_one_dotted_field() -> None:
    assert GRPOConfig().replace(**{"clip.eps_high": 0.3}).clip.eps_high == 0.3


def test_every_field_is_listed_with_help_text() -> None:
    fields = {f.path: f for f in describe_fields()}
    for path in (
        "temperature.policy",
        "mask.policy",
        "mask.probability",
        "mask.repeat_window",
        "clip.eps_low",
        "clip.eps_high",
        "kl_coef",
        "reward.checker",
        "reward.mode",
        "dataset.release",
        "model",
        "group_size",
        "prompts_per_step",
        "minibatch_prompts",
        "loss_aggregation",
        "lr_schedule",
        "lr_warmup_steps",
        "mask.ngram_loop_test",
        "reward.overlong_buffer_ratio",
        "dynamic_sampling.enabled",
        "preset",
        "learning_rate",
        "max_response_length",
        "max_prompt_length",
        "seed",
        "checkpoint_interval",
        "output_dir",
        "max_steps",
        "rollout.engine",
        "device",
    ):
        assert path in fields
    assert all(f.help for f in fields.values())
    assert fields["mask.probability"].default == 0.1
