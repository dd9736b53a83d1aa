"""Model evaluation API: who may create and cancel, 400s naming the field, per-problem results, the
pass-rate JSONL export and the compare endpoint."""

from __future__ import annotations

import json
from typing import Any

import pytest

from training.models import EvalStatus, ModelEvaluation, ModelEvaluationSample
from training.services.evaluations import model_evaluation_create
from training.services.evaluations_run import model_evaluation_attempt

from .evaluation_support import FakeSource, solves

pytestmark = pytest.mark.django_db

URL = "/api/model-evaluations/"


def _local(release: Any, **kw: Any) -> dict[str, Any]:
    return {"engine": "transformers", "model": "Qwen/Qwen3-1.7B", "release_id": release.pk, "k": 2, **kw}


def _endpoint(release: Any, **kw: Any) -> dict[str, Any]:
    return {"engine": "openai", "model": "served", "base_url": "http://127.0.0.1:9/v1", "release_id": release.pk,
            **kw}


def test_a_trainer_creates_a_local_evaluation_queued_on_gpu(
    api_as: Any, trainer: Any, release: Any, enqueued: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(trainer).post(URL, _local(release), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["queue"] == "gpu" and body["created_by"] == "theo-trainer" and body["status"] == "queued"
    assert [(m["queue"], m["args"]) for m in enqueued] == [("gpu", [body["id"]])]


def test_an_endpoint_evaluation_goes_to_the_evaluate_queue_and_stores_no_key(
    api_as: Any, curator: Any, release: Any, enqueued: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(curator).post(URL, _endpoint(release, api_key="sk-secret"), format="json")
    assert response.status_code == 201, response.json()
    assert enqueued[0]["queue"] == "evaluate"
    stored = ModelEvaluation.objects.filter(pk=response.json()["id"]).values().get()
    assert "sk-secret" not in json.dumps(stored, default=str)


def test_a_curator_may_not_evaluate_a_local_model(
    api_as: Any, curator: Any, release: Any, enqueued: list[dict[str, Any]]
) -> None:
    assert api_as(curator).post(URL, _local(release), format="json").status_code == 403
    assert enqueued == [] and not ModelEvaluation.objects.exists()


@pytest.mark.parametrize("persona", ["viewer", "outsider"])
def test_a_viewer_or_outsider_may_not_create(api_as: Any, request: Any, persona: str, release: Any) -> None:
    user = request.getfixturevalue(persona)
    assert api_as(user).post(URL, _endpoint(release), format="json").status_code == 403


def test_a_viewer_reads_the_list_and_the_detail(
    api_as: Any, viewer: Any, trainer: Any, release: Any, enqueued: list[dict[str, Any]]
) -> None:
    created = api_as(trainer).post(URL, _local(release), format="json").json()
    listed = api_as(viewer).get(URL).json()
    assert [row["id"] for row in listed["results"]] == [created["id"]]
    detail = api_as(viewer).get(f"{URL}{created['id']}/").json()
    assert detail["summary"] == {} and detail["label"].startswith("Qwen/Qwen3-1.7B")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"release_id": 999_999}, "release_id"),
        ({"k": 0}, "k"),
        ({"temperature": 0}, "temperature"),
        ({"top_p": 1.5}, "top_p"),
        ({"max_tokens": "many"}, "max_tokens"),
        ({"engine": "gpt"}, "engine"),
        ({"model": ""}, "model"),
        ({"base_url": "http://x/v1"}, "base_url"),
        ({"cutoff_date": "last year"}, "cutoff_date"),
        ({"contamination": "exclude"}, "contamination_release_id"),
        ({"problem_filter": {"color": "red"}}, "problem_filter"),
        ({"run_id": 999_999, "checkpoint_step": 1}, "run_id"),
        ({"model": "m" * 1001}, "model"),
        ({"engine": "openai", "base_url": "http://[::1/v1"}, "base_url"),
        ({"engine": "openai", "base_url": "ftp://host/v1"}, "base_url"),
        ({"problem_filter": {"limit": 1.5}}, "problem_filter"),
        ({"seed": 2**40}, "seed"),
    ],
)
def test_bad_input_answers_400_naming_the_field(
    api_as: Any, trainer: Any, release: Any, enqueued: list[dict[str, Any]], change: dict[str, Any], field: str
) -> None:
    response = api_as(trainer).post(URL, _local(release, **change), format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json(), response.json()
    assert enqueued == []


def test_an_endpoint_needs_a_url_without_credentials(
    api_as: Any, trainer: Any, release: Any, enqueued: list[dict[str, Any]]
) -> None:
    client = api_as(trainer)
    assert "base_url" in client.post(URL, _endpoint(release, base_url=""), format="json").json()
    response = client.post(URL, _endpoint(release, base_url="http://user:sk-key@host/v1"), format="json")
    assert response.status_code == 400 and "OPENAI_API_KEY" in str(response.json()["base_url"])


def test_only_the_creator_or_an_admin_cancels(
    api_as: Any, trainer: Any, admin_user: Any, django_user_model: Any, release: Any, enqueued: list[dict[str, Any]]
) -> None:
    from django.contrib.auth.models import Group

    other = django_user_model.objects.create_user(username="tina-trainer", password="x")
    other.groups.add(Group.objects.get(name="trainer"))
    first = api_as(trainer).post(URL, _local(release), format="json").json()["id"]
    second = api_as(trainer).post(URL, _local(release), format="json").json()["id"]
    assert api_as(other).post(f"{URL}{first}/cancel/").status_code == 403
    assert ModelEvaluation.objects.get(pk=first).status == EvalStatus.QUEUED
    assert api_as(trainer).post(f"{URL}{first}/cancel/").json()["status"] == "cancelled"
    assert api_as(admin_user).post(f"{URL}{second}/cancel/").json()["status"] == "cancelled"


def _finished(release: Any, user: Any, *solved: str) -> ModelEvaluation:
    evaluation = model_evaluation_create(user=user, engine="transformers", model="fake", release_id=release.pk, k=2)
    model_evaluation_attempt(evaluation_id=evaluation.pk, source_factory=lambda e: FakeSource(solves(*solved)))
    evaluation.refresh_from_db()
    return evaluation


def test_it_lists_per_problem_results_and_their_samples(api_as: Any, viewer: Any, trainer: Any, release: Any) -> None:
    evaluation = _finished(release, trainer, "double")
    client = api_as(viewer)
    solved = client.get(f"{URL}{evaluation.pk}/problems/?outcome=solved").json()["results"]
    assert [(r["external_id"], r["passed"], r["attempts"]) for r in solved] == [("double", 2, 2)]
    samples = client.get(f"{URL}{evaluation.pk}/problems/{solved[0]['problem']}/samples/").json()
    assert [(s["index"], s["verdict"]) for s in samples] == [(0, "AC"), (1, "AC")]
    assert "print(2*int(input()))" in samples[0]["completion"]
    assert client.get(f"{URL}{evaluation.pk}/problems/?outcome=maybe").status_code == 400


def test_it_exports_the_pass_rates_as_jsonl(api_as: Any, viewer: Any, trainer: Any, release: Any) -> None:
    evaluation = _finished(release, trainer, "square")
    response = api_as(viewer).get(f"{URL}{evaluation.pk}/pass-rates/")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in response.content.decode().splitlines()]
    assert {r["external_id"]: (r["passed"], r["attempts"]) for r in rows} == {
        "double": (0, 2), "increment": (0, 2), "square": (2, 2), "negate": (0, 2)
    }
    assert all(set(r) == {"platform", "external_id", "passed", "attempts"} for r in rows)


