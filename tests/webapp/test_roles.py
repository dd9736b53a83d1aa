from typing import Any

import pytest

from webapp.roles import user_roles

pytestmark = pytest.mark.django_db


def test_it_gives_an_admin_every_role(admin_user: Any) -> None:
    assert user_roles(admin_user) == {"admin", "curator", "trainer", "viewer"}


def test_it_gives_a_curator_read_access_but_not_training(curator: Any) -> None:
    assert user_roles(curator) == {"curator", "viewer"}


def test_it_gives_an_outsider_no_role(outsider: Any) -> None:
    assert user_roles(outsider) == frozenset()


def test_it_gives_an_inactive_user_no_role(trainer: Any) -> None:
    trainer.is_active = False
    assert user_roles(trainer) == frozenset()


def test_it_creates_the_four_role_groups_in_a_migration() -> None:
    from django.contrib.auth.models import Group

    assert set(Group.objects.values_list("name", flat=True)) >= {"admin", "curator", "trainer", "viewer"}


def test_it_redirects_an_anonymous_visitor_to_the_login_page(client: Any) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_it_shows_the_dashboard_to_a_viewer(client_as: Any, viewer: Any) -> None:
    response = client_as(viewer).get("/")
    assert response.status_code == 200
    assert b"Workspace" in response.content


def test_it_logs_in_with_a_password_and_lands_on_the_dashboard(client: Any, viewer: Any) -> None:
    from conftest import PASSWORD

    response = client.post("/accounts/login/", {"username": viewer.username, "password": PASSWORD}, follow=True)
    assert response.status_code == 200
    assert b"vera-viewer" in response.content


def test_it_refuses_the_api_schema_to_an_anonymous_client(client: Any) -> None:
    assert client.get("/api/schema/").status_code in (401, 403)


def test_it_refuses_the_api_schema_to_an_outsider(api_as: Any, outsider: Any) -> None:
    assert api_as(outsider).get("/api/schema/").status_code == 403


def test_it_issues_an_api_token_for_valid_credentials(client: Any, trainer: Any) -> None:
    from conftest import PASSWORD

    response = client.post("/api/auth/token/", {"username": trainer.username, "password": PASSWORD})
    assert response.status_code == 200
    assert len(response.json()["token"]) == 40
