"""Every curation page and endpoint: anonymous, outsider, viewer (read-only) and curator (writes)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from curation.models import ImportBatch, Problem
from curation.services import release_create

from .conftest import make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(import_records: Any) -> dict[str, int]:
    batch = import_records([make_record("p1")])
    release = release_create(name="r", filter_spec={})
    return {"problem": Problem.objects.get().pk, "release": release.pk, "batch": batch.pk}


READ_PAGES: list[tuple[str, str | None]] = [
    ("curation:problem-list", None),
    ("curation:problem-detail", "problem"),
    ("curation:import-detail", "batch"),
    ("curation:release-list", None),
    ("curation:release-detail", "release"),
]
CURATOR_PAGES: list[tuple[str, str | None]] = [("curation:import", None), ("curation:release-create", None)]
READ_ENDPOINTS = [
    "/api/problems/", "/api/problems/{problem}/", "/api/releases/", "/api/releases/{release}/",
    "/api/releases/{release}/export?format=jsonl", "/api/imports/", "/api/imports/{batch}/",
]


def _url(name: str, key: str | None, world: dict[str, int]) -> str:
    return reverse(name, args=[world[key]] if key else [])


@pytest.mark.parametrize(("name", "key"), READ_PAGES + CURATOR_PAGES)
def test_it_redirects_anonymous_visitors_to_the_login_page(world: dict[str, int], name: str, key: str | None) -> None:
    response = Client().get(_url(name, key, world))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(("name", "key"), READ_PAGES + CURATOR_PAGES)
def test_it_forbids_pages_to_an_outsider(world: dict[str, int], outsider: Any, client_as: Any, name: str,
                                         key: str | None) -> None:
    assert client_as(outsider).get(_url(name, key, world)).status_code == 403


@pytest.mark.parametrize(("name", "key"), READ_PAGES)
def test_it_shows_read_pages_to_a_viewer(world: dict[str, int], viewer: Any, client_as: Any, name: str,
                                         key: str | None) -> None:
    assert client_as(viewer).get(_url(name, key, world)).status_code == 200


@pytest.mark.parametrize(("name", "key"), CURATOR_PAGES)
def test_it_keeps_import_and_release_creation_pages_from_a_viewer(
    world: dict[str, int], viewer: Any, client_as: Any, name: str, key: str | None
) -> None:
    assert client_as(viewer).get(_url(name, key, world)).status_code == 403


@pytest.mark.parametrize(("name", "key"), READ_PAGES + CURATOR_PAGES)
def test_it_shows_every_page_to_a_curator(world: dict[str, int], curator: Any, client_as: Any, name: str,
                                          key: str | None) -> None:
    assert client_as(curator).get(_url(name, key, world)).status_code == 200


@pytest.mark.parametrize("url", READ_ENDPOINTS)
def test_it_refuses_the_api_to_anonymous_clients(world: dict[str, int], url: str) -> None:
    assert APIClient().get(url.format(**world)).status_code in (401, 403)


@pytest.mark.parametrize("url", READ_ENDPOINTS)
def test_it_refuses_the_api_to_an_outsider(world: dict[str, int], outsider: Any, api_as: Any, url: str) -> None:
    assert api_as(outsider).get(url.format(**world)).status_code == 403


@pytest.mark.parametrize("url", READ_ENDPOINTS)
def test_it_lets_a_viewer_read_the_api(world: dict[str, int], viewer: Any, api_as: Any, url: str) -> None:
    assert api_as(viewer).get(url.format(**world)).status_code == 200


def test_it_lets_a_viewer_read_the_openapi_schema(viewer: Any, api_as: Any) -> None:
    response = api_as(viewer).get("/api/schema/")
    assert response.status_code == 200 and b"/api/releases/{id}/export" in response.content


def test_it_forbids_a_viewer_to_create_a_release(world: dict[str, int], viewer: Any, api_as: Any) -> None:
    response = api_as(viewer).post("/api/releases/", {"name": "x", "filter_spec": {}}, format="json")
    assert response.status_code == 403


def test_it_forbids_a_viewer_to_upload_an_import(viewer: Any, api_as: Any) -> None:
    upload = SimpleUploadedFile("x.jsonl", make_record("p9").to_export_dict().__repr__().encode())
    response = api_as(viewer).post("/api/imports/", {"file": upload, "format": "microcoder"}, format="multipart")
    assert response.status_code == 403 and ImportBatch.objects.count() == 0


def test_it_forbids_an_outsider_to_create_a_release(world: dict[str, int], outsider: Any, api_as: Any) -> None:
    response = api_as(outsider).post("/api/releases/", {"name": "x", "filter_spec": {}}, format="json")
    assert response.status_code == 403


def test_it_lets_a_curator_create_a_release_over_the_api(world: dict[str, int], curator: Any, api_as: Any) -> None:
    response = api_as(curator).post("/api/releases/", {"name": "x", "filter_spec": {}}, format="json")
    assert response.status_code == 201 and response.json()["problem_count"] == 1
