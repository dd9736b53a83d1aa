"""End to end: a scoring job whose Celery worker is SIGKILLed mid-job is redelivered by real Redis to a
fresh worker, which resumes from the stored samples: the job succeeds with every (problem, sample
index) stored exactly once, and only the samples the dead worker had not stored are requested again.

The scorer is the real ``openai`` backend against a local OpenAI-compatible server (real HTTP, a small
delay per answer so the kill lands mid-job). ``CELERY_VISIBILITY_TIMEOUT=3`` makes Redis redeliver the
unacknowledged message 3 s after it was taken.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest
from django.db import transaction

from curation.difficulty import DIMENSIONS
from curation.models import ScoringJob, ScoringSample
from curation.services import problem_import
from curation.services.difficulty import scoring_create
from tests.curation.conftest import make_record, write_jsonl
from tests.support.openai_server import FakeOpenAIServer, Reply

from .conftest import Service, WorkerFactory, wait_until_redeliverable

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PROBLEMS = 12
SAMPLES = 3
KILL_AFTER_SAMPLES = 9


def _answer(body: dict[str, Any], n: int) -> Reply:
    return Reply(content=json.dumps({d: {"score": 1 + n % 9, "rationale": "r"} for d in DIMENSIONS}), delay_s=0.15)


def _kill_after(job_id: int, samples: int, worker: Service, timeout_s: float = 60.0) -> int:
    """SIGKILL ``worker`` once ``samples`` samples are stored, while holding the job row's lock (every
    flush of the worker locks it), so the returned count is exactly what the dead worker left."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with transaction.atomic():
            ScoringJob.objects.select_for_update().get(pk=job_id)
            stored = ScoringSample.objects.filter(scoring_id=job_id).count()
            if stored >= samples:
                worker.kill()
                return stored
        if worker.process.poll() is not None:
            pytest.fail(f"{worker.name} exited with {worker.process.returncode} before {samples} samples")
        time.sleep(0.02)
    pytest.fail(f"scoring {job_id} stored no {samples} samples within {timeout_s:g} s")


def test_a_scoring_whose_worker_is_killed_finishes_on_a_fresh_worker_with_every_sample_once(
    start_worker: WorkerFactory, tmp_path: Any
) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [make_record(f"p{i}") for i in range(PROBLEMS)])
    problem_import(path=path, format="microcoder")
    with FakeOpenAIServer(_answer) as srv:
        env = {"CELERY_VISIBILITY_TIMEOUT": "3", "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "k",
               "DIFFICULTY_MODEL": "fake-model", "SCORING_CONCURRENCY": "2"}
        first = start_worker("scoring-1", queues=["scoring"], env=env)
        sent_at = time.monotonic()
        job = scoring_create(backend="openai", filter_spec={}, samples=SAMPLES)  # committed: enqueued
        stored_at_kill = _kill_after(job.pk, KILL_AFTER_SAMPLES, first)
        requested_by_first = len(srv.requests)
        assert first.group_alive() == [] and stored_at_kill < PROBLEMS * SAMPLES
        assert ScoringJob.objects.get(pk=job.pk).status == "running"

        wait_until_redeliverable(sent_at)
        second = start_worker("scoring-2", queues=["scoring"], env=env)
        deadline = time.monotonic() + 90
        while ScoringJob.objects.get(pk=job.pk).status == "running" and time.monotonic() < deadline:
            assert second.process.poll() is None, second.log()
            time.sleep(0.1)
        finished = ScoringJob.objects.get(pk=job.pk)
        assert (finished.status, finished.reason, finished.progress_done) == ("succeeded", "", PROBLEMS)
        per_key = Counter(ScoringSample.objects.filter(scoring=job).values_list("problem_id", "index"))
        assert len(per_key) == PROBLEMS * SAMPLES and set(per_key.values()) == {1}
        # the fresh worker asked only for the samples the killed one had not stored
        assert len(srv.requests) - requested_by_first == PROBLEMS * SAMPLES - stored_at_kill
        assert finished.prompt_tokens == 10 * PROBLEMS * SAMPLES  # the fake server's usage per answer
