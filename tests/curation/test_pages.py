"""The curation pages: what a viewer sees and what a curator can do."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from curation.models import DatasetRelease, ImportBatch, Problem
from curation.services import problems_check_constraints, problems_normalize

from .conftest import LONG_STATEMENT, make_record

pytestmark = pytest.mark.django_db


def test_it_lists_problems_with_their_stage_and_filters(import_records: Any, viewer: Any, client_as: Any) -> None:
    import_records([make_record("p1", difficulty="Hard"), make_record("p2", difficulty="Easy")])
    html = client_as(viewer).get(reverse("curation:problem-list") + "?difficulty=hard").content.decode()
    assert "Problem p1" in html and "Problem p2" not in html
    assert '<span class="badge">imported</span>' in html


def test_it_keeps_the_valid_filters_and_explains_an_invalid_one(import_records: Any, viewer: Any, client_as: Any) -> None:
    import_records([make_record("p1", difficulty="Hard"), make_record("p2", difficulty="Easy")])
    url = reverse("curation:problem-list") + "?difficulty=hard&contest_date_from=2024-13-01"
    html = client_as(viewer).get(url).content.decode()
    assert "Problem p1" in html and "Problem p2" not in html
    assert 'class="error"' in html


def test_it_explains_a_problems_stage_on_its_page(import_records: Any, viewer: Any, client_as: Any) -> None:
    import_records([
        make_record("1A", platform="codeforces", statement=LONG_STATEMENT),
        make_record("SUMTWO", platform="codechef", statement=LONG_STATEMENT),
    ])
    problems_normalize()
    problems_check_constraints()
    dup = Problem.objects.get(external_id="SUMTWO")
    html = client_as(viewer).get(reverse("curation:problem-detail", args=[dup.pk])).content.decode()
    assert "repeats codeforces/1A" in html
    assert "1 reference solution awaiting the evaluator" in html
    assert "v1" in html and '<span class="m">0</span> <span class="m">1</span>' in html  # history, a test


def test_it_links_a_trainer_from_a_problem_to_the_judge_but_not_a_viewer(
    import_records: Any, viewer: Any, trainer: Any, client_as: Any
) -> None:
    import_records([make_record("p1")])
    url = reverse("curation:problem-detail", args=[Problem.objects.get().pk])
    link = f'{reverse("evaluator:judge")}?problem={Problem.objects.get().pk}'
    assert link in client_as(trainer).get(url).content.decode()
    assert link not in client_as(viewer).get(url).content.decode()


def _upload(client: Any, name: str, content: bytes, fmt: str = "auto") -> Any:
    return client.post(
        reverse("curation:import"),
        {"file": SimpleUploadedFile(name, content), "format": fmt, "run_pipeline": "on"},
    )


def test_it_imports_an_upload_and_shows_the_row_error_report(
    curator: Any, client_as: Any, django_capture_on_commit_callbacks: Any
) -> None:
    lines = [json.dumps(make_record("p1").to_export_dict()), "[1, 2]"]
    client = client_as(curator)
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, "rows.jsonl", "\n".join(lines).encode())
    batch = ImportBatch.objects.get()
    assert response["Location"] == reverse("curation:import-detail", args=[batch.pk])
    html = client.get(response["Location"]).content.decode()
    assert "line 2 is a JSON list, not an object" in html
    assert Problem.objects.get().stage == "constraints_pending"  # the pipeline ran after the import


def _icpc_zip() -> bytes:
    files = {
        "hello/problem.yaml": "name: Hello\nlimits:\n  memory: 512\n",
        "hello/problem_statement/problem.en.md": "Read a name and greet it. " * 8,
        "hello/data/sample/1.in": "Ada\n",
        "hello/data/sample/1.ans": "Hello Ada\n",
        "hello/data/secret/2.in": "Bob\n",
        "hello/data/secret/2.ans": "Hello Bob\n",
        "hello/submissions/accepted/ok.py": "print('Hello', input())\n",
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(f"contest/{name}", text)
    return buf.getvalue()


def test_it_imports_a_zip_of_icpc_packages(curator: Any, client_as: Any, django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        _upload(client_as(curator), "contest.zip", _icpc_zip())
    batch = ImportBatch.objects.get()
    assert (batch.format, batch.status, batch.imported_count) == ("icpc", "succeeded", 1), batch.errors
    problem = Problem.objects.get()
    assert (problem.title, problem.test_count, problem.memory_mb) == ("Hello", 2, 512)


def _failed_upload(client: Any, name: str, content: bytes, fmt: str, capture: Any) -> str:
    """Upload in a request (which only stores the file), run the worker's task, and return the page
    of the batch, which failed with its reason; the uploaded files are gone."""
    with capture(execute=True):
        response = _upload(client, name, content, fmt=fmt)
    batch = ImportBatch.objects.get()
    assert response["Location"] == reverse("curation:import-detail", args=[batch.pk])
    assert batch.status == "failed" and Problem.objects.count() == 0
    assert not any((Path(settings.MEDIA_ROOT) / "imports").iterdir())
    return client.get(response["Location"]).content.decode()


def test_it_fails_a_zip_that_escapes_its_folder_in_the_worker(
    curator: Any, client_as: Any, django_capture_on_commit_callbacks: Any
) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("../evil.txt", "x")
    html = _failed_upload(client_as(curator), "evil.zip", buf.getvalue(), "icpc", django_capture_on_commit_callbacks)
    assert "unsafe path in archive" in html


def test_it_reports_a_corrupt_zip_clearly_and_keeps_nothing(
    curator: Any, client_as: Any, django_capture_on_commit_callbacks: Any
) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("problems.jsonl", "x" * 2000)
    data = bytearray(buf.getvalue())
    data[60:80] = b"\x00" * 20  # damage the compressed member: its CRC check fails on extraction
    html = _failed_upload(client_as(curator), "broken.zip", bytes(data), "microcoder", django_capture_on_commit_callbacks)
    assert "could not unpack broken.zip" in html


def test_it_says_when_it_cannot_detect_the_format(
    curator: Any, client_as: Any, django_capture_on_commit_callbacks: Any
) -> None:
    html = _failed_upload(client_as(curator), "notes.txt", b"hello", "auto", django_capture_on_commit_callbacks)
    assert "could not recognise the format of notes.txt" in html


def test_it_creates_a_release_from_the_form(import_records: Any, curator: Any, client_as: Any) -> None:
    import_records([make_record("p1", difficulty="Hard"), make_record("p2", difficulty="Easy")])
    response = client_as(curator).post(
        reverse("curation:release-create"),
        {"name": "hard-only", "difficulties": ["hard"], "exclude_duplicates": "on"},
    )
    release = DatasetRelease.objects.get()
    assert response["Location"] == reverse("curation:release-detail", args=[release.pk])
    assert (release.problem_count, release.filter_spec["difficulties"]) == (1, ["hard"])


def test_it_shows_a_release_with_counts_and_export_links(import_records: Any, curator: Any, client_as: Any) -> None:
    import_records([make_record("p1")])
    client = client_as(curator)
    client.post(reverse("curation:release-create"), {"name": "all"})
    release = DatasetRelease.objects.get()
    html = client.get(reverse("curation:release-detail", args=[release.pk])).content.decode()
    assert f"/api/releases/{release.pk}/export?format=parquet" in html and release.content_hash in html


def test_it_reports_an_empty_release_on_the_form(curator: Any, client_as: Any) -> None:
    response = client_as(curator).post(reverse("curation:release-create"), {"name": "none"})
    assert "the filter matches no problems" in response.content.decode()


def test_it_lists_problems_in_a_fixed_number_of_queries(
    import_records: Any, viewer: Any, client_as: Any, django_assert_max_num_queries: Any
) -> None:
    import_records([make_record(f"p{i}", tests=20) for i in range(30)])
    client = client_as(viewer)
    client.get(reverse("curation:problem-list"))  # warm the session
    with django_assert_max_num_queries(8):
        assert client.get(reverse("curation:problem-list")).status_code == 200
