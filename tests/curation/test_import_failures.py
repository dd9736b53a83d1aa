"""Imports never stick and never leave an undescribed partial state.

Text PostgreSQL refuses (NUL, lone surrogates) is rejected per row with the field named; a file that
stops being readable part-way (a truncated gzip, a crash) fails the batch with the reason and exactly
what was committed, and importing the complete file again finishes the job.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from curation.models import ImportBatch, ImportStatus, Problem, TestCase
from curation.services import imports as import_service
from curation.services import problem_import

from .conftest import make_record, write_jsonl

pytestmark = pytest.mark.django_db


def _row(record: Any, **changes: Any) -> str:
    row = record.to_export_dict()
    row.update(changes)
    return json.dumps(row)  # ensure_ascii: a lone surrogate travels as its "\\udXXX" escape


def test_it_rejects_a_row_whose_statement_holds_a_nul_and_imports_the_rest(import_records: Any) -> None:
    bad = _row(make_record("nul"), statement="Read a\x00b and print it")
    batch = import_records([make_record("ok1"), bad, make_record("ok2")])
    assert (batch.status, batch.imported_count, batch.rejected_count) == (ImportStatus.SUCCEEDED, 2, 1)
    assert batch.errors == [{"row": 2, "external_id": "nul", "reason":
                             "statement contains a NUL character (U+0000), which the database cannot store"}]


def test_it_rejects_a_row_holding_a_lone_surrogate_in_a_test(import_records: Any) -> None:
    record = make_record("sur")
    row = record.to_export_dict()
    row["tests"][1]["output"] = "\ud800"
    batch = import_records([json.dumps(row), make_record("ok")])
    assert (batch.status, batch.imported_count, batch.rejected_count) == (ImportStatus.SUCCEEDED, 1, 1)
    assert batch.errors[0]["reason"] == "test 2 output contains a lone surrogate (U+D800), which the database cannot store"


def test_it_keeps_a_nul_byte_inside_a_test_input_which_is_stored_compressed(import_records: Any) -> None:
    record = make_record("nul-test")
    record.tests[0].input = "a\x00b\n"
    batch = import_records([record])
    assert (batch.imported_count, batch.rejected_count) == (1, 0)
    assert TestCase.objects.get(problem__external_id="nul-test", order=0).input == "a\x00b\n"


def test_it_stores_a_report_whose_rejected_row_id_holds_a_nul_escaped(import_records: Any) -> None:
    batch = import_records([json.dumps({"external_id": "x\x00y\ud800", "platform": "leetcode"})])
    stored = ImportBatch.objects.get(pk=batch.pk)
    assert stored.status == ImportStatus.SUCCEEDED and stored.rejected_count == 1
    assert stored.errors[0]["external_id"] == "x\\x00y\\ud800"


def _gzip_truncated(path: Path, rows: list[Any], keep: float) -> Path:
    plain = write_jsonl(path.with_suffix(""), rows).read_bytes()
    data = gzip.compress(plain)
    path.write_bytes(data[: int(len(data) * keep)])
    return path


def test_it_fails_a_truncated_gzip_keeping_the_committed_chunks_and_saying_so(tmp_path: Path) -> None:
    rows = [make_record(f"p{i}", tests=40) for i in range(60)]
    path = _gzip_truncated(tmp_path / "rows.jsonl.gz", rows, keep=0.6)
    batch = problem_import(path=path, format="microcoder", batch_size=10)
    assert batch.status == ImportStatus.FAILED
    assert batch.last_committed_row is not None and batch.last_committed_row % 10 == 0
    committed = set(Problem.objects.values_list("external_id", flat=True))
    assert committed == {f"p{i}" for i in range(batch.last_committed_row)}  # whole chunks, nothing after
    assert f"rows 1-{batch.last_committed_row} were committed" in batch.message
    assert "EOFError" in batch.message and "Import the same (complete) file again" in batch.message


def test_it_finishes_a_truncated_import_when_the_complete_file_is_imported_again(tmp_path: Path) -> None:
    rows = [make_record(f"p{i}", tests=40) for i in range(60)]
    first = problem_import(path=_gzip_truncated(tmp_path / "rows.jsonl.gz", rows, keep=0.6), format="microcoder",
                           batch_size=10)
    complete = tmp_path / "complete.jsonl.gz"
    complete.write_bytes(gzip.compress(write_jsonl(tmp_path / "complete.jsonl", rows).read_bytes()))
    again = problem_import(path=complete, format="microcoder", batch_size=10)
    assert again.status == ImportStatus.SUCCEEDED
    assert (again.unchanged_count, again.imported_count) == (first.last_committed_row, 60 - first.last_committed_row)
    assert Problem.objects.count() == 60


def test_it_fails_a_crash_mid_file_with_the_reason_and_the_last_committed_row(
    jsonl_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = jsonl_file([make_record(f"p{i}") for i in range(30)])
    real = import_service.write_items
    calls = {"n": 0}

    def crash_on_third_chunk(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("worker bug")
        return real(*args, **kwargs)

    monkeypatch.setattr(import_service, "write_items", crash_on_third_chunk)
    batch = problem_import(path=path, format="microcoder", batch_size=10)
    stored = ImportBatch.objects.get(pk=batch.pk)
    assert (stored.status, stored.last_committed_row, stored.imported_count) == (ImportStatus.FAILED, 20, 20)
    assert "RuntimeError: worker bug" in stored.message and "nothing after row 20 was written" in stored.message
    assert Problem.objects.count() == 20
    monkeypatch.setattr(import_service, "write_items", real)
    again = problem_import(path=path, format="microcoder", batch_size=10)
    assert (again.status, again.unchanged_count, again.imported_count) == (ImportStatus.SUCCEEDED, 20, 10)


def test_it_resumes_a_failed_import_over_the_api_and_finishes_it(
    jsonl_file: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, curator: Any, api_as: Any,
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.IMPORT_CHUNK_ROWS = 10
    path = jsonl_file([make_record(f"p{i}") for i in range(30)])
    real = import_service.write_items

    def disk_full_after_one_chunk(*args: Any, **kwargs: Any) -> Any:
        if Problem.objects.count() >= 10:
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(import_service, "write_items", disk_full_after_one_chunk)
    failed = problem_import(path=path, format="microcoder", batch_size=10)
    assert (failed.status, failed.last_committed_row) == (ImportStatus.FAILED, 10)
    monkeypatch.setattr(import_service, "write_items", real)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(curator).post(f"/api/imports/{failed.pk}/resume/")
    assert response.status_code == 202
    done = ImportBatch.objects.get(pk=failed.pk)
    assert (done.status, done.unchanged_count, done.imported_count) == (ImportStatus.SUCCEEDED, 10, 20)


def test_it_explains_why_an_uploaded_or_unfailed_import_cannot_be_resumed(
    curator: Any, viewer: Any, api_as: Any, settings: Any
) -> None:
    upload = Path(settings.MEDIA_ROOT) / "imports" / "abc" / "rows.jsonl"
    batch = ImportBatch.objects.create(format="microcoder", filename="rows.jsonl", path=str(upload),
                                       status=ImportStatus.FAILED)
    response = api_as(curator).post(f"/api/imports/{batch.pk}/resume/")
    assert response.status_code == 400 and "upload the complete file again" in response.json()["detail"]
    ImportBatch.objects.filter(pk=batch.pk).update(status=ImportStatus.SUCCEEDED)
    response = api_as(curator).post(f"/api/imports/{batch.pk}/resume/")
    assert response.json() == {"detail": f"import #{batch.pk} is succeeded; only a failed import can be resumed"}
    assert api_as(viewer).post(f"/api/imports/{batch.pk}/resume/").status_code == 403
