"""Base websocket consumer: authenticate, check the role, join one group, forward events."""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from webapp.roles import user_roles

#: close code for a frame that is not JSON text (the 4000-4999 range is the application's)
CLOSE_BAD_FRAME = 4400
#: close code of a socket refused for its user (no role, not logged in) or for an unknown object
CLOSE_NOT_ALLOWED = 4403


class GroupForwardConsumer(AsyncJsonWebsocketConsumer):
    """Subclasses set ``role`` and implement ``group_name`` (and may override ``allowed``)."""

    role = "viewer"

    def group_name(self) -> str:
        raise NotImplementedError

    async def allowed(self) -> bool:
        return True

    async def connect(self) -> None:
        user = self.scope.get("user")
        roles = await database_sync_to_async(user_roles)(user)
        if self.role not in roles or not await self.allowed():
            # Accept, then close with the code: a socket closed during the handshake reaches a browser
            # as a bare 1006 with no reason, and the page would keep reconnecting to a stream it may
            # never read. With 4403 it stops and says "not allowed".
            await self.accept()
            await self.close(code=CLOSE_NOT_ALLOWED)
            return
        self._group = self.group_name()
        await self.channel_layer.group_add(self._group, self.channel_name)
        await self.accept()
        await self.on_joined()

    async def on_joined(self) -> None:
        """Hook: send an initial snapshot after joining."""

    async def disconnect(self, code: int) -> None:
        group = getattr(self, "_group", None)
        if group:
            await self.channel_layer.group_discard(group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any) -> None:
        """Frames must be JSON text: a binary or non-JSON frame closes the socket with 4400 (a clear
        refusal, not a consumer exception); JSON goes on to :meth:`receive_json`."""
        try:
            if text_data is None:
                raise ValueError("binary frame")
            content = await self.decode_json(text_data)
        except (ValueError, RecursionError):
            await self.close(code=CLOSE_BAD_FRAME)
            return
        await self.receive_json(content, **kwargs)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Clients only listen; anything they send is ignored."""

    async def forward(self, message: dict[str, Any]) -> None:
        await self.send_json({"type": message["event"], "data": message["data"]})
