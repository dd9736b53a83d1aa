"""The runs API's side of the run form: a preset name on POST /api/runs/ and /api/runs/check/, and the
memory plan in the check's answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from training.models import TrainingRun


@pytest.fixture(autouse=True)
def runs_dir(settings: Any, tmp_path: Path) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    return settings.RUNS_DIR


def test_it_resolves_a_preset_named_in_the_check(api_as: Any, trainer: Any) -> None:
    response = api_as(trainer).post(
        "/api/runs/check/", {"preset": "grpo", "config": {"max_steps": 5}}, format="json"
    )
    assert response.status_code == 200, response.content
    config = response.json()["config"]
    assert config["preset"] == "grpo" and config["kl_coef"] == 0.04 and config["max_steps"] == 5
    assert any(w["field"] == "kl_coef" for w in response.json()["warnings"])  # GRPO's KL goes against KL-1


def test_it_lets_the_config_override_the_preset(api_as: Any, trainer: Any) -> None:
    response = api_as(trainer).post(
        "/api/runs/check/", {"preset": "grpo", "config": {"kl_coef": 0.0}}, format="json"
    )
    assert response.json()["config"]["kl_coef"] == 0.0


def test_it_refuses_an_unknown_preset_with_the_names(api_as: Any, trainer: Any) -> None:
    response = api_as(trainer).post("/api/runs/check/", {"preset": "ppo"}, format="json")
    assert response.status_code == 400
    assert "preset" in response.json() and "ppo" in str(response.json()["preset"])


def test_it_creates_a_run_from_a_preset_and_stores_its_name(
    api_as: Any, trainer: Any, dataset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import tasks

    monkeypatch.setattr(tasks.train_run, "apply_async", lambda **kw: None)
    body = {
        "name": "dapo run",
        "preset": "dapo",
        "config": {"model": "tiny", "dataset": {"release": dataset}},
    }
    response = api_as(trainer).post("/api/runs/", body, format="json")
    assert response.status_code == 201, response.content
    run = TrainingRun.objects.get()
    assert run.config["preset"] == "dapo" and run.config["clip"]["eps_high"] == 0.28
    assert response.json()["config"]["preset"] == "dapo"


def test_it_returns_the_memory_plan_of_the_checked_config(api_as: Any, trainer: Any) -> None:
    body = {
        "config": {
            "model": "Qwen/Qwen3-1.7B",
            "gradient_checkpointing": False,
            "memory": {"checkpointing_min_params": 0},  # not checkpointed by itself either
        }
    }
    memory = api_as(trainer).post("/api/runs/check/", body, format="json").json()["memory"]
    assert memory["model"] == "Qwen/Qwen3-1.7B" and memory["gpus"] == 1
    assert {c["key"] for c in memory["components"]} >= {
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "logits",
    }
    assert memory["fits"] is False and any("gradient_checkpointing" in a for a in memory["advice"])


def test_it_plans_for_several_gpus_when_asked(api_as: Any, trainer: Any) -> None:
    client = api_as(trainer)
    one = client.post("/api/runs/check/", {"config": {"model": "Qwen/Qwen3-8B"}}, format="json").json()[
        "memory"
    ]
    four = client.post(
        "/api/runs/check/", {"config": {"model": "Qwen/Qwen3-8B"}, "gpus": 4}, format="json"
    ).json()
    weights = {c["key"]: c["bytes"] for c in four["memory"]["components"]}["weights"]
    assert weights * 4 == pytest.approx(
        {c["key"]: c["bytes"] for c in one["components"]}["weights"], rel=1e-6
    )
    bad = client.post("/api/runs/check/", {"config": {}, "gpus": "many"}, format="json")
    assert bad.status_code == 400 and "gpus" in bad.json()


def test_it_says_when_the_models_shape_is_unknown(api_as: Any, trainer: Any) -> None:
    memory = (
        api_as(trainer)
        .post("/api/runs/check/", {"config": {"model": "acme/nope"}}, format="json")
        .json()["memory"]
    )
    assert "unknown model shape" in memory["error"]


def test_it_checks_the_forms_strings_like_the_form_does(api_as: Any, trainer: Any) -> None:
    body = {
        "preset": "dapo",
        "form": {"model": "tiny", "mask.probability": "0.5", "temperature.stages": "[]"},
    }
    response = api_as(trainer).post("/api/runs/check/", body, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["config"]["mask"]["probability"] == 0.5 and data["config"]["preset"] == "dapo"
    assert data["form"]["mask.probability"] == "0.5" and data["form"]["clip.eps_high"] == "0.28"
    assert "preset: dapo" in data["yaml"]


def test_it_names_the_fields_of_invalid_form_strings(api_as: Any, trainer: Any) -> None:
    client = api_as(trainer)
    parse = client.post("/api/runs/check/", {"form": {"group_size": "two"}}, format="json")
    assert parse.status_code == 400 and "must be an integer" in parse.json()["fields"]["group_size"]
    core = client.post("/api/runs/check/", {"form": {"clip.eps_low": "2"}}, format="json")
    assert (
        core.status_code == 400 and "clip.eps_low must be in (0, 1)" in core.json()["fields"]["clip.eps_low"]
    )
    wrong = client.post("/api/runs/check/", {"form": {"max_steps": 3}}, format="json")
    assert wrong.status_code == 400 and "form" in wrong.json()