def test_the_compare_endpoint_pairs_every_evaluation_with_the_baseline(
    api_as: Any, viewer: Any, trainer: Any, release: Any
) -> None:
    base = _finished(release, trainer, "double")
    better = _finished(release, trainer, "double", "square", "negate")
    body = api_as(viewer).get(f"{URL}compare/?ids={base.pk},{better.pk}").json()
    pair = body["pairs"][0]
    assert (pair["common"], pair["b_only_count"], pair["a_only_count"]) == (4, 2, 0)
    assert pair["mcnemar_p"] == 0.5 and pair["diff"] == 0.5
    assert "not significant" in pair["reading"]
    assert [e["id"] for e in body["evaluations"]] == [base.pk, better.pk]


@pytest.mark.parametrize("ids", ["", "1", "1,x", "999998,999999"])
def test_the_compare_endpoint_answers_400_naming_ids(api_as: Any, viewer: Any, ids: str) -> None:
    response = api_as(viewer).get(f"{URL}compare/?ids={ids}")
    assert response.status_code == 400 and "ids" in response.json()


def test_samples_of_an_unknown_evaluation_are_404(api_as: Any, viewer: Any) -> None:
    assert api_as(viewer).get(f"{URL}424242/problems/1/samples/").status_code == 404
    assert ModelEvaluationSample.objects.count() == 0
