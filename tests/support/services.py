"""Real services for tests that need them: Celery workers (and other subprocesses) over real Redis,
against the PostgreSQL test database pytest-django created.

A pytest plugin (``pytest_plugins`` in the root conftest), so the integration tests and the browser tests
share one way to start, watch and kill a worker. The subprocesses get ``DATABASE_URL`` pointing at the
*test* database, so tests must commit their data (``django_db(transaction=True)``). Each subprocess runs in
its own session and is stopped with SIGTERM, then SIGKILL, at the end; its log is attached to the report
of any failing test. Fixtures skip, with the reason, when ``REDIS_URL`` is unset or the database is not
PostgreSQL (a subprocess cannot see SQLite's in-memory test database).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: queues the project routes tasks to (settings.CELERY_TASK_ROUTES) plus the default one
QUEUES = ("evaluate", "default", "gpu", "scoring")
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 15.0


@dataclass
class Service:
    """A subprocess we started, with its log file."""

    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self, tail: int = 8000) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return f"(log unreadable: {exc})"
        return text[-tail:]

    def stop(self) -> None:
        """SIGTERM the whole process group (the worker's pool and judge processes included), SIGKILL
        after a grace period, and SIGKILL whatever of the group outlived its leader."""
        if self.process.poll() is None:
            for sig, wait_s in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, STOP_TIMEOUT_S)):
                try:
                    os.killpg(self.process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    self.process.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if self.group_alive():
            self.kill()

    def kill(self) -> None:
        """SIGKILL the whole process group at once (a worker dying without any cleanup) and wait until
        none of it is left (the leader reaped; the rest gone or zombies awaiting init)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=STOP_TIMEOUT_S)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while self.group_alive() and time.monotonic() < deadline:
            time.sleep(0.05)

    def group_alive(self) -> list[int]:
        """Pids of the live (not zombie) processes of this service's process group."""
        return _live_group_members(self.process.pid)


def _live_group_members(pgid: int) -> list[int]:
    """Pids in process group ``pgid`` that are not zombies (read from ``/proc``; Linux)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # the process ended while we looked
        fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


_SERVICES: list[Service] = []


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[Any]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Attach the services' logs to the report of a failing test (and of a failing fixture)."""
    report = yield
    if report.failed:
        for service in _SERVICES:
            report.sections.append((f"{service.name} log (tail)", service.log()))
    return report


def _die_with_pytest() -> None:
    """In the child before exec: SIGKILL it when pytest dies, so a killed test session never leaves a
    worker consuming this Redis database (it would steal the next session's tasks)."""
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def spawn(name: str, argv: list[str], env: dict[str, str], tmp: Path) -> Service:
    log_path = tmp / f"{name}.log"
    with open(log_path, "wb") as log:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=_die_with_pytest,
        )
    service = Service(name, process, log_path)
    _SERVICES.append(service)
    return service


def wait_ready(service: Service, ready: Callable[[Service], bool]) -> Service:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if service.process.poll() is not None:
            pytest.fail(f"{service.name} exited with {service.process.returncode} while starting:\n{service.log()}")
        if ready(service):
            return service
        time.sleep(0.25)
    service.stop()
    pytest.fail(f"{service.name} was not ready within {START_TIMEOUT_S:g} s:\n{service.log()}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("REDIS_URL", "")
    if not url:
        pytest.skip("integration tests need a real Redis: set REDIS_URL=redis://127.0.0.1:6379/5")
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.fail(f"REDIS_URL={url} is set but Redis does not answer: {exc}")
    return url


@pytest.fixture(scope="session")
def test_database_url(django_db_setup: Any, django_db_blocker: Any) -> str:
    """A ``DATABASE_URL`` naming the test database pytest-django created (PostgreSQL only)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("integration tests share the test database with subprocesses: set "
                    "DATABASE_URL=postgresql://... (SQLite's test database is in memory)")
    s = connection.settings_dict
    auth = quote(s["USER"] or "", safe="")
    if s.get("PASSWORD"):
        auth += ":" + quote(s["PASSWORD"], safe="")
    host = s.get("HOST") or "127.0.0.1"
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgresql://{auth}{'@' if auth else ''}{host}{port}/{s['NAME']}"


@pytest.fixture(scope="session")
def service_env(redis_url: str, test_database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=test_database_url,
        REDIS_URL=redis_url,
        CELERY_TASK_ALWAYS_EAGER="0",
        DJANGO_SETTINGS_MODULE="webapp.settings",
        DB_CONN_MAX_AGE="0",  # no idle connections left behind when pytest drops the test database
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture(scope="session")
def purged_queues(redis_url: str) -> None:
    """Drop messages a previous, interrupted run may have left for job ids this run reuses."""
    from webapp.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        for queue in QUEUES:
            try:
                channel.queue_purge(queue)
            except Exception:  # noqa: BLE001 - a queue that never existed has nothing to purge
                continue
        # Messages a killed worker of an earlier session took but never acknowledged wait in the Redis
        # transport's "unacked" set; a starting worker would restore them onto the queues.
        unacked = [getattr(channel, name, None) for name in ("unacked_key", "unacked_index_key")]
        if all(unacked) and hasattr(channel, "client"):
            channel.client.delete(*unacked)


def worker_argv(name: str, queues: Sequence[str], *, pool: str, concurrency: int) -> list[str]:
    """``celery -A webapp worker`` consuming ``queues`` (no gossip/mingle/heartbeat: quick start)."""
    return [
        sys.executable, "-m", "celery", "-A", "webapp", "worker", "-Q", ",".join(queues), "-c", str(concurrency),
        f"--pool={pool}", "-n", f"{name}-{os.getpid()}@%h", "--without-gossip", "--without-mingle",
        "--without-heartbeat", "-l", "INFO",
    ]


def wait_until_redeliverable(sent_at: float, visibility_timeout_s: float = 3.0) -> None:
    """Sleep until a message sent at ``sent_at`` (``time.monotonic()``) is older than the workers'
    visibility timeout, so that a worker started now restores it in its start-up sweep of unacknowledged
    messages. Kombu's next periodic sweep comes ~100 s later, so a kill that lands sooner than the timeout
    (a quick job on a quiet machine) would otherwise leave the message waiting past the test's patience."""
    time.sleep(max(0.0, sent_at + visibility_timeout_s + 1.0 - time.monotonic()))


def worker_ready(service: Service) -> bool:
    return " ready." in service.log()


WorkerFactory = Callable[..., Service]


@pytest.fixture
def start_worker(
    service_env: dict[str, str], purged_queues: None, tmp_path: Path
) -> Iterator[WorkerFactory]:
    """``start_worker(name, queues=[...], env={...}, pool="prefork", concurrency=1)`` -> a ready worker
    of this test (extra ``env`` on top of the services' environment). Every worker it started is
    stopped when the test ends, whatever happened to it."""
    started: list[Service] = []

    def start(name: str, *, queues: Sequence[str], env: Mapping[str, str] | None = None, pool: str = "prefork",
              concurrency: int = 1) -> Service:
        service = spawn(name, worker_argv(name, queues, pool=pool, concurrency=concurrency),
                         {**service_env, **(env or {})}, tmp_path)
        started.append(service)
        return wait_ready(service, worker_ready)

    try:
        yield start
    finally:
        for service in started:
            service.stop()
