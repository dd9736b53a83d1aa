"""Project-wide pytest fixtures: personas for permission tests."""

from __future__ import annotations

from typing import Any

import pytest

#: Celery workers and other real subprocesses for the integration and browser tests
pytest_plugins = ["tests.support.services"]

PASSWORD = "correct-horse-battery"


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings: Any) -> None:
    """Persona passwords hash with a fast hasher: PBKDF2's rounds cost ~0.7 s per user on 2 cores."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_local_cache(settings: Any) -> None:
    """Each test gets an empty in-process cache (login failure counts, token throttles), never the
    Redis cache that ``REDIS_URL`` selects: tests may log in as often as they like."""
    from django.core.cache import cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "microcoder-tests"}}
    cache.clear()


def _make_user(django_user_model: Any, username: str, roles: tuple[str, ...]) -> Any:
    from django.contrib.auth.models import Group

    user = django_user_model.objects.create_user(username=username, password=PASSWORD)
    for role in roles:
        group, _ = Group.objects.get_or_create(name=role)
        user.groups.add(group)
    return user


@pytest.fixture
def admin_user(db: Any, django_user_model: Any) -> Any:
    return _make_user(django_user_model, "ada-admin", ("admin",))


@pytest.fixture
def curator(db: Any, django_user_model: Any) -> Any:
    return _make_user(django_user_model, "cora-curator", ("curator",))


@pytest.fixture
def trainer(db: Any, django_user_model: Any) -> Any:
    return _make_user(django_user_model, "theo-trainer", ("trainer",))


@pytest.fixture
def viewer(db: Any, django_user_model: Any) -> Any:
    return _make_user(django_user_model, "vera-viewer", ("viewer",))


@pytest.fixture
def outsider(db: Any, django_user_model: Any) -> Any:
    """Authenticated but holds no role."""
    return _make_user(django_user_model, "otto-outsider", ())


def _client_for(user: Any) -> Any:
    from django.test import Client

    c = Client()
    c.force_login(user)
    return c


def _api_for(user: Any) -> Any:
    from rest_framework.test import APIClient

    c = APIClient()
    c.force_authenticate(user=user)
    return c


@pytest.fixture
def client_as() -> Any:
    """``client_as(user)`` -> a logged-in django test Client."""
    return _client_for


@pytest.fixture
def api_as() -> Any:
    """``api_as(user)`` -> a DRF APIClient authenticated as ``user``."""
    return _api_for


@pytest.fixture(autouse=True)
def _celery_eager_unless_integration(request: Any) -> Any:
    """Unit tests run Celery tasks in-process even when REDIS_URL points at a real broker;
    tests marked ``integration`` talk to a real worker instead."""
    from webapp.celery import app

    eager = request.node.get_closest_marker("integration") is None
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = eager
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager = previous
