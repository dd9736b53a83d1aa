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
