"""End to end: a real Celery worker judges evaluation jobs from real Redis, against the shared
PostgreSQL test database, and a real websocket client connected to daphne sees the worker's live
``job.progress`` events arrive through channels-redis.

Run: ``REDIS_URL=redis://127.0.0.1:6379/5 DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
TEST_DATABASE_NAME=test_evaljobs .venv/bin/pytest tests/integration``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from curation.models import ConstraintResult
from evaluator.models import EvaluationJob
from evaluator.services import evaluation_enqueue, evaluation_submit, references_verify
from tests.evaluator import test_django_support as support
from tests.evaluator.test_django_support import CORRECT_ADD, verdict_of

from .conftest import Service

pytestmark = pytest.mark.django_db(transaction=True)

# the problem factory of the evaluator's Django tests (not their in-process Celery/channel-layer fixture)
make_problem = support.make_problem

TERMINAL = {"succeeded", "failed", "cancelled"}


def _wait_for_job(job_id: int, timeout_s: float = 90.0) -> EvaluationJob:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        job = EvaluationJob.objects.get(pk=job_id)
        if job.status in TERMINAL:
            return job
        time.sleep(0.2)
    pytest.fail(f"job {job_id} still {EvaluationJob.objects.get(pk=job_id).status} after {timeout_s:g} s")


def _session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user)  # a committed session row: daphne reads it from the same test database
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def test_a_worker_judges_a_submission_and_a_websocket_client_sees_it_live(
    celery_worker_process: Service, daphne_server: tuple[Service, int], make_problem: Any, trainer: Any,
    viewer: Any,
) -> None:
    from websockets.sync.client import connect
    from websockets.typing import Origin

    _, port = daphne_server
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    url = f"ws://127.0.0.1:{port}/ws/evaluations/{job.pk}/"
    events: list[dict[str, Any]] = []
    with connect(url, origin=Origin(f"http://127.0.0.1:{port}"),
                 additional_headers={"Cookie": _session_cookie(viewer)}, proxy=None, open_timeout=15.0) as ws:
        events.append(json.loads(ws.recv(timeout=15)))  # the snapshot, before the job is even enqueued
        evaluation_enqueue(job_id=job.pk)  # outside a transaction: sent to Redis right away
        deadline = time.monotonic() + 90
        while events[-1]["data"]["status"] not in TERMINAL:
            events.append(json.loads(ws.recv(timeout=max(0.1, deadline - time.monotonic()))))

    job = _wait_for_job(job.pk)
    assert job.status == "succeeded", job.error
    verdict = verdict_of(job)
    assert (verdict["verdict"], verdict["passed"], verdict["total"]) == ("AC", 5, 5)
    assert job.celery_task_id
    assert events[0] == {"type": "job.progress", "data": {"job_id": job.pk, "status": "queued", "done": 0, "total": 1}}
    # everything after the snapshot was published by the worker process through channels-redis
    assert [(e["data"]["status"], e["data"]["done"]) for e in events[1:]] == [
        ("running", 0), ("running", 1), ("succeeded", 1)
    ]


def test_a_worker_verifies_references_and_curation_sees_the_verdict(
    celery_worker_process: Service, make_problem: Any, curator: Any
) -> None:
    problem = make_problem("verified")
    job = _wait_for_job(references_verify(problem_ids=[problem.pk], user=curator).pk)
    assert (job.status, job.results[0]["outcome"]) == ("succeeded", "passed")
    assert ConstraintResult.objects.get(problem=problem, name="reference_passes").status == "passed"


def test_a_websocket_refuses_an_anonymous_client(daphne_server: tuple[Service, int], make_problem: Any,
                                                  trainer: Any) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect
    from websockets.typing import Origin

    _, port = daphne_server
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    url = f"ws://127.0.0.1:{port}/ws/evaluations/{job.pk}/"
    with pytest.raises(ConnectionClosed) as closed:
        with connect(url, origin=Origin(f"http://127.0.0.1:{port}"), proxy=None, open_timeout=15.0) as ws:
            ws.recv(timeout=15)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403  # the browser sees why
