"""Run execution: the Celery task's body. Drives the core ``Trainer`` under the run lease and persists
what it reports (metrics, samples, checkpoint rows, the final status).

The run lease: the broker cannot tell a dead worker from a slow one, so it also redelivers the task
of a run that is still training (Redis: once the run outlasts the visibility timeout). At most one
execution trains a run: the one named in ``TrainingRun.lease_owner`` (``host:pid:uuid``, new for
every execution), which proves it is alive by refreshing ``heartbeat_at`` from a background thread
(every ``TRAINING_HEARTBEAT_S``) and with every recorded step. A delivery takes the lease only when the
run is queued, or running with no owner or a heartbeat older than ``TRAINING_LEASE_TIMEOUT_S``;
otherwise it returns without training and says how long until the lease could lapse (the task
re-checks then, so the run is resumed even if its live owner dies later). Every write of an
execution (metrics, samples, checkpoint rows, the final status) happens in a transaction that first
locks the run row and checks the lease, so a superseded owner cannot write after a takeover: it
raises :class:`LeaseLost` at its next write or step and stops without touching the run.

A run whose worker died stays ``running``; the redelivered task executes it again and the core
resumes from the newest checkpoint (``on_resume`` drops the metrics recorded after it, so the
re-run steps replace them: none is lost or duplicated).
"""

from __future__ import annotations

import logging
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from training.config import config_from_dict
from training.models import TERMINAL_STATUSES, RunStatus, TrainingRun
from training.services.lease import (
    LeaseHeartbeat,
    LeaseLost,
    RunLease,
    heartbeat_interval_s,
    lease_activate,
    lease_deactivate,
    lease_owner_id,
    lease_wait_s,
)
from training.services.metrics import metrics_record, metrics_truncate_after, samples_record
from training.services.run_launch import LaunchFailed, processes_for, train_launched
from training.services.runs import (
    _checkpoint_step,
    _export_release,
    _publish_status,
    checkpoints_sync,
    run_output_dir,
)

log = logging.getLogger(__name__)

#: seconds between two database reads of ``cancel_requested`` while training
CANCEL_POLL_S = 1.0


@dataclass(frozen=True)
class AttemptOutcome:
    """What one delivery of ``train_run`` did.

    ``status``: the run's status afterwards. ``trained``: this execution held the lease and ran the
    trainer. ``superseded``: another worker took the lease while it trained (it stopped, wrote nothing
    more). ``lease_wait_s``: set for a duplicate delivery of a run a live owner trains: seconds until
    that owner's lease could lapse (the task re-checks then).
    """

    status: str
    trained: bool = False
    superseded: bool = False
    lease_wait_s: float | None = None


def _begin(run_id: int, owner: str) -> tuple[TrainingRun | None, float | None]:
    """Take the lease and move a queued (or abandoned running) run to running.

    Returns ``(run, None)`` when this execution must train it; ``(None, wait_s)`` for a duplicate
    delivery while a live owner holds the lease (``wait_s``: until it could lapse); ``(None, None)`` for
    a finished run or one cancelled before it started.
    """
    with transaction.atomic():
        run = TrainingRun.objects.select_for_update().get(pk=run_id)
        if run.status in TERMINAL_STATUSES:
            return None, None
        now = timezone.now()
        wait = lease_wait_s(run, now)
        if wait is not None:
            log.info(
                "run %s: duplicate delivery ignored; %s holds the lease (heartbeat %.1f s ago, lapses in %.1f s)",
                run_id, run.lease_owner, (now - run.heartbeat_at).total_seconds() if run.heartbeat_at else 0.0, wait,
            )
            return None, wait
        if run.cancel_requested:
            run.status = RunStatus.CANCELLED
            run.finished_at = now
            run.save(update_fields=["status", "finished_at", "updated_at"])
            _publish_status(run, "cancelled before it started")
            return None, None
        resumed = run.status == RunStatus.RUNNING
        if resumed:
            log.warning("run %s: taking over the lease of %s (heartbeat %s)", run_id, run.lease_owner or "nobody",
                        run.heartbeat_at.isoformat() if run.heartbeat_at else "never")
        lease_activate(run_id, owner)
        run.status = RunStatus.RUNNING
        run.node = socket.gethostname()
        run.lease_owner = owner
        run.heartbeat_at = now
        run.attempts += 1
        run.started_at = run.started_at or now
        run.error = ""
        run.save(update_fields=["status", "node", "lease_owner", "heartbeat_at", "attempts", "started_at", "error",
                                "updated_at"])
        _publish_status(run, f"restarted on {run.node} (attempt {run.attempts})" if resumed else f"running on {run.node}")
        return run, None


