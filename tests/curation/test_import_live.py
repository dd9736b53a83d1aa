"""The live import socket ``ws/imports/<id>/``: who may listen, and the snapshot a (re)connecting page
gets on every join."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from curation.models import ImportBatch, ImportStatus
from tests.support.ws import refusal_code
from webapp import realtime

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def _headers(user: Any | None) -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", b"http://localhost")]
    if user is not None:
        client = Client()
        client.force_login(user)
        cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
        headers.append((b"cookie", cookie.encode()))
    return headers


def _first_frame(batch_id: int, user: Any | None) -> tuple[bool, Any]:
    from webapp.asgi import application

    headers = _headers(user)

    async def scenario() -> tuple[bool, Any]:
        ws = WebsocketCommunicator(application, f"/ws/imports/{batch_id}/", headers=headers)
        connected, code = await ws.connect(timeout=5)
        frame = await ws.receive_json_from(timeout=5) if connected else code
        await ws.disconnect()
        return connected, frame

    return async_to_sync(scenario)()


def test_it_sends_a_viewer_the_stored_counts_on_joining(viewer: Any) -> None:
    batch = ImportBatch.objects.create(format="mbpp", filename="x.jsonl", path="/x", status=ImportStatus.RUNNING,
                                       total_rows=40, imported_count=30, rejected_count=2, last_committed_row=40)
    connected, frame = _first_frame(batch.pk, viewer)
    assert connected and frame["type"] == realtime.IMPORT_PROGRESS
    assert frame["data"] == batch.progress_event()
    assert (frame["data"]["rows"], frame["data"]["imported"], frame["data"]["last_committed_row"]) == (40, 30, 40)


def _refused(batch_id: int, user: Any | None) -> int | None:
    from webapp.asgi import application

    headers = _headers(user)

    async def scenario() -> int | None:
        return await refusal_code(WebsocketCommunicator(application, f"/ws/imports/{batch_id}/", headers=headers))

    return async_to_sync(scenario)()


def test_it_refuses_a_user_without_a_role(outsider: Any) -> None:
    batch = ImportBatch.objects.create(format="mbpp", filename="x.jsonl", path="/x")
    assert _refused(batch.pk, outsider) == 4403


def test_it_refuses_an_unknown_batch(viewer: Any) -> None:
    assert _refused(999_999, viewer) == 4403
