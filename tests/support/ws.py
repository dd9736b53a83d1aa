"""Websocket helpers for consumer tests (channels' ``WebsocketCommunicator``)."""

from __future__ import annotations

from typing import Any


async def refusal_code(communicator: Any, timeout: float = 5) -> int | None:
    """The close code with which the server refuses this socket, or None when it stays open.

    Our consumers refuse by accepting and at once closing with an application code (4403 not allowed,
    4404 unknown path), so that a browser sees the code instead of a bare 1006; a socket closed during
    the handshake (channels' own refusals) reports its code too."""
    connected, code = await communicator.connect(timeout=timeout)
    if not connected:
        return int(code) if code is not None else None
    message = await communicator.receive_output(timeout=timeout)
    await communicator.disconnect()
    return int(message["code"]) if message["type"] == "websocket.close" else None
