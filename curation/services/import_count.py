"""How many rows an import file holds, counted before importing so progress has a total.

Only where counting is cheap and exact: a JSONL file (``.jsonl``/``.ndjson``, gzipped or not) holds one
row per non-blank line, which is exactly what the reader yields (a bad line is a rejected row, still a
row); a Parquet file states its row count in its footer. JSON documents, folders and archives return
None: the import's bar is then indeterminate. Counting reads at most ``max_bytes`` (the import's
decompression limit) and never raises: an unreadable file is the import's to report.
"""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

log = logging.getLogger(__name__)

_BLOCK = 1 << 20
_LINE_SUFFIXES = (".jsonl", ".ndjson")


def _base_suffix(path: Path) -> tuple[str, bool]:
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    return (suffixes[-1] if suffixes else ""), gz


def count_rows(path: Path, *, max_bytes: int) -> int | None:
    """Rows in ``path`` (see the module docstring), or None when unknown."""
    if not path.is_file():
        return None
    suffix, gz = _base_suffix(path)
    try:
        if suffix == ".parquet" and not gz:
            import pyarrow.parquet as pq  # lazy: only Parquet inputs pay for the import

            return int(pq.ParquetFile(path).metadata.num_rows)
        if suffix in _LINE_SUFFIXES:
            return _count_lines(path, gz=gz, max_bytes=max_bytes)
    except Exception:  # noqa: BLE001 - see the module docstring
        log.info("could not count the rows of %s; its import shows no total", path, exc_info=True)
    return None


def _count_lines(path: Path, *, gz: bool, max_bytes: int) -> int | None:
    """Non-blank lines, block by block (a runaway line never sits in memory whole)."""
    rows, content, read = 0, False, 0
    with gzip.open(path, "rb") if gz else open(path, "rb") as fh:
        while block := fh.read(_BLOCK):
            read += len(block)
            if read > max_bytes:
                return None
            *complete, rest = block.split(b"\n")
            for piece in complete:
                if content or piece.strip():
                    rows += 1
                content = False
            content = content or bool(rest.strip())
    return rows + content
