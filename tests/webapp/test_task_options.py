"""Every job kind survives its worker: each project task acknowledges late, is redelivered when its
worker dies (``reject_on_worker_lost``) and has a hard time limit. Kill-a-real-worker proofs live in
``tests/integration/``."""

from __future__ import annotations

from typing import Any

import pytest


def _project_tasks() -> dict[str, Any]:
    from webapp.celery import app

    app.loader.import_default_modules()  # the apps' tasks modules, as a worker loads them
    return {name: task for name, task in app.tasks.items() if not name.startswith("celery.")}


def test_it_finds_the_project_tasks() -> None:
    assert {"curation.tasks.import_file", "evaluator.tasks.run_evaluation", "training.tasks.train_run"} <= set(
        _project_tasks()
    )


@pytest.mark.parametrize("name", sorted(_project_tasks()))
def test_it_redelivers_the_task_when_its_worker_dies(name: str) -> None:
    task = _project_tasks()[name]
    assert (task.acks_late, task.reject_on_worker_lost) == (True, True)
    assert task.time_limit, f"{name} needs a hard time limit (a setting)"
