"""The Celery task that runs uploaded imports (eager in zero-config)."""

from __future__ import annotations

from typing import Any

import pytest

from curation.models import ImportBatch, ImportStatus, Problem
from curation.tasks import import_file

from .conftest import make_record

pytestmark = pytest.mark.django_db


def test_it_runs_a_pending_batch_and_its_pipeline(jsonl_file: Any) -> None:
    path = jsonl_file([make_record("p1")])
    batch = ImportBatch.objects.create(format="microcoder", filename=path.name, path=str(path), run_pipeline=True)
    result = import_file.delay(batch.pk).get()
    assert result["status"] == ImportStatus.SUCCEEDED
    assert Problem.objects.get().stage == "constraints_pending"


def test_it_does_not_run_a_finished_batch_twice(jsonl_file: Any) -> None:
    path = jsonl_file([make_record("p1")])
    batch = ImportBatch.objects.create(format="microcoder", filename=path.name, path=str(path))
    import_file(batch.pk)
    import_file(batch.pk)
    assert (ImportBatch.objects.get().imported_count, Problem.objects.count()) == (1, 1)


def test_a_redelivered_task_leaves_a_batch_that_a_live_worker_runs_alone_and_looks_again_later(
    jsonl_file: Any, settings: Any
) -> None:
    from celery.exceptions import Retry
    from django.utils import timezone

    settings.IMPORT_LEASE_TIMEOUT_S = 60
    path = jsonl_file([make_record("p1")])
    batch = ImportBatch.objects.create(format="microcoder", filename=path.name, path=str(path),
                                       status=ImportStatus.RUNNING, started_at=timezone.now(),
                                       heartbeat_at=timezone.now())
    with pytest.raises(Retry):
        import_file(batch.pk)
    assert Problem.objects.count() == 0 and ImportBatch.objects.get().status == ImportStatus.RUNNING


def test_a_redelivered_task_finishes_a_batch_whose_worker_died(jsonl_file: Any, settings: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    settings.IMPORT_LEASE_TIMEOUT_S = 60
    path = jsonl_file([make_record("p1")])
    long_ago = timezone.now() - timedelta(minutes=5)
    batch = ImportBatch.objects.create(format="microcoder", filename=path.name, path=str(path),
                                       status=ImportStatus.RUNNING, started_at=long_ago, heartbeat_at=long_ago)
    assert import_file(batch.pk)["status"] == ImportStatus.SUCCEEDED
    assert Problem.objects.count() == 1
