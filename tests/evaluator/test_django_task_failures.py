"""The evaluation task never leaves a job ``running``: an unexpected error fails it with the reason
(killed workers are covered by ``tests/integration/test_worker_kills.py``)."""

from __future__ import annotations

from typing import Any

import pytest

from evaluator import tasks
from evaluator.models import EvaluationJob
from evaluator.services import evaluation_submit

from . import test_django_support as support
from .test_django_support import CORRECT_ADD

pytestmark = pytest.mark.django_db(transaction=True)

_eager_and_in_memory = support._eager_and_in_memory
make_problem = support.make_problem


def test_it_fails_the_job_with_the_reason_when_the_service_raises_unexpectedly(
    make_problem: Any, trainer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    EvaluationJob.objects.filter(pk=job.pk).update(status=EvaluationJob.Status.RUNNING)

    def broken(*, job_id: int) -> Any:
        raise KeyError("verdict")

    monkeypatch.setattr(tasks, "evaluation_run", broken)
    with pytest.raises(KeyError):
        tasks.run_evaluation(job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "unexpected error: KeyError: 'verdict'")
