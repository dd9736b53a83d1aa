"""Streaming responses that stay streaming under ASGI.

Django's ASGI handler turns a *synchronous* streaming iterator into a list before sending the first
byte (``StreamingHttpResponse.__aiter__``), which would load a whole release export into memory under
daphne. ``stream_body`` hands Django an async generator instead, pulling a few parts at a time from the
synchronous iterator in the thread that owns its database cursor (``thread_sensitive``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import IO, Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header

#: parts pulled per hop to the sync thread (each part is already ~256 KiB for exports)
PARTS_PER_HOP = 4


def _take(it: Iterator[bytes], n: int) -> list[bytes]:
    out: list[bytes] = []
    for part in it:
        out.append(part)
        if len(out) >= n:
            break
    return out


async def _async_parts(parts: Iterable[bytes]) -> AsyncIterator[bytes]:
    it = iter(parts)
    take = sync_to_async(_take, thread_sensitive=True)
    while True:
        chunk = await take(it, PARTS_PER_HOP)
        if not chunk:
            return
        for part in chunk:
            yield part


def stream_body(request: Any, parts: Iterable[bytes]) -> Iterable[bytes] | AsyncIterator[bytes]:
    """``parts`` as the body of a StreamingHttpResponse for ``request`` (a Django or DRF request)."""
    django_request = getattr(request, "_request", request)
    return _async_parts(parts) if isinstance(django_request, ASGIRequest) else parts


def file_parts(fh: IO[bytes], block_size: int = 1 << 16) -> Iterator[bytes]:
    """Blocks of an open file, closing it at the end (or when the response is closed early)."""
    try:
        while block := fh.read(block_size):
            yield block
    finally:
        fh.close()


def safe_filename(stem: str) -> str:
    """A download file name made of word characters, dots and dashes only."""
    return re.sub(r"[^\w.-]+", "_", stem).strip("._") or "download"


def attachment(
    request: Any, parts: Iterable[bytes], *, filename: str, content_type: str
) -> StreamingHttpResponse:
    """A streaming download of ``parts`` named ``filename`` (sanitized)."""
    response = StreamingHttpResponse(stream_body(request, parts), content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, safe_filename(filename)) or "attachment"
    return response
