from __future__ import annotations

from training.config import GRPOConfig, field_paths, load_config
from training.insights import ASPECTS, INSIGHTS, INSIGHTS_BY_ID, check_config, insights_for


def _ids(cfg: GRPOConfig) -> set[str]:
    return {i for w in check_config(cfg) for i in w.insight_ids}


def test_there_are_34_insights_over_the_seven_aspects() -> None:
    assert len(INSIGHTS) == 34
    assert len(INSIGHTS_BY_ID) == 34
    assert {i.aspect for i in INSIGHTS} == set(ASPECTS)
    assert len(ASPECTS) == 7


def test_every_insight_is_attached_to_an_existing_config_field() -> None:
    paths = set(field_paths())
    assert all(i.config_field in paths for i in INSIGHTS)
    assert all(i.text and i.source for i in INSIGHTS)


def test_temperature_insights_are_found_by_section_wildcard() -> None:
    assert {i.aspect for i in insights_for("temperature.*")} == {"temperature"}


def test_the_default_config_raises_no_warning() -> None:
    assert check_config(GRPOConfig()) == []


def test_it_flags_a_kl_penalty() -> None:
    assert "KL-1" in _ids(load_config(None, {"kl_coef": 0.01}))


def test_it_flags_masking_every_truncated_response() -> None:
    assert "MASK-4" in _ids(load_config(None, {"mask.policy": "all"}))


def test_it_flags_a_mask_probability_that_behaves_like_mask_all() -> None:
    assert "MASK-3" in _ids(load_config(None, {"mask.probability": 0.3}))


def test_it_flags_a_temperature_ramp() -> None:
    ramp = [[0, 0.6], [20, 0.7], [40, 0.8], [60, 0.9], [80, 1.0]]
    assert "TEMP-8" in _ids(load_config(None, {"temperature.policy": "staged", "temperature.stages": ramp}))


def test_it_flags_a_low_constant_temperature() -> None:
    assert "TEMP-3" in _ids(load_config(None, {"temperature.value": 0.6}))


def test_it_flags_a_tiny_response_cap() -> None:
    assert "CTX-3" in _ids(load_config(None, {"max_response_length": 1024}))


def test_it_flags_batch_extremes() -> None:
    assert "BATCH-1" in _ids(load_config(None, {"prompts_per_step": 8, "minibatch_prompts": 2}))
    assert "BATCH-2" in _ids(load_config(None, {"prompts_per_step": 256}))


def test_it_says_when_the_clip_cannot_act_and_when_updates_go_far_off_policy() -> None:
    assert "BATCH-3" not in _ids(load_config(None, {}))  # the default: 4 updates per rollout
    assert "BATCH-3" in _ids(load_config(None, {"minibatch_prompts": 64}))  # 1 update: ratio stays 1
    assert "BATCH-3" in _ids(load_config(None, {"minibatch_prompts": 8}))  # 8 updates


def test_it_flags_the_strict_checker() -> None:
    assert "EVAL-1" in _ids(load_config(None, {"reward.checker": "strict"}))


def test_a_warning_reads_as_one_line_with_its_field_and_insights() -> None:
    (warning,) = check_config(load_config(None, {"kl_coef": 0.05}))
    assert str(warning).startswith("[warning] kl_coef:") and "KL-1" in str(warning)