def _finish(lease: RunLease, status: str, error: str = "") -> TrainingRun:
    """Record the final status; raises :class:`LeaseLost` if another owner took the run over."""
    with lease.held() as run:
        run.status = status
        run.error = error
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "error", "finished_at", "updated_at"])
        _publish_status(run)
        return run


def _cancel_poller(run_id: int) -> Callable[[], bool]:
    """``should_stop`` for the trainer: reads ``cancel_requested`` at most once per CANCEL_POLL_S."""
    state = {"at": 0.0, "stop": False}

    def should_stop() -> bool:
        now = time.monotonic()
        if not state["stop"] and now - state["at"] >= CANCEL_POLL_S:
            state["at"] = now
            state["stop"] = TrainingRun.objects.filter(pk=run_id, cancel_requested=True).exists()
        return bool(state["stop"])

    return should_stop


def run_execute(*, run_id: int, trainer_factory: Callable[..., Any] | None = None) -> str:
    """Execute a run to its end in this process; returns the run's status afterwards (see
    :func:`run_attempt`, whose ``status`` this is)."""
    return run_attempt(run_id=run_id, trainer_factory=trainer_factory).status


def run_attempt(*, run_id: int, trainer_factory: Callable[..., Any] | None = None) -> AttemptOutcome:
    """One delivery of ``train_run``: take the run's lease and execute the run to its end in this process.

    Without the lease (a live owner trains the run) it returns at once with ``lease_wait_s`` set and
    changes nothing. With it: builds the core ``Trainer`` with sinks that store every step's metrics and
    samples (each its own transaction, published after commit, written only while the lease is held), a
    ``should_stop`` that polls ``cancel_requested`` (and raises :class:`LeaseLost` once a heartbeat saw
    a takeover) and an ``on_resume`` that forgets metrics after the resumed checkpoint; a heartbeat
    thread keeps the lease fresh meanwhile. Exports the run's release first. Checkpoint rows follow the
    checkpoint directories. A training error marks the run ``failed`` with the traceback (it is not
    re-raised: a retry would fail the same way). A superseded execution stops without writing anything
    and without changing the status. ``trainer_factory`` replaces ``training.trainer.Trainer`` (tests).
    """
    owner = lease_owner_id()
    heartbeat: LeaseHeartbeat | None = None
    try:
        run, wait = _begin(run_id, owner)
        if run is None:
            status = TrainingRun.objects.values_list("status", flat=True).get(pk=run_id)
            return AttemptOutcome(status=status, lease_wait_s=wait)
        lease = RunLease(run_id=run_id, owner=owner)
        heartbeat = LeaseHeartbeat(lease, heartbeat_interval_s()).start()
        try:
            return _train(run, lease, trainer_factory)
        except LeaseLost as exc:
            log.warning("run %s: %s; this execution stops and records nothing", run_id, exc)
            status = TrainingRun.objects.values_list("status", flat=True).get(pk=run_id)
            return AttemptOutcome(status=status, trained=True, superseded=True)
    finally:
        if heartbeat is not None:
            heartbeat.stop()
        lease_deactivate(run_id, owner)


