"""Multi-GPU runs from the Celery ``gpu`` task: the trainer runs under torchrun in a subprocess.

A Celery worker is a forked process; initializing CUDA (let alone NCCL process groups) inside it is
unsafe. When the node has more than one GPU for a run (``processes_for``), ``train_launched`` starts
``python -m torch.distributed.run --standalone --nproc_per_node N -m training.grpo --config ...`` as a
subprocess and supervises it from the worker without touching CUDA:

- rank 0 writes ``metrics.jsonl`` / ``samples.jsonl`` as usual; every poll (``POLL_S``) records the
  new steps in the database (under the run lease), and a step's samples once the step is complete;
- checkpoints (sharded, ``training.checkpoint``) are synced to Checkpoint rows as they appear;
- cancel (or a lost lease) sends SIGTERM: torchrun forwards it to the ranks, which checkpoint the
  current step together and exit; a launcher that does not exit within ``STOP_GRACE_S`` is killed
  with its whole process tree (the ranks run in sessions of their own);
- whatever happens to the subprocess, the run ends in a terminal state with a reason: its exit status
  and the tail of its log (``torchrun.log`` in the run's directory) when it failed.

GPUs are counted without CUDA: ``CUDA_VISIBLE_DEVICES`` when set, else ``nvidia-smi -L``;
``settings.TRAINING_PROCESSES_PER_RUN`` (0 = all of them) caps the count.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings

from training.config import GRPOConfig
from training.distributed import kill_tree

log = logging.getLogger(__name__)

#: seconds between two looks at the subprocess and its logs
POLL_S = 1.0
#: seconds the ranks get to checkpoint and exit after SIGTERM before they are killed
STOP_GRACE_S = 300.0
LOG_NAME = "torchrun.log"
OUT_NAME = "torchrun.out"
CONFIG_NAME = "launch.yaml"


def node_gpu_count() -> int:
    """GPUs this node offers, without initializing CUDA in this (forked) process."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def processes_for(config: GRPOConfig, gpus: int | None = None) -> int:
    """How many processes train ``config`` on this node: 1 on CPU or with at most one GPU; otherwise
    the most GPUs (up to ``TRAINING_PROCESSES_PER_RUN``, 0 = all) that split every minibatch evenly."""
    if config.device == "cpu":
        return 1
    available = node_gpu_count() if gpus is None else gpus
    cap = int(getattr(settings, "TRAINING_PROCESSES_PER_RUN", 0) or 0)
    if cap > 0:
        available = min(available, cap)
    for n in range(available, 1, -1):
        if config.prompts_per_step % (config.updates_per_rollout * n) == 0:
            return n
    return 1


def launch_command(config_path: Path, nproc: int) -> list[str]:
    return [
        sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
        "-m", "training.grpo", "--config", str(config_path), "--quiet",
    ]  # fmt: skip


@dataclass
class JsonlTail:
    """New complete lines of a JSONL file the trainer appends to (and may rewrite on resume)."""

    path: Path
    offset: int = 0
    inode: int = -1
    partial: str = field(default="")

    def read_new(self) -> list[dict[str, Any]]:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return []
        if st.st_ino != self.inode or st.st_size < self.offset:  # replaced (resume truncation)
            self.inode, self.offset, self.partial = st.st_ino, 0, ""
        with self.path.open("rb") as fh:
            fh.seek(self.offset)
            data = fh.read()
        self.offset += len(data)
        text = self.partial + data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        self.partial = lines.pop()  # an unfinished last line waits for the next read
        out = []
        for line in lines:
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out


class LaunchFailed(RuntimeError):
    """The torchrun subprocess failed; the message is the reason (exit status and log tail)."""


@dataclass(frozen=True)
class LaunchOutcome:
    """How the subprocess ended: ``stopped`` (cancel honoured) or ``error`` (failed, with the reason)."""

    stopped: bool
    error: str = ""


