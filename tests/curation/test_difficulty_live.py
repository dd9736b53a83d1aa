"""The live scoring socket ``ws/scorings/<id>/`` and the scoring pages (detail, comparison)."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from curation.services.difficulty import scoring_create, scoring_run
from tests.support.ws import refusal_code
from webapp import realtime

from .difficulty_support import catalogue, scored


@pytest.fixture
def in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def _headers(user: Any | None) -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", b"http://localhost")]
    if user is None:
        return headers
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [*headers, (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]


def _communicator(scoring_id: int, headers: list[tuple[bytes, bytes]]) -> WebsocketCommunicator:
    from webapp.asgi import application

    return WebsocketCommunicator(application, f"/ws/scorings/{scoring_id}/", headers=headers)


@pytest.mark.django_db(transaction=True)
def test_it_refuses_a_listener_without_a_role(import_records: Any, outsider: Any, in_memory_layer: None) -> None:
    catalogue(import_records, n=1)
    job = scoring_create(backend="heuristic", filter_spec={}, enqueue=False)
    headers = _headers(outsider)

    async def scenario() -> Any:
        return await refusal_code(_communicator(job.pk, headers))

    assert async_to_sync(scenario)() == 4403


@pytest.mark.django_db(transaction=True)
def test_it_sends_the_snapshot_then_the_progress_until_the_scoring_succeeds(
    import_records: Any, viewer: Any, in_memory_layer: None
) -> None:
    catalogue(import_records, n=3)
    job = scoring_create(backend="heuristic", filter_spec={}, enqueue=False)
    headers = _headers(viewer)

    async def scenario() -> list[Any]:
        communicator = _communicator(job.pk, headers)
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        events = [await communicator.receive_json_from(timeout=5)]
        await database_sync_to_async(scoring_run)(scoring_id=job.pk)
        while events[-1]["data"]["status"] != "succeeded":
            events.append(await communicator.receive_json_from(timeout=5))
        await communicator.disconnect()
        return events

    events = async_to_sync(scenario)()
    assert events[0]["type"] == realtime.SCORING_PROGRESS and events[0]["data"]["status"] == "queued"
    assert events[-1]["data"]["done"] == events[-1]["data"]["total"] == 3


@pytest.mark.django_db
def test_it_compares_two_scorings_with_spearman_and_dimension_differences(
    import_records: Any, client_as: Any, viewer: Any
) -> None:
    catalogue(import_records, n=6)
    a, b = scored(), scored(samples=1)
    html = client_as(viewer).get(f"/curation/scorings/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert "Spearman" in html and "Per-dimension difference" in html
    assert '<div class="num" id="spearman">—</div>' not in html  # six scored problems in both: a number


@pytest.mark.django_db
def test_it_answers_a_comparison_without_two_scorings_with_a_400(client_as: Any, viewer: Any) -> None:
    assert client_as(viewer).get("/curation/scorings/compare/?a=x").status_code == 400


@pytest.mark.django_db
def test_it_shows_the_cancel_button_to_the_creator_only(import_records: Any, client_as: Any, curator: Any,
                                                        viewer: Any) -> None:
    catalogue(import_records, n=1)
    job = scoring_create(backend="heuristic", filter_spec={}, user=curator, enqueue=False)
    assert "Cancel</button>" in client_as(curator).get(f"/curation/scorings/{job.pk}/").content.decode()
    page = client_as(viewer).get(f"/curation/scorings/{job.pk}/").content.decode()
    assert "Cancel</button>" not in page and f"/ws/scorings/{job.pk}/" in page
