"""The owner rule (``webapp.roles.can_manage``): a trainer cancels only their own runs and evaluation
jobs, an admin any, a viewer none — on the API, on the pages' cancel controls and in the helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from evaluator.models import EvaluationJob
from training import services
from training.models import TrainingRun
from webapp.roles import CURATOR, TRAINER, can_manage

pytestmark = pytest.mark.django_db


@pytest.fixture
def other_trainer(django_user_model: Any) -> Any:
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(username="tina-trainer", password="x" * 12)
    user.groups.add(Group.objects.get_or_create(name=TRAINER)[0])
    return user


@pytest.fixture
def run(trainer: Any, tmp_path: Path, settings: Any) -> TrainingRun:
    """A queued run owned by the ``trainer`` persona."""
    settings.RUNS_DIR = tmp_path / "runs"
    release = tmp_path / "release.jsonl"
    release.write_text("{}\n")
    config = {"model": "tiny", "dataset": {"release": str(release)}}
    return services.run_create(name="owned", config_dict=config, user=trainer)


@pytest.fixture
def job(trainer: Any) -> EvaluationJob:
    """A queued job owned by the ``trainer`` persona (a job without problems: the rule ignores its kind)."""
    return EvaluationJob.objects.create(kind=EvaluationJob.Kind.VERIFY_REFERENCES, created_by=trainer)


#: persona -> may cancel the trainer persona's run / job
PERSONAS = [("trainer", True), ("other_trainer", False), ("admin_user", True), ("viewer", False)]


@pytest.mark.parametrize("persona,allowed", PERSONAS)
def test_it_lets_only_the_owner_or_an_admin_cancel_a_run_over_the_api(
    request: pytest.FixtureRequest, api_as: Any, run: TrainingRun, persona: str, allowed: bool
) -> None:
    response = api_as(request.getfixturevalue(persona)).post(f"/api/runs/{run.pk}/cancel/")
    run.refresh_from_db()
    assert (response.status_code, run.cancel_requested) == ((200, True) if allowed else (403, False))


@pytest.mark.parametrize("persona,allowed", PERSONAS)
def test_it_lets_only_the_owner_or_an_admin_cancel_a_run_from_its_page(
    request: pytest.FixtureRequest, client_as: Any, run: TrainingRun, persona: str, allowed: bool
) -> None:
    response = client_as(request.getfixturevalue(persona)).post(reverse("training:run-cancel", args=[run.pk]))
    run.refresh_from_db()
    assert (response.status_code, run.cancel_requested) == ((302, True) if allowed else (403, False))


@pytest.mark.parametrize("persona,allowed", PERSONAS)
def test_it_shows_the_run_cancel_control_only_to_those_who_may_cancel(
    request: pytest.FixtureRequest, client_as: Any, run: TrainingRun, persona: str, allowed: bool
) -> None:
    html = client_as(request.getfixturevalue(persona)).get(reverse("training:run-detail", args=[run.pk])).content
    assert (b'id="cancel-form"' in html) == allowed


@pytest.mark.parametrize("persona,allowed", PERSONAS)
def test_it_lets_only_the_owner_or_an_admin_cancel_an_evaluation_job_over_the_api(
    request: pytest.FixtureRequest, api_as: Any, job: EvaluationJob, persona: str, allowed: bool
) -> None:
    response = api_as(request.getfixturevalue(persona)).post(f"/api/evaluations/{job.pk}/cancel/")
    job.refresh_from_db()
    assert (response.status_code, job.status) == ((200, "cancelled") if allowed else (403, "queued"))


@pytest.mark.parametrize("persona,allowed", PERSONAS)
def test_it_shows_the_job_cancel_control_only_to_those_who_may_cancel(
    request: pytest.FixtureRequest, client_as: Any, job: EvaluationJob, persona: str, allowed: bool
) -> None:
    html = client_as(request.getfixturevalue(persona)).get(reverse("evaluator:job-detail", args=[job.pk])).content
    assert (reverse("evaluator:job-cancel", args=[job.pk]).encode() in html) == allowed


def test_it_lets_only_admins_manage_an_object_without_owner(admin_user: Any, trainer: Any) -> None:
    assert (can_manage(admin_user, None), can_manage(trainer, None)) == (True, False)


def test_it_refuses_an_owner_who_lost_the_role(trainer: Any) -> None:
    trainer.groups.clear()
    trainer.refresh_from_db()  # drop the roles cached on the instance
    assert not can_manage(trainer, trainer)


def test_it_accepts_the_owner_by_id_with_any_of_the_given_roles(curator: Any) -> None:
    assert can_manage(curator, curator.pk, roles=(TRAINER, CURATOR))
    assert not can_manage(curator, curator.pk, roles=(TRAINER,))
