"""Bad input gets a 400 naming the field, never a 500: NUL characters in query filters and JSON bodies,
odd body types, absurd nesting; unrouted API paths answer in the API's JSON shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse

from training import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def run_id(trainer: Any) -> int:
    run = services.run_create(name="guards", config_dict={"model": "tiny", "dataset": {"release": "/none.jsonl"}},
                              user=trainer)
    return int(run.pk)


@pytest.mark.parametrize(
    "url,field",
    [("/api/problems/?platform=leet%00code", "platform"), ("/api/problems/?tag=%00", "tag"),
     ("/api/releases/?ordering=%00", "ordering"), ("/api/evaluations/?status=queued%00", "status"),
     ("/api/problems/?page%00=1", "page\\u0000")],
)
def test_it_refuses_a_nul_in_an_api_query_naming_the_parameter(api_as: Any, viewer: Any, url: str, field: str) -> None:
    response = api_as(viewer).get(url)
    assert (response.status_code, list(response.json())) == (400, [field])


def test_it_refuses_a_nul_in_metric_names(api_as: Any, viewer: Any, run_id: int) -> None:
    response = api_as(viewer).get(f"/api/runs/{run_id}/metrics/?names=reward,entro%00py")
    assert response.status_code == 400 and "names" in response.json()


def test_it_refuses_a_nul_in_a_page_filter_with_a_plain_message(client_as: Any, viewer: Any) -> None:
    response = client_as(viewer).get(reverse("curation:problem-list") + "?tag=a%00b")
    assert response.status_code == 400 and b"'tag'" in response.content


@pytest.mark.parametrize("body", [[], "config", 42, None])
def test_it_refuses_a_config_check_body_that_is_not_an_object(api_as: Any, trainer: Any, body: Any) -> None:
    response = api_as(trainer).post("/api/runs/check/", json.dumps(body), content_type="application/json")
    assert response.status_code == 400 and "non_field_errors" in response.json()


def test_it_refuses_a_config_check_sent_as_a_form(api_as: Any, trainer: Any) -> None:
    assert api_as(trainer).post("/api/runs/check/", {"config": "x"}, format="multipart").status_code == 415


@pytest.mark.parametrize(
    "url,body,field",
    [("/api/runs/check/", {"config": {"dataset": {"release": "a\u0000b"}}}, "config.dataset.release"),
     ("/api/releases/", {"name": "r", "filter_spec": {"platforms": ["\u0000"]}}, "filter_spec.platforms[0]"),
     ("/api/evaluations/", {"problem": 1, "code": "print(1)", "checker": {"kind": "icpc\u0000"}}, "checker.kind"),
     ("/api/runs/check/", {"overrides": {"mask.prob\u0000": 1}}, "overrides.mask.prob\\u0000")],
)
def test_it_refuses_a_nul_anywhere_in_a_json_body_naming_its_path(
    api_as: Any, admin_user: Any, url: str, body: Any, field: str
) -> None:
    response = api_as(admin_user).post(url, body, format="json")
    assert (response.status_code, list(response.json())) == (400, [field])


def test_it_refuses_absurdly_nested_json(api_as: Any, trainer: Any) -> None:
    body = '{"config": ' + "[" * 5000 + "]" * 5000 + "}"
    response = api_as(trainer).post("/api/runs/check/", body, content_type="application/json")
    assert response.status_code == 400 and "nested" in response.json()["detail"]


def test_it_answers_an_unrouted_api_path_with_json(api_as: Any, viewer: Any) -> None:
    response = api_as(viewer).get("/api/runs/not-a-number/")
    assert (response.status_code, response["Content-Type"], response.json()) == (
        404, "application/json", {"detail": "Not found."})


def test_it_keeps_the_html_not_found_page_for_pages(client_as: Any, viewer: Any) -> None:
    response = client_as(viewer).get("/training/runs/not-a-number/")
    assert response.status_code == 404 and response["Content-Type"].startswith("text/html")


def test_it_documents_nullable_creators_and_error_responses_in_the_schema(api_as: Any, viewer: Any) -> None:
    import yaml

    schema = yaml.safe_load(api_as(viewer).get("/api/schema/").content)
    run = schema["components"]["schemas"]["Run"]["properties"]["created_by"]
    assert run.get("nullable") is True
    detail = schema["paths"]["/api/runs/{id}/"]["get"]["responses"]
    assert {"200", "401", "403", "404"} <= set(detail)
    assert "400" in schema["paths"]["/api/runs/check/"]["post"]["responses"]


@pytest.mark.parametrize(
    "url,body,field",
    [("/api/releases/", {"name": "r", "filter_spec": {"platforms": 5}}, "filter_spec"),
     ("/api/releases/", {"name": "r", "filter_spec": {"tags": {"a": 1}}}, "filter_spec"),
     ("/api/evaluations/verify-references/", {"filter": {"stages": 5}}, "filter")],
)
def test_it_refuses_a_release_filter_of_the_wrong_type_naming_it(
    api_as: Any, admin_user: Any, url: str, body: Any, field: str
) -> None:
    response = api_as(admin_user).post(url, body, format="json")
    assert response.status_code == 400 and "must be a list of strings" in response.json()[field][0]
