"""``manage.py demo`` scores the verified release offline and says why it does not calibrate."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from curation.models import DatasetRelease, ScoringJob, ScoringSample

pytestmark = pytest.mark.django_db


def test_it_scores_the_demo_release_once_and_skips_calibration_honestly() -> None:
    out = io.StringIO()
    call_command("demo", "--no-train", "--verify-limit", "4", stdout=out)
    release = DatasetRelease.objects.get(name="demo-verified")
    job = ScoringJob.objects.get(release=release)
    assert (job.status, job.backend, job.progress_done) == ("succeeded", "heuristic", release.problem_count)
    assert ScoringSample.objects.filter(scoring=job).count() == 3 * release.problem_count
    assert "calibration skipped: no model evaluation pass rates" in out.getvalue()
    call_command("demo", "--no-train", "--verify-limit", "4", stdout=io.StringIO())
    assert ScoringJob.objects.count() == 1