def _train(run: TrainingRun, lease: RunLease, trainer_factory: Callable[..., Any] | None) -> AttemptOutcome:
    """The body of :func:`run_attempt` once the lease is held; raises :class:`LeaseLost` when superseded."""
    run_id = run.pk
    may_launch = trainer_factory is None  # tests inject a trainer: always in this process
    if trainer_factory is None:
        from training.trainer import Trainer

        trainer_factory = Trainer
    out = Path(run.output_dir or run_output_dir(run_id))

    def on_metrics(step: int, metrics: dict[str, float]) -> None:
        with lease.held():
            metrics_record(run_id=run_id, step=step, metrics=metrics)
            checkpoints_sync(run_id=run_id, output_dir=out)

    def on_samples(step: int, samples: list[dict[str, Any]]) -> None:
        with lease.held():
            samples_record(run_id=run_id, step=step, samples=samples)

    def on_resume(step: int) -> None:
        with lease.held():
            metrics_truncate_after(run_id=run_id, step=step)

    cancelled = _cancel_poller(run_id)

    def should_stop() -> bool:
        lease.check()
        return cancelled()

    trainer = None
    try:
        config = config_from_dict(run.config)
        if run.release_id is not None:
            _export_release(run.release, Path(config.dataset.release))
        if run.heldout_release_id is not None:
            _export_release(run.heldout_release, Path(config.eval.release))
        # The trainer resumes from the newest checkpoint (or starts over): whatever an earlier attempt
        # recorded after that step is about to be recomputed, so drop it now. on_resume repeats this
        # with the step read from the checkpoint itself.
        from training.checkpoint import latest_checkpoint

        ckpt = latest_checkpoint(out) if config.resume else None
        resume_step = _checkpoint_step(ckpt) if ckpt is not None else 0
        on_resume(resume_step)
        nproc = processes_for(config) if may_launch else 1
        if nproc > 1:  # several GPUs: torchrun in a subprocess, CUDA never touched here (run_launch)
            launched = train_launched(
                config,
                out,
                nproc,
                after_step=resume_step,
                on_metrics=on_metrics,
                on_samples=on_samples,
                on_poll=lambda: _sync_checkpoints(lease, run_id, out),
                should_stop=should_stop,
            )
            if launched.error:
                raise LaunchFailed(launched.error)
            return _end(lease, run_id, out, stopped=launched.stopped)
        trainer = trainer_factory(
            config,
            on_metrics=on_metrics,
            on_samples=on_samples,
            should_stop=should_stop,
            on_resume=on_resume,
        )
        result = trainer.train()
    except LeaseLost:
        raise
    except Exception as exc:  # noqa: BLE001 - any training failure ends the run as failed, with the reason
        log.exception("training run %s failed", run_id)
        detail = (str(exc) if isinstance(exc, LaunchFailed) else "".join(traceback.format_exception(exc)))[-20_000:]
        with lease.held():
            checkpoints_sync(run_id=run_id, output_dir=out)
        return AttemptOutcome(status=_finish(lease, str(RunStatus.FAILED), detail).status, trained=True)
    finally:
        close = getattr(trainer, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # noqa: BLE001 - cleanup must not mask the outcome
                log.exception("closing the trainer of run %s failed", run_id)
    return _end(lease, run_id, out, stopped=bool(getattr(result, "stopped", False)))


def _sync_checkpoints(lease: RunLease, run_id: int, out: Path) -> None:
    with lease.held():
        checkpoints_sync(run_id=run_id, output_dir=out)


def _end(lease: RunLease, run_id: int, out: Path, *, stopped: bool) -> AttemptOutcome:
    """A run that trained to its end (or honoured a cancel): checkpoint rows, then the final status."""
    _sync_checkpoints(lease, run_id, out)
    status = str(RunStatus.CANCELLED) if stopped else str(RunStatus.SUCCEEDED)
    return AttemptOutcome(status=_finish(lease, status).status, trained=True)