class Recorder:
    """Moves what rank 0 logged into the database: metrics of each new step, then its samples."""

    def __init__(
        self,
        out: Path,
        after_step: int,
        on_metrics: Callable[[int, dict[str, float]], None],
        on_samples: Callable[[int, list[dict[str, Any]]], None],
    ) -> None:
        self.metrics = JsonlTail(out / "metrics.jsonl")
        self.samples = JsonlTail(out / "samples.jsonl")
        self.last_step = after_step
        self.on_metrics, self.on_samples = on_metrics, on_samples
        self.pending: dict[int, list[dict[str, Any]]] = {}

    def poll(self, final: bool = False) -> None:
        for record in self.metrics.read_new():
            step = int(record.get("step", 0))
            if step > self.last_step:
                metrics = {
                    k: float(v) for k, v in record.items() if k != "step" and isinstance(v, int | float)
                }
                self.on_metrics(step, metrics)
                self.last_step = step
        for row in self.samples.read_new():
            step = int(row.get("step", 0))
            self.pending.setdefault(step, []).append(row)
        for step in sorted(self.pending):
            # a step's rows are complete once a later step's metrics exist (or the trainer exited)
            if step < self.last_step or (final and step <= self.last_step):
                self.on_samples(step, self.pending.pop(step))
            elif step > self.last_step:
                break


def _log_tail(path: Path, limit: int = 20_000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", errors="replace")


def train_launched(
    config: GRPOConfig,
    out: Path,
    nproc: int,
    *,
    after_step: int,
    on_metrics: Callable[[int, dict[str, float]], None],
    on_samples: Callable[[int, list[dict[str, Any]]], None],
    on_poll: Callable[[], None],
    should_stop: Callable[[], bool],
) -> LaunchOutcome:
    """Run ``config`` under torchrun with ``nproc`` processes and supervise it to its end.

    ``on_poll`` runs every poll (checkpoint rows); ``should_stop`` may raise (a lost lease): the
    subprocess tree is then killed and the exception propagates."""
    out.mkdir(parents=True, exist_ok=True)
    config_path = out / CONFIG_NAME
    config_path.write_text(config.to_yaml(), encoding="utf-8")
    log_path = out / LOG_NAME
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    env.pop("CUDA_LAUNCH_BLOCKING", None)
    recorder = Recorder(out, after_step, on_metrics, on_samples)
    out_path = out / OUT_NAME
    with log_path.open("ab") as log_fh, out_path.open("wb") as out_fh:
        proc = subprocess.Popen(launch_command(config_path, nproc), stdout=out_fh, stderr=log_fh, env=env)
    log.info("run in %s: torchrun with %d processes (pid %d)", out, nproc, proc.pid)
    stop_sent_at: float | None = None
    try:
        while proc.poll() is None:
            time.sleep(POLL_S)
            recorder.poll()
            on_poll()
            if stop_sent_at is None and should_stop():
                log.info("run in %s: stop requested, SIGTERM to torchrun", out)
                proc.send_signal(signal.SIGTERM)
                stop_sent_at = time.monotonic()
            elif stop_sent_at is not None and time.monotonic() - stop_sent_at > STOP_GRACE_S:
                kill_tree(proc.pid, signal.SIGKILL)
    except BaseException:
        kill_tree(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    stdout = out_path.read_text(encoding="utf-8", errors="replace")
    kill_tree(proc.pid, signal.SIGKILL)  # ranks left behind by a launcher that died
    recorder.poll(final=True)
    on_poll()
    result: dict[str, Any] = {}
    for line in reversed(stdout.strip().splitlines()):
        try:
            result = dict(json.loads(line))
            break
        except (json.JSONDecodeError, TypeError, ValueError):
            continue
    if proc.returncode == 0 and "last_step" in result:
        return LaunchOutcome(stopped=bool(result.get("stopped")))
    reason = f"torchrun ({nproc} processes) exited with status {proc.returncode}"
    if proc.returncode is not None and proc.returncode < 0:
        reason += f" (killed by signal {-proc.returncode})"
    return LaunchOutcome(stopped=False, error=f"{reason}\n{_log_tail(log_path)}")


__all__ = [
    "JsonlTail",
    "LaunchFailed",
    "LaunchOutcome",
    "Recorder",
    "launch_command",
    "node_gpu_count",
    "processes_for",
    "train_launched",
]
