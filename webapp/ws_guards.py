"""Guards in front of the websocket consumers (``webapp/asgi.py``).

- :func:`origin_guard`: a browser's websocket handshake carries an ``Origin``; with
  ``DJANGO_CSRF_TRUSTED_ORIGINS`` set (full origins, e.g. ``https://studio.example.com:8443``) only those
  exact scheme + host + port combinations may connect (channels' ``OriginValidator``; a missing port
  means the scheme's default). Without it (the demo) the host alone is checked against
  ``DJANGO_ALLOWED_HOSTS``. A refused handshake gets HTTP 403.
- :class:`UnknownPathConsumer`: the last websocket route. A path no consumer serves is accepted and at
  once closed with code 4404, instead of an exception in the URL router (which daphne turns into an
  abrupt failure and a logged traceback).
"""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from channels.security.websocket import AllowedHostsOriginValidator, OriginValidator
from django.conf import settings
from django.urls import re_path

#: close code of a websocket path that no consumer serves
CLOSE_UNKNOWN_PATH = 4404


def origin_guard(application: Any) -> Any:
    """``application`` behind the origin check described in the module docstring."""
    origins = list(settings.CSRF_TRUSTED_ORIGINS)
    if origins:
        return OriginValidator(application, origins)
    return AllowedHostsOriginValidator(application)


class UnknownPathConsumer(AsyncWebsocketConsumer):
    """Closes every connection with :data:`CLOSE_UNKNOWN_PATH` (after accepting, so clients see the code)."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=CLOSE_UNKNOWN_PATH)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Nothing is served here."""


def with_fallback(patterns: list[Any]) -> list[Any]:
    """``patterns`` plus the catch-all route of :class:`UnknownPathConsumer`."""
    return [*patterns, re_path(r"", UnknownPathConsumer.as_asgi())]
