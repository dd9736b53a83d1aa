"""Scoring jobs: every sample stored once, a restart resumes without duplicates, the owner rule."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.db.models import Count

from curation.models import ScoringJob, ScoringResult, ScoringSample
from curation.services import difficulty as difficulty_service
from curation.services.difficulty import scoring_cancel, scoring_create, scoring_run

from .difficulty_support import catalogue, scored

pytestmark = pytest.mark.django_db


class WorkerDied(BaseException):
    """Stands in for SIGKILL: not an Exception, so nothing on the way up records it."""


class CrashingScorer:
    """Wraps the real scorer; dies after ``crash_after`` samples (None = never) and counts calls."""

    def __init__(self, inner: Any, crash_after: int | None) -> None:
        self.inner, self.crash_after, self.calls = inner, crash_after, []
        self.backend, self.model, self.prompt_version = inner.backend, inner.model, inner.prompt_version

    def score_sample(self, problem: Any, *, index: int) -> Any:
        if self.crash_after is not None and len(self.calls) >= self.crash_after:
            raise WorkerDied()
        self.calls.append((problem.id, index))
        return self.inner.score_sample(problem, index=index)


def test_it_stores_three_samples_and_a_weighted_score_per_problem(import_records: Any, curator: Any) -> None:
    problems = catalogue(import_records, n=4)
    job = scored(curator)
    assert (job.status, job.progress_done, job.progress_total, job.error_count) == ("succeeded", 4, 4, 0)
    assert ScoringSample.objects.filter(scoring=job).count() == 12
    assert job.prompt_version and job.backend == "heuristic"
    hard, easy = (ScoringResult.objects.get(scoring=job, problem=problems[i]).score for i in (1, 0))
    assert hard is not None and easy is not None and hard > easy


def test_it_resumes_after_a_restart_without_scoring_or_storing_a_sample_twice(
    import_records: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalogue(import_records, n=6)
    job = scoring_create(backend="heuristic", filter_spec={}, enqueue=False)
    real = difficulty_service.get_scorer
    monkeypatch.setattr(difficulty_service, "FLUSH_SECONDS", 0.0)  # commit every sample as it comes
    first = CrashingScorer(real("heuristic"), crash_after=8)
    monkeypatch.setattr(difficulty_service, "get_scorer", lambda backend, **kw: first)
    with pytest.raises(WorkerDied):
        scoring_run(scoring_id=job.pk)
    kept = set(ScoringSample.objects.filter(scoring=job).values_list("problem_id", "index"))
    assert 0 < len(kept) <= 8 and ScoringJob.objects.get(pk=job.pk).status == "running"

    second = CrashingScorer(real("heuristic"), crash_after=None)
    monkeypatch.setattr(difficulty_service, "get_scorer", lambda backend, **kw: second)
    finished = scoring_run(scoring_id=job.pk)
    assert finished.status == "succeeded" and finished.progress_done == 6
    assert {(int(p), i) for p, i in second.calls}.isdisjoint(kept)  # stored samples were reused, not re-scored
    per_key = ScoringSample.objects.filter(scoring=job).values("problem_id", "index").annotate(n=Count("id"))
    assert len(per_key) == 18 and {row["n"] for row in per_key} == {1}


def test_it_leaves_a_finished_scoring_alone_when_its_task_is_redelivered(import_records: Any) -> None:
    catalogue(import_records, n=2)
    job = scored()
    again = scoring_run(scoring_id=job.pk)
    assert again.status == "succeeded" and ScoringSample.objects.filter(scoring=job).count() == 6


def test_it_lets_the_creator_cancel_a_running_scoring(import_records: Any, curator: Any) -> None:
    catalogue(import_records, n=2)
    job = scoring_create(backend="heuristic", filter_spec={}, user=curator, enqueue=False)
    cancelled = scoring_cancel(scoring_id=job.pk, user=curator)
    assert cancelled.status == "cancelled" and "cora-curator" in cancelled.reason
    assert scoring_run(scoring_id=job.pk).status == "cancelled"


def test_it_refuses_a_cancel_from_another_curator_but_not_from_an_admin(
    import_records: Any, curator: Any, admin_user: Any, django_user_model: Any
) -> None:
    from django.contrib.auth.models import Group

    catalogue(import_records, n=2)
    other = django_user_model.objects.create_user(username="other-curator", password="x")
    other.groups.add(Group.objects.get(name="curator"))
    job = scoring_create(backend="heuristic", filter_spec={}, user=curator, enqueue=False)
    with pytest.raises(PermissionDenied):
        scoring_cancel(scoring_id=job.pk, user=other)
    assert scoring_cancel(scoring_id=job.pk, user=admin_user).status == "cancelled"


def test_it_rejects_unknown_weights_naming_the_field(import_records: Any) -> None:
    catalogue(import_records, n=1)
    with pytest.raises(ValueError, match="^weights: .*cleverness"):
        scoring_create(backend="heuristic", filter_spec={}, weights={"cleverness": 1.0}, enqueue=False)


def test_it_runs_the_task_eagerly_through_the_scoring_service(import_records: Any, curator: Any) -> None:
    from curation.tasks import score_problems_job

    catalogue(import_records, n=2)
    job = scoring_create(backend="heuristic", filter_spec={}, user=curator, enqueue=False)
    assert score_problems_job.delay(job.pk).get()["status"] == "succeeded"


def test_it_fails_a_job_whose_workers_kept_dying_instead_of_redelivering_it_forever(
    import_records: Any, settings: Any
) -> None:
    catalogue(import_records, n=1)
    settings.SCORING_MAX_ATTEMPTS = 2
    job = scoring_create(backend="heuristic", filter_spec={}, enqueue=False)
    ScoringJob.objects.filter(pk=job.pk).update(status="running", attempts=2)  # two deliveries died
    failed = scoring_run(scoring_id=job.pk)
    assert failed.status == "failed" and "died 2 times" in failed.reason
