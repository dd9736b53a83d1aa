"""Bounded work per upload and per import: bombs, oversized uploads, long rows, deep or crowded
archives are refused with a reason naming the setting; nothing huge reaches memory or disk; uploaded
files are deleted when their batch ends."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.importers.limits import MIB, LimitExceeded, ReadLimits
from curation.models import ImportBatch, ImportStatus, Problem
from curation.services import archives, import_batch_create

from .conftest import make_record

pytestmark = pytest.mark.django_db


def _upload(name: str, content: bytes, capture: Any, fmt: str = "auto") -> ImportBatch:
    """Upload as the request does, then run the worker's task (eagerly); the finished batch."""
    with capture(execute=True):
        batch = import_batch_create(uploaded_file=SimpleUploadedFile(name, content), format=fmt, run_pipeline=False)
    return ImportBatch.objects.get(pk=batch.pk)


def _uploads_left() -> list[Path]:
    root = Path(settings.MEDIA_ROOT) / "imports"
    return list(root.rglob("*")) if root.exists() else []


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_it_refuses_a_gzip_bomb_after_reading_little_of_it(django_capture_on_commit_callbacks: Any) -> None:
    bomb = gzip.compress(b'{"statement": "' + b"0" * (64 * MIB) + b'"}\n', compresslevel=9)  # ~64 KB
    tracemalloc.start()
    batch = _upload("rows.jsonl.gz", bomb, django_capture_on_commit_callbacks, fmt="microcoder")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert batch.status == ImportStatus.FAILED
    assert "refused as a decompression bomb (IMPORT_MAX_COMPRESSION_RATIO)" in batch.message
    assert peak < 40 * MIB  # the whole line would be 64 MiB of bytes plus as much again as text
    assert _uploads_left() == []


def test_it_refuses_a_zip_bomb_writing_at_most_one_chunk_past_the_ratio_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "bomb.zip"
    archive.write_bytes(_zip({"problems.jsonl": b"\n" * (64 * MIB)}))  # ~64 KB
    written: list[int] = []
    real_rmtree = archives.shutil.rmtree

    def measure_then_remove(path: Any, **kwargs: Any) -> None:
        written.append(sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file()))
        real_rmtree(path, **kwargs)

    monkeypatch.setattr(archives.shutil, "rmtree", measure_then_remove)
    with pytest.raises(LimitExceeded, match="decompression bomb"):
        archives.unpack_zip(archive, tmp_path / "out", ReadLimits())
    assert written and written[0] <= ReadLimits().ratio_grace_bytes + archives.CHUNK_BYTES
    assert not (tmp_path / "out").exists()


def test_it_refuses_a_gzip_over_the_decompressed_size_limit(
    settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.IMPORT_MAX_DECOMPRESSED_MB = 1
    rows = [json.dumps(make_record(f"p{i}", tests=30).to_export_dict()) for i in range(400)]
    batch = _upload("rows.jsonl.gz", gzip.compress("\n".join(rows).encode()), django_capture_on_commit_callbacks)
    assert batch.status == ImportStatus.FAILED
    assert "decompresses to more than 1.0 MiB (IMPORT_MAX_DECOMPRESSED_MB)" in batch.message
    assert f"rows 1-{batch.last_committed_row} were committed" in batch.message or "nothing was written" in batch.message


def test_it_rejects_a_row_longer_than_the_row_limit_and_reads_on(
    settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.IMPORT_MAX_ROW_MB = 1
    long_row = json.dumps(make_record("long", statement="x" * (2 * MIB)).to_export_dict())
    content = "\n".join([long_row, json.dumps(make_record("ok").to_export_dict())]).encode()
    batch = _upload("rows.jsonl", content, django_capture_on_commit_callbacks, fmt="microcoder")
    assert (batch.status, batch.imported_count, batch.rejected_count) == (ImportStatus.SUCCEEDED, 1, 1)
    assert batch.errors[0]["reason"] == "line 1 is longer than 1 MiB (IMPORT_MAX_ROW_MB)"


def test_it_refuses_an_archive_with_too_many_entries(settings: Any, django_capture_on_commit_callbacks: Any) -> None:
    settings.IMPORT_MAX_ARCHIVE_ENTRIES = 10
    batch = _upload("many.zip", _zip({f"f{i}.txt": b"x" for i in range(11)}), django_capture_on_commit_callbacks)
    assert batch.status == ImportStatus.FAILED
    assert batch.message == "the archive has 11 entries (limit 10, IMPORT_MAX_ARCHIVE_ENTRIES)"
    assert _uploads_left() == []


def test_it_refuses_an_archive_nested_too_deep(settings: Any, django_capture_on_commit_callbacks: Any) -> None:
    settings.IMPORT_MAX_ARCHIVE_DEPTH = 4
    batch = _upload("deep.zip", _zip({"a/b/c/d/e.jsonl": b"{}"}), django_capture_on_commit_callbacks)
    assert batch.status == ImportStatus.FAILED
    assert batch.message == "'a/b/c/d/e.jsonl' is nested 5 levels deep (limit 4, IMPORT_MAX_ARCHIVE_DEPTH)"


def test_it_stops_unpacking_past_the_time_limit(tmp_path: Path) -> None:
    archive = tmp_path / "slow.zip"
    archive.write_bytes(_zip({"problems.jsonl": b"{}\n"}))
    with pytest.raises(LimitExceeded, match=r"took longer than 0 s \(IMPORT_UNPACK_TIME_LIMIT_S\)"):
        archives.unpack_zip(archive, tmp_path / "out", ReadLimits(max_seconds=0.0))


def test_it_deletes_the_uploaded_files_when_the_batch_succeeds(django_capture_on_commit_callbacks: Any) -> None:
    content = _zip({"export/problems.jsonl": json.dumps(make_record("p1").to_export_dict()).encode()})
    batch = _upload("export.zip", content, django_capture_on_commit_callbacks)
    assert (batch.status, batch.format, batch.imported_count) == (ImportStatus.SUCCEEDED, "microcoder", 1)
    assert _uploads_left() == []


def test_it_answers_400_naming_the_upload_limit_and_keeps_nothing(
    settings: Any, curator: Any, api_as: Any
) -> None:
    settings.IMPORT_MAX_UPLOAD_MB = 1
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024  # streamed through the limited temporary-file handler
    upload = SimpleUploadedFile("big.jsonl", b"{}\n" * (MIB // 2))
    response = api_as(curator).post("/api/imports/", {"file": upload, "format": "microcoder"}, format="multipart")
    assert response.status_code == 400
    assert "larger than the upload limit of 1 MB" in response.json()["file"][0]
    assert ImportBatch.objects.count() == 0 and Problem.objects.count() == 0 and _uploads_left() == []
