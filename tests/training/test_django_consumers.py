"""The run websocket: who may join, the snapshot on join, and forwarding of published events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.urls import path

from tests.support.ws import refusal_code
from training import services
from training.consumers import RunConsumer
from training.models import TrainingRun
from webapp import realtime

pytestmark = pytest.mark.django_db(transaction=True)

_app = URLRouter([path("ws/runs/<int:run_id>/", RunConsumer.as_asgi())])


@pytest.fixture
def run(db: object) -> TrainingRun:
    return TrainingRun.objects.create(name="live", config={"max_steps": 3})


def _run_async(fn: Callable[[], Awaitable[Any]]) -> Any:
    return async_to_sync(fn)()


def _communicator(run_id: int, user: Any) -> WebsocketCommunicator:
    comm = WebsocketCommunicator(_app, f"/ws/runs/{run_id}/")
    comm.scope["user"] = user
    return comm


def test_it_refuses_an_anonymous_visitor(run: TrainingRun) -> None:
    from django.contrib.auth.models import AnonymousUser

    async def go() -> int | None:
        return await refusal_code(_communicator(run.pk, AnonymousUser()))

    assert _run_async(go) == 4403


def test_it_refuses_a_user_without_a_role(run: TrainingRun, outsider: Any) -> None:
    async def go() -> int | None:
        return await refusal_code(_communicator(run.pk, outsider))

    assert _run_async(go) == 4403


def test_it_refuses_an_unknown_run(viewer: Any, db: object) -> None:
    async def go() -> int | None:
        return await refusal_code(_communicator(999_999, viewer))

    assert _run_async(go) == 4403


def test_it_sends_the_status_and_latest_metrics_on_join(run: TrainingRun, viewer: Any) -> None:
    services.metrics_record(run_id=run.pk, step=2, metrics={"reward": 0.5})

    async def go() -> list[dict[str, Any]]:
        comm = _communicator(run.pk, viewer)
        connected, _ = await comm.connect()
        assert connected
        got = [await comm.receive_json_from(timeout=2), await comm.receive_json_from(timeout=2)]
        await comm.disconnect()
        return got

    status, metrics = _run_async(go)
    assert status["type"] == realtime.RUN_STATUS and status["data"]["status"] == "queued"
    assert metrics == {"type": realtime.RUN_METRICS, "data": {"run_id": run.pk, "step": 2, "metrics": {"reward": 0.5}}}


def test_it_sends_no_metrics_snapshot_before_the_first_step(run: TrainingRun, viewer: Any) -> None:
    async def go() -> bool:
        comm = _communicator(run.pk, viewer)
        await comm.connect()
        await comm.receive_json_from(timeout=2)  # the status
        nothing = await comm.receive_nothing(timeout=0.2)
        await comm.disconnect()
        return nothing

    assert _run_async(go) is True


def test_it_forwards_metrics_published_for_its_run_only(run: TrainingRun, viewer: Any) -> None:
    other = TrainingRun.objects.create(name="other", config={})

    async def go() -> dict[str, Any]:
        from channels.db import database_sync_to_async

        comm = _communicator(run.pk, viewer)
        await comm.connect()
        await comm.receive_json_from(timeout=2)
        # Services publish after commit; outside a transaction that is immediately.
        await database_sync_to_async(services.metrics_record)(run_id=other.pk, step=1, metrics={"reward": 9.0})
        await database_sync_to_async(services.metrics_record)(run_id=run.pk, step=1, metrics={"reward": 0.25})
        got = await comm.receive_json_from(timeout=2)
        assert await comm.receive_nothing(timeout=0.2)
        await comm.disconnect()
        return got

    assert _run_async(go) == {"type": realtime.RUN_METRICS,
                              "data": {"run_id": run.pk, "step": 1, "metrics": {"reward": 0.25}}}


def test_it_forwards_status_changes(run: TrainingRun, trainer: Any) -> None:
    async def go() -> dict[str, Any]:
        from channels.db import database_sync_to_async

        comm = _communicator(run.pk, trainer)
        await comm.connect()
        await comm.receive_json_from(timeout=2)
        await database_sync_to_async(services.run_cancel)(run_id=run.pk)
        got = await comm.receive_json_from(timeout=2)
        await comm.disconnect()
        return got

    event = _run_async(go)
    assert event["type"] == realtime.RUN_STATUS and event["data"]["status"] == "cancelled"


def test_it_authenticates_a_browser_session_through_the_projects_asgi_stack(
    run: TrainingRun, viewer: Any, settings: Any
) -> None:
    from django.test import Client

    from webapp.asgi import application

    client = Client()
    client.force_login(viewer)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"

    async def go() -> dict[str, Any]:
        comm = WebsocketCommunicator(
            application, f"/ws/runs/{run.pk}/", headers=[(b"cookie", cookie.encode()), (b"origin", b"http://testserver")]
        )
        connected, _ = await comm.connect()
        assert connected
        got = await comm.receive_json_from(timeout=2)
        await comm.disconnect()
        return got

    assert _run_async(go)["data"]["run_id"] == run.pk
