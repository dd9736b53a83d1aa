"""Production switches: off by default, ``check --deploy`` clean with them on, a content security policy
with per-request nonces that every template honours, swagger-ui from our own static files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.urls import reverse

from tests.webapp.test_asgi import _fetch

ROOT = Path(__file__).resolve().parents[2]

#: every production switch on, as a deployment behind TLS would set them
PRODUCTION_ENV = {
    "DJANGO_DEBUG": "0",
    "DJANGO_SECRET_KEY": "k" * 20 + "-production-secret-for-the-deploy-check-" + "x" * 20,
    "MICROCODER_REQUIRE_SECRET_KEY": "1",
    "DJANGO_ALLOWED_HOSTS": "studio.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://studio.example.com",
    "DJANGO_HSTS_SECONDS": "31536000",
    "DJANGO_HSTS_INCLUDE_SUBDOMAINS": "1",
    "DJANGO_HSTS_PRELOAD": "1",
    "DJANGO_SSL_REDIRECT": "1",
    "DJANGO_SECURE_COOKIES": "1",
    "DJANGO_CSP": "enforce",
}
SWITCH_VARS = [name for name in PRODUCTION_ENV if name not in {"DJANGO_SECRET_KEY", "MICROCODER_REQUIRE_SECRET_KEY"}]


def _django_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SWITCH_VARS}
    return {**env, "DJANGO_SETTINGS_MODULE": "webapp.settings", **extra}


def test_it_runs_the_deploy_check_clean_with_the_production_switches_on() -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=_django_env(PRODUCTION_ENV), capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_it_leaves_every_switch_off_by_default() -> None:
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps(["
        "s.DEBUG, s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE,"
        "s.CONTENT_SECURITY_POLICY, s.CONTENT_SECURITY_POLICY_REPORT_ONLY]))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_django_env({}), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == [False, 0, False, False, False, None, None]


def test_it_refuses_an_unknown_csp_mode() -> None:
    result = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT,
                            env=_django_env({"DJANGO_CSP": "maybe"}), capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "DJANGO_CSP" in result.stderr


@pytest.fixture
def csp_on(settings: Any) -> None:
    from webapp import settings as project_settings

    settings.CONTENT_SECURITY_POLICY = project_settings._csp_policy


@pytest.mark.django_db
def test_it_allows_only_the_pages_own_nonce_for_inline_scripts(csp_on: None, client_as: Any, viewer: Any) -> None:
    from training import services

    run = services.run_create(name="csp", config_dict={"model": "tiny", "dataset": {"release": "/nonexistent.jsonl"}})
    response = client_as(viewer).get(reverse("training:run-detail", args=[run.pk]))
    directives = dict(d.strip().split(" ", 1) for d in response["Content-Security-Policy"].split(";") if d.strip())
    nonce = re.fullmatch(r"'self' 'nonce-([^']+)'", directives["script-src"])
    assert nonce, directives["script-src"]  # no 'unsafe-inline' for scripts
    assert f'<script nonce="{nonce.group(1)}">' in response.content.decode()


@pytest.mark.django_db
def test_it_sends_no_policy_when_csp_is_off(client_as: Any, viewer: Any) -> None:
    assert "Content-Security-Policy" not in client_as(viewer).get(reverse("home"))


def _templates() -> list[Path]:
    return sorted((ROOT / "templates").rglob("*.html"))


@pytest.mark.parametrize("template", _templates(), ids=lambda p: str(p.relative_to(ROOT / "templates")))
def test_it_gives_every_inline_script_the_request_nonce_and_uses_no_inline_handlers(template: Path) -> None:
    text = template.read_text(encoding="utf-8")
    for tag in re.findall(r"<script\b[^>]*>", text):
        assert "src=" in tag or 'nonce="{{ request.csp_nonce }}"' in tag, f"{template.name}: {tag}"
    assert not re.search(r"\son[a-z]+\s*=", text), f"{template.name} has an inline event handler"
    assert "javascript:" not in text


@pytest.mark.django_db
def test_it_serves_swagger_ui_from_our_static_files(client_as: Any, viewer: Any) -> None:
    html = client_as(viewer).get(reverse("api-docs")).content.decode()
    bundle = re.search(r'<script src="([^"]*swagger-ui-bundle\.js)"', html)
    assert bundle and bundle.group(1).startswith("/static/drf_spectacular_sidecar/")
    assert "//cdn" not in html and "https://" not in html
    status, body = async_to_sync(_fetch)(bundle.group(1))
    assert status == 200 and len(body) > 100_000


def test_it_runs_the_demo_without_debug_unless_asked() -> None:
    script = (ROOT / "scripts" / "dev.sh").read_text()
    assert re.search(r"DJANGO_DEBUG=\$\{DJANGO_DEBUG:-0\}", script)
