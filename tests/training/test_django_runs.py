"""Run lifecycle services: create, start, cancel, execute (with a scripted trainer), resume."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ValidationError

from training import selectors, services
from training.checkpoint import MARKER, checkpoint_name, latest_checkpoint
from training.config import GRPOConfig
from training.models import Checkpoint, RunSample, RunStatus, TrainingRun
from training.trainer import TrainResult


class WorkerKilled(BaseException):
    """Stands in for SIGKILL: not an Exception, so nothing in the service can catch and record it."""


class ScriptedTrainer:
    """Mimics ``training.trainer.Trainer``'s contract without a model: resumes from the newest
    checkpoint directory (real layout), emits ``reward = step / 10`` per step, checkpoints every
    ``checkpoint_interval`` steps and can die before a given step."""

    die_before: int | None = None
    seen_configs: list[GRPOConfig] = []

    def __init__(
        self,
        config: GRPOConfig,
        *,
        on_metrics: Callable[[int, dict[str, float]], None],
        on_samples: Callable[[int, list[dict[str, Any]]], None],
        should_stop: Callable[[], bool],
        on_resume: Callable[[int], None],
    ) -> None:
        self.config, self.on_metrics, self.on_samples = config, on_metrics, on_samples
        self.should_stop, self.on_resume = should_stop, on_resume
        ScriptedTrainer.seen_configs.append(config)

    def _checkpoint(self, step: int) -> None:
        root = Path(self.config.output_dir) / "checkpoints"
        path = root / checkpoint_name(step)
        path.mkdir(parents=True, exist_ok=True)
        (path / MARKER).write_text(json.dumps({"step": step}))
        (root / "latest").write_text(path.name)

    def train(self) -> TrainResult:
        ckpt = latest_checkpoint(self.config.output_dir)
        step = int(ckpt.name.split("-")[-1]) if ckpt else 0
        resumed = step if ckpt else None
        if ckpt:
            self.on_resume(step)
        while step < self.config.max_steps:
            if self.should_stop():
                self._checkpoint(step)
                return TrainResult(last_step=step, stopped=True, resumed_from=resumed, output_dir="")
            step += 1
            if self.die_before == step:
                raise WorkerKilled
            self.on_metrics(step, {"reward": step / 10, "loss": 1.0})
            self.on_samples(step, [{"step": step, "index": 0, "prompt": "p", "completion": f"c{step}"}])
            if step % self.config.checkpoint_interval == 0 or step == self.config.max_steps:
                self._checkpoint(step)
        return TrainResult(last_step=step, stopped=False, resumed_from=resumed, output_dir="")


@pytest.fixture(autouse=True)
def runs_dir(settings: Any, tmp_path: Path) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    ScriptedTrainer.die_before = None
    ScriptedTrainer.seen_configs = []
    return settings.RUNS_DIR



def _config(dataset: str, **overrides: Any) -> dict[str, Any]:
    return {"model": "tiny", "dataset": {"release": dataset}, "max_steps": 5, "checkpoint_interval": 2,
            "group_size": 2, "prompts_per_step": 2, "minibatch_prompts": 2, **overrides}


def _create(dataset: str, user: Any = None, **overrides: Any) -> TrainingRun:
    return services.run_create(name="run", config_dict=_config(dataset, **overrides), user=user)


# --- create ----------------------------------------------------------------------------------------


def test_it_stores_the_full_resolved_config(db: object, dataset: str, runs_dir: Path) -> None:
    run = _create(dataset)
    assert run.status == RunStatus.QUEUED
    assert run.config["mask"] == {"policy": "conditional", "probability": 0.1, "repeat_window": 128,
                                  "ngram_loop_test": False, "ngram_size": 4, "ngram_repeat_threshold": 0.5}
    assert run.config["output_dir"] == str(runs_dir / f"run-{run.pk}") == run.output_dir


def test_it_stores_the_insight_warnings_of_the_config(db: object, dataset: str) -> None:
    run = _create(dataset, kl_coef=0.05)
    kl = [w for w in run.warnings if w["field"] == "kl_coef"]
    assert kl and "KL-1" in kl[0]["insight_ids"]


def test_it_rejects_an_invalid_config_with_the_cores_message(db: object, dataset: str) -> None:
    with pytest.raises(ValidationError) as err:
        _create(dataset, mask={"probability": 2})
    assert "mask.probability" in str(err.value)
    assert not TrainingRun.objects.exists()


def test_it_rejects_a_run_without_any_dataset(db: object) -> None:
    with pytest.raises(ValidationError):
        services.run_create(name="run", config_dict={"model": "tiny"})


def test_it_points_the_dataset_at_the_export_of_a_chosen_release(db: object, runs_dir: Path) -> None:
    from curation.models import DatasetRelease

    release = DatasetRelease.objects.create(name="hard", version=1, content_hash="h")
    run = services.run_create(name="run", config_dict={"model": "tiny"}, release_id=release.pk)
    assert run.release == release
    assert run.config["dataset"]["release"] == str(runs_dir / f"run-{run.pk}" / "dataset.jsonl")


# --- start / cancel --------------------------------------------------------------------------------


def test_it_enqueues_the_training_task_on_the_gpu_queue_after_commit(
    db: object, dataset: str, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    from training import tasks

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.train_run, "apply_async", lambda **kw: sent.append(kw))
    run = _create(dataset)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        services.run_start(run_id=run.pk)
    assert sent == []  # nothing before commit
    for cb in callbacks:
        cb()
    run.refresh_from_db()
    assert [s for s in sent if s["queue"] == "gpu" and s["args"] == [run.pk]]
    assert sent[0]["task_id"] == run.celery_task_id


def test_it_routes_training_tasks_to_the_gpu_queue(settings: Any) -> None:
    from celery import current_app

    route = current_app.amqp.router.route({}, "training.tasks.train_run")
    assert route["queue"].name == "gpu"


def test_it_configures_the_task_to_survive_a_dead_worker() -> None:
    from django.conf import settings

    from training.tasks import train_run

    assert train_run.acks_late and train_run.reject_on_worker_lost
    assert train_run.time_limit == settings.TRAINING_TASK_TIME_LIMIT


def test_it_cancels_a_queued_run_at_once(db: object, dataset: str) -> None:
    run = services.run_cancel(run_id=_create(dataset).pk)
    assert run.status == RunStatus.CANCELLED and run.cancel_requested


def test_it_never_executes_a_run_cancelled_while_queued(db: object, dataset: str) -> None:
    run = _create(dataset)
    services.run_cancel(run_id=run.pk)
    assert services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer) == RunStatus.CANCELLED
    assert ScriptedTrainer.seen_configs == []


def test_it_leaves_a_finished_run_alone_when_cancelled(db: object, dataset: str) -> None:
    run = _create(dataset)
    services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer)
    assert services.run_cancel(run_id=run.pk).status == RunStatus.SUCCEEDED
    run.refresh_from_db()
    assert not run.cancel_requested


# --- execute ---------------------------------------------------------------------------------------


def test_it_executes_a_run_and_persists_every_step(db: object, dataset: str) -> None:
    run = _create(dataset)
    assert services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    steps, values = selectors.run_metric_arrays(run_id=run.pk, name="reward")
    assert steps.tolist() == [1, 2, 3, 4, 5]
    assert run.last_step == 5 and run.finished_at is not None and run.node and run.attempts == 1
    assert RunSample.objects.filter(run=run).count() == 5


def test_it_records_the_checkpoints_the_trainer_wrote(db: object, dataset: str) -> None:
    run = _create(dataset)
    services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer)
    assert list(Checkpoint.objects.filter(run=run).values_list("step", flat=True)) == [2, 4, 5]


def test_it_marks_a_run_whose_trainer_raises_as_failed_with_the_reason(db: object, dataset: str) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("CUDA out of memory")

    run = _create(dataset)
    assert services.run_execute(run_id=run.pk, trainer_factory=broken) == RunStatus.FAILED
    run.refresh_from_db()
    assert "CUDA out of memory" in run.error


def test_it_stops_a_running_run_when_cancel_is_requested(
    db: object, dataset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("training.services.run_execution.CANCEL_POLL_S", 0.0)
    run = _create(dataset)

    class CancelAfterTwo(ScriptedTrainer):
        def train(self) -> TrainResult:
            inner = self.on_metrics

            def on_metrics(step: int, metrics: dict[str, float]) -> None:
                inner(step, metrics)
                if step == 2:
                    services.run_cancel(run_id=run.pk)

            self.on_metrics = on_metrics
            return super().train()

    assert services.run_execute(run_id=run.pk, trainer_factory=CancelAfterTwo) == RunStatus.CANCELLED
    assert selectors.run_metric_arrays(run_id=run.pk, name="reward")[0].tolist() == [1, 2]


def test_it_resumes_a_redelivered_run_without_duplicating_or_losing_steps(db: object, dataset: str) -> None:
    run = _create(dataset)
    ScriptedTrainer.die_before = 4  # steps 1-3 recorded, checkpoint at 2, then the worker dies
    with pytest.raises(WorkerKilled):
        services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING and run.last_step == 3

    ScriptedTrainer.die_before = None  # the broker redelivers the task
    assert services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer) == RunStatus.SUCCEEDED
    run.refresh_from_db()
    steps, values = selectors.run_metric_arrays(run_id=run.pk, name="reward")
    assert steps.tolist() == [1, 2, 3, 4, 5]
    assert values.tolist() == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert list(RunSample.objects.filter(run=run).values_list("step", flat=True)) == [1, 2, 3, 4, 5]
    assert run.attempts == 2


def test_it_drops_steps_a_dead_attempt_recorded_after_its_last_checkpoint(db: object, dataset: str) -> None:
    run = _create(dataset)
    ScriptedTrainer.die_before = 4
    with pytest.raises(WorkerKilled):
        services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer)
    ScriptedTrainer.die_before = 3  # the second attempt dies too, right after resuming at step 2
    with pytest.raises(WorkerKilled):
        services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer)
    # step 3 of the first attempt must not survive: the second attempt never reached it
    assert selectors.run_metric_arrays(run_id=run.pk, name="reward")[0].tolist() == [1, 2]


def test_it_exports_the_release_before_training(
    db: object, runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curation import export
    from curation.models import DatasetRelease

    monkeypatch.setattr(export, "iter_jsonl", lambda release: iter([b'{"a": 1}\n', b'{"b": 2}\n']))
    release = DatasetRelease.objects.create(name="hard", version=1, content_hash="h")
    run = services.run_create(name="run", config_dict=_config(""), release_id=release.pk)
    services.run_execute(run_id=run.pk, trainer_factory=ScriptedTrainer)
    exported = Path(ScriptedTrainer.seen_configs[0].dataset.release)
    assert exported.read_text() == '{"a": 1}\n{"b": 2}\n'
