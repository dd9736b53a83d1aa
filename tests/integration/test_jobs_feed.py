"""End to end: an uploaded import run by the real Celery worker (another process) reaches a browser's
jobs socket on daphne (a third) through the Redis channel layer, row by row, and leaves its log.

Run: ``REDIS_URL=redis://127.0.0.1:6379/5 DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres
TEST_DATABASE_NAME=test_jobs_feed .venv/bin/pytest tests/integration/test_jobs_feed.py``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from curation.services.uploads import import_batch_create
from tests.curation.conftest import make_record
from webapp import realtime
from webapp.jobs_feed import job_log

from .conftest import Service

pytestmark = pytest.mark.django_db(transaction=True)


def _session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def test_an_import_run_by_the_worker_reaches_the_jobs_socket_and_its_log(
    daphne_server: tuple[Service, int], celery_worker_process: Service, curator: Any, viewer: Any
) -> None:
    from websockets.sync.client import connect
    from websockets.typing import Origin

    _, port = daphne_server
    rows = [make_record(f"feed{i}").to_export_dict() for i in range(5)]
    rows[2]["title"] = ""
    content = "".join(json.dumps(r) + "\n" for r in rows).encode()
    events: list[dict[str, Any]] = []
    with connect(
        f"ws://127.0.0.1:{port}/ws/jobs/",
        origin=Origin(f"http://127.0.0.1:{port}"),
        additional_headers={"Cookie": _session_cookie(viewer)},
        proxy=None,
        open_timeout=15.0,
    ) as ws:
        batch = import_batch_create(
            uploaded_file=SimpleUploadedFile("feed.jsonl", content),
            format="microcoder",
            user=curator,
            run_pipeline=False,
        )  # committed: the worker takes it
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            message = json.loads(ws.recv(timeout=max(1.0, deadline - time.monotonic())))
            assert message["type"] == realtime.JOBS_UPDATE
            if message["data"]["key"] == f"import-{batch.pk}":
                events.append(message["data"])
                if message["data"]["terminal"]:
                    break
    assert events, celery_worker_process.log()
    last = events[-1]
    assert (last["status"], last["done"], last["total"], last["percent"]) == ("succeeded", 5, 5, 100.0)
    assert last["reason"] == "4 imported, 0 unchanged, 0 updated, 1 rejected"
    assert [e["status"] for e in events][0] in ("queued", "running")
    lines = [line.message for line in job_log(kind="import", job_id=batch.pk)]
    assert (
        lines[0] == "started"
        and lines[-1] == "succeeded after 5 / 5 rows: 4 imported, 0 unchanged, 0 updated, 1 rejected"
    )
