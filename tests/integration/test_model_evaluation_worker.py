"""End to end: a model evaluation whose ``gpu`` worker is SIGKILLed mid-job is redelivered by real Redis to
a fresh worker, which takes over the job's lease and resumes from the stored samples: the job succeeds
with every (problem, sample index) stored exactly once and the samples of the dead worker untouched.

The workers get ``CELERY_VISIBILITY_TIMEOUT=3`` and ``MODEL_EVALUATION_LEASE_TIMEOUT_S=3`` so the
kill-and-resume takes seconds. Run: ``REDIS_URL=redis://127.0.0.1:6379/14
DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres TEST_DATABASE_NAME=test_mc_evaldjango
.venv/bin/pytest tests/integration/test_model_evaluation_worker.py``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from tests.training.evaluation_support import make_release, toy_records
from tests.training.test_django_real_run import tiny_model  # noqa: F401 - the module-scoped model fixture
from training.models import EvalStatus, ModelEvaluation, ModelEvaluationSample
from training.services.evaluations import model_evaluation_create, model_evaluation_start

from .conftest import Service, WorkerFactory, wait_until_redeliverable

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

K = 8
KILL_AFTER_SAMPLES = 5
LEASE_ENV = {"CELERY_VISIBILITY_TIMEOUT": "3", "MODEL_EVALUATION_LEASE_TIMEOUT_S": "3", "OMP_NUM_THREADS": "1"}


def _kill_after_samples(evaluation_id: int, samples: int, worker: Service, timeout_s: float = 120.0) -> ModelEvaluation:
    """Wait until the job stored ``samples`` samples, then SIGKILL ``worker`` while this test holds the job
    row's lock: every write of the worker locks that row first, so the returned job is exactly what the
    dead worker left behind."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with transaction.atomic():
            evaluation = ModelEvaluation.objects.select_for_update().get(pk=evaluation_id)
            if evaluation.samples_done >= samples:
                worker.kill()
                return evaluation
        if evaluation.is_terminal:
            pytest.fail(f"evaluation {evaluation_id} ended {evaluation.status} early: {evaluation.reason}")
        if worker.process.poll() is not None:
            pytest.fail(f"{worker.name} exited with {worker.process.returncode}")
        time.sleep(0.01)
    pytest.fail(f"evaluation {evaluation_id} stored fewer than {samples} samples within {timeout_s:g} s")


def _wait_for_end(evaluation_id: int, worker: Service, timeout_s: float = 120.0) -> ModelEvaluation:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        evaluation = ModelEvaluation.objects.get(pk=evaluation_id)
        if evaluation.is_terminal:
            return evaluation
        if worker.process.poll() is not None:
            pytest.fail(f"{worker.name} exited with {worker.process.returncode}")
        time.sleep(0.1)
    pytest.fail(f"evaluation {evaluation_id} did not end within {timeout_s:g} s")


def test_a_killed_evaluation_resumes_on_a_fresh_worker_with_every_sample_once(
    start_worker: WorkerFactory, tiny_model: Path, tmp_path: Path, trainer: Any  # noqa: F811
) -> None:
    release = make_release(tmp_path, toy_records())
    sent_at = time.monotonic()
    evaluation = model_evaluation_create(
        user=trainer, engine="transformers", model=str(tiny_model), release_id=release.pk, k=K, max_tokens=8,
        temperature=1.0, top_p=1.0,
    )
    first = start_worker("modeleval-1", queues=["gpu"], env=LEASE_ENV)
    model_evaluation_start(evaluation_id=evaluation.pk)  # committed: the task is on the gpu queue now

    killed = _kill_after_samples(evaluation.pk, KILL_AFTER_SAMPLES, first)
    assert first.group_alive() == []
    assert killed.status == EvalStatus.RUNNING and killed.attempts == 1
    left = {s.pk: (s.problem_id, s.index, bytes(s.completion_z))
            for s in ModelEvaluationSample.objects.filter(evaluation_id=evaluation.pk)}
    assert KILL_AFTER_SAMPLES <= len(left) < 4 * K

    wait_until_redeliverable(sent_at)
    second = start_worker("modeleval-2", queues=["gpu"], env=LEASE_ENV)
    done = _wait_for_end(evaluation.pk, second)
    assert done.status == EvalStatus.SUCCEEDED, done.reason
    assert done.attempts == 2 and done.lease_owner != killed.lease_owner
    pairs = list(ModelEvaluationSample.objects.filter(evaluation=done).values_list("problem_id", "index"))
    assert len(pairs) == len(set(pairs)) == 4 * K and done.samples_done == 4 * K
    for pk, (problem_id, index, blob) in left.items():  # what the dead worker stored was kept, not redone
        kept = ModelEvaluationSample.objects.get(pk=pk)
        assert (kept.problem_id, kept.index, bytes(kept.completion_z)) == (problem_id, index, blob)
    assert done.problems_done == 4 and done.summary["problems"] == 4
