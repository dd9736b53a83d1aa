"""Method presets (training.presets) resolve to the documented settings and stay overridable."""

from __future__ import annotations

import pytest
import yaml

from training.config import ConfigError, GRPOConfig, config_from_dict, load_config
from training.grpo import main
from training.presets import PRESETS, preset_names


def test_the_three_baselines_are_presets_with_a_cited_source() -> None:
    assert preset_names() == ["grpo", "dapo", "microcoder"]
    for preset in PRESETS.values():
        assert preset.title and preset.summary and "arXiv" in preset.source
        config_from_dict({"preset": preset.name})  # every preset is a valid config


def test_grpo_is_symmetric_clip_with_a_k3_kl_and_sequence_mean_loss() -> None:
    cfg = load_config(None, preset="grpo")
    assert (cfg.clip.eps_low, cfg.clip.eps_high, cfg.kl_coef) == (0.2, 0.2, 0.04)
    assert cfg.loss_aggregation == "sequence" and cfg.mask.policy == "none"
    assert not cfg.dynamic_sampling.enabled and cfg.reward.overlong_buffer_ratio == 0.0


def test_dapo_is_clip_higher_dynamic_sampling_overlong_shaping_token_loss_and_no_kl() -> None:
    cfg = load_config(None, preset="dapo")
    assert (cfg.clip.eps_low, cfg.clip.eps_high, cfg.kl_coef) == (0.2, 0.28, 0.0)
    assert cfg.dynamic_sampling.enabled and cfg.reward.overlong_buffer_ratio == 0.2
    assert cfg.loss_aggregation == "token" and cfg.lr_warmup_steps == 20


def test_microcoder_is_the_conditional_mask_with_a_diversity_chosen_staged_temperature() -> None:
    cfg = load_config(None, preset="microcoder")
    assert (cfg.mask.policy, cfg.mask.probability, cfg.mask.ngram_loop_test) == ("conditional", 0.1, False)
    assert cfg.temperature.policy == "diversity" and cfg.temperature.stages[0].value == 1.8
    assert (cfg.kl_coef, cfg.clip.eps_high, cfg.loss_aggregation) == (0.0, 0.28, "token")


def test_the_defaults_are_microcoder_apart_from_the_temperature_policy() -> None:
    micro = load_config(None, preset="microcoder").to_dict()
    default = GRPOConfig().to_dict()
    differing = {k for k in default if default[k] != micro[k]}
    assert differing == {"preset", "temperature"}


def test_file_values_and_overrides_win_over_the_preset(tmp_path: object) -> None:
    cfg = config_from_dict({"preset": "dapo", "max_steps": 5, "clip": {"eps_high": 0.3}})
    assert (cfg.preset, cfg.max_steps, cfg.clip.eps_high, cfg.clip.eps_low) == ("dapo", 5, 0.3, 0.2)
    cfg = load_config(None, {"kl_coef": 0.0}, preset="grpo")
    assert cfg.kl_coef == 0.0 and cfg.clip.eps_high == 0.2


def test_a_resolved_preset_config_round_trips() -> None:
    cfg = load_config(None, {"max_steps": 7}, preset="microcoder")
    assert config_from_dict(cfg.to_dict()) == cfg


def test_an_unknown_preset_lists_the_names() -> None:
    with pytest.raises(ConfigError, match="unknown preset 'ppo'; choose one of grpo, dapo, microcoder"):
        config_from_dict({"preset": "ppo"})


def test_the_cli_prints_a_presets_resolved_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--preset", "grpo", "--set", "max_steps=9", "--print-config"]) == 0
    out = capsys.readouterr().out
    resolved = yaml.safe_load("\n".join(line for line in out.splitlines() if not line.startswith("#")))
    assert resolved["preset"] == "grpo" and resolved["max_steps"] == 9
    assert resolved["kl_coef"] == 0.04 and resolved["clip"] == {"eps_low": 0.2, "eps_high": 0.2}
