"""The run lease: a redelivered ``train_run`` never starts a second trainer on a run a live worker trains.

Time is a hand-controlled clock (``django.utils.timezone.now`` patched) and heartbeats are driven by
hand, so every staleness decision here is exact; the real clock and heartbeat thread are exercised by
``tests/integration/test_training_worker.py``.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from tests.training.test_django_runs import ScriptedTrainer, _config
from training import selectors, services
from training.models import RunSample, RunStatus, TrainingRun
from training.services import lease as lease_mod
from training.services.lease import LeaseHeartbeat, LeaseLost, RunLease, lease_recheck_countdown, lease_wait_s
from training.services.run_execution import AttemptOutcome, run_attempt
from training.trainer import TrainResult

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


@dataclass
class Clock:
    now: datetime = T0

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(timezone, "now", lambda: c.now)
    return c


@pytest.fixture(autouse=True)
def lease_settings(settings: Any, tmp_path: Path) -> None:
    settings.RUNS_DIR = tmp_path / "runs"
    settings.TRAINING_LEASE_TIMEOUT_S = 120
    settings.TRAINING_HEARTBEAT_S = 15.0
    ScriptedTrainer.die_before = None
    ScriptedTrainer.seen_configs = []


@pytest.fixture
def run(db: object, tmp_path: Path) -> TrainingRun:
    dataset = tmp_path / "release.jsonl"
    dataset.write_text("{}\n")
    return services.run_create(name="run", config_dict=_config(str(dataset)))


def _held_elsewhere(run: TrainingRun, *, owner: str = "gpu-node-7:4242:0123456789ab", beat_s_ago: float) -> None:
    """Make ``run`` look like another worker trains it, with its last heartbeat ``beat_s_ago`` seconds ago."""
    TrainingRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, lease_owner=owner, heartbeat_at=timezone.now() - timedelta(seconds=beat_s_ago),
        attempts=1,
    )


def _reward_steps(run: TrainingRun) -> list[int]:
    return selectors.run_metric_arrays(run_id=run.pk, name="reward")[0].tolist()


def _never_built(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a duplicate delivery must not build a trainer")


class HookedTrainer(ScriptedTrainer):
    """``ScriptedTrainer`` that calls ``after_step(step)`` once each step's metrics and samples are recorded."""

    after_step: Callable[[int], None] = staticmethod(lambda step: None)

    def train(self) -> TrainResult:
        inner = self.on_samples

        def on_samples(step: int, samples: list[dict[str, Any]]) -> None:
            inner(step, samples)
            type(self).after_step(step)

        self.on_samples = on_samples
        return super().train()


def _hooked(after_step: Callable[[int], None]) -> type[HookedTrainer]:
    return type("Hooked", (HookedTrainer,), {"after_step": staticmethod(after_step)})


# --- when a delivery may take the lease ------------------------------------------------------------


def test_a_second_delivery_while_the_lease_is_fresh_does_nothing(run: TrainingRun, clock: Clock) -> None:
    _held_elsewhere(run, beat_s_ago=10)
    before = TrainingRun.objects.get(pk=run.pk)

    outcome = run_attempt(run_id=run.pk, trainer_factory=_never_built)

    assert outcome == AttemptOutcome(status=str(RunStatus.RUNNING), lease_wait_s=110.0)
    after = TrainingRun.objects.get(pk=run.pk)
    assert (after.status, after.lease_owner, after.heartbeat_at, after.attempts) == (
        RunStatus.RUNNING, before.lease_owner, before.heartbeat_at, 1
    )
    assert _reward_steps(run) == []


def test_a_stale_lease_is_taken_over_and_the_run_resumes(run: TrainingRun, clock: Clock) -> None:
    _held_elsewhere(run, beat_s_ago=120)  # exactly the timeout: the owner is presumed dead

    outcome = run_attempt(run_id=run.pk, trainer_factory=ScriptedTrainer)

    assert (outcome.status, outcome.trained, outcome.superseded) == (RunStatus.SUCCEEDED, True, False)
    run.refresh_from_db()
    assert run.lease_owner.startswith(lease_mod._process_id() + ":") and run.attempts == 2
    assert _reward_steps(run) == [1, 2, 3, 4, 5]


def test_a_running_run_owned_by_nobody_is_taken_over(run: TrainingRun, clock: Clock) -> None:
    TrainingRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, lease_owner="", heartbeat_at=clock.now)
    assert run_attempt(run_id=run.pk, trainer_factory=ScriptedTrainer).status == RunStatus.SUCCEEDED


