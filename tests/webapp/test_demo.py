from typing import Any

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_it_seeds_users_problems_and_a_verified_release(settings: Any, tmp_path: Any) -> None:
    settings.VAR_DIR = tmp_path
    call_command("demo", "--no-train", "--verify-limit", "12")
    from django.contrib.auth import get_user_model

    from curation.models import DatasetRelease, Problem

    users = get_user_model().objects.filter(username__in=["admin", "curator", "trainer", "viewer"])
    assert users.count() == 4
    assert users.get(username="curator").check_password("microcoder-curator")
    platforms = set(Problem.objects.values_list("platform__name", flat=True))
    assert {"microcoder-demo", "toy", "humaneval"} <= platforms
    release = DatasetRelease.objects.get(name="demo-verified")
    assert 0 < release.problem_count <= 12
    assert set(release.items.values_list("stage", flat=True)) == {"constraints_passed"}
    from curation.models import ReviewQueue

    queue = ReviewQueue.objects.get(name="demo spot-check")  # curators have problems to spot-check
    assert queue.sample_size == release.problem_count and queue.items.count() == release.problem_count


def test_running_it_twice_changes_nothing(settings: Any, tmp_path: Any) -> None:
    settings.VAR_DIR = tmp_path
    call_command("demo", "--no-train", "--verify-limit", "4")
    from curation.models import DatasetRelease, Problem

    before = (Problem.objects.count(), DatasetRelease.objects.count())
    call_command("demo", "--no-train", "--verify-limit", "4")
    assert (Problem.objects.count(), DatasetRelease.objects.count()) == before


def test_it_trains_the_tiny_run_and_the_two_run_sweep_the_comparison_page_shows(
    settings: Any, tmp_path: Any, client: Any
) -> None:
    settings.VAR_DIR = tmp_path
    settings.RUNS_DIR = tmp_path / "runs"
    call_command("demo", "--verify-limit", "0", "--train-steps", "2")
    from training.models import Sweep, TrainingRun

    runs = TrainingRun.objects.order_by("id")
    assert [r.status for r in runs] == ["succeeded"] * 3, [(r.name, r.status, r.error) for r in runs]
    assert all(r.last_step == 2 for r in runs)
    sweep = Sweep.objects.get()
    assert sorted(r.config["temperature"]["value"] for r in sweep.runs.all()) == [0.6, 1.2]
    client.login(username="viewer", password="microcoder-viewer")
    page = client.get(f"/training/compare/?sweep={sweep.pk}")
    assert page.status_code == 200 and "Compare 2 runs" in page.content.decode()
    ids = ",".join(str(r.pk) for r in sweep.runs.all())
    series = client.get(f"/api/runs/compare/?runs={ids}&metrics=reward").json()
    assert len(series["runs"]) == 2
