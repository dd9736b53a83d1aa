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


def test_running_it_twice_changes_nothing(settings: Any, tmp_path: Any) -> None:
    settings.VAR_DIR = tmp_path
    call_command("demo", "--no-train", "--verify-limit", "4")
    from curation.models import DatasetRelease, Problem

    before = (Problem.objects.count(), DatasetRelease.objects.count())
    call_command("demo", "--no-train", "--verify-limit", "4")
    assert (Problem.objects.count(), DatasetRelease.objects.count()) == before
