"""Release export: streaming JSONL and Parquet. The row schema (also in ``docs/export-schema.md``):

Each row is ``ProblemRecord.to_export_dict()`` of the problem version the release pinned, plus
curation annotations under ``extra["curation"]``:

======================  ======================  ===============================================
field                   JSONL type              Parquet type
======================  ======================  ===============================================
schema_version          int                     int32 (``curation.records.EXPORT_SCHEMA_VERSION``)
platform                str                     string (``leetcode``, ``codeforces`` ...)
external_id             str                     string (unique within ``platform``)
title, statement        str                     string
io_mode                 "stdin" | "call"        string
fn_name, starter_code   str                     string (call mode: the function to call)
time_limit_s            float                   float64
memory_mb               int                     int64
tags                    [str]                   list<string>
difficulty              str                     string (the platform's own label)
rating                  int | null              int64, nullable
contest_date            "YYYY-MM-DD" | null     string, nullable
url, license            str                     string
checker                 object                  string (JSON) — ``{"kind": "lenient"|...}``
tests                   [{input,output,public}] list<struct<input: string, output: string, public: bool>>
solutions               [{code,language,        list<struct<code: string, language: string, verified: bool>>
                        verified}]
extra                   object                  string (JSON)
======================  ======================  ===============================================

``extra["curation"]`` = ``{"problem_id", "version", "content_hash", "difficulty"`` (bucket
easy|medium|hard|""), ``"stage", "train_test_limit"`` (null = use all tests)``}``, frozen when the
release was created. It is not part of the content hash, so re-importing an export (format
``microcoder``) reproduces every problem's ``content_hash``.

JSONL is generated row by row from a server-side cursor (``iterator(chunk_size=...)``); Parquet is
written in row groups to a temporary file that is then streamed. Neither materializes a release.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from curation.models import DatasetRelease, ReleaseItem, decompress_json

CHUNK_SIZE = 500
JSONL_FLUSH_BYTES = 256 * 1024
PARQUET_ROW_GROUP = 1000

PARQUET_SCHEMA = pa.schema(
    [
        ("schema_version", pa.int32()),
        ("platform", pa.string()),
        ("external_id", pa.string()),
        ("title", pa.string()),
        ("statement", pa.string()),
        ("io_mode", pa.string()),
        ("fn_name", pa.string()),
        ("starter_code", pa.string()),
        ("time_limit_s", pa.float64()),
        ("memory_mb", pa.int64()),
        ("tags", pa.list_(pa.string())),
        ("difficulty", pa.string()),
        ("rating", pa.int64()),
        ("contest_date", pa.string()),
        ("url", pa.string()),
        ("license", pa.string()),
        ("checker", pa.string()),
        (
            "tests",
            pa.list_(pa.struct([("input", pa.string()), ("output", pa.string()), ("public", pa.bool_())])),
        ),
        (
            "solutions",
            pa.list_(pa.struct([("code", pa.string()), ("language", pa.string()), ("verified", pa.bool_())])),
        ),
        ("extra", pa.string()),
    ]
)
_JSON_COLUMNS = ("checker", "extra")


def iter_export_dicts(release: DatasetRelease, *, chunk_size: int = CHUNK_SIZE) -> Iterator[dict[str, Any]]:
    """The release's rows in item order, one decoded pinned version at a time."""
    rows = (
        ReleaseItem.objects.filter(release=release)
        .order_by("id")
        .values_list(
            "problem_id", "content_hash", "difficulty", "stage", "train_test_limit",
            "problem_version__version", "problem_version__record_z",
        )
    )
    for pid, chash, bucket, stage, limit, version, blob in rows.iterator(chunk_size=chunk_size):
        d = decompress_json(blob)
        extra = dict(d.get("extra") or {})
        extra["curation"] = {
            "problem_id": pid, "version": version, "content_hash": chash, "difficulty": bucket,
            "stage": stage, "train_test_limit": limit,
        }
        d["extra"] = extra
        yield d


def iter_jsonl(release: DatasetRelease, *, chunk_size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """UTF-8 JSON Lines of the release, yielded in ~256 KiB pieces (memory stays flat)."""
    buf: list[str] = []
    size = 0
    for d in iter_export_dicts(release, chunk_size=chunk_size):
        line = json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n"
        buf.append(line)
        size += len(line)
        if size >= JSONL_FLUSH_BYTES:
            yield "".join(buf).encode("utf-8")
            buf, size = [], 0
    if buf:
        yield "".join(buf).encode("utf-8")


def to_parquet_row(d: dict[str, Any]) -> dict[str, Any]:
    """An export dict -> the Parquet row (free-form objects as JSON text)."""
    row = {name: d.get(name) for name in PARQUET_SCHEMA.names}
    for name in _JSON_COLUMNS:
        row[name] = json.dumps(row[name] if row[name] is not None else {}, ensure_ascii=False)
    return row


def write_parquet(
    release: DatasetRelease, fh: IO[bytes], *, row_group_size: int = PARQUET_ROW_GROUP
) -> int:
    """Write the release to ``fh`` as Parquet (``PARQUET_SCHEMA``) in row groups; returns the row count."""
    count = 0
    with pq.ParquetWriter(fh, PARQUET_SCHEMA, compression="zstd") as writer:
        group: list[dict[str, Any]] = []
        for d in iter_export_dicts(release):
            group.append(to_parquet_row(d))
            if len(group) >= row_group_size:
                writer.write_table(pa.Table.from_pylist(group, schema=PARQUET_SCHEMA))
                count += len(group)
                group = []
        if group or count == 0:
            writer.write_table(pa.Table.from_pylist(group, schema=PARQUET_SCHEMA))
            count += len(group)
    return count
