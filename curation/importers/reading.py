"""Reading an importer's input: text and gzip files, JSONL / JSON / Parquet rows, within ``ReadLimits``.

Row numbers are 1-based: the line number in a JSONL file (blank lines count, so the number matches what
an editor shows), the element index in a JSON array, the row index in a Parquet file.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from curation.importers.limits import Budget, LimitedReader, LimitExceeded, current_limits
from curation.importers.rows import RowError


def open_text(path: Path) -> IO[str]:
    """Open a text file, transparently gunzipping ``*.gz``. UTF-8; undecodable bytes are replaced
    (a stray byte must not lose the whole file) and a BOM is dropped. A gzip stream is read through the
    current ``ReadLimits`` (decompressed size and ratio): a bomb raises ``LimitExceeded`` early."""
    if path.suffix == ".gz":
        gz = gzip.open(path, "rb")
        source: Any = gz.fileobj  # the compressed file: its position is the compressed input consumed
        limited = LimitedReader(gz, Budget(path.name), lambda: source.tell() if source and not source.closed else 0)
        return io.TextIOWrapper(io.BufferedReader(limited), encoding="utf-8-sig", errors="replace")
    return open(path, encoding="utf-8-sig", errors="replace")


def _base_suffix(path: Path) -> str:
    """``.jsonl`` for ``x.jsonl.gz``; the file's last real suffix otherwise."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


RawRow = tuple[int, "dict[str, Any] | RowError"]


def iter_raw_rows(path: Path) -> Iterator[RawRow]:
    """Stream ``(row, dict)`` from a JSONL(.gz), JSON (an array or one object) or Parquet file.

    A line that is not a JSON object yields ``(row, RowError)`` instead, and reading continues.
    JSONL is read line by line; Parquet batch by batch; a ``.json`` file is parsed once as a whole
    (the format has no streaming boundary), unless it turns out to hold one object per line.

    Failures that leave the rest of the input unreadable are not row errors and raise: a missing
    file (``OSError``), a corrupt or truncated gzip (``OSError``/``EOFError``), a ``.json`` document
    that does not parse (``ValueError``), a corrupt Parquet file (pyarrow's errors). The import
    service reports those by failing the batch.
    """
    suffix = _base_suffix(path)
    if suffix == ".parquet":
        yield from _iter_parquet(path)
    elif suffix == ".json":
        yield from _iter_json_document(path)
    else:
        yield from _iter_jsonl(path)


def _iter_jsonl(path: Path) -> Iterator[RawRow]:
    max_chars = current_limits().max_row_bytes
    with open_text(path) as fh:
        for lineno, line in enumerate(iter(lambda: fh.readline(max_chars + 1), ""), start=1):
            if len(line) > max_chars and not line.endswith("\n"):
                _skip_rest_of_line(fh)  # never hold more than one limit's worth of a runaway line
                reason = f"line {lineno} is longer than {max_chars // (1024 * 1024)} MiB (IMPORT_MAX_ROW_MB)"
                yield lineno, RowError(lineno, reason)
                continue
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                reason = f"invalid JSON at line {lineno}: {exc.msg} (column {exc.colno})"
                yield lineno, RowError(lineno, reason)
                continue
            if not isinstance(obj, dict):
                reason = f"line {lineno} is a JSON {type(obj).__name__}, not an object"
                yield lineno, RowError(lineno, reason)
                continue
            yield lineno, obj


def _skip_rest_of_line(fh: IO[str]) -> None:
    while True:
        part = fh.readline(1024 * 1024)
        if not part or part.endswith("\n"):
            return


def _iter_json_document(path: Path) -> Iterator[RawRow]:
    with open_text(path) as fh:
        text = fh.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        # Many ".json" dumps are really JSON Lines; fall back to reading them as such.
        if text.lstrip().startswith("{") and "\n" in text.strip():
            yield from _iter_jsonl(path)
            return
        raise ValueError(f"{path.name} is not a valid JSON document: {exc.msg} at line {exc.lineno}") from exc
    items = doc if isinstance(doc, list) else [doc]
    for index, obj in enumerate(items, start=1):
        if isinstance(obj, dict):
            yield index, obj
        else:
            yield index, RowError(index, f"element {index} is a JSON {type(obj).__name__}, not an object")


def _iter_parquet(path: Path) -> Iterator[RawRow]:
    import pyarrow.parquet as pq  # lazy: only Parquet inputs pay for the import

    index = 0
    for batch in pq.ParquetFile(path).iter_batches(batch_size=256):
        for obj in batch.to_pylist():
            index += 1
            yield index, obj


def first_raw_row(path: Path) -> dict[str, Any] | None:
    """The first well-formed row of a data file, or ``None`` (unreadable, empty, or a folder)."""
    if not path.is_file():
        return None
    try:
        for _, obj in iter_raw_rows(path):
            if isinstance(obj, dict):
                return obj
    except LimitExceeded:
        raise  # a bomb is not "another format": say why it was refused
    except Exception:  # noqa: BLE001 - corrupt gzip/JSON/Parquet (pyarrow has its own errors) = "not this format"
        return None
    return None
