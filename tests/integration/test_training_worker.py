"""End to end: a training run whose worker is SIGKILLed mid-run is redelivered by real Redis to a fresh
worker, which takes over the run's lease and resumes from the newest checkpoint: the run succeeds with
every metric step stored exactly once.

The workers get ``CELERY_VISIBILITY_TIMEOUT=3`` (Redis redelivers the unacknowledged message 3 s after
it was taken) and ``TRAINING_LEASE_TIMEOUT_S=3`` (the dead owner's lease lapses 3 s after its last
heartbeat), so the whole kill-and-resume takes seconds instead of the production hour.

Run: ``REDIS_URL=redis://127.0.0.1:6379/7 DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
TEST_DATABASE_NAME=test_lease .venv/bin/pytest tests/integration/test_training_worker.py``.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from tests.training.test_django_real_run import tiny_model  # noqa: F401 - the module-scoped model fixture
from training import selectors, services
from training.models import Checkpoint, RunSample, RunStatus, TrainingRun

from .conftest import Service, WorkerFactory, wait_until_redeliverable

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

STEPS = 10
KILL_AT_STEP = 3
#: what a worker reads on top of the services' environment: redelivery and takeover within seconds
LEASE_ENV = {"CELERY_VISIBILITY_TIMEOUT": "3", "TRAINING_LEASE_TIMEOUT_S": "3", "OMP_NUM_THREADS": "1"}
#: metrics the trainer reports at every step
EVERY_STEP = ("reward", "loss", "temperature", "completions/mean_length", "timing/step_s", "num_tokens")


def _wait_for(run_id: int, done: Any, what: str, worker: Service, timeout_s: float = 60.0) -> TrainingRun:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run = TrainingRun.objects.get(pk=run_id)
        if done(run):
            return run
        if run.status in {RunStatus.FAILED, RunStatus.CANCELLED}:
            pytest.fail(f"run {run_id} ended {run.status} while waiting for {what}: {run.error}")
        if worker.process.poll() is not None:
            pytest.fail(f"{worker.name} exited with {worker.process.returncode} while waiting for {what}")
        time.sleep(0.05)
    pytest.fail(f"no {what} within {timeout_s:g} s: run {run_id} is {TrainingRun.objects.get(pk=run_id).status}")


def _kill_after_step(run_id: int, step: int, worker: Service, timeout_s: float = 60.0) -> TrainingRun:
    """Wait until the run recorded ``step``, then SIGKILL ``worker`` while this test holds the run row's
    lock. Every write of the worker locks that row first, so nothing is recorded between the read and
    the kill: the returned run is exactly what the dead worker left behind (its steps are far too quick
    for a plain poll-then-kill to land before the run ends)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with transaction.atomic():
            run = TrainingRun.objects.select_for_update().get(pk=run_id)
            if (run.last_step or 0) >= step:
                worker.kill()  # the worker and its pool child, without any chance to clean up
                return run
        if run.status != RunStatus.RUNNING and run.status != RunStatus.QUEUED:
            pytest.fail(f"run {run_id} ended {run.status} before step {step}: {run.error}")
        if worker.process.poll() is not None:
            pytest.fail(f"{worker.name} exited with {worker.process.returncode} before step {step}")
        time.sleep(0.01)
    run = TrainingRun.objects.get(pk=run_id)
    delivered = "train_run" in worker.log() and "received" in worker.log()
    pytest.fail(f"run {run_id} did not reach step {step} within {timeout_s:g} s: it is {run.status} at step "
                f"{run.last_step}; {worker.name} {'received' if delivered else 'never received'} the task")


def test_a_run_whose_worker_is_killed_resumes_on_a_fresh_worker_with_every_step_once(
    start_worker: WorkerFactory, tiny_model: Path, tmp_path: Path, settings: Any  # noqa: F811
) -> None:
    from training.tiny import toy_problems, write_release

    settings.RUNS_DIR = tmp_path / "runs"
    release = write_release(toy_problems(), tmp_path / "toy.jsonl")
    config = {
        "model": str(tiny_model), "dataset": {"release": str(release)}, "device": "cpu", "cpu_threads": 1,
        "max_steps": STEPS, "checkpoint_interval": 2, "group_size": 2, "prompts_per_step": 2,
        "minibatch_prompts": 2, "max_response_length": 8, "max_prompt_length": 512, "samples_per_step": -1,
        "reward": {"workers": 1},
    }
    first = start_worker("training-1", queues=["gpu"], env=LEASE_ENV)
    sent_at = time.monotonic()
    run = services.run_create(name="killed", config_dict=config)
    services.run_start(run_id=run.pk)  # committed: the task is on the gpu queue now

    killed_at = _kill_after_step(run.pk, KILL_AT_STEP, first)
    assert first.group_alive() == []
    assert killed_at.status == RunStatus.RUNNING and killed_at.attempts == 1
    assert killed_at.last_step is not None and KILL_AT_STEP <= killed_at.last_step < STEPS

    wait_until_redeliverable(sent_at)
    second = start_worker("training-2", queues=["gpu"], env=LEASE_ENV)
    run = _wait_for(run.pk, lambda r: r.status == RunStatus.SUCCEEDED, "success", second)

    assert (run.error, run.attempts, run.last_step) == ("", 2, STEPS)
    assert run.lease_owner and run.lease_owner != killed_at.lease_owner
    for name in EVERY_STEP:
        steps, _ = selectors.run_metric_arrays(run_id=run.pk, name=name)
        assert steps.tolist() == list(range(1, STEPS + 1)), name
    assert Counter(RunSample.objects.filter(run=run).values_list("step", flat=True)) == {
        step: 4 for step in range(1, STEPS + 1)
    }
    checkpoints = list(Checkpoint.objects.filter(run=run).values_list("step", "path"))
    assert checkpoints and checkpoints[-1][0] == STEPS
    assert all(Path(path).is_dir() for _, path in checkpoints)
    # the fresh worker resumed from a checkpoint the killed one wrote, not from scratch
    resumed = [int(s) for s in re.findall(r"resumed from \S+ at step (\d+)", second.log(tail=200_000))]
    assert len(resumed) == 1 and 2 <= resumed[0] <= killed_at.last_step and resumed[0] % 2 == 0
