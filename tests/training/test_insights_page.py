"""The insights page: 34 insights by seven aspects, one anchor each, the runs whose launch warned about
each insight (one query on PostgreSQL), the run list filtered by insight, and links from warnings."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from training import services
from training.insights import INSIGHTS
from training.models import TrainingRun
from training.selectors_insights import insight_runs, runs_citing


@pytest.fixture(autouse=True)
def runs_dir(settings: Any, tmp_path: Path) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    return settings.RUNS_DIR


def _run(name: str, dataset: str, trainer: Any, **config: Any) -> TrainingRun:
    return services.run_create(
        name=name, config_dict={"model": "tiny", "dataset": {"release": dataset}, **config}, user=trainer
    )


@pytest.mark.parametrize("persona,expected", [("outsider", 403), ("viewer", 200), ("trainer", 200)])
def test_it_shows_the_insights_page_to_every_role_only(
    request: pytest.FixtureRequest, client_as: Any, db: object, persona: str, expected: int
) -> None:
    assert (
        client_as(request.getfixturevalue(persona)).get(reverse("training:insights")).status_code == expected
    )


def test_it_sends_anonymous_visitors_to_the_login_page(client: Any, db: object) -> None:
    response = client.get(reverse("training:insights"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_it_lists_all_34_insights_by_their_seven_aspects_with_an_anchor_each(
    client_as: Any, viewer: Any
) -> None:
    html = client_as(viewer).get(reverse("training:insights")).content.decode()
    assert len(INSIGHTS) == 34
    for i in INSIGHTS:
        assert html.count(f'id="insight-{i.id}"') == 1, i.id
        assert f'f-{i.config_field}"' in html
    headings = re.findall(r'<section class="card" id="aspect-([a-z_]+)">', html)
    assert headings == [
        "evaluator",
        "temperature",
        "data",
        "context_length",
        "truncation_mask",
        "batch_on_policy",
        "kl_clip",
    ]
    # the insight sits in its aspect's section
    kl_section = html.split('id="aspect-kl_clip"', 1)[1]
    assert 'id="insight-KL-1"' in kl_section and 'id="insight-EVAL-1"' not in kl_section


def test_it_shows_what_each_preset_sets_the_field_to(client_as: Any, viewer: Any) -> None:
    html = client_as(viewer).get(reverse("training:insights")).content.decode()
    block = html.split('id="insight-KL-1"', 1)[1].split("</article>", 1)[0]
    assert "grpo preset <code>0.04</code>" in block


def test_it_lists_the_runs_whose_launch_warned_about_an_insight(
    client_as: Any, viewer: Any, trainer: Any, dataset: str
) -> None:
    kl = _run("with kl", dataset, trainer, kl_coef=0.1)
    strict = _run("strict judge", dataset, trainer, reward={"checker": "strict"})
    html = client_as(viewer).get(reverse("training:insights")).content.decode()
    kl_block = html.split('id="insight-KL-1"', 1)[1].split("</article>", 1)[0]
    assert f"#{kl.pk} with kl" in kl_block and "strict judge" not in kl_block
    eval_block = html.split('id="insight-EVAL-1"', 1)[1].split("</article>", 1)[0]
    assert f"#{strict.pk} strict judge" in eval_block
    assert "No run" in html.split('id="insight-DATA-1"', 1)[1].split("</article>", 1)[0]


def test_it_finds_the_cited_runs_in_a_fixed_number_of_queries(trainer: Any, dataset: str) -> None:
    runs = [_run(f"kl {n}", dataset, trainer, kl_coef=0.1) for n in range(12)]
    with CaptureQueriesContext(connection) as queries:
        index = insight_runs(per_insight=5)
    assert len(queries) == 2  # the index, then the listed runs
    assert index["KL-1"].total == 12
    assert [r.pk for r in index["KL-1"].runs] == [r.pk for r in runs[::-1][:5]]  # the newest first
    assert "EVAL-1" not in index


def test_it_filters_the_run_list_by_insight(client_as: Any, viewer: Any, trainer: Any, dataset: str) -> None:
    kl = _run("with kl", dataset, trainer, kl_coef=0.1)
    plain = _run("plain", dataset, trainer)
    assert list(runs_citing(TrainingRun.objects.all(), "KL-1")) == [kl]
    html = client_as(viewer).get(reverse("training:run-list") + "?insight=KL-1").content.decode()
    assert 'id="insight-filter"' in html and "with kl" in html and f">{plain.name}<" not in html
    assert client_as(viewer).get(reverse("training:run-list") + "?insight=NOPE-9").status_code == 404


def test_it_links_each_warning_of_the_api_to_its_insight(api_as: Any, trainer: Any) -> None:
    response = api_as(trainer).post("/api/runs/check/", {"config": {"kl_coef": 0.1}}, format="json")
    warning = next(w for w in response.json()["warnings"] if w["field"] == "kl_coef")
    assert warning["insight_urls"][0].endswith("/training/insights/#insight-KL-1")
    assert warning["insight_urls"][0].startswith("http")


def test_it_links_the_run_pages_warnings_to_the_insights(
    client_as: Any, viewer: Any, trainer: Any, dataset: str
) -> None:
    run = _run("with kl", dataset, trainer, kl_coef=0.1)
    html = client_as(viewer).get(reverse("training:run-detail", args=[run.pk])).content.decode()
    assert 'href="/training/insights/#insight-KL-1"' in html