def test_a_duplicate_delivery_does_not_cancel_a_live_run_asked_to_stop(run: TrainingRun, clock: Clock) -> None:
    _held_elsewhere(run, beat_s_ago=1)
    TrainingRun.objects.filter(pk=run.pk).update(cancel_requested=True)
    assert run_attempt(run_id=run.pk, trainer_factory=_never_built).status == RunStatus.RUNNING  # the owner stops it


def test_the_lease_wait_is_the_rest_of_the_timeout_since_the_last_heartbeat() -> None:
    def wait(beat_s_ago: float, owner: str = "other:1:a", status: str = str(RunStatus.RUNNING)) -> float | None:
        run = TrainingRun(pk=1, status=status, lease_owner=owner, heartbeat_at=T0 - timedelta(seconds=beat_s_ago))
        return lease_wait_s(run, T0)

    from django.conf import settings

    assert settings.TRAINING_LEASE_TIMEOUT_S == 120
    assert (wait(0), wait(30), wait(119.5), wait(120), wait(500)) == (120.0, 90.0, 0.5, None, None)
    assert wait(-30) == 120.0  # a heartbeat from the future (clock skew) counts as just beaten
    assert wait(0, owner="") is None and wait(0, status=str(RunStatus.QUEUED)) is None


def test_a_lease_left_by_a_finished_execution_of_this_process_is_stale_at_once(clock: Clock) -> None:
    own_owner = f"{lease_mod._process_id()}:deadbeef0000"
    run = TrainingRun(pk=10_001, status=RunStatus.RUNNING, lease_owner=own_owner, heartbeat_at=clock.now)
    assert lease_wait_s(run, clock.now) is None  # that attempt is not active here any more
    lease_mod.lease_activate(run.pk, own_owner)
    try:
        assert lease_wait_s(run, clock.now) == 120.0  # an active execution of this process is live
    finally:
        lease_mod.lease_deactivate(run.pk, own_owner)


# --- a live owner keeps its lease --------------------------------------------------------------------


def test_the_live_owner_keeps_its_lease_through_a_run_longer_than_the_timeout(
    run: TrainingRun, clock: Clock
) -> None:
    duplicates: list[AttemptOutcome] = []

    def after_step(step: int) -> None:
        assert TrainingRun.objects.get(pk=run.pk).heartbeat_at == clock.now  # every step beats
        clock.advance(100)  # a slow step: 5 steps take 500 s, far past the 120 s timeout
        if step == 4:
            duplicates.append(run_attempt(run_id=run.pk, trainer_factory=_never_built))

    assert run_attempt(run_id=run.pk, trainer_factory=_hooked(after_step)).status == RunStatus.SUCCEEDED
    assert duplicates == [AttemptOutcome(status=str(RunStatus.RUNNING), lease_wait_s=20.0)]
    assert TrainingRun.objects.get(pk=run.pk).attempts == 1


def test_a_heartbeat_refreshes_the_lease_only_for_its_owner(run: TrainingRun, clock: Clock) -> None:
    _held_elsewhere(run, owner="me:1:a", beat_s_ago=60)
    mine = RunLease(run_id=run.pk, owner="me:1:a")
    assert mine.beat() and TrainingRun.objects.get(pk=run.pk).heartbeat_at == clock.now

    clock.advance(5)
    theirs = RunLease(run_id=run.pk, owner="them:2:b")
    assert not theirs.beat() and theirs.lost.is_set()
    assert TrainingRun.objects.get(pk=run.pk).heartbeat_at == clock.now - timedelta(seconds=5)
    with pytest.raises(LeaseLost):
        theirs.check()


def test_the_heartbeat_thread_beats_until_its_lease_is_lost() -> None:
    class CountingLease:
        run_id, owner, beats = 1, "me:1:a", 0

        def beat(self) -> bool:
            self.beats += 1
            return self.beats < 3  # the third beat finds another owner

    lease = CountingLease()
    heartbeat = LeaseHeartbeat(lease, interval_s=0.01).start()  # type: ignore[arg-type]
    heartbeat._thread.join(5)
    assert not heartbeat._thread.is_alive() and lease.beats == 3


def test_the_heartbeat_interval_is_capped_at_a_third_of_the_lease_timeout(settings: Any) -> None:
    assert lease_mod.heartbeat_interval_s() == 15.0
    settings.TRAINING_LEASE_TIMEOUT_S = 3
    assert lease_mod.heartbeat_interval_s() == 1.0


# --- a superseded owner stops -----------------------------------------------------------------------


def _take_over(run: TrainingRun) -> None:
    """What another worker's ``_begin`` writes when it takes the lease."""
    TrainingRun.objects.filter(pk=run.pk).update(lease_owner="thief:9:ffffffffffff", heartbeat_at=timezone.now(),
                                                 attempts=2)


