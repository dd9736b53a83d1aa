"""MicroCoder Studio's own export format: one ``ProblemRecord.to_export_dict()`` per JSONL(.gz) line.

Importing an export reproduces every record's ``content_hash()`` exactly, so a release can be
re-imported (or moved between installations) without creating new problem versions. For that reason
this importer applies no denoising: the content is taken as written. Rows with a newer
``schema_version`` than this code knows are rejected rather than half-read.

A Parquet export is read too when its columns are the export dict's keys; nested fields
(``tests``, ``solutions``, ``checker``, ``extra``, ``tags``) may be native lists/structs or JSON strings
(JSON strings are the robust choice for ``extra`` and ``checker``, whose keys differ between rows; null
checker flags from a unioned struct column are dropped).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.importers.base import ParsedRow, RowRejected, parse_rows
from curation.records import EXPORT_SCHEMA_VERSION, ProblemRecord

_REQUIRED = ("platform", "external_id", "title", "statement")
_NESTED = ("tests", "solutions", "checker", "extra", "tags")


class MicroCoderImporter:
    name: str = "microcoder"
    description: str = "MicroCoder Studio release export (JSONL(.gz) of to_export_dict rows; Parquet too)"
    platforms: tuple[str, ...] = ()  # whatever the export holds

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        return bool(sample) and {"schema_version", "platform", "external_id"} <= set(sample or {})

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        return parse_rows(path, convert_row)


def convert_row(obj: dict[str, Any]) -> ProblemRecord:
    version = obj.get("schema_version", EXPORT_SCHEMA_VERSION)
    if not isinstance(version, int) or isinstance(version, bool):
        raise RowRejected(f"schema_version must be an integer, got {version!r}")
    if version > EXPORT_SCHEMA_VERSION:
        raise RowRejected(f"schema_version {version} is newer than this importer ({EXPORT_SCHEMA_VERSION})")
    for key in _REQUIRED:
        if key not in obj:
            raise RowRejected(f"missing {key!r} field")
    d = dict(obj)
    for key in _NESTED:
        if isinstance(d.get(key), str):
            try:
                d[key] = json.loads(d[key])
            except json.JSONDecodeError as exc:
                raise RowRejected(f"field {key!r} is not valid JSON: {exc.msg}") from exc
        if key in d and d[key] is None:
            d.pop(key)  # Parquet nulls for absent nested values -> the dataclass default
    if isinstance(d.get("checker"), dict):
        # A native Parquet struct column unions the flags of all rows and fills the rest with nulls.
        d["checker"] = {k: v for k, v in d["checker"].items() if v is not None}
    for key in ("tests", "solutions"):
        items = d.get(key, [])
        if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
            raise RowRejected(f"field {key!r} must be a list of objects")
    try:
        return ProblemRecord.from_export_dict(d)
    except TypeError as exc:  # an unknown key inside a test/solution object
        raise RowRejected(f"malformed record: {exc}") from exc


IMPORTER = MicroCoderImporter()
