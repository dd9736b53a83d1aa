"""The live run page under an enforced content security policy (``DJANGO_CSP=enforce``): its nonce'd
inline script, the chart library, the live socket and the confirm-before-cancel form all work, and the
browser reports no violation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.web.test_run_pages import run  # noqa: F401 - the fixture: a running run with 120 steps
from training import services
from training.models import TrainingRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _csp_enforced(settings: Any) -> None:
    from webapp import settings as project_settings

    settings.CONTENT_SECURITY_POLICY = project_settings._csp_policy


def _violations(page: Any) -> list[str]:
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if "Content Security Policy" in m.text else None)
    return found


def test_it_draws_live_metrics_with_the_policy_enforced(
    page_as: Any, asgi_server: Any, trainer: Any, run: TrainingRun  # noqa: F811
) -> None:
    page = page_as(trainer)
    violations = _violations(page)
    response = page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    assert "'nonce-" in response.headers["content-security-policy"]
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    asgi_server.call(services.metrics_record, run_id=run.pk, step=121, metrics={"reward": 0.9})
    page.wait_for_function("() => Number(document.querySelector('path[data-series=\"reward\"]')"
                           ".getAttribute('data-points')) === 121")
    assert violations == []


def test_it_asks_before_cancelling_without_an_inline_handler(
    page_as: Any, asgi_server: Any, trainer: Any, run: TrainingRun  # noqa: F811
) -> None:
    page = page_as(trainer)
    violations = _violations(page)
    page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    questions: list[str] = []

    def answer(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.dismiss() if len(questions) == 1 else dialog.accept()

    page.on("dialog", answer)
    page.click("#cancel-form button")  # dismissed: nothing happens
    assert not TrainingRun.objects.get(pk=run.pk).cancel_requested
    with page.expect_navigation():
        page.click("#cancel-form button")  # accepted: the form is posted
    assert TrainingRun.objects.get(pk=run.pk).cancel_requested
    assert questions[0].startswith(f"Cancel run #{run.pk}?") and violations == []