def test_a_superseded_owner_stops_at_its_next_write_without_writing_metrics(run: TrainingRun, clock: Clock) -> None:
    def after_step(step: int) -> None:
        if step == 2:
            _take_over(run)

    outcome = run_attempt(run_id=run.pk, trainer_factory=_hooked(after_step))

    assert (outcome.status, outcome.trained, outcome.superseded) == (RunStatus.RUNNING, True, True)
    run.refresh_from_db()
    assert (run.status, run.error, run.finished_at, run.lease_owner) == (
        RunStatus.RUNNING, "", None, "thief:9:ffffffffffff"
    )
    assert _reward_steps(run) == [1, 2] and run.last_step == 2  # step 3's metrics never reached the store
    assert list(RunSample.objects.filter(run=run).values_list("step", flat=True)) == [1, 2]
    assert not run.checkpoints.exists()  # its step-2 checkpoint is on disk for the new owner; no row from it


def test_a_superseded_owner_stops_before_its_next_step_once_a_heartbeat_saw_the_takeover(
    run: TrainingRun, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    leases: list[RunLease] = []

    class HandHeartbeat:
        def __init__(self, lease: RunLease, interval_s: float) -> None:
            leases.append(lease)

        def start(self) -> HandHeartbeat:
            return self

        def stop(self) -> None:
            pass

    monkeypatch.setattr("training.services.run_execution.LeaseHeartbeat", HandHeartbeat)
    polls: list[str] = []

    class Polling(HookedTrainer):
        def __init__(self, config: Any, *, should_stop: Callable[[], bool], **kwargs: Any) -> None:
            def polled() -> bool:
                try:
                    stop = should_stop()
                except LeaseLost:
                    polls.append("lease lost")
                    raise
                polls.append("go")
                return stop

            super().__init__(config, should_stop=polled, **kwargs)

        @staticmethod
        def after_step(step: int) -> None:
            if step == 2:
                _take_over(run)
                assert not leases[0].beat()  # the heartbeat notices, between two steps

    outcome = run_attempt(run_id=run.pk, trainer_factory=Polling)

    assert outcome.superseded and outcome.status == RunStatus.RUNNING
    assert polls == ["go", "go", "lease lost"]  # step 3 never began
    assert _reward_steps(run) == [1, 2]


def test_a_superseded_owner_does_not_mark_the_run_failed_when_its_trainer_then_fails(
    run: TrainingRun, clock: Clock
) -> None:
    def after_step(step: int) -> None:
        if step == 1:
            _take_over(run)
            raise RuntimeError("CUDA error after the takeover")

    outcome = run_attempt(run_id=run.pk, trainer_factory=_hooked(after_step))

    assert outcome.superseded
    run.refresh_from_db()
    assert (run.status, run.error) == (RunStatus.RUNNING, "")


# --- the task ---------------------------------------------------------------------------------------


class Retried(Exception):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(kwargs)
        self.kwargs = kwargs


def test_the_task_rechecks_a_duplicate_delivery_just_after_the_lease_could_lapse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from training import tasks

    def retry(**kwargs: Any) -> None:
        raise Retried(**kwargs)

    monkeypatch.setattr(tasks, "run_attempt", lambda run_id: AttemptOutcome(status="running", lease_wait_s=10.0))
    monkeypatch.setattr(tasks.train_run, "retry", retry)
    with pytest.raises(Retried) as retried:
        tasks.train_run(7)  # a worker's delivery (not eager)
    assert retried.value.kwargs == {"countdown": 11.0, "max_retries": None}


def test_the_task_ends_an_eager_duplicate_delivery_without_retrying(run: TrainingRun, clock: Clock) -> None:
    from training.tasks import train_run

    _held_elsewhere(run, beat_s_ago=1)
    assert train_run.apply(args=[run.pk]).get() == RunStatus.RUNNING


def test_the_recheck_countdown_stays_under_half_the_visibility_timeout() -> None:
    assert lease_recheck_countdown(10.0, 3600) == 11.0
    assert lease_recheck_countdown(0.25, 3600) == 1.25
    assert lease_recheck_countdown(119.0, 60) == 30.0
    assert lease_recheck_countdown(0.0, 1) == 1.0


def test_the_broker_visibility_timeout_defaults_to_an_hour_and_follows_the_environment() -> None:
    from webapp.celery import app

    assert app.conf.broker_transport_options["visibility_timeout"] == 3600
    assert app.conf.result_backend_transport_options["visibility_timeout"] == 3600
    code = ("import webapp.settings as s; print(s.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'], "
            "s.CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS['visibility_timeout'], s.TRAINING_LEASE_TIMEOUT_S)")
    env = {"PATH": "/usr/bin:/bin", "CELERY_VISIBILITY_TIMEOUT": "3", "TRAINING_LEASE_TIMEOUT_S": "5"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", "3", "5"]
