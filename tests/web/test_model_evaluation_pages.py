"""Browser test of the model evaluation page: live progress over ws/model-evaluations/<id>/, then the
stored result once the job ends (the page reloads itself)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.training.evaluation_support import FakeSource, make_release, solves, toy_records
from training.models import EvalStatus, ModelEvaluation
from training.services.evaluations import model_evaluation_create, publish_progress
from training.services.evaluations_run import model_evaluation_attempt

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SCREENSHOT = "/tmp/model_evaluation_page.png"


def _progress(evaluation_id: int, **fields: Any) -> None:
    """What the worker does after storing a sample: update the row, publish the progress event."""
    ModelEvaluation.objects.filter(pk=evaluation_id).update(**fields)
    publish_progress(ModelEvaluation.objects.get(pk=evaluation_id))


def test_the_page_follows_the_job_live_and_shows_the_result_when_it_ends(
    page_as: Any, asgi_server: Any, viewer: Any, trainer: Any, tmp_path: Path
) -> None:
    release = make_release(tmp_path, toy_records())
    evaluation = model_evaluation_create(user=trainer, engine="transformers", model="fake", release_id=release.pk, k=2)
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(status=EvalStatus.RUNNING, samples_total=8,
                                                            problems_total=4, reason="running on gpu-node-1")
    page = page_as(viewer)
    page.goto(f"{asgi_server.url}/training/evaluations/{evaluation.pk}/")
    page.wait_for_function("() => document.getElementById('live-state').textContent === 'live'")

    asgi_server.call(_progress, evaluation.pk, samples_done=5, problems_done=2)
    page.wait_for_function(
        "() => document.getElementById('eval-progress-text').textContent.startsWith('5 / 8 samples')")
    assert page.get_attribute("#eval-progress", "value") == "5"

    # the job runs to its end under the server (a fake model, the real judge); its own events reach the
    # page, which reloads once the job is finished and shows the stored result
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(status=EvalStatus.QUEUED)
    asgi_server.call(model_evaluation_attempt, evaluation_id=evaluation.pk,
                     source_factory=lambda e: FakeSource(solves("double")))
    page.wait_for_selector("text=pass@1 [95 % interval]")
    assert page.text_content("[data-eval-status]") == "succeeded"
    assert page.is_visible("a:text('toy:double')") and "0.250" in page.text_content("body")
    page.screenshot(path=SCREENSHOT, full_page=True)
