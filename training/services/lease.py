"""The run lease: at most one live execution trains a run (see ``training.services.run_execution``).

An execution owns a run while ``TrainingRun.lease_owner`` names it (``host:pid:uuid``, new for every
execution) and ``heartbeat_at`` is younger than ``settings.TRAINING_LEASE_TIMEOUT_S``. The owner keeps
the heartbeat fresh with :class:`LeaseHeartbeat` (a background thread, every
``settings.TRAINING_HEARTBEAT_S``) and with every write it makes inside :meth:`RunLease.held`, which locks
the run row and checks ownership first: a takeover (which locks the same row) and a write of the old
owner can never interleave.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from training.models import RunStatus, TrainingRun

log = logging.getLogger(__name__)


class LeaseLost(Exception):
    """This execution no longer holds its run's lease: another worker took the run over.

    Raised from the trainer's callbacks; ``run_attempt`` catches it and ends the execution without
    recording anything (the new owner's status, metrics and checkpoints stand)."""


#: runs this process is executing right now -> the lease owner of that execution. A lease held by an
#: earlier execution *of this process* that is not listed here belongs to an attempt that is gone
#: (its task was interrupted), so it is stale whatever its heartbeat says.
_ACTIVE: dict[int, str] = {}
_ACTIVE_LOCK = threading.Lock()


def lease_activate(run_id: int, owner: str) -> None:
    """Mark ``owner`` as this process's live execution of ``run_id``; call it while the run row is
    locked, before the new lease commits, so another thread of this process that waits for the row
    lock sees the execution as active once it can read the new owner."""
    with _ACTIVE_LOCK:
        _ACTIVE[run_id] = owner


def lease_deactivate(run_id: int, owner: str) -> None:
    """Forget ``owner``'s execution of ``run_id`` in this process (no-op if another one replaced it)."""
    with _ACTIVE_LOCK:
        if _ACTIVE.get(run_id) == owner:
            del _ACTIVE[run_id]


def _process_id() -> str:
    """``host:pid`` of this process (computed per call: prefork children get their own pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def lease_owner_id() -> str:
    """A fresh lease owner id for one execution: ``host:pid:uuid``."""
    return f"{_process_id()}:{uuid.uuid4().hex[:12]}"


def lease_timeout_s() -> float:
    """``settings.TRAINING_LEASE_TIMEOUT_S``: a heartbeat older than this marks the owner dead."""
    return float(getattr(settings, "TRAINING_LEASE_TIMEOUT_S", 120))


def heartbeat_interval_s() -> float:
    """Seconds between heartbeats: ``TRAINING_HEARTBEAT_S``, capped at a third of the lease timeout so a
    live owner always beats a few times per timeout (and at least every 50 ms)."""
    configured = float(getattr(settings, "TRAINING_HEARTBEAT_S", 15.0))
    return max(0.05, min(configured, lease_timeout_s() / 3))


def lease_wait_s(run: TrainingRun, now: datetime) -> float | None:
    """How long ``run``'s current lease still protects it from a takeover at ``now``.

    None when the lease is free to take: the run is not running, has no owner or no heartbeat, its
    heartbeat is at least ``lease_timeout_s()`` old, or its owner is an execution of this process that
    is no longer active. Otherwise the seconds until the heartbeat would be stale, at most the timeout
    (a heartbeat from the future, clock skew between hosts, counts as just beaten).
    """
    if run.status != RunStatus.RUNNING or not run.lease_owner or run.heartbeat_at is None:
        return None
    if run.lease_owner.rsplit(":", 1)[0] == _process_id():
        with _ACTIVE_LOCK:
            if _ACTIVE.get(run.pk) != run.lease_owner:
                return None
    age = (now - run.heartbeat_at).total_seconds()
    remaining = lease_timeout_s() - age
    if remaining <= 0:
        return None
    return min(remaining, lease_timeout_s())


def lease_recheck_countdown(wait_s: float, visibility_timeout_s: float) -> float:
    """Seconds a duplicate delivery waits before it looks at the lease again.

    Just past the moment the lease could lapse (``wait_s`` + 1 s), but at most half the broker's
    visibility timeout: a delayed message the broker restored before it ran would be delivered twice.
    At least 1 s.
    """
    return max(1.0, min(wait_s + 1.0, visibility_timeout_s / 2))


@dataclass
class RunLease:
    """The lease one execution holds on one run (see the module docstring).

    ``lost`` is set once the execution learns that another owner holds the run.
    """

    run_id: int
    owner: str
    lost: threading.Event = field(default_factory=threading.Event)

    def beat(self) -> bool:
        """Refresh ``heartbeat_at`` if this owner still holds the lease. Returns False (and sets ``lost``)
        when the run visibly names another owner; a run this connection cannot see (uncommitted in
        another transaction) proves nothing and leaves the lease alone (True)."""
        if TrainingRun.objects.filter(pk=self.run_id, lease_owner=self.owner).update(heartbeat_at=timezone.now()):
            return True
        current = TrainingRun.objects.filter(pk=self.run_id).values_list("lease_owner", flat=True).first()
        if current is None:
            return True
        self.lost.set()
        return False

    def check(self) -> None:
        """Raise :class:`LeaseLost` if a heartbeat already saw a takeover (no database access)."""
        if self.lost.is_set():
            raise LeaseLost(f"run {self.run_id}: another worker took the lease from {self.owner}")

    @contextmanager
    def held(self) -> Iterator[TrainingRun]:
        """A transaction in which this owner provably holds the lease: locks the run row first (so a
        takeover waits for it, and every writer locks run row before metric rows), raises
        :class:`LeaseLost` if another owner holds it, refreshes the heartbeat, yields the locked run."""
        with transaction.atomic():
            run = TrainingRun.objects.select_for_update().get(pk=self.run_id)
            if run.lease_owner != self.owner:
                self.lost.set()
                raise LeaseLost(f"run {self.run_id}: {run.lease_owner or 'nobody'} holds the lease, not {self.owner}")
            run.heartbeat_at = timezone.now()
            TrainingRun.objects.filter(pk=self.run_id).update(heartbeat_at=run.heartbeat_at)
            yield run


class LeaseHeartbeat:
    """A daemon thread that calls ``lease.beat()`` every ``interval_s`` until stopped or superseded, so
    the lease stays fresh through long generate/update phases that record nothing. A failed beat (the
    database is briefly unreachable) is logged and retried at the next tick."""

    def __init__(self, lease: RunLease, interval_s: float) -> None:
        self.lease = lease
        self.interval_s = interval_s
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"run-{lease.run_id}-heartbeat", daemon=True)

    def start(self) -> LeaseHeartbeat:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join(timeout_s)

    def _loop(self) -> None:
        try:
            while not self._halt.wait(self.interval_s):
                try:
                    if not self.lease.beat():
                        log.warning("run %s: lease taken over; %s stops training", self.lease.run_id, self.lease.owner)
                        return
                except Exception:  # noqa: BLE001 - a database hiccup must not end the heartbeat
                    log.exception("run %s: heartbeat failed; retrying in %.1f s", self.lease.run_id, self.interval_s)
        finally:
            connection.close()  # this thread's own connection
