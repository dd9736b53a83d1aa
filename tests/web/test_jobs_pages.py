"""Browser tests of the jobs view and the import upload: a curator uploads a file, watches the import's
rows come in live (on its page and in the jobs list) and lands on the per-row report; a viewer sees
jobs but no cancel control, and a trainer cancels a run from the list."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from curation.models import ImportBatch
from curation.services import problem_import
from tests.curation.conftest import make_record
from training.models import TrainingRun

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOT = "/tmp/jobs_list.png"


@pytest.fixture(autouse=True)
def _csp_enforced(settings: Any) -> None:
    """These pages' scripts run under the enforced policy (nonce'd inline scripts, no handlers)."""
    from webapp import settings as project_settings

    settings.CONTENT_SECURITY_POLICY = project_settings._csp_policy


def _violations(page: Any) -> list[str]:
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if "Content Security Policy" in m.text else None)
    return found


@pytest.fixture
def upload(tmp_path: Path) -> Path:
    rows = [make_record(f"up{i}").to_export_dict() for i in range(6)]
    rows[4]["title"] = ""  # row 5 is rejected
    path = tmp_path / "six.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_an_upload_shows_its_progress_live_and_ends_on_the_per_row_report(
    page_as: Any, asgi_server: Any, curator: Any, upload: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from curation.tasks import import_file

    queued: list[int] = []
    monkeypatch.setattr(
        import_file, "delay", lambda batch_id: queued.append(batch_id)
    )  # the test is the worker
    page = page_as(curator)
    jobs = page_as(curator)
    page_violations, jobs_violations = _violations(page), _violations(jobs)
    jobs.goto(f"{asgi_server.url}/jobs/?kind=import")
    jobs.wait_for_function("() => document.getElementById('live-state').textContent === 'live'")

    page.goto(f"{asgi_server.url}/curation/imports/")
    page.set_input_files("input[name=file]", str(upload))
    page.select_option("select[name=format]", "microcoder")
    page.click("#import-form button[type=submit]")
    page.wait_for_url("**/curation/imports/*/")
    page.wait_for_function("() => document.getElementById('live-state').textContent === 'live'")
    (batch_id,) = queued
    batch = ImportBatch.objects.get(pk=batch_id)
    assert page.text_content("#import-progress [data-field=phase]") == "waiting for a worker"

    first_chunk, go_on = threading.Event(), threading.Event()

    def gate(_batch: ImportBatch) -> None:
        if not first_chunk.is_set():
            first_chunk.set()
            go_on.wait(30)

    def work() -> None:
        try:
            problem_import(path=batch.path, format="microcoder", batch=batch, batch_size=2, on_progress=gate)
        finally:
            connection.close()  # this worker thread's own connection

    # on the server's loop like a view, but off its one thread for sync code (which the consumers
    # need between events): the gate holds only this worker
    done = asyncio.run_coroutine_threadsafe(sync_to_async(work, thread_sensitive=False)(), asgi_server.loop)
    try:
        assert first_chunk.wait(30)
        # mid-import: the page and the jobs list show the rows read so far, live
        page.wait_for_function(
            "() => document.querySelector('#import-progress [data-field=\"rows-read\"]').textContent === '2'"
        )
        assert page.text_content("#batch-status") == "running"
        row = f'tr[data-job="import-{batch_id}"]'
        jobs.wait_for_selector(row)
        jobs.wait_for_function(
            f"() => document.querySelector('{row} [data-field=\"progress_text\"]').textContent === '2 / 6 rows'"
        )
        assert jobs.evaluate(f"document.querySelector('{row} progress').value") == pytest.approx(33.3)
        # the file's rows were counted before importing: the import page's bar has its end too
        meter = page.evaluate(
            "[...['max', 'value']].map(k => document.querySelector('#import-progress progress')[k])"
        )
        assert meter == [6, 2] and page.text_content("#import-progress [data-field=expected]") == " of 6"
    finally:
        go_on.set()
        done.result(timeout=30)
    # the end: the page reloads into the report, the list shows the outcome
    page.wait_for_selector("text=empty or missing title")
    assert page.text_content("[data-field=imported]") == "5"
    assert page.text_content("[data-field=errors]") == "1"
    assert page.locator("#import-progress").count() == 0
    jobs.wait_for_function(
        f"() => document.querySelector('tr[data-job=\"import-{batch_id}\"]').dataset.status === 'succeeded'"
    )
    log = page_as(curator)
    log.goto(f"{asgi_server.url}/jobs/import/{batch_id}/")
    assert "succeeded after 6 / 6 rows" in log.text_content("#job-log")
    jobs.screenshot(path=SCREENSHOT, full_page=True)
    assert page_violations == [] and jobs_violations == []


def test_a_viewer_sees_no_cancel_control_and_a_trainer_cancels_from_the_list(
    page_as: Any, asgi_server: Any, viewer: Any, trainer: Any
) -> None:
    run = TrainingRun.objects.create(
        name="tiny-run", config={"max_steps": 8}, created_by=trainer, status="queued"
    )
    seen = page_as(viewer)
    seen.goto(f"{asgi_server.url}/jobs/")
    seen.wait_for_selector(f'tr[data-job="training-{run.pk}"]')
    assert seen.locator("form.job-cancel").count() == 0

    log = page_as(viewer)
    log.goto(f"{asgi_server.url}/jobs/training/{run.pk}/")
    log.wait_for_function("() => document.getElementById('live-state').textContent === 'live'")
    assert log.text_content("#job-log").strip() == "Nothing logged yet."

    owner = page_as(trainer)
    owner.goto(f"{asgi_server.url}/jobs/?kind=training")
    owner.wait_for_function("() => document.getElementById('live-state').textContent === 'live'")
    questions: list[str] = []
    owner.on("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    owner.click(f'tr[data-job="training-{run.pk}"] form.job-cancel button')
    owner.wait_for_selector(f'tr[data-job="training-{run.pk}"][data-status="cancelled"]')
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert questions == [f"Cancel training run #{run.pk} (tiny-run)?"]
    # the viewer's list followed live
    seen.wait_for_selector(f'tr[data-job="training-{run.pk}"][data-status="cancelled"]')
    # and the run's log page appended the line and stopped following the ended job
    log.wait_for_selector("#job-log li:has-text('cancelled after 0 / 8 steps')")
    assert log.text_content("#job-one [data-field=status]") == "cancelled"
    log.wait_for_function("() => document.getElementById('live-state').textContent === 'live updates off'")
