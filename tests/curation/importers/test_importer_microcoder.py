"""Our own export format: export -> import reproduces identical content hashes."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from importer_testing import FIXTURES, SHARED_DATA, errors, records

from curation.importers import detect_format, get_importer
from curation.records import EXPORT_SCHEMA_VERSION, ProblemRecord


def _every_fixture_record() -> list[ProblemRecord]:
    out: list[ProblemRecord] = []
    for path in sorted(FIXTURES.rglob("*.json*")) + [FIXTURES / "icpc" / "packages"]:
        fmt = detect_format(path)
        assert fmt is not None, path
        out += records(fmt, path)
    return out


def _export(recs: list[ProblemRecord], path: Path) -> None:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as fh:  # type: ignore[operator]
        for rec in recs:
            fh.write(json.dumps(rec.to_export_dict(), ensure_ascii=False) + "\n")


def test_export_then_import_reproduces_every_content_hash(tmp_path: Path) -> None:
    originals = _every_fixture_record()
    path = tmp_path / "release.jsonl"
    _export(originals, path)
    again = records("microcoder", path)
    assert len(originals) == len(again) >= 19
    assert [r.content_hash() for r in again] == [r.content_hash() for r in originals]
    assert again == originals  # nothing is re-denoised or lost, extra included


def test_the_round_trip_also_holds_for_the_real_samples(tmp_path: Path) -> None:
    sources = [
        ("livecodebench", SHARED_DATA / "livecodebench-sample" / "livecodebench_v1_sample.jsonl"),
        ("codecontests", SHARED_DATA / "codecontests-sample" / "code_contests_sample.jsonl"),
    ]
    present = [(fmt, p) for fmt, p in sources if p.exists()]
    if not present:
        import pytest

        pytest.skip(f"real samples not available under {SHARED_DATA}")
    originals = [rec for fmt, p in present for rec in records(fmt, p)]
    path = tmp_path / "release.jsonl.gz"
    _export(originals, path)
    assert [r.content_hash() for r in records("microcoder", path)] == [r.content_hash() for r in originals]


def test_a_parquet_export_with_json_encoded_nested_columns_round_trips(tmp_path: Path) -> None:
    originals = _every_fixture_record()
    rows = []
    for rec in originals:
        d = rec.to_export_dict()
        for key in ("tests", "solutions", "checker", "extra", "tags"):
            d[key] = json.dumps(d[key])
        rows.append(d)
    path = tmp_path / "release.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert [r.content_hash() for r in records("microcoder", path)] == [r.content_hash() for r in originals]


def test_a_row_from_a_newer_schema_is_rejected_not_half_read(tmp_path: Path) -> None:
    row = ProblemRecord("codeforces", "1A", "T", "S").to_export_dict()
    row["schema_version"] = EXPORT_SCHEMA_VERSION + 1
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps(row) + "\n")
    newer = EXPORT_SCHEMA_VERSION + 1
    assert errors("microcoder", path) == [
        f"row 1 (1A): schema_version {newer} is newer than this importer ({EXPORT_SCHEMA_VERSION})"
    ]


def test_an_unknown_key_inside_a_test_is_a_row_error(tmp_path: Path) -> None:
    row = ProblemRecord("codeforces", "1A", "T", "S").to_export_dict()
    row["tests"] = [{"input": "1", "output": "1", "weight": 2}]
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (row_result,) = list(get_importer("microcoder").parse(path))
    assert row_result.error is not None and "weight" in row_result.error.reason
