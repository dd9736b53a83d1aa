"""Accounts: API tokens expire and can be revoked (API, page, logout), the token endpoint is throttled
per user and per address, and the login form locks out a username or address after failed logins."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from conftest import PASSWORD

pytestmark = pytest.mark.django_db

TOKEN_URL = "/api/auth/token/"
REVOKE_URL = "/api/auth/token/revoke/"


def _token_for(user: Any, address: str = "10.0.0.1") -> str:
    response = APIClient(REMOTE_ADDR=address).post(TOKEN_URL, {"username": user.username, "password": PASSWORD})
    assert response.status_code == 200, response.content
    return str(response.json()["token"])


def _with_token(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_it_issues_a_token_with_its_expiry(viewer: Any, settings: Any) -> None:
    settings.API_TOKEN_TTL_HOURS = 2
    body = APIClient().post(TOKEN_URL, {"username": viewer.username, "password": PASSWORD}).json()
    token = Token.objects.get(user=viewer)
    assert body["token"] == token.key
    assert body["expires_at"].startswith((token.created + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M"))


def test_it_accepts_a_fresh_token(viewer: Any) -> None:
    assert _with_token(_token_for(viewer)).get("/api/runs/").status_code == 200


def test_it_refuses_and_deletes_an_expired_token(viewer: Any, settings: Any) -> None:
    key = _token_for(viewer)
    Token.objects.filter(key=key).update(created=Token.objects.get(key=key).created - timedelta(hours=3))
    settings.API_TOKEN_TTL_HOURS = 2
    response = _with_token(key).get("/api/runs/")
    assert response.status_code == 401 and "expired" in response.json()["detail"]
    assert not Token.objects.filter(key=key).exists()


def test_it_replaces_an_expired_token_on_the_next_request(viewer: Any, settings: Any) -> None:
    old = _token_for(viewer)
    Token.objects.filter(key=old).update(created=Token.objects.get(key=old).created - timedelta(hours=3))
    settings.API_TOKEN_TTL_HOURS = 2
    new = _token_for(viewer)
    assert new != old and _with_token(new).get("/api/runs/").status_code == 200


def test_it_revokes_the_callers_token(viewer: Any) -> None:
    key = _token_for(viewer)
    client = _with_token(key)
    assert client.post(REVOKE_URL).json() == {"revoked": True}
    assert client.get("/api/runs/").status_code == 401


def test_it_revokes_the_token_when_the_user_logs_out(viewer: Any) -> None:
    key = _token_for(viewer)
    browser = Client()
    assert browser.login(username=viewer.username, password=PASSWORD)
    browser.post(reverse("logout"))
    assert not Token.objects.filter(key=key).exists()


def test_it_revokes_the_token_from_the_token_page(client_as: Any, viewer: Any) -> None:
    key = _token_for(viewer)
    page = client_as(viewer)
    assert b'id="token-revoke-form"' in page.get(reverse("account-token")).content
    page.post(reverse("account-token"), {"action": "revoke"})
    assert not Token.objects.filter(key=key).exists()


def test_it_shows_a_new_token_once_on_the_token_page(client_as: Any, trainer: Any) -> None:
    html = client_as(trainer).post(reverse("account-token"), {"action": "create"}).content.decode()
    assert Token.objects.get(user=trainer).key in html


def test_it_throttles_token_requests_per_user(viewer: Any, settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"token_user": "3/min", "token_address": "100/min"}}
    codes = [APIClient(REMOTE_ADDR=f"10.0.0.{i}").post(TOKEN_URL, {"username": viewer.username, "password": "bad"})
             .status_code for i in range(4)]
    assert codes == [400, 400, 400, 429]


def test_it_throttles_token_requests_per_address(viewer: Any, trainer: Any, settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"token_user": "100/min", "token_address": "2/min"}}
    client = APIClient(REMOTE_ADDR="10.9.9.9")
    codes = [client.post(TOKEN_URL, {"username": u.username, "password": PASSWORD}).status_code
             for u in (viewer, trainer, viewer)]
    assert codes == [200, 200, 429]


def test_it_ignores_a_forged_forwarded_address_without_trusted_proxies(viewer: Any, settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK,
                               "DEFAULT_THROTTLE_RATES": {"token_user": "100/min", "token_address": "1/min"}}
    codes = [APIClient(REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR=f"1.2.3.{i}")
             .post(TOKEN_URL, {"username": viewer.username, "password": PASSWORD}).status_code for i in range(2)]
    assert codes == [200, 429]


def _login(username: str, password: str, address: str = "10.0.0.1") -> int:
    return Client(REMOTE_ADDR=address).post(reverse("login"), {"username": username, "password": password}).status_code


def test_it_locks_out_a_username_after_too_many_failed_logins(viewer: Any, settings: Any) -> None:
    settings.LOGIN_FAILURES_PER_USER = 3
    failures = [_login(viewer.username, "wrong", address=f"10.0.1.{i}") for i in range(3)]
    assert failures == [200, 200, 200]
    assert _login(viewer.username, PASSWORD, address="10.0.2.1") == 429  # even the right password


def test_it_locks_out_an_address_after_too_many_failed_logins(viewer: Any, trainer: Any, settings: Any) -> None:
    settings.LOGIN_FAILURES_PER_ADDRESS = 2
    assert [_login(f"nobody{i}", "wrong", address="10.0.3.3") for i in range(2)] == [200, 200]
    assert _login(trainer.username, PASSWORD, address="10.0.3.3") == 429
    assert _login(trainer.username, PASSWORD, address="10.0.3.4") == 302


def test_it_never_limits_successful_logins(viewer: Any, settings: Any) -> None:
    settings.LOGIN_FAILURES_PER_USER = 1
    settings.LOGIN_FAILURES_PER_ADDRESS = 1
    assert {_login(viewer.username, PASSWORD) for _ in range(10)} == {302}


def test_it_keeps_the_token_page_from_users_without_a_role(client_as: Any, outsider: Any) -> None:
    assert client_as(outsider).get(reverse("account-token")).status_code == 403
