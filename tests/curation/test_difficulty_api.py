"""The difficulty and review API and pages: role rules, 400s naming the field, the owner rule."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from curation.models import ScoringJob
from curation.services import release_create
from curation.services.difficulty import scoring_create
from curation.services.review import review_queue_create

from .conftest import make_record

pytestmark = pytest.mark.django_db

READ_PATHS = ["/api/scorings/", "/api/pass-rate-sets/", "/api/calibrations/", "/api/review-queues/"]
PAGES = ["/curation/scorings/", "/curation/calibrations/", "/curation/review/", "/curation/review/adjudication/"]


@pytest.fixture
def problems(import_records: Any) -> None:
    import_records([make_record(f"p{i}", difficulty="Hard" if i % 2 else "Easy") for i in range(4)])


@pytest.mark.parametrize("path", READ_PATHS)
def test_it_lets_a_viewer_read_and_refuses_an_outsider(path: str, api_as: Any, viewer: Any, outsider: Any) -> None:
    assert api_as(viewer).get(path).status_code == 200
    assert api_as(outsider).get(path).status_code == 403


@pytest.mark.parametrize("path", PAGES)
def test_it_shows_the_pages_to_a_viewer_and_refuses_an_outsider(path: str, client_as: Any, viewer: Any,
                                                                 outsider: Any) -> None:
    assert client_as(viewer).get(path).status_code == 200
    assert client_as(outsider).get(path).status_code == 403


def test_it_refuses_a_scoring_from_a_viewer(problems: None, api_as: Any, viewer: Any) -> None:
    assert api_as(viewer).post("/api/scorings/", {"backend": "heuristic"}, format="json").status_code == 403
    assert not ScoringJob.objects.exists()


def test_it_scores_a_release_for_a_curator(problems: None, api_as: Any, curator: Any,
                                           django_capture_on_commit_callbacks: Any) -> None:
    release = release_create(name="r", filter_spec={})
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(curator).post("/api/scorings/", {"backend": "heuristic", "release": release.pk},
                                        format="json")
    assert response.status_code == 201, response.json()
    scoring_id = response.json()["id"]
    assert api_as(curator).get(f"/api/scorings/{scoring_id}/").json()["status"] == "succeeded"  # eager Celery
    results = api_as(curator).get(f"/api/scorings/{scoring_id}/results/").json()
    assert results["count"] == 4 and all(r["score"] is not None for r in results["results"])


@pytest.mark.parametrize("payload, field", [
    ({"backend": "gpt"}, "backend"),
    ({"backend": "heuristic", "samples": 0}, "samples"),
    ({"backend": "heuristic", "weights": {"cleverness": 1}}, "weights"),
    ({"backend": "heuristic", "problem_ids": [999999]}, "problem_ids"),
    ({"backend": "heuristic", "filter_spec": {"colour": "red"}}, "filter_spec"),
])
def test_it_answers_bad_scoring_input_with_a_400_naming_the_field(problems: None, api_as: Any, curator: Any,
                                                                  payload: dict[str, Any], field: str) -> None:
    response = api_as(curator).post("/api/scorings/", payload, format="json")
    assert response.status_code == 400 and field in response.json(), response.json()


def test_it_lets_only_the_creator_or_an_admin_cancel_a_scoring(
    problems: None, api_as: Any, curator: Any, admin_user: Any, django_user_model: Any
) -> None:
    from django.contrib.auth.models import Group

    other = django_user_model.objects.create_user(username="other", password="x")
    other.groups.add(Group.objects.get(name="curator"))
    job = scoring_create(backend="heuristic", filter_spec={}, user=curator, enqueue=False)
    assert api_as(other).post(f"/api/scorings/{job.pk}/cancel/").status_code == 403
    assert api_as(admin_user).post(f"/api/scorings/{job.pk}/cancel/").json()["status"] == "cancelled"


def test_it_names_the_bad_line_of_an_uploaded_pass_rate_file(problems: None, api_as: Any, curator: Any) -> None:
    upload = io.BytesIO(b'{"platform": "leetcode", "external_id": "p1", "passed": 5, "attempts": 2}\n')
    upload.name = "rates.jsonl"
    response = api_as(curator).post("/api/pass-rate-sets/", {"name": "r", "target_model": "m", "file": upload},
                                    format="multipart")
    assert response.status_code == 400 and "line 1" in json.dumps(response.json()["file"])


def test_it_stores_an_uploaded_pass_rate_file(problems: None, api_as: Any, curator: Any) -> None:
    upload = io.BytesIO(b'{"platform": "leetcode", "external_id": "p1", "passed": 1, "attempts": 4}\n')
    upload.name = "rates.jsonl"
    response = api_as(curator).post("/api/pass-rate-sets/", {"name": "r", "target_model": "m", "file": upload},
                                    format="multipart")
    assert response.status_code == 201 and response.json()["rates"] == 1


def test_it_names_the_field_of_a_bad_calibration_request(api_as: Any, curator: Any) -> None:
    response = api_as(curator).post("/api/calibrations/", {"name": "c", "scoring": 1, "pass_rate_set": 1,
                                                           "method": "spline"}, format="json")
    assert response.status_code == 400 and "method" in response.json()
    response = api_as(curator).post("/api/calibrations/", {"name": "c", "scoring": 99, "pass_rate_set": 1},
                                    format="json")
    assert response.status_code == 400 and "scoring" in response.json()


def test_it_serves_the_next_item_and_takes_a_verdict_from_a_curator_only(
    problems: None, api_as: Any, curator: Any, viewer: Any
) -> None:
    release = release_create(name="r", filter_spec={})
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=1)
    assert api_as(viewer).get(f"/api/review-queues/{queue.pk}/next/").status_code == 403
    item = api_as(curator).get(f"/api/review-queues/{queue.pk}/next/").json()
    bad = api_as(curator).post(f"/api/review-items/{item['id']}/verdict/", {"verdict": "maybe"}, format="json")
    assert bad.status_code == 400 and "verdict" in bad.json()
    assert api_as(viewer).post(f"/api/review-items/{item['id']}/verdict/", {"verdict": "accept"},
                               format="json").status_code == 403
    ok = api_as(curator).post(f"/api/review-items/{item['id']}/verdict/", {"verdict": "accept"}, format="json")
    assert ok.status_code == 201
    assert api_as(curator).get(f"/api/review-queues/{queue.pk}/next/").status_code == 204


def test_it_refuses_a_viewer_the_review_page_and_verdict_form(problems: None, client_as: Any, viewer: Any) -> None:
    release = release_create(name="r", filter_spec={})
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=1)
    assert client_as(viewer).get(f"/curation/review/{queue.pk}/review/").status_code == 403
    item = queue.items.get()
    assert client_as(viewer).post(f"/curation/review/items/{item.pk}/verdict/", {"verdict": "accept"}).status_code == 403
    assert client_as(viewer).post("/curation/scorings/", {"backend": "heuristic"}).status_code == 403


def test_it_publishes_the_schema_of_the_new_endpoints(api_as: Any, viewer: Any) -> None:
    schema = api_as(viewer).get("/api/schema/", {"format": "json"}).json()
    for path in ("/api/scorings/", "/api/calibrations/{id}/apply/", "/api/review-queues/{id}/next/"):
        assert path in schema["paths"]


def test_it_fits_lists_and_applies_a_calibration_over_the_api(import_records: Any, api_as: Any, curator: Any,
                                                               viewer: Any) -> None:
    from curation.models import Problem

    from .difficulty_support import catalogue, scored

    problems = catalogue(import_records, n=8)
    job = scored(curator)
    rows = "\n".join(json.dumps({"platform": "leetcode", "external_id": p.external_id, "passed": i % 2 * 6 + 1,
                                 "attempts": 8}) for i, p in enumerate(problems))
    upload = io.BytesIO(rows.encode())
    upload.name = "rates.jsonl"
    client = api_as(curator)
    rates = client.post("/api/pass-rate-sets/", {"name": "r", "target_model": "m", "file": upload}, format="multipart")
    created = client.post("/api/calibrations/", {"name": "c", "scoring": job.pk, "pass_rate_set": rates.json()["id"],
                                                 "method": "isotonic"}, format="json")
    assert created.status_code == 201 and created.json()["n_points"] == 8
    calibration_id = created.json()["id"]
    listed = api_as(viewer).get(f"/api/calibrations/{calibration_id}/problems/").json()
    assert listed["count"] == 8 and {r["bucket"] for r in listed["results"]} <= {"easy", "medium", "hard"}
    assert api_as(viewer).post(f"/api/calibrations/{calibration_id}/apply/").status_code == 403
    assert client.post(f"/api/calibrations/{calibration_id}/apply/").json()["problems_updated"] == 8
    assert not Problem.objects.exclude(difficulty_source="calibrated").exists()
