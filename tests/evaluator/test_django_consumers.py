"""The live job socket ``ws/evaluations/<id>/``: who may listen, and what a listener receives.

The socket is driven through the project's ASGI application (``webapp.asgi``: origin check, session
auth, routing), so users log in with a real session cookie exactly as a browser does. These tests need committed data (the consumer reads the database
from its own executor), hence ``transaction=True``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from evaluator.models import EvaluationJob
from evaluator.services import evaluation_run, evaluation_submit
from tests.support.ws import refusal_code
from webapp import realtime

from . import test_django_support as support
from .test_django_support import CORRECT_ADD

pytestmark = pytest.mark.django_db(transaction=True)

# the shared fixtures, bound here so pytest finds them in this module
_eager_and_in_memory = support._eager_and_in_memory
make_problem = support.make_problem



@pytest.fixture
def job(make_problem: Any, trainer: Any) -> EvaluationJob:
    return evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)


def _browser_headers(user: Any | None) -> list[tuple[bytes, bytes]]:
    """Headers of a browser on this site: its origin and, when logged in, the session cookie."""
    headers = [(b"origin", b"http://localhost")]
    if user is None:
        return headers
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [*headers, (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]


def _run(scenario: Callable[[], Awaitable[Any]]) -> Any:
    return async_to_sync(scenario)()


def _connect(job_id: int, headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    from webapp.asgi import application

    return WebsocketCommunicator(application, f"/ws/evaluations/{job_id}/", headers=headers)


def _refused(job_id: int, user: Any | None) -> int | None:
    headers = _browser_headers(user)  # logging in is synchronous: do it before entering the event loop

    async def scenario() -> int | None:
        return await refusal_code(_connect(job_id, headers))

    return _run(scenario)


def test_it_refuses_an_anonymous_listener(job: EvaluationJob) -> None:
    assert _refused(job.pk, None) == 4403


def test_it_refuses_a_user_without_a_role(job: EvaluationJob, outsider: Any) -> None:
    assert _refused(job.pk, outsider) == 4403


def test_it_refuses_a_socket_for_an_unknown_job(viewer: Any) -> None:
    assert _refused(424242, viewer) == 4403


def test_it_sends_a_viewer_the_stored_status_on_joining(job: EvaluationJob, viewer: Any) -> None:
    headers = _browser_headers(viewer)

    async def scenario() -> Any:
        communicator = _connect(job.pk, headers)
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        first = await communicator.receive_json_from(timeout=5)
        await communicator.disconnect()
        return first

    assert _run(scenario) == {
        "type": realtime.JOB_PROGRESS, "data": {"job_id": job.pk, "status": "queued", "done": 0, "total": 1}
    }


def test_it_forwards_the_progress_a_running_job_publishes_to_a_viewer(job: EvaluationJob, viewer: Any) -> None:
    headers = _browser_headers(viewer)

    async def scenario() -> list[Any]:
        communicator = _connect(job.pk, headers)
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        events = [await communicator.receive_json_from(timeout=5)]  # the snapshot
        await database_sync_to_async(evaluation_run)(job_id=job.pk)  # the real judge, publishing on commit
        while events[-1]["data"]["status"] != "succeeded":
            events.append(await communicator.receive_json_from(timeout=30))
        await communicator.disconnect()
        return events

    events = _run(scenario)
    assert {e["type"] for e in events} == {realtime.JOB_PROGRESS}
    assert [(e["data"]["status"], e["data"]["done"]) for e in events] == [
        ("queued", 0), ("running", 0), ("running", 1), ("succeeded", 1)
    ]
