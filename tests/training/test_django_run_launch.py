"""The Celery ``gpu`` task on a multi-GPU node: the run trains under torchrun in a subprocess that the
worker supervises (metrics and samples recorded as rank 0 logs them, checkpoints synced, cancel by
SIGTERM, a terminal state with the reason whatever the subprocess does). A fake launcher script
stands in for torchrun (no GPU here); the real two-process run is tests/training/test_distributed.py."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from training import selectors, services
from training.config import load_config
from training.models import Checkpoint, RunSample, RunStatus, TrainingRun
from training.services import run_launch

FAKE_LAUNCHER = textwrap.dedent(
    """
    import json, os, signal, sys, time
    import yaml
    cfg = yaml.safe_load(open(sys.argv[1]))
    out = cfg["output_dir"]
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *a: stop.update(now=True))
    mode = os.environ.get("FAKE_MODE", "ok")

    def checkpoint(step):
        path = os.path.join(out, "checkpoints", "checkpoint-%08d" % step)
        os.makedirs(path, exist_ok=True)
        open(os.path.join(path, "COMPLETE"), "w").write(json.dumps({"step": step}))
        open(os.path.join(out, "checkpoints", "latest"), "w").write(os.path.basename(path))

    print("# resolved config")
    for step in range(1, cfg["max_steps"] + 1):
        if stop["now"]:
            checkpoint(step - 1)
            print(json.dumps({"last_step": step - 1, "stopped": True}))
            sys.exit(0)
        if mode == "fail" and step == 2:
            print("RuntimeError: NCCL error on rank 1", file=sys.stderr)
            sys.exit(3)
        with open(os.path.join(out, "metrics.jsonl"), "a") as fh:
            fh.write(json.dumps({"step": step, "reward": step / 10, "loss": 1.0}) + "\\n")
        with open(os.path.join(out, "samples.jsonl"), "a") as fh:
            for i in range(2):
                fh.write(json.dumps({"step": step, "index": i, "prompt": "p", "completion": "c%d" % step}) + "\\n")
        checkpoint(step)
        time.sleep(float(os.environ.get("FAKE_STEP_S", "0.05")))
    print(json.dumps({"last_step": cfg["max_steps"], "stopped": False}))
    """
)


@pytest.fixture
def launcher(settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    script = tmp_path / "fake_torchrun.py"
    script.write_text(FAKE_LAUNCHER)
    monkeypatch.setattr(run_launch, "POLL_S", 0.02)
    monkeypatch.setattr("training.services.run_execution.CANCEL_POLL_S", 0.0)
    monkeypatch.setattr("training.services.run_execution.processes_for", lambda config: 2)
    monkeypatch.setattr(
        run_launch, "launch_command", lambda path, n: [sys.executable, str(script), str(path)]
    )
    return script


def _run(dataset: str, **overrides: Any) -> TrainingRun:
    config = {"model": "tiny", "dataset": {"release": dataset}, "max_steps": 4, "checkpoint_interval": 1,
              "group_size": 2, "prompts_per_step": 2, "minibatch_prompts": 2, **overrides}  # fmt: skip
    return services.run_create(name="run", config_dict=config)


def test_a_launched_run_records_every_step_its_samples_and_checkpoints(
    db: object, dataset: str, launcher: Path
) -> None:
    run = _run(dataset)
    assert services.run_execute(run_id=run.pk) == RunStatus.SUCCEEDED
    assert selectors.run_metric_arrays(run_id=run.pk, name="reward")[0].tolist() == [1, 2, 3, 4]
    assert RunSample.objects.filter(run=run).count() == 8  # two rows for each of the 4 steps
    assert sorted(Checkpoint.objects.filter(run=run).values_list("step", flat=True))[-1] == 4
    out = Path(TrainingRun.objects.get(pk=run.pk).output_dir)
    assert (out / run_launch.CONFIG_NAME).is_file()


def test_a_failed_subprocess_fails_the_run_with_its_exit_status_and_log(
    db: object, dataset: str, launcher: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_MODE", "fail")
    run = _run(dataset)
    assert services.run_execute(run_id=run.pk) == RunStatus.FAILED
    run.refresh_from_db()
    assert "exited with status 3" in run.error and "NCCL error on rank 1" in run.error
    assert selectors.run_metric_arrays(run_id=run.pk, name="reward")[0].tolist() == [1]


def test_cancel_sends_sigterm_and_the_run_ends_cancelled(
    db: object, dataset: str, launcher: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_STEP_S", "0.3")
    run = _run(dataset, max_steps=50)
    recorded = run_launch.Recorder.poll

    def poll(self: run_launch.Recorder, final: bool = False) -> None:
        recorded(self, final)
        if self.last_step >= 2:
            TrainingRun.objects.filter(pk=run.pk).update(cancel_requested=True)

    monkeypatch.setattr(run_launch.Recorder, "poll", poll)
    assert services.run_execute(run_id=run.pk) == RunStatus.CANCELLED
    steps = selectors.run_metric_arrays(run_id=run.pk, name="reward")[0].tolist()
    assert 2 <= len(steps) < 50


def test_it_counts_processes_from_the_gpus_without_cuda(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.TRAINING_PROCESSES_PER_RUN = 0
    config = load_config(
        None, {"model": "m", "device": "cuda", "prompts_per_step": 8, "minibatch_prompts": 4}
    )
    assert run_launch.processes_for(config, gpus=4) == 4  # 2 updates of 4 prompts: one per process each
    assert run_launch.processes_for(config, gpus=3) == 2  # 3 would not split a minibatch of 4 evenly
    assert run_launch.processes_for(config, gpus=1) == 1
    assert run_launch.processes_for(load_config(None, {"model": "m", "device": "cpu"}), gpus=8) == 1
    settings.TRAINING_PROCESSES_PER_RUN = 2
    assert run_launch.processes_for(config, gpus=4) == 2
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,3")
    assert run_launch.node_gpu_count() == 3
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert run_launch.node_gpu_count() == 0
