"""The curation REST API: filtering, ordering, pagination, details, uploads and exports."""

from __future__ import annotations

import io
import json
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.models import Problem
from curation.services import release_create

from .conftest import make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(viewer: Any, api_as: Any) -> Any:
    return api_as(viewer)


@pytest.fixture
def catalogue(import_records: Any) -> None:
    import_records([
        make_record("lc-1", difficulty="Hard", tags=["dp"], contest_date="2024-01-01"),
        make_record("lc-2", difficulty="Easy", tags=["array"], contest_date="2024-06-01"),
        make_record("lc-3", difficulty="Hard", tags=["graph", "dp"], contest_date="2023-03-01"),
        make_record("cf-1", platform="codeforces", difficulty="", rating=2500, tags=["dp"], contest_date=None),
    ])


def _ids(response: Any) -> list[str]:
    assert response.status_code == 200, response.content
    return [p["external_id"] for p in response.json()["results"]]


def test_it_filters_problems_by_difficulty_and_platform(catalogue: None, api: Any) -> None:
    assert _ids(api.get("/api/problems/?difficulty=hard&platform=leetcode")) == ["lc-1", "lc-3"]


def test_it_filters_problems_by_tag(catalogue: None, api: Any) -> None:
    assert _ids(api.get("/api/problems/?tag=dp")) == ["lc-1", "lc-3", "cf-1"]


def test_it_filters_problems_by_contest_date_range(catalogue: None, api: Any) -> None:
    assert _ids(api.get("/api/problems/?contest_date_from=2024-01-01&contest_date_to=2024-03-31")) == ["lc-1"]


def test_it_filters_problems_by_stage_and_io_mode(catalogue: None, api: Any) -> None:
    Problem.objects.filter(external_id="lc-2").update(stage="constraints_passed")
    assert _ids(api.get("/api/problems/?stage=constraints_passed&io_mode=stdin")) == ["lc-2"]


def test_it_rejects_an_unknown_difficulty_filter(catalogue: None, api: Any) -> None:
    assert api.get("/api/problems/?difficulty=extreme").status_code == 400


def test_it_orders_problems_by_a_requested_field(catalogue: None, api: Any) -> None:
    assert _ids(api.get("/api/problems/?ordering=-contest_date&platform=leetcode")) == ["lc-2", "lc-1", "lc-3"]


def test_it_paginates_problem_lists(catalogue: None, api: Any) -> None:
    body = api.get("/api/problems/?page_size=3&page=2").json()
    assert (body["count"], [p["external_id"] for p in body["results"]], body["next"]) == (4, ["cf-1"], None)


def test_it_lists_problems_without_statements_or_tests(catalogue: None, api: Any) -> None:
    row = api.get("/api/problems/").json()["results"][0]
    assert not {"statement", "tests", "starter_code"} & set(row)
    assert row["stage"] == "imported" and row["test_count"] == 6


def test_it_details_a_problem_with_a_tests_summary(catalogue: None, api: Any) -> None:
    pk = Problem.objects.get(external_id="lc-1").pk
    body = api.get(f"/api/problems/{pk}/").json()
    assert body["statement"].startswith("You are given")
    assert (body["tests"]["count"], body["tests"]["public"], len(body["tests"]["samples"])) == (6, 1, 3)
    assert body["tests"]["samples"][0] == {"order": 0, "public": True, "input": "0 1\n", "output": "1\n"}
    assert [v["version"] for v in body["versions"]] == [1]


def test_it_answers_404_for_a_missing_problem(api: Any) -> None:
    assert api.get("/api/problems/999999/").status_code == 404


def test_it_creates_a_release_from_a_filter_spec(catalogue: None, curator: Any, api_as: Any) -> None:
    response = api_as(curator).post(
        "/api/releases/", {"name": "hard", "filter_spec": {"difficulties": ["hard"]}}, format="json"
    )
    body = response.json()
    assert (response.status_code, body["problem_count"], body["counts_by_platform"]) == (
        201, 3, {"codeforces": 1, "leetcode": 2}
    )
    assert body["export_jsonl"].endswith(f"/api/releases/{body['id']}/export?format=jsonl")


def test_it_explains_a_bad_release_filter(catalogue: None, curator: Any, api_as: Any) -> None:
    response = api_as(curator).post("/api/releases/", {"name": "x", "filter_spec": {"platform": "lc"}}, format="json")
    assert response.status_code == 400 and "unknown filter key" in response.json()["filter_spec"][0]


def test_it_streams_a_jsonl_export(catalogue: None, api: Any) -> None:
    release = release_create(name="r", filter_spec={"platforms": ["leetcode"]})
    response = api.get(f"/api/releases/{release.pk}/export?format=jsonl")
    assert response.streaming and response["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert [r["external_id"] for r in rows] == ["lc-1", "lc-2", "lc-3"]


def test_it_serves_a_parquet_export(catalogue: None, api: Any) -> None:
    release = release_create(name="r", filter_spec={})
    response = api.get(f"/api/releases/{release.pk}/export?format=parquet")
    table = pq.read_table(io.BytesIO(b"".join(response.streaming_content)))
    assert (response["Content-Type"], table.num_rows) == ("application/vnd.apache.parquet", 4)


def test_it_streams_an_export_asynchronously_under_asgi_instead_of_buffering_it(catalogue: None, viewer: Any) -> None:
    from asgiref.sync import async_to_sync
    from django.test import AsyncRequestFactory
    from rest_framework.test import force_authenticate

    from curation.api import ReleaseExport

    release = release_create(name="r", filter_spec={"platforms": ["leetcode"]})
    request = AsyncRequestFactory().get(f"/api/releases/{release.pk}/export?format=jsonl")
    force_authenticate(request, user=viewer)
    response = ReleaseExport.as_view()(request, pk=release.pk)
    assert response.is_async  # Django's ASGI handler would list() a sync iterator before sending a byte

    async def body() -> bytes:
        return b"".join([part async for part in response])

    rows = [json.loads(line) for line in async_to_sync(body)().splitlines()]
    assert [r["external_id"] for r in rows] == ["lc-1", "lc-2", "lc-3"]


def test_it_names_the_download_safely_whatever_the_release_name(catalogue: None, api: Any) -> None:
    release = release_create(name='bad "name"\r\nX-Injected: 1', filter_spec={"platforms": ["leetcode"]})
    response = api.get(f"/api/releases/{release.pk}/export?format=jsonl")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="bad_name_X-Injected_1-v1.jsonl"'


def test_it_imports_an_uploaded_file_over_the_api(curator: Any, api_as: Any, django_capture_on_commit_callbacks: Any) -> None:
    rows = [make_record("p1"), make_record("p2").to_export_dict() | {"io_mode": "x"}]
    content = "\n".join(json.dumps(r.to_export_dict() if hasattr(r, "to_export_dict") else r) for r in rows)
    upload = SimpleUploadedFile("two.jsonl", content.encode())
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(curator).post("/api/imports/", {"file": upload, "format": "auto"}, format="multipart")
    assert response.status_code == 201
    detail = api_as(curator).get(f"/api/imports/{response.json()['id']}/").json()
    assert (detail["status"], detail["format"], detail["imported_count"], detail["rejected_count"]) == (
        "succeeded", "microcoder", 1, 1
    )
    assert detail["errors"][0]["row"] == 2
