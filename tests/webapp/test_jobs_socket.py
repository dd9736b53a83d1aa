"""The jobs view's socket ``ws/jobs/``: who may listen, and that a job's own progress publication reaches
it (through the project's ASGI application and the configured channel layer: Redis when REDIS_URL is
set, as in CI)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from curation.models import ScoringJob
from curation.services.difficulty import scoring_cancel
from evaluator.models import EvaluationJob
from tests.support.ws import refusal_code
from webapp import realtime

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _own_channel_layer(settings: Any) -> None:
    """A channel layer of this test's own (same backend and config): channels-redis binds a layer's
    receiving to the event loop that first receives on it, and an earlier test's loop (each
    ``async_to_sync`` call has one) may still count as receiving there. Re-assigning the setting
    makes channels build a fresh layer, and again when the test ends."""
    settings.CHANNEL_LAYERS = copy.deepcopy(settings.CHANNEL_LAYERS)


def _headers(user: Any | None) -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", b"http://localhost")]
    if user is None:
        return headers
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [*headers, (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]


def _communicator(headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    from webapp.asgi import application

    return WebsocketCommunicator(application, "/ws/jobs/", headers=headers)


def test_it_refuses_anonymous_and_roleless_listeners(outsider: Any) -> None:
    for user in (None, outsider):
        headers = _headers(user)
        assert async_to_sync(refusal_code)(_communicator(headers)) == 4403


def test_a_viewer_sees_the_progress_and_log_a_scoring_publishes(viewer: Any, curator: Any) -> None:
    job = ScoringJob.objects.create(
        backend="heuristic", created_by=curator, progress_total=4, progress_done=1, status="running"
    )
    headers = _headers(viewer)

    async def scenario() -> dict[str, Any]:
        communicator = _communicator(headers)
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        await database_sync_to_async(scoring_cancel)(scoring_id=job.pk, user=curator)
        message = await communicator.receive_json_from(timeout=10)
        await communicator.disconnect()
        return message

    message = async_to_sync(scenario)()
    assert message["type"] == realtime.JOBS_UPDATE
    data = message["data"]
    assert (data["key"], data["status"], data["done"], data["total"], data["percent"]) == (
        f"scoring-{job.pk}",
        "cancelled",
        1,
        4,
        25.0,
    )
    assert data["terminal"] and not data["cancellable"]
    assert [line["message"] for line in data["log"]] == [
        f"cancelled after 1 / 4 problems: cancelled by {curator.username}"
    ]


def test_it_reaches_every_listener_of_the_group(viewer: Any, trainer: Any) -> None:
    job = EvaluationJob.objects.create(kind="submission", created_by=trainer, progress_total=1)
    headers = [_headers(viewer), _headers(trainer)]

    async def scenario() -> list[str]:
        sockets = [_communicator(h) for h in headers]
        for s in sockets:
            assert (await s.connect(timeout=5))[0]
        from evaluator.services import evaluation_cancel

        await database_sync_to_async(evaluation_cancel)(job_id=job.pk, user=trainer)
        keys = [(await s.receive_json_from(timeout=10))["data"]["key"] for s in sockets]
        for s in sockets:
            await s.disconnect()
        return keys

    assert async_to_sync(scenario)() == [f"evaluation-{job.pk}"] * 2
