"""End to end: a live page's websocket that sits idle for longer than every Redis timeout on the way
(channels-redis blocks 5 s per read; the Redis client's socket timeout) stays open, and an event
published after the idle period arrives on the same socket.

Before the fix, daphne closed every idle ``/ws/runs/<id>/`` and ``/ws/evaluations/<id>/`` socket with
1011 after about 5 s: redis-py's default socket timeout (5 s) equalled channels-redis's blocking read
(``BZPOPMIN`` with a 5 s timeout), so the client gave up on the read the server was still blocking on.

Run: ``REDIS_URL=redis://127.0.0.1:6379/5 DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
TEST_DATABASE_NAME=test_live .venv/bin/pytest tests/integration/test_live_sockets.py``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from evaluator.services import evaluation_submit
from tests.evaluator import test_django_support as support
from tests.evaluator.test_django_support import CORRECT_ADD
from training.models import TrainingRun
from webapp import realtime

from .conftest import Service

pytestmark = pytest.mark.django_db(transaction=True)

make_problem = support.make_problem

#: longer than channels-redis's blocking read (5 s) plus redis-py's default socket timeout (5 s)
IDLE_S = 12.0


def _session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _connect(port: int, path: str, cookie: str) -> Any:
    from websockets.sync.client import connect
    from websockets.typing import Origin

    return connect(f"ws://127.0.0.1:{port}{path}", origin=Origin(f"http://127.0.0.1:{port}"),
                   additional_headers={"Cookie": cookie}, proxy=None, open_timeout=15.0)


def test_it_delivers_an_event_published_after_an_idle_period_longer_than_the_timeouts(
    daphne_server: tuple[Service, int], make_problem: Any, trainer: Any, viewer: Any
) -> None:
    _, port = daphne_server
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    run = TrainingRun.objects.create(name="idle", config={"max_steps": 5}, created_by=trainer)
    cookie = _session_cookie(viewer)
    with _connect(port, f"/ws/evaluations/{job.pk}/", cookie) as job_ws, \
            _connect(port, f"/ws/runs/{run.pk}/", cookie) as run_ws:
        assert json.loads(job_ws.recv(timeout=15))["type"] == realtime.JOB_PROGRESS  # the join snapshot
        assert json.loads(run_ws.recv(timeout=15))["type"] == realtime.RUN_STATUS
        time.sleep(IDLE_S)  # both sockets idle: the server must keep them (and their Redis reads) alive
        job_event = {"job_id": job.pk, "status": "succeeded", "done": 1, "total": 1}
        run_event = {"run_id": run.pk, "step": 7, "metrics": {"reward": 0.5}}
        realtime.publish(realtime.job_group(job.pk), realtime.JOB_PROGRESS, job_event)
        realtime.publish(realtime.run_group(run.pk), realtime.RUN_METRICS, run_event)
        assert json.loads(job_ws.recv(timeout=15)) == {"type": realtime.JOB_PROGRESS, "data": job_event}
        assert json.loads(run_ws.recv(timeout=15)) == {"type": realtime.RUN_METRICS, "data": run_event}
