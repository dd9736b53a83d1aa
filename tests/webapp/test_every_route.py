"""A sweep over every URL the project routes: nothing is reachable without the right role."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db

#: routes that are public by design (the login form) or guarded by Django's own admin login
PUBLIC = {"accounts/login/", "accounts/logout/", "api/auth/token/"}


def _walk(patterns: list[Any], prefix: str = "") -> list[str]:
    routes: list[str] = []
    for p in patterns:
        route = prefix + str(p.pattern)
        if isinstance(p, URLResolver):
            if route.startswith("admin/"):
                continue
            routes.extend(_walk(p.url_patterns, route))
        elif isinstance(p, URLPattern):
            routes.append(route)
    return routes


def _concrete(route: str) -> str:
    path = re.sub(r"<int:[^>]+>", "1", route)
    path = re.sub(r"<(?:str|slug):[^>]+>", "x", path)
    return "/" + path.lstrip("^").rstrip("$")


ROUTES = sorted({_concrete(r) for r in _walk(get_resolver().url_patterns) if r not in PUBLIC})


def test_it_finds_the_routes_of_every_app() -> None:
    joined = " ".join(ROUTES)
    for expected in ("/curation/", "/evaluator/", "/training/", "/api/problems/", "/api/runs/", "/api/evaluations/"):
        assert expected in joined


@pytest.mark.parametrize("path", ROUTES)
def test_it_turns_away_an_anonymous_visitor(client: Any, path: str) -> None:
    for method in ("get", "post"):
        response = getattr(client, method)(path)
        if response.status_code == 302:
            assert "/accounts/login/" in response["Location"], f"{method.upper()} {path}"
        else:
            assert response.status_code in (401, 403, 405), f"{method.upper()} {path} -> {response.status_code}"


@pytest.mark.parametrize("path", ROUTES)
def test_it_refuses_a_user_without_a_role(client_as: Any, outsider: Any, path: str) -> None:
    client = client_as(outsider)
    for method in ("get", "post"):
        response = getattr(client, method)(path)
        assert response.status_code in (403, 405), f"{method.upper()} {path} -> {response.status_code}"
