"""Bounds on the work one import may cause: decompressed bytes, compression ratio, row size, archive
entries, nesting depth and unpacking time.

A 255 KB gzip can expand to 256 MiB and a 1 MB zip to over a gigabyte; a reader that trusts its input
fills memory or disk. Every decompressing read of an import goes through a ``Budget``, which raises
``LimitExceeded`` (with a reason naming the setting) as soon as one bound is crossed, so at most one
read chunk beyond the bound is ever held or written.

Nothing here imports Django: the Django layer builds ``ReadLimits`` from its settings and applies them
with ``limits_applied(...)`` around an import; the defaults here are those settings' defaults.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

MIB = 1024 * 1024


class LimitExceeded(Exception):
    """An import crossed one of its ``ReadLimits``; the message says which and how to change it."""


@dataclass(frozen=True)
class ReadLimits:
    #: decompressed bytes one gzip stream or one archive may produce (IMPORT_MAX_DECOMPRESSED_MB)
    max_decompressed_bytes: int = 8192 * MIB
    #: decompressed:compressed above this (once ``ratio_grace_bytes`` came out) is a bomb, not data
    #: (IMPORT_MAX_COMPRESSION_RATIO); real problem dumps compress 5-50:1
    max_ratio: float = 200.0
    ratio_grace_bytes: int = 16 * MIB
    #: one JSONL row (IMPORT_MAX_ROW_MB)
    max_row_bytes: int = 256 * MIB
    #: entries of an uploaded archive (IMPORT_MAX_ARCHIVE_ENTRIES)
    max_entries: int = 100_000
    #: folders deep an archive entry may sit (IMPORT_MAX_ARCHIVE_DEPTH); archives inside it are not unpacked
    max_depth: int = 12
    #: seconds unpacking an archive may take (IMPORT_UNPACK_TIME_LIMIT_S)
    max_seconds: float = 600.0


_current: ContextVar[ReadLimits] = ContextVar("import_read_limits", default=ReadLimits())  # noqa: B039 - frozen


def current_limits() -> ReadLimits:
    return _current.get()


@contextmanager
def limits_applied(limits: ReadLimits) -> Iterator[ReadLimits]:
    """Apply ``limits`` to every import read inside the block (this thread / task only)."""
    token = _current.set(limits)
    try:
        yield limits
    finally:
        _current.reset(token)


class Budget:
    """Counts what one decompression produced against ``limits``; ``add`` raises ``LimitExceeded``."""

    def __init__(self, name: str, limits: ReadLimits | None = None) -> None:
        self.name = name
        self.limits = limits or current_limits()
        self.out_bytes = 0
        self.started = time.monotonic()

    def add(self, out_bytes: int, in_bytes: int) -> None:
        """Record ``out_bytes`` more decompressed output; ``in_bytes`` is the compressed input consumed so far."""
        self.out_bytes += out_bytes
        lim = self.limits
        if self.out_bytes > lim.max_decompressed_bytes:
            raise LimitExceeded(
                f"{self.name} decompresses to more than {_mib(lim.max_decompressed_bytes)} "
                "(IMPORT_MAX_DECOMPRESSED_MB)"
            )
        if self.out_bytes > lim.ratio_grace_bytes and self.out_bytes > lim.max_ratio * max(in_bytes, 1):
            raise LimitExceeded(
                f"{self.name} expands more than {lim.max_ratio:g} times ({_mib(self.out_bytes)} from "
                f"{_mib(in_bytes)}): refused as a decompression bomb (IMPORT_MAX_COMPRESSION_RATIO)"
            )

    def check_time(self) -> None:
        if time.monotonic() - self.started > self.limits.max_seconds:
            raise LimitExceeded(
                f"unpacking {self.name} took longer than {self.limits.max_seconds:g} s (IMPORT_UNPACK_TIME_LIMIT_S)"
            )


class LimitedReader(io.RawIOBase):
    """A binary stream over decompressing ``raw`` that charges every byte to a ``Budget``;
    ``consumed()`` says how many compressed bytes were read so far (for the ratio)."""

    def __init__(self, raw: Any, budget: Budget, consumed: Callable[[], int]) -> None:
        self._raw = raw
        self._budget = budget
        self._consumed = consumed

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        # read1: whatever is decompressed now, so rows before a truncation are still delivered
        data = self._raw.read1(len(buffer)) if hasattr(self._raw, "read1") else self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self._budget.add(n, self._consumed())
        return n

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


def _mib(n: float) -> str:
    return f"{n / MIB:,.1f} MiB" if n < 1024 * MIB else f"{n / (1024 * MIB):,.1f} GiB"
