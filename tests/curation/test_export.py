"""JSONL and Parquet export, and the export -> re-import content-hash round trip."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from curation.export import iter_jsonl, write_parquet
from curation.models import DatasetRelease, Problem
from curation.records import ProblemRecord
from curation.services import problem_import, release_create

from .conftest import make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(import_records: Any) -> DatasetRelease:
    import_records([
        make_record("p1", tests=3, rating=1500),
        make_record("p2", platform="codeforces", tags=[], contest_date=None, time_limit_s=1),
        make_record("p3", solutions=0),
    ])
    return release_create(name="r", filter_spec={})


def _jsonl_rows(release: DatasetRelease) -> list[dict[str, Any]]:
    return [json.loads(line) for line in b"".join(iter_jsonl(release)).decode().splitlines()]


def _hashes() -> dict[tuple[str, str], str]:
    return {(p.platform.name, p.external_id): p.content_hash for p in Problem.objects.select_related("platform")}


def test_it_exports_one_export_dict_per_line_in_release_order(release: DatasetRelease) -> None:
    rows = _jsonl_rows(release)
    assert [r["external_id"] for r in rows] == ["p1", "p2", "p3"]
    assert rows[0]["schema_version"] == 1 and rows[0]["tests"][0] == {"input": "0 1\n", "output": "1\n", "public": True}


def test_it_annotates_rows_with_the_frozen_curation_state(release: DatasetRelease) -> None:
    curation = _jsonl_rows(release)[0]["extra"]["curation"]
    problem = Problem.objects.get(external_id="p1")
    assert curation == {
        "problem_id": problem.pk, "version": 1, "content_hash": problem.content_hash, "difficulty": "medium",
        "stage": "imported", "train_test_limit": None,
    }


def test_it_exports_rows_whose_record_hash_is_the_stored_content_hash(release: DatasetRelease) -> None:
    exported = {(r["platform"], r["external_id"]): ProblemRecord.from_export_dict(r).content_hash()
                for r in _jsonl_rows(release)}
    assert exported == _hashes()


def _reimport(tmp_path: Path, name: str, data: bytes) -> Any:
    """Import an export into the same database: every row must be recognised as unchanged, i.e. the
    re-imported record has exactly the stored content hash of its (platform, external_id)."""
    path = tmp_path / name
    path.write_bytes(data)
    return problem_import(path=path, format="microcoder")


def test_it_reproduces_content_hashes_when_a_jsonl_export_is_reimported(release: DatasetRelease, tmp_path: Path) -> None:
    before = _hashes()
    batch = _reimport(tmp_path, "export.jsonl", b"".join(iter_jsonl(release)))
    assert (batch.unchanged_count, batch.imported_count, batch.updated_count, batch.rejected_count) == (3, 0, 0, 0)
    assert _hashes() == before


def test_it_reproduces_content_hashes_when_a_parquet_export_is_reimported(
    release: DatasetRelease, tmp_path: Path
) -> None:
    before = _hashes()
    buf = io.BytesIO()
    write_parquet(release, buf)
    batch = _reimport(tmp_path, "export.parquet", buf.getvalue())
    assert (batch.unchanged_count, batch.imported_count, batch.updated_count, batch.rejected_count) == (3, 0, 0, 0)
    assert _hashes() == before


def test_it_writes_parquet_in_row_groups_with_the_documented_schema(release: DatasetRelease) -> None:
    buf = io.BytesIO()
    assert write_parquet(release, buf, row_group_size=2) == 3
    parquet = pq.ParquetFile(io.BytesIO(buf.getvalue()))
    assert parquet.metadata.num_row_groups == 2
    assert str(parquet.schema_arrow.field("tests").type) == (
        "list<element: struct<input: string, output: string, public: bool>>"
    )


def test_it_exports_the_pinned_version_after_a_problem_changed(release: DatasetRelease, import_records: Any) -> None:
    import_records([make_record("p1", tests=7, rating=1500)])
    assert len(_jsonl_rows(release)[0]["tests"]) == 3
