"""Length-prefixed frames between the judge, its sandboxed workers and their runners.

A frame is ``struct "<II"`` (header length, blob length), a UTF-8 JSON header (an object) and an opaque
byte blob. Byte payloads (code, test input, program output) travel in the blob so they are never
JSON-escaped; the header says how to split it (``"parts": [n0, n1, ...]``). File descriptors may ride
along with a frame (``SCM_RIGHTS``) on Unix sockets.

This module is loaded twice: by the judge as ``evaluator._protocol`` and, inside the sandbox, as a
top-level module next to ``_worker.py``. It therefore imports only the standard library.
"""

from __future__ import annotations

import json
import socket
import struct
import time
from collections.abc import Sequence
from typing import Any

_HEAD = struct.Struct("<II")
#: refuse frames whose header or blob claims more than this (a corrupted or hostile peer)
MAX_HEADER = 64 << 20
MAX_BLOB = 1 << 30
#: most descriptors accepted with one frame
MAX_FDS = 8


class ProtocolError(Exception):
    """The peer closed the connection, timed out, or sent something that is not a frame."""


class PeerClosed(ProtocolError):
    """The peer closed the connection (for a sandboxed process: it died)."""


class PeerTimeout(ProtocolError):
    """No complete frame arrived before the deadline."""


class FrameTooLarge(ProtocolError):
    """The peer announced a frame larger than the receiver accepts."""


def pack(header: dict[str, Any], parts: Sequence[bytes] = ()) -> bytes:
    """Encode one frame; ``parts`` are concatenated into the blob and their sizes stored in the header."""
    if parts:
        header = dict(header, parts=[len(p) for p in parts])
    head = json.dumps(header, separators=(",", ":")).encode()
    blob = b"".join(parts)
    return _HEAD.pack(len(head), len(blob)) + head + blob


def send(sock: socket.socket, header: dict[str, Any], parts: Sequence[bytes] = (),
         fds: Sequence[int] = ()) -> None:
    """Send one frame (blocking). Descriptors in ``fds`` are duplicated into the peer."""
    data = pack(header, parts)
    if fds:
        sent = socket.send_fds(sock, [data[:4096]], list(fds))
        data = data[sent:]
    if data:
        sock.sendall(data)


def split_parts(header: dict[str, Any], blob: bytes) -> list[bytes]:
    """The blob cut back into the parts listed in ``header["parts"]``."""
    out: list[bytes] = []
    pos = 0
    for n in header.get("parts", ()):
        out.append(blob[pos:pos + n])
        pos += n
    return out


def _recv_exact(sock: socket.socket, n: int, deadline: float | None, fds: list[int] | None) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PeerTimeout("timed out waiting for a frame")
            sock.settimeout(left)
        else:
            sock.settimeout(None)
        try:
            if fds is not None:
                chunk, got, _flags, _addr = socket.recv_fds(sock, n - len(buf), MAX_FDS)
                fds.extend(got)
            else:
                chunk = sock.recv(min(n - len(buf), 1 << 20))
        except TimeoutError as exc:
            raise PeerTimeout("timed out waiting for a frame") from exc
        except OSError as exc:
            raise PeerClosed(f"connection error: {exc}") from exc
        if not chunk:
            raise PeerClosed("peer closed the connection")
        buf += chunk
    return bytes(buf)


def recv(sock: socket.socket, deadline: float | None = None, *, with_fds: bool = False,
         max_blob: int = MAX_BLOB) -> tuple[dict[str, Any], bytes, list[int]]:
    """Receive one frame: (header, blob, received descriptors). ``deadline`` is ``time.monotonic()``
    based; None waits forever. Raises PeerClosed, PeerTimeout or ProtocolError."""
    fds: list[int] | None = [] if with_fds else None
    head_len, blob_len = _HEAD.unpack(_recv_exact(sock, _HEAD.size, deadline, fds))
    if head_len > MAX_HEADER or blob_len > max_blob:
        raise FrameTooLarge(f"frame too large ({head_len} + {blob_len} bytes)")
    raw = _recv_exact(sock, head_len, deadline, fds)
    blob = _recv_exact(sock, blob_len, deadline, fds) if blob_len else b""
    try:
        header = json.loads(raw)
    except ValueError as exc:
        raise ProtocolError("frame header is not JSON") from exc
    if not isinstance(header, dict):
        raise ProtocolError("frame header is not an object")
    return header, blob, fds or []
