"""Websocket guards: trusted origins (scheme, host and port), unknown paths and non-JSON frames are
refused with clear close codes, never with a consumer exception."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.auth import AuthMiddlewareStack
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from training import services
from webapp.consumers import CLOSE_BAD_FRAME
from webapp.routing import websocket_urlpatterns
from webapp.ws_guards import CLOSE_UNKNOWN_PATH, origin_guard, with_fallback

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def _headers(user: Any, origin: str = "http://localhost") -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [(b"origin", origin.encode()), (b"cookie", f"{settings.SESSION_COOKIE_NAME}={session}".encode())]


def _app() -> Any:
    """The websocket stack of ``webapp.asgi``, built now (so it sees the test's settings)."""
    return origin_guard(AuthMiddlewareStack(URLRouter(with_fallback(websocket_urlpatterns))))


@pytest.fixture
def run_path(trainer: Any) -> str:
    run = services.run_create(name="ws", config_dict={"model": "tiny", "dataset": {"release": "/none.jsonl"}},
                              user=trainer)
    return f"/ws/runs/{run.pk}/"


def _connects(path: str, headers: list[tuple[bytes, bytes]]) -> bool:
    async def scenario() -> bool:
        communicator = WebsocketCommunicator(_app(), path, headers=headers)
        connected, _ = await communicator.connect(timeout=5)
        await communicator.disconnect()
        return bool(connected)

    return bool(async_to_sync(scenario)())


def test_it_closes_an_unknown_path_with_4404(viewer: Any) -> None:
    headers = _headers(viewer)

    async def scenario() -> Any:
        communicator = WebsocketCommunicator(_app(), "/ws/nothing-here/", headers=headers)
        connected, _ = await communicator.connect(timeout=5)
        closed = await communicator.receive_output(timeout=5)
        await communicator.wait()
        return connected, closed

    assert async_to_sync(scenario)() == (True, {"type": "websocket.close", "code": CLOSE_UNKNOWN_PATH})


@pytest.mark.parametrize("frame", [{"text": "not json {"}, {"bytes": b"\x00\x01"},
                                   {"text": "[" * 100_000}])
def test_it_closes_the_socket_on_a_frame_that_is_not_json(viewer: Any, run_path: str, frame: dict[str, Any]) -> None:
    headers = _headers(viewer)

    async def scenario() -> Any:
        communicator = WebsocketCommunicator(_app(), run_path, headers=headers)
        connected, _ = await communicator.connect(timeout=5)
        assert connected
        await communicator.receive_json_from(timeout=5)  # the status snapshot (the run has no steps yet)
        await communicator.send_input({"type": "websocket.receive", **frame})
        return await communicator.receive_output(timeout=5)

    assert async_to_sync(scenario)() == {"type": "websocket.close", "code": CLOSE_BAD_FRAME}


def test_it_ignores_a_json_frame(viewer: Any, run_path: str) -> None:
    headers = _headers(viewer)

    async def scenario() -> bool:
        communicator = WebsocketCommunicator(_app(), run_path, headers=headers)
        await communicator.connect(timeout=5)
        await communicator.receive_json_from(timeout=5)  # the status snapshot
        await communicator.send_json_to({"hello": "server"})
        quiet = await communicator.receive_nothing(timeout=0.3)
        await communicator.disconnect()
        return quiet

    assert async_to_sync(scenario)()


@pytest.mark.parametrize(
    "origin,accepted",
    [("https://studio.example.com", True), ("https://studio.example.com:443", True),
     ("http://studio.example.com", False), ("https://studio.example.com:8443", False),
     ("https://evil.example.com", False)],
)
def test_it_checks_scheme_host_and_port_of_the_origin_against_the_trusted_origins(
    settings: Any, viewer: Any, run_path: str, origin: str, accepted: bool
) -> None:
    settings.ALLOWED_HOSTS = ["studio.example.com", "testserver"]
    settings.CSRF_TRUSTED_ORIGINS = ["https://studio.example.com"]
    assert _connects(run_path, _headers(viewer, origin)) == accepted


def test_it_checks_the_host_against_the_allowed_hosts_without_trusted_origins(viewer: Any, run_path: str) -> None:
    assert _connects(run_path, _headers(viewer, "http://localhost:8000"))
    assert not _connects(run_path, _headers(viewer, "http://evil.example.com"))
