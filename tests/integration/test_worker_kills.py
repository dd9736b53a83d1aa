"""End to end: an import and an evaluation whose real Celery worker is SIGKILLed mid-job are redelivered
by real Redis to a fresh worker and end ``succeeded``: nothing stays ``running``, nothing is duplicated.

The workers get ``CELERY_VISIBILITY_TIMEOUT=3`` (Redis redelivers an unacknowledged message 3 s after it
was taken) and ``IMPORT_LEASE_TIMEOUT_S=3`` (a batch whose worker went silent is taken over 3 s after its
last heartbeat). Each test sends its task to a queue of its own, so the session's shared worker never
takes it. (Training has its own kill test: ``test_training_worker.py``.)

Run: ``REDIS_URL=redis://127.0.0.1:6379/5 DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
TEST_DATABASE_NAME=test_kills .venv/bin/pytest tests/integration/test_worker_kills.py``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from curation.models import ImportBatch, ImportStatus, Problem
from curation.tasks import import_file
from evaluator.models import EvaluationJob
from evaluator.services import evaluation_submit
from evaluator.tasks import run_evaluation
from tests.curation.conftest import make_record, write_jsonl
from tests.evaluator import test_django_support as support
from tests.evaluator.test_django_support import verdict_of

from .conftest import Service, WorkerFactory, wait_until_redeliverable

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

make_problem = support.make_problem

REDELIVERY_ENV = {"CELERY_VISIBILITY_TIMEOUT": "3", "IMPORT_LEASE_TIMEOUT_S": "3", "IMPORT_CHUNK_ROWS": "10",
                  "EVALUATOR_WORKERS": "1", "OMP_NUM_THREADS": "1"}
ROWS = 1500
KILL_AFTER_ROW = 40
#: a correct solution slow enough (5 tests x 0.6 s) for the test to kill its worker mid-job
SLOW_ADD = "import time\ntime.sleep(0.6)\na, b = map(int, input().split())\nprint(a + b)\n"


def _wait(read: Callable[[], Any], done: Callable[[Any], bool], what: str, worker: Service,
          timeout_s: float = 90.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = read()
        if done(value):
            return value
        if worker.process.poll() is not None:
            pytest.fail(f"{worker.name} exited with {worker.process.returncode} while waiting for {what}")
        time.sleep(0.05)
    pytest.fail(f"no {what} within {timeout_s:g} s")


def test_an_import_whose_worker_is_killed_mid_file_is_finished_by_a_fresh_worker(
    start_worker: WorkerFactory, tmp_path: Path
) -> None:
    path = write_jsonl(tmp_path / "rows.jsonl", [make_record(f"p{i}", tests=2) for i in range(ROWS)])
    batch = ImportBatch.objects.create(format="microcoder", filename=path.name, path=str(path))
    first = start_worker("import-1", queues=["kill-imports"], env=REDELIVERY_ENV)
    sent_at = time.monotonic()
    import_file.apply_async((batch.pk,), queue="kill-imports")

    # Kill while holding the batch row's lock: the worker writes its progress in the same transaction as
    # the chunk's rows, so nothing commits between this read and the kill.
    deadline = time.monotonic() + 90
    while True:
        with transaction.atomic():
            left = ImportBatch.objects.select_for_update().get(pk=batch.pk)
            if (left.last_committed_row or 0) >= KILL_AFTER_ROW:
                first.kill()
                break
        assert left.status in (ImportStatus.PENDING, ImportStatus.RUNNING), left.message
        assert time.monotonic() < deadline, f"the import did not reach row {KILL_AFTER_ROW}: {first.log()}"
        time.sleep(0.01)
    assert left.status == ImportStatus.RUNNING and left.last_committed_row is not None
    assert left.last_committed_row < ROWS and Problem.objects.count() == left.last_committed_row

    wait_until_redeliverable(sent_at)
    second = start_worker("import-2", queues=["kill-imports"], env=REDELIVERY_ENV)
    done = _wait(lambda: ImportBatch.objects.get(pk=batch.pk), lambda b: b.is_finished, "finished import", second)
    assert done.status == ImportStatus.SUCCEEDED, done.message
    assert (done.unchanged_count, done.imported_count, done.rejected_count) == (
        left.last_committed_row, ROWS - left.last_committed_row, 0
    )
    assert Problem.objects.count() == ROWS


def test_an_evaluation_whose_worker_is_killed_mid_job_is_judged_by_a_fresh_worker(
    start_worker: WorkerFactory, make_problem: Any, trainer: Any
) -> None:
    job = evaluation_submit(problem_id=make_problem().pk, code=SLOW_ADD, user=trainer, enqueue=False)
    first = start_worker("evaluate-1", queues=["kill-evals"], env=REDELIVERY_ENV)
    sent_at = time.monotonic()
    run_evaluation.apply_async((job.pk,), queue="kill-evals")
    _wait(lambda: EvaluationJob.objects.get(pk=job.pk), lambda j: j.status == "running", "running job", first)
    first.kill()  # the worker, its pool child and the judge's sandbox processes, without any cleanup
    assert EvaluationJob.objects.get(pk=job.pk).status == "running"

    wait_until_redeliverable(sent_at)
    second = start_worker("evaluate-2", queues=["kill-evals"], env=REDELIVERY_ENV)
    done = _wait(lambda: EvaluationJob.objects.get(pk=job.pk), lambda j: j.is_finished, "finished job", second)
    assert done.status == "succeeded", done.error
    verdict = verdict_of(done)
    assert (verdict["verdict"], verdict["passed"], verdict["total"]) == ("AC", 5, 5), repr(verdict)[:3000]
