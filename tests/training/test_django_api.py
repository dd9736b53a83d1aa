"""REST API and pages of training runs: permissions for every endpoint and page, and behaviour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from training import services
from training.models import RunStatus, TrainingRun

ANONYMOUS_API = (401, 403)


@pytest.fixture(autouse=True)
def runs_dir(settings: Any, tmp_path: Path) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    return settings.RUNS_DIR



@pytest.fixture
def run(db: object, dataset: str, trainer: Any) -> TrainingRun:
    """A run created by the ``trainer`` persona (its owner: it may cancel it)."""
    run = services.run_create(name="demo", config_dict={"model": "tiny", "dataset": {"release": dataset}}, user=trainer)
    for step in (1, 2, 3):
        services.metrics_record(run_id=run.pk, step=step, metrics={"reward": step / 4, "entropy": 1.0})
    services.samples_record(run_id=run.pk, step=3, samples=[{"prompt": "p", "completion": "c", "verdict": "AC",
                                                             "reward": 1.0, "length": 5}])
    return run


def _persona(request: pytest.FixtureRequest, name: str) -> Any:
    return None if name == "anonymous" else request.getfixturevalue(name)


def _api(api_as: Any, user: Any) -> Any:
    from rest_framework.test import APIClient

    return APIClient() if user is None else api_as(user)


def _client(client_as: Any, user: Any) -> Any:
    from django.test import Client

    return Client() if user is None else client_as(user)


# --- API permissions -----------------------------------------------------------------------------

READ_ENDPOINTS = ["/api/runs/", "/api/runs/{id}/", "/api/runs/{id}/metrics/?names=reward", "/api/runs/{id}/samples/"]


@pytest.mark.parametrize("url", READ_ENDPOINTS)
@pytest.mark.parametrize(
    "persona,expected", [("anonymous", ANONYMOUS_API), ("outsider", (403,)), ("viewer", (200,)), ("trainer", (200,))]
)
def test_it_lets_every_role_read_runs_but_nobody_else(
    request: pytest.FixtureRequest, api_as: Any, run: TrainingRun, url: str, persona: str, expected: tuple[int, ...]
) -> None:
    response = _api(api_as, _persona(request, persona)).get(url.format(id=run.pk))
    assert response.status_code in expected


@pytest.mark.parametrize(
    "persona,expected",
    [("anonymous", ANONYMOUS_API), ("outsider", (403,)), ("viewer", (403,)), ("curator", (403,)), ("trainer", (201,)),
     ("admin_user", (201,))],
)
def test_it_lets_only_trainers_create_runs(
    request: pytest.FixtureRequest, api_as: Any, db: object, dataset: str, persona: str, expected: tuple[int, ...]
) -> None:
    body = {"name": "api run", "config": {"model": "tiny", "dataset": {"release": dataset}}}
    response = _api(api_as, _persona(request, persona)).post("/api/runs/", body, format="json")
    assert response.status_code in expected


@pytest.mark.parametrize(
    "persona,expected", [("anonymous", ANONYMOUS_API), ("outsider", (403,)), ("viewer", (403,)), ("trainer", (200,))]
)
def test_it_lets_only_trainers_cancel_runs(
    request: pytest.FixtureRequest, api_as: Any, run: TrainingRun, persona: str, expected: tuple[int, ...]
) -> None:
    response = _api(api_as, _persona(request, persona)).post(f"/api/runs/{run.pk}/cancel/")
    assert response.status_code in expected
    run.refresh_from_db()
    assert run.cancel_requested == (expected == (200,))


@pytest.mark.parametrize(
    "persona,expected", [("anonymous", ANONYMOUS_API), ("outsider", (403,)), ("viewer", (403,)), ("trainer", (200,))]
)
def test_it_lets_only_trainers_check_configs(
    request: pytest.FixtureRequest, api_as: Any, db: object, persona: str, expected: tuple[int, ...]
) -> None:
    response = _api(api_as, _persona(request, persona)).post("/api/runs/check/", {"config": {}}, format="json")
    assert response.status_code in expected


# --- API behaviour -------------------------------------------------------------------------------


def test_it_creates_and_starts_a_run_through_the_api(
    api_as: Any, trainer: Any, dataset: str, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import tasks

    sent: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.train_run, "apply_async", lambda **kw: sent.append(kw))
    body = {"name": "api run", "config": {"model": "tiny", "dataset": {"release": dataset}},
            "overrides": {"mask.probability": 0.3}}
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(trainer).post("/api/runs/", body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["config"]["mask"]["probability"] == 0.3
    assert any(w["field"] == "mask.probability" for w in data["warnings"])
    assert data["created_by"] == trainer.username
    assert sent and sent[0]["queue"] == "gpu" and sent[0]["args"] == [data["id"]]


def test_it_answers_an_invalid_config_with_400_and_the_reason(api_as: Any, trainer: Any, dataset: str) -> None:
    body = {"name": "bad", "config": {"model": "tiny", "dataset": {"release": dataset}, "group_size": 1}}
    response = api_as(trainer).post("/api/runs/", body, format="json")
    assert response.status_code == 400
    assert "group_size" in str(response.json()["config"])


def test_it_returns_the_insight_warnings_of_a_checked_config(api_as: Any, trainer: Any) -> None:
    response = api_as(trainer).post("/api/runs/check/", {"config": {"kl_coef": 0.1}}, format="json")
    assert response.status_code == 200
    assert response.json()["config"]["kl_coef"] == 0.1
    assert "kl_coef" in [w["field"] for w in response.json()["warnings"]]


def test_it_serves_downsampled_metric_series(api_as: Any, viewer: Any, run: TrainingRun) -> None:
    response = api_as(viewer).get(f"/api/runs/{run.pk}/metrics/?names=reward,nope&max_points=4")
    assert response.status_code == 200
    body = response.json()
    assert body["series"]["reward"] == {"steps": [1, 2, 3], "values": [0.25, 0.5, 0.75], "total": 3}
    assert body["series"]["nope"]["total"] == 0
    assert body["last_step"] == 3


def test_it_serves_every_metric_when_no_names_are_given(api_as: Any, viewer: Any, run: TrainingRun) -> None:
    body = api_as(viewer).get(f"/api/runs/{run.pk}/metrics/").json()
    assert sorted(body["series"]) == ["entropy", "reward"]


def test_it_rejects_a_non_integer_max_points(api_as: Any, viewer: Any, run: TrainingRun) -> None:
    assert api_as(viewer).get(f"/api/runs/{run.pk}/metrics/?max_points=lots").status_code == 400


def test_it_serves_the_newest_sample_table_by_default(api_as: Any, viewer: Any, run: TrainingRun) -> None:
    body = api_as(viewer).get(f"/api/runs/{run.pk}/samples/").json()
    assert body["step"] == 3 and body["steps"] == [3]
    assert body["samples"][0]["verdict"] == "AC"
    assert api_as(viewer).get(f"/api/runs/{run.pk}/samples/?step=1").json()["samples"] == []


def test_it_answers_404_for_an_unknown_run(api_as: Any, viewer: Any, db: object) -> None:
    assert api_as(viewer).get("/api/runs/999999/metrics/").status_code == 404


def test_it_documents_the_run_endpoints_in_the_openapi_schema(api_as: Any, viewer: Any) -> None:
    response = api_as(viewer).get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    paths = response.json()["paths"]
    for p in ("/api/runs/", "/api/runs/{id}/", "/api/runs/{id}/cancel/", "/api/runs/{id}/metrics/",
              "/api/runs/{id}/samples/", "/api/runs/check/"):
        assert p in paths, p


# --- pages ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", ["training:run-list", "training:run-detail"])
@pytest.mark.parametrize("persona,expected", [("outsider", 403), ("viewer", 200), ("trainer", 200)])
def test_it_shows_run_pages_to_every_role_only(
    request: pytest.FixtureRequest, client_as: Any, run: TrainingRun, page: str, persona: str, expected: int
) -> None:
    url = reverse(page, kwargs={"run_id": run.pk} if page.endswith("detail") else None)
    assert client_as(request.getfixturevalue(persona)).get(url).status_code == expected


@pytest.mark.parametrize("page", ["training:run-list", "training:run-detail", "training:run-create"])
def test_it_sends_anonymous_visitors_to_the_login_page(client: Any, run: TrainingRun, page: str) -> None:
    url = reverse(page, kwargs={"run_id": run.pk} if page.endswith("detail") else None)
    response = client.get(url)
    assert response.status_code == 302 and reverse("login") in response["Location"]


@pytest.mark.parametrize("persona,expected", [("outsider", 403), ("viewer", 403), ("curator", 403), ("trainer", 200)])
def test_it_shows_the_create_form_to_trainers_only(
    request: pytest.FixtureRequest, client_as: Any, db: object, persona: str, expected: int
) -> None:
    assert client_as(request.getfixturevalue(persona)).get(reverse("training:run-create")).status_code == expected


@pytest.mark.parametrize("persona,expected", [("outsider", 403), ("viewer", 403), ("trainer", 302)])
def test_it_lets_only_trainers_cancel_from_the_run_page(
    request: pytest.FixtureRequest, client_as: Any, run: TrainingRun, persona: str, expected: int
) -> None:
    response = client_as(request.getfixturevalue(persona)).post(reverse("training:run-cancel", args=[run.pk]))
    assert response.status_code == expected


def test_it_renders_every_config_field_with_its_help_on_the_create_form(client_as: Any, trainer: Any) -> None:
    from training.config import describe_fields

    html = client_as(trainer).get(reverse("training:run-create")).content.decode()
    for f in describe_fields():
        assert f'data-field="{f.path}"' in html, f.path
    assert "lower clip" in html.lower()


def test_it_shows_the_insights_of_a_field_next_to_it(client_as: Any, trainer: Any) -> None:
    import re

    html = client_as(trainer).get(reverse("training:run-create")).content.decode()
    block = re.search(r'data-field="mask.probability".*?</div>\s*</div>', html, re.S)
    assert block is not None
    assert 'data-insight="MASK-3"' in block.group(0)


def test_it_links_the_form_to_the_insights_page(client_as: Any, trainer: Any) -> None:
    """The 34 insights by aspect live on /training/insights/ (tests/training/test_insights_page.py)."""
    html = client_as(trainer).get(reverse("training:run-create")).content.decode()
    assert 'href="/training/insights/"' in html and 'href="/training/insights/#insight-MASK-3"' in html


def _form_post(dataset: str, action: str, **fields: str) -> dict[str, str]:
    return {"name": "form run", "release_id": "", "action": action, "model": "tiny",
            "dataset.release": dataset, **fields}


def test_it_shows_the_check_config_warnings_before_launch(client_as: Any, trainer: Any, dataset: str) -> None:
    response = client_as(trainer).post(reverse("training:run-create"), _form_post(dataset, "check", kl_coef="0.2"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="check-result"' in html and "KL-1" in html
    assert not TrainingRun.objects.exists()


def test_it_launches_a_run_from_the_form(
    client_as: Any, trainer: Any, dataset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training import tasks

    monkeypatch.setattr(tasks.train_run, "apply_async", lambda **kw: None)
    response = client_as(trainer).post(
        reverse("training:run-create"), _form_post(dataset, "launch", **{"learning_rate": "2e-6",
                                                                         "temperature.stages": "[]"})
    )
    run = TrainingRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("training:run-detail", args=[run.pk])
    assert run.config["learning_rate"] == 2e-6 and run.created_by == trainer


def test_it_keeps_the_form_and_says_why_when_a_value_is_invalid(client_as: Any, trainer: Any, dataset: str) -> None:
    response = client_as(trainer).post(reverse("training:run-create"), _form_post(dataset, "launch", group_size="two"))
    assert response.status_code == 200
    assert "must be an integer" in response.content.decode()
    assert not TrainingRun.objects.exists()


def test_it_prefills_the_form_from_another_run(client_as: Any, trainer: Any, run: TrainingRun) -> None:
    html = client_as(trainer).get(reverse("training:run-create") + f"?from={run.pk}").content.decode()
    assert 'value="demo (copy)"' in html and 'value="tiny"' in html


def test_it_shows_the_cancel_button_to_trainers_only(client_as: Any, trainer: Any, viewer: Any, run: TrainingRun) -> None:
    url = reverse("training:run-detail", args=[run.pk])
    assert 'id="cancel-form"' in client_as(trainer).get(url).content.decode()
    assert 'id="cancel-form"' not in client_as(viewer).get(url).content.decode()


def test_it_hides_the_cancel_button_of_a_finished_run(client_as: Any, trainer: Any, run: TrainingRun) -> None:
    TrainingRun.objects.filter(pk=run.pk).update(status=RunStatus.SUCCEEDED)
    assert 'id="cancel-form"' not in client_as(trainer).get(reverse("training:run-detail", args=[run.pk])).content.decode()
