"""Model evaluation pages: list, create form, detail, samples, download, comparison numbers (McNemar on a
hand-made pair), the owner rule, and the live progress socket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.urls import path

from curation.models import Problem
from tests.support.ws import refusal_code
from training.consumers_evaluation import ModelEvaluationConsumer
from training.models import EvalStatus, ModelEvaluation, ModelEvaluationProblem
from training.services.evaluations import model_evaluation_create
from training.services.evaluations_run import model_evaluation_attempt
from webapp import realtime

from .evaluation_support import FakeSource, make_release, solves, toy_records

pytestmark = pytest.mark.django_db

BASE = "/training/evaluations/"


def _finished(release: Any, user: Any, *solved: str) -> ModelEvaluation:
    evaluation = model_evaluation_create(user=user, engine="transformers", model="fake", release_id=release.pk, k=2)
    model_evaluation_attempt(evaluation_id=evaluation.pk, source_factory=lambda e: FakeSource(solves(*solved)))
    evaluation.refresh_from_db()
    return evaluation


def test_a_viewer_sees_the_list_and_a_finished_evaluation(
    client_as: Any, viewer: Any, trainer: Any, release: Any
) -> None:
    evaluation = _finished(release, trainer, "double", "square")
    client = client_as(viewer)
    listed = client.get(BASE).content.decode()
    assert f'href="{BASE}{evaluation.pk}/"' in listed and "0.500" in listed
    page = client.get(f"{BASE}{evaluation.pk}/").content.decode()
    assert "pass@1 [95 % interval]" in page and "0.500" in page
    assert "By platform" in page and "By contest month" in page and "2025-03" in page
    square = Problem.objects.get(external_id="square")
    assert f'href="{BASE}{evaluation.pk}/problems/{square.pk}/"' in page
    assert f"{BASE}{evaluation.pk}/pass-rates.jsonl" in page
    assert "New evaluation" not in listed and "Cancel</button>" not in page


def test_the_samples_page_shows_each_completion_and_verdict(
    client_as: Any, viewer: Any, trainer: Any, release: Any
) -> None:
    evaluation = _finished(release, trainer, "square")
    square = Problem.objects.get(external_id="square")
    page = client_as(viewer).get(f"{BASE}{evaluation.pk}/problems/{square.pk}/").content.decode()
    assert "print(int(input())**2)" in page and "AC" in page and "2 of 2 judged samples pass" in page


def test_the_download_link_serves_the_pass_rates(client_as: Any, viewer: Any, trainer: Any, release: Any) -> None:
    evaluation = _finished(release, trainer, "square")
    response = client_as(viewer).get(f"{BASE}{evaluation.pk}/pass-rates.jsonl")
    assert response.status_code == 200 and b'"external_id": "square", "passed": 2, "attempts": 2' in response.content


def test_a_trainer_launches_an_evaluation_from_the_form(
    client_as: Any, trainer: Any, release: Any, enqueued: list[dict[str, Any]],
    django_capture_on_commit_callbacks: Any,
) -> None:
    client = client_as(trainer)
    assert client.get(f"{BASE}new/").status_code == 200
    form = {"source": "local", "local_engine": "transformers", "model": "Qwen/Qwen3-1.7B", "release_id": release.pk,
            "k": "2", "temperature": "0.6", "top_p": "0.95", "max_tokens": "64", "seed": "0", "contamination": "off",
            "cutoff_date": "2025-01-01", "exclude_before_cutoff": "on"}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"{BASE}new/", form)
    evaluation = ModelEvaluation.objects.get()
    assert response.status_code == 302 and response["Location"] == f"{BASE}{evaluation.pk}/"
    assert (evaluation.k, evaluation.max_tokens, str(evaluation.cutoff_date)) == (2, 64, "2025-01-01")
    assert enqueued[0]["queue"] == "gpu"


def test_the_form_shows_the_error_next_to_the_bad_field(
    client_as: Any, trainer: Any, release: Any, enqueued: list[dict[str, Any]]
) -> None:
    form = {"source": "endpoint", "endpoint_model": "served", "base_url": "", "release_id": release.pk, "k": "0"}
    response = client_as(trainer).post(f"{BASE}new/", form)
    page = response.content.decode()
    assert response.status_code == 200 and "k: must be between 1 and 256" in page
    assert "needs the endpoint&#x27;s base URL" in page and not ModelEvaluation.objects.exists()


def test_a_curator_may_launch_only_endpoint_evaluations(
    client_as: Any, curator: Any, release: Any, enqueued: list[dict[str, Any]]
) -> None:
    client = client_as(curator)
    page = client.get(f"{BASE}new/").content.decode()
    assert 'value="checkpoint"' not in page and 'value="endpoint"' in page
    response = client.post(f"{BASE}new/", {"source": "local", "model": "m", "release_id": release.pk})
    assert "curators evaluate OpenAI-compatible endpoints only" in response.content.decode()
    assert not ModelEvaluation.objects.exists()


def test_a_viewer_may_not_open_the_create_form(client_as: Any, viewer: Any) -> None:
    assert client_as(viewer).get(f"{BASE}new/").status_code == 403


def test_another_trainer_may_not_cancel_but_the_creator_may(
    client_as: Any, trainer: Any, django_user_model: Any, release: Any
) -> None:
    from django.contrib.auth.models import Group

    other = django_user_model.objects.create_user(username="tina-trainer", password="x")
    other.groups.add(Group.objects.get(name="trainer"))
    evaluation = model_evaluation_create(user=trainer, engine="vllm", model="m", release_id=release.pk)
    assert "Cancel</button>" not in client_as(other).get(f"{BASE}{evaluation.pk}/").content.decode()
    assert client_as(other).post(f"{BASE}{evaluation.pk}/cancel/").status_code == 403
    assert "Cancel</button>" in client_as(trainer).get(f"{BASE}{evaluation.pk}/").content.decode()
    assert client_as(trainer).post(f"{BASE}{evaluation.pk}/cancel/").status_code == 302
    evaluation.refresh_from_db()
    assert evaluation.status == EvalStatus.CANCELLED and "theo-trainer" in evaluation.reason


# --- comparison on hand-made pairs ---------------------------------------------------------------------


def _hand_made(release: Any, user: Any, solved: set[str]) -> ModelEvaluation:
    """A finished evaluation whose problems in ``solved`` pass 1/1 and the others 0/1."""
    evaluation = model_evaluation_create(user=user, engine="transformers", model="m", release_id=release.pk, k=1)
    for problem in Problem.objects.filter(releases=release).select_related("platform"):
        key = f"{problem.platform.name}:{problem.external_id}"
        ok = key in solved
        ModelEvaluationProblem.objects.create(
            evaluation=evaluation, problem=problem, key=key, platform=problem.platform.name,
            external_id=problem.external_id, attempts=1, passed=int(ok), pass_at_1=float(ok), pass_at_k=float(ok),
        )
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(status=EvalStatus.SUCCEEDED, problems_done=12)
    return evaluation


@pytest.fixture
def twelve(tmp_path: Path) -> tuple[Any, list[str]]:
    records = [r for platform in ("toy", "toy2", "toy3") for r in toy_records(platform=platform)]
    release = make_release(tmp_path, records, name="twelve")
    return release, [f"{r.platform}:{r.external_id}" for r in records]


def test_the_comparison_reads_one_against_six_flips_as_not_significant(
    client_as: Any, viewer: Any, trainer: Any, twelve: tuple[Any, list[str]]
) -> None:
    release, keys = twelve
    a = _hand_made(release, trainer, {keys[0]})  # solved by A only: 1
    b = _hand_made(release, trainer, set(keys[1:7]))  # solved by B only: 6
    response = client_as(viewer).get(f"{BASE}compare/?ids={a.pk}&ids={b.pk}")
    page = response.content.decode()
    # exact McNemar: 2 * (C(7,0) + C(7,1)) / 2^7 = 0.125
    assert response.status_code == 200 and '<td class="mcnemar">0.1250</td>' in page
    assert "not significant at 5 %" in page and "do not read this as progress" in page
    assert f"Solved by #{b.pk} only" in page and keys[6] in page


def test_the_comparison_reads_twelve_to_none_as_significant(
    client_as: Any, viewer: Any, trainer: Any, twelve: tuple[Any, list[str]]
) -> None:
    release, keys = twelve
    a = _hand_made(release, trainer, set())
    b = _hand_made(release, trainer, set(keys))
    page = client_as(viewer).get(f"{BASE}compare/?ids={a.pk},{b.pk}").content.decode()
    # exact McNemar: 2 / 2^12 = 0.000488...; every paired difference is +1
    assert '<td class="mcnemar">0.0005</td>' in page
    assert f"significant at 5 %: #{b.pk} solves more than #{a.pk}" in page
    assert "1.000 [1.000, 1.000]" in page


def test_the_comparison_page_names_a_bad_choice(client_as: Any, viewer: Any) -> None:
    response = client_as(viewer).get(f"{BASE}compare/?ids=7")
    assert response.status_code == 400 and "at least two different evaluations" in response.content.decode()


# --- live progress ------------------------------------------------------------------------------------

_app = URLRouter([path("ws/model-evaluations/<int:evaluation_id>/", ModelEvaluationConsumer.as_asgi())])


def _connect_and_read(evaluation_id: int, user: Any, publish: dict[str, Any] | None = None) -> Any:
    async def go() -> Any:
        comm = WebsocketCommunicator(_app, f"/ws/model-evaluations/{evaluation_id}/")
        comm.scope["user"] = user
        connected, code = await comm.connect()
        if not connected:
            return code
        messages = [await comm.receive_json_from(timeout=5)]
        if publish is not None:
            from channels.layers import get_channel_layer

            await get_channel_layer().group_send(
                realtime.model_evaluation_group(evaluation_id),
                realtime.channel_message(realtime.MODEL_EVALUATION_PROGRESS, publish),
            )
            messages.append(await comm.receive_json_from(timeout=5))
        await comm.disconnect()
        return messages

    return async_to_sync(go)()


@pytest.mark.django_db(transaction=True)
def test_the_socket_sends_a_snapshot_on_join_then_forwards_progress(viewer: Any, trainer: Any, tmp_path: Path) -> None:
    release = make_release(tmp_path, toy_records())
    evaluation = model_evaluation_create(user=trainer, engine="vllm", model="m", release_id=release.pk)
    messages = _connect_and_read(evaluation.pk, viewer, publish={"evaluation_id": evaluation.pk, "samples_done": 3})
    assert messages[0]["type"] == "model_evaluation.progress"
    assert messages[0]["data"]["status"] == "queued" and messages[0]["data"]["evaluation_id"] == evaluation.pk
    assert messages[1]["data"]["samples_done"] == 3


@pytest.mark.django_db(transaction=True)
def test_the_socket_refuses_an_outsider_and_an_unknown_evaluation(viewer: Any, outsider: Any) -> None:
    async def refused(evaluation_id: int, user: Any) -> int | None:
        comm = WebsocketCommunicator(_app, f"/ws/model-evaluations/{evaluation_id}/")
        comm.scope["user"] = user
        return await refusal_code(comm)

    assert async_to_sync(refused)(424242, viewer) == 4403
    assert async_to_sync(refused)(424242, outsider) == 4403


def test_the_run_page_links_its_newest_checkpoint_to_a_preselected_form(
    client_as: Any, trainer: Any, settings: Any, tmp_path: Path
) -> None:
    from training import services
    from training.models import Checkpoint

    settings.RUNS_DIR = tmp_path / "runs"
    run = services.run_create(name="r", config_dict={"model": "tiny", "dataset": {"release": "x.jsonl"}})
    for step in (10, 20):
        Checkpoint.objects.create(run=run, step=step, path=f"/ckpt/checkpoint-{step}")
    client = client_as(trainer)
    assert f"{BASE}new/?run={run.pk}" in client.get(f"/training/runs/{run.pk}/").content.decode()
    form = client.get(f"{BASE}new/?run={run.pk}").content.decode()
    assert f'<option value="{run.pk}:20" selected>' in form and 'value="checkpoint" checked' in form


def test_a_job_whose_every_sample_was_an_infrastructure_error_still_shows_the_error_rate(
    client_as: Any, viewer: Any, trainer: Any, release: Any
) -> None:
    evaluation = _finished(release, trainer, "double")
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(summary={
        "k": 2, "problems": 4, "pass@1": None, "pass@k": None, "ci95": {"pass@1": None, "pass@k": None},
        "infra_error_rate": 1.0,
    })
    page = client_as(viewer).get(f"{BASE}{evaluation.pk}/").content.decode()
    assert "Infra error rate" in page and "1.000" in page


def test_the_form_refuses_an_overlong_model_name_without_a_server_error(
    client_as: Any, trainer: Any, release: Any, enqueued: list[dict[str, Any]]
) -> None:
    form = {"source": "local", "local_engine": "vllm", "model": "m" * 1001, "release_id": release.pk}
    response = client_as(trainer).post(f"{BASE}new/", form)
    assert response.status_code == 200 and "at most 1000 characters" in response.content.decode()
    assert not ModelEvaluation.objects.exists()
