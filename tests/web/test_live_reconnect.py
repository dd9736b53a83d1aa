"""Browser tests of ``webapp/static/js/live.js`` on the run page: a dropped socket comes back by itself,
and the page resyncs what it missed while it was away from the server, not from the events."""

from __future__ import annotations

from typing import Any

import pytest

from curation.models import Problem
from tests.web.test_run_pages import run  # noqa: F401 - the fixture: a running run with 120 steps
from training import services
from training.models import TrainingRun
from webapp import realtime

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

POINTS = "() => Number(document.querySelector('path[data-series=\"reward\"]').getAttribute('data-points'))"


def test_it_reconnects_and_fetches_the_steps_recorded_while_the_socket_was_down(
    page_as: Any, asgi_server: Any, viewer: Any, run: TrainingRun, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/training/runs/{run.pk}/")
    page.wait_for_function("() => document.getElementById('live-text').textContent === 'live'")
    page.wait_for_function(f"() => ({POINTS})() === 120")

    # Steps 121-122 are recorded while their events go nowhere, as when the socket is down: only the
    # resync on reconnect can bring them to the page.
    monkeypatch.setattr(realtime, "publish", lambda *args, **kwargs: None)
    for step in (121, 122):
        asgi_server.call(services.metrics_record, run_id=run.pk, step=step, metrics={"reward": 0.9, "diversity": 0.7})
    monkeypatch.undo()
    page.evaluate("() => window.runLive.socket.close()")  # the connection drops

    page.wait_for_function("() => window.runLive.connects === 2 && "
                           "document.getElementById('live-text').textContent === 'live'", timeout=20_000)
    page.wait_for_function(f"() => ({POINTS})() === 122")
    assert page.text_content("#tile-step") == "122"

    # and the new socket is live: a step published now arrives as an event
    asgi_server.call(services.metrics_record, run_id=run.pk, step=123, metrics={"reward": 0.95})
    page.wait_for_function(f"() => ({POINTS})() === 123")



def test_the_evaluation_page_shows_the_final_status_it_missed_once_it_reconnects(
    page_as: Any, asgi_server: Any, viewer: Any, trainer: Any, tmp_path: Any
) -> None:
    from django.utils import timezone

    from curation.services import problem_import
    from evaluator.models import EvaluationJob
    from evaluator.services import evaluation_submit
    from tests.curation.conftest import make_record, write_jsonl

    problem_import(path=write_jsonl(tmp_path / "p.jsonl", [make_record("add")]), format="microcoder")
    job = evaluation_submit(problem_id=Problem.objects.get().pk, code="print(1)\n", user=trainer, enqueue=False)
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/evaluator/jobs/{job.pk}/")
    page.wait_for_function("() => document.getElementById('live-state').textContent === 'live'")

    # the job ends while the page hears nothing (its event is lost), then the connection drops
    EvaluationJob.objects.filter(pk=job.pk).update(status="succeeded", progress_done=1, progress_total=1,
                                                   finished_at=timezone.now())
    page.evaluate("() => window.jobLive.socket.close()")

    # the snapshot of the new connection says "succeeded": the page reloads with the server's rendering
    page.wait_for_function("() => !window.jobLive && document.querySelector('[data-job-status]')"
                           ".textContent.trim() === 'succeeded'", timeout=20_000)


def test_the_import_page_shows_the_end_it_missed_once_it_reconnects(
    page_as: Any, asgi_server: Any, viewer: Any
) -> None:
    from curation.models import ImportBatch, ImportStatus

    batch = ImportBatch.objects.create(format="microcoder", filename="rows.jsonl", path="/nowhere/rows.jsonl",
                                       status=ImportStatus.RUNNING, total_rows=10, imported_count=10)
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/curation/imports/{batch.pk}/")
    page.wait_for_function("() => document.getElementById('live-state').textContent === 'live'")
    ImportBatch.objects.filter(pk=batch.pk).update(status=ImportStatus.SUCCEEDED, total_rows=30, imported_count=30)
    page.evaluate("() => window.importLive.socket.close()")
    page.wait_for_function("() => !window.importLive && document.getElementById('batch-status')"
                           ".textContent.trim() === 'succeeded'", timeout=20_000)
    assert page.text_content('[data-field="imported"]') == "30"
