"""Browser tests of the everyday flows, as a user does them in headless Chromium against the real ASGI
server: log in through the form, build a release and download it, judge a solution, and what a viewer
and an anonymous visitor may not do."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import PASSWORD
from curation.models import DatasetRelease, Problem
from curation.services import problem_import
from tests.curation.conftest import make_record, write_jsonl
from tests.web.test_run_pages import run  # noqa: F401 - the fixture: a running run with 120 steps
from training.models import TrainingRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def problems(asgi_server: Any, tmp_path: Path) -> list[Problem]:
    """Three well-formed stdin problems (a + b) from two platforms, each with a reference solution,
    imported the way the server imports them (its progress events go out on the server's loop)."""
    records = [
        make_record("add-1", platform="codeforces"),
        make_record("add-2", platform="codeforces", difficulty="Hard"),
        make_record("add-3", platform="atcoder", tags=("math",)),
    ]
    asgi_server.call(problem_import, path=write_jsonl(tmp_path / "p.jsonl", records), format="microcoder")
    return list(Problem.objects.order_by("id"))


def test_a_user_logs_in_through_the_form_and_a_wrong_password_is_refused(
    browser: Any, asgi_server: Any, curator: Any
) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{asgi_server.url}/curation/problems/")
    assert "/accounts/login/" in page.url  # pages need a login, and say where to come back to

    page.fill("input[name=username]", curator.username)
    page.fill("input[name=password]", "not-the-password")
    page.locator("form button[type=submit], form input[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    assert "/accounts/login/" in page.url
    assert "didn't match" in page.text_content("main, body")

    page.fill("input[name=username]", curator.username)
    page.fill("input[name=password]", PASSWORD)
    page.locator("form button[type=submit], form input[type=submit]").first.click()
    page.wait_for_url("**/curation/problems/**")
    assert curator.username in page.text_content("body")
    context.close()


def test_a_curator_builds_a_release_and_downloads_it(
    page_as: Any, asgi_server: Any, curator: Any, problems: list[Problem], tmp_path: Path
) -> None:
    page = page_as(curator)
    page.goto(f"{asgi_server.url}/curation/releases/new/")
    page.fill("input[name=name]", "codeforces-only")
    page.check("input[name=platforms][value=codeforces]")
    page.check("input[name=include_undated]")
    for stage in page.locator("input[name=stages]:checked").all():
        stage.uncheck()  # the problems are new: their references are not verified yet
    page.click("button:has-text('Freeze release')")
    page.wait_for_load_state("networkidle")
    page.wait_for_url(re.compile(r"/curation/releases/\d+/$"))
    release = DatasetRelease.objects.get(name="codeforces-only")
    assert release.problem_count == 2
    assert "codeforces-only" in page.text_content("h1")

    with page.expect_download() as download_info:
        page.click("a.button:has-text('JSONL')")
    target = tmp_path / "release.jsonl"
    download_info.value.save_as(target)
    rows = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert sorted(r["external_id"] for r in rows) == ["add-1", "add-2"]
    assert all(r["platform"] == "codeforces" and r["tests"] for r in rows)


def test_a_trainer_judges_a_solution_and_sees_the_verdict(
    page_as: Any, asgi_server: Any, trainer: Any, problems: list[Problem]
) -> None:
    problem = problems[0]
    page = page_as(trainer)
    page.goto(f"{asgi_server.url}/evaluator/judge/?problem={problem.pk}")
    page.locator("form.card textarea").first.fill("a, b = map(int, input().split())\nprint(a + b)\n")
    page.locator("form.card button[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    verdict = page.text_content("section.card")
    assert "AC" in verdict

    page.locator("form.card textarea").first.fill("a, b = map(int, input().split())\nprint(a - b)\n")
    page.locator("form.card button[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    assert "WA" in page.text_content("section.card")


def test_a_viewer_sees_runs_but_no_launch_or_cancel_control(
    page_as: Any, asgi_server: Any, viewer: Any, run: TrainingRun  # noqa: F811
) -> None:
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/training/runs/")
    assert run.name in page.text_content("main")
    assert page.locator("a[href$='/training/runs/new/']").count() == 0

    page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    assert page.locator("form[action$='/cancel/'], button:has-text('Cancel')").count() == 0

    response = page.goto(f"{asgi_server.url}/training/runs/new/")
    assert response is not None and response.status == 403


def test_an_anonymous_websocket_is_refused(browser: Any, asgi_server: Any, run: TrainingRun) -> None:  # noqa: F811
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{asgi_server.url}/accounts/login/")  # same origin, no session
    ws_url = asgi_server.url.replace("http://", "ws://") + f"/ws/runs/{run.pk}/"
    code = page.evaluate(
        """(url) => new Promise((resolve) => {
            const socket = new WebSocket(url);
            socket.onclose = (event) => resolve(event.code);
            setTimeout(() => resolve(-1), 10000);
        })""",
        ws_url,
    )
    assert code == 4403
    context.close()
