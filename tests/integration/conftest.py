"""Real services for the integration tests: a Celery worker and a daphne server as subprocesses, over
real Redis, against the PostgreSQL test database that pytest-django created.

Every test here is marked ``integration`` and skipped, with the reason, when ``REDIS_URL`` is unset or
the database is not PostgreSQL (a subprocess cannot see SQLite's in-memory test database). The
subprocesses get ``DATABASE_URL`` pointing at the *test* database, so tests must commit their data
(``django_db(transaction=True)``). Each subprocess runs in its own session and is stopped with
SIGTERM, then SIGKILL, at the end; its log is attached to the report of any failing test.

The session's shared worker and daphne (``celery_worker_process``, ``daphne_server``) serve the
evaluation tests; the ``gpu`` queue is left to workers a test starts itself with ``start_worker``
(the training tests kill theirs mid-run), which are stopped when that test ends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.services import (  # noqa: F401 - re-exported for the tests of this folder
    Service,
    WorkerFactory,
    free_port,
    port_open,
    spawn,
    wait_ready,
    wait_until_redeliverable,
    worker_argv,
    worker_ready,
)

#: what the session's shared worker consumes: everything but ``gpu`` and ``scoring``, whose tests start
#: (and kill) workers of their own, with their own environment, that must not share the queue with it
SHARED_WORKER_QUEUES = ("evaluate", "default")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    skip = pytest.mark.skip(reason="integration tests need a real Redis: set REDIS_URL=redis://127.0.0.1:6379/5")
    for item in items:
        if Path(str(item.fspath)).resolve().parent != here:
            continue
        item.add_marker(pytest.mark.integration)
        if not os.environ.get("REDIS_URL"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def _spawned(
    service_env: dict[str, str], purged_queues: None, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Service, Service, int]]:
    """Start the worker and daphne together (each takes a while to import the project); stop both at
    the end of the session, before pytest-django drops the test database they are connected to."""
    tmp = tmp_path_factory.mktemp("services")
    worker = spawn("celery-worker", worker_argv("integration", SHARED_WORKER_QUEUES, pool="solo", concurrency=1),
                    service_env, tmp)
    port = free_port()
    daphne = spawn("daphne", [
        sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "webapp.asgi:application",
    ], service_env, tmp)
    try:
        yield worker, daphne, port
    finally:
        worker.stop()
        daphne.stop()


@pytest.fixture(scope="session")
def celery_worker_process(_spawned: tuple[Service, Service, int]) -> Service:
    """``celery -A webapp worker`` on every queue but ``gpu``, one solo process (the judge pool forks its own)."""
    return wait_ready(_spawned[0], worker_ready)


@pytest.fixture(scope="session")
def daphne_server(_spawned: tuple[Service, Service, int]) -> tuple[Service, int]:
    """The project's ASGI application (pages, API, websockets) served by daphne on a free port."""
    _, daphne, port = _spawned
    return wait_ready(daphne, lambda s: port_open(port)), port
