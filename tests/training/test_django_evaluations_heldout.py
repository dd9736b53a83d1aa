"""Held-out evaluation during training, Django side: the run form/API pick a held-out release, which is
exported into the run's directory as ``eval.release`` so the trainer logs ``eval/pass@1``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from training import services
from training.models import TrainingRun

from .test_django_runs import ScriptedTrainer

pytestmark = pytest.mark.django_db


@pytest.fixture
def runs_dir(settings: Any, tmp_path: Path) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    return Path(settings.RUNS_DIR)


@pytest.fixture
def releases(db: object) -> tuple[Any, Any]:
    from curation.models import DatasetRelease

    return (DatasetRelease.objects.create(name="train", version=1, content_hash="t"),
            DatasetRelease.objects.create(name="heldout", version=1, content_hash="h"))


def _config() -> dict[str, Any]:
    return {"model": "tiny", "device": "cpu", "max_steps": 2}


def test_it_points_eval_release_at_the_export_of_the_held_out_release(
    runs_dir: Path, releases: tuple[Any, Any]
) -> None:
    train, heldout = releases
    run = services.run_create(name="r", config_dict=_config(), release_id=train.pk, heldout_release_id=heldout.pk)
    assert run.heldout_release == heldout
    assert run.config["eval"]["release"] == str(runs_dir / f"run-{run.pk}" / "heldout.jsonl")


def test_it_refuses_the_training_release_as_held_out(runs_dir: Path, releases: tuple[Any, Any]) -> None:
    train, _ = releases
    with pytest.raises(ValidationError) as err:
        services.run_create(name="r", config_dict=_config(), release_id=train.pk, heldout_release_id=train.pk)
    assert "must not be the training release" in str(err.value.message_dict["heldout_release_id"])
    assert not TrainingRun.objects.exists()


def test_it_refuses_an_unknown_held_out_release(runs_dir: Path, releases: tuple[Any, Any]) -> None:
    with pytest.raises(ValidationError) as err:
        services.run_create(name="r", config_dict=_config(), release_id=releases[0].pk, heldout_release_id=999_999)
    assert "heldout_release_id" in err.value.message_dict


def test_it_exports_the_held_out_release_before_training(
    runs_dir: Path, releases: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from curation import export

    monkeypatch.setattr(export, "iter_jsonl", lambda release: iter([f'{{"release": "{release.name}"}}\n'.encode()]))
    train, heldout = releases
    run = services.run_create(name="r", config_dict=_config(), release_id=train.pk, heldout_release_id=heldout.pk)
    ScriptedTrainer.seen_configs = []
    services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer)
    config = ScriptedTrainer.seen_configs[0]
    assert Path(config.eval.release).read_text() == '{"release": "heldout"}\n'
    assert Path(config.dataset.release).read_text() == '{"release": "train"}\n'


def test_the_api_takes_a_held_out_release_and_names_it_when_wrong(
    api_as: Any, trainer: Any, runs_dir: Path, releases: tuple[Any, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import tasks

    monkeypatch.setattr(tasks.train_run, "apply_async", lambda **kw: None)
    train, heldout = releases
    client = api_as(trainer)
    body = {"name": "r", "config": _config(), "release_id": train.pk}
    created = client.post("/api/runs/", {**body, "heldout_release_id": heldout.pk}, format="json")
    assert created.status_code == 201 and created.json()["heldout_release"] == heldout.pk
    refused = client.post("/api/runs/", {**body, "heldout_release_id": train.pk}, format="json")
    assert refused.status_code == 400 and "heldout_release_id" in refused.json()


def test_the_run_form_offers_the_held_out_picker_and_the_chart_panel(
    client_as: Any, trainer: Any, runs_dir: Path, releases: tuple[Any, Any]
) -> None:
    client = client_as(trainer)
    assert 'name="heldout_release_id"' in client.get("/training/runs/new/").content.decode()
    run = services.run_create(name="r", config_dict=_config(), release_id=releases[0].pk,
                              heldout_release_id=releases[1].pk)
    page = client.get(f"/training/runs/{run.pk}/").content.decode()
    assert "Held-out pass@1 / pass@k" in page and "eval/pass@1" in page
