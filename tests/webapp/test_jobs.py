"""The jobs view (``/jobs/``): every kind in one list, filters and pages in the URL, the owner rule on
cancel controls and cancel posts, and each job's log (``webapp.jobs_feed``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from curation.models import DatasetRelease, ImportBatch, ScoringJob
from evaluator.models import EvaluationJob
from evaluator.services import evaluation_cancel
from training import services as training_services
from training.models import ModelEvaluation, TrainingRun
from webapp.jobs import JobRow
from webapp.jobs_feed import job_changed, job_log, milestone
from webapp.jobs_kinds import KINDS, kind_of
from webapp.models import JobEvent

pytestmark = pytest.mark.django_db


def _run(user: Any, name: str = "run", status: str = "queued", **fields: Any) -> TrainingRun:
    return TrainingRun.objects.create(
        name=name, config={"max_steps": 20}, created_by=user, status=status, **fields
    )


@pytest.fixture
def every_kind(curator: Any, trainer: Any) -> dict[str, Any]:
    """One job of each kind, created oldest first in this order."""
    release = DatasetRelease.objects.create(name="r", version=1, content_hash="h")
    return {
        "import": ImportBatch.objects.create(
            format="jsonl", filename="lcb.jsonl", path="/x", user=curator, status="running", total_rows=1200
        ),
        "verification": EvaluationJob.objects.create(
            kind="verify_references", created_by=curator, progress_total=8, progress_done=2, status="running"
        ),
        "evaluation": EvaluationJob.objects.create(kind="submission", created_by=trainer, progress_total=1),
        "scoring": ScoringJob.objects.create(
            backend="heuristic", created_by=curator, progress_total=10, progress_done=5, status="running"
        ),
        "model_evaluation": ModelEvaluation.objects.create(
            engine="transformers",
            model="/m/tiny",
            release=release,
            created_by=trainer,
            samples_total=40,
            samples_done=10,
            status="running",
        ),
        "training": _run(trainer, "grpo-tiny", status="running", last_step=5),
    }


def _keys(response: Any) -> list[str]:
    return [row.key for row, _ in response.context["rows"]]


def test_it_lists_jobs_of_every_kind_newest_first(
    client_as: Any, viewer: Any, every_kind: dict[str, Any]
) -> None:
    response = client_as(viewer).get(reverse("jobs:list"))
    assert response.status_code == 200
    expected = [f"{kind}-{obj.pk}" for kind, obj in reversed(every_kind.items())]
    assert _keys(response) == expected
    html = response.content.decode()
    assert "grpo-tiny" in html and "lcb.jsonl (jsonl)" in html and "5 / 20 steps" in html
    assert 'data-ws-path="/ws/jobs/"' in html


def test_it_reads_progress_of_each_kind_in_its_own_unit(every_kind: dict[str, Any]) -> None:
    rows = {kind: kind_of(obj).row(obj) for kind, obj in every_kind.items()}
    assert (rows["training"].percent, rows["training"].progress_text) == (25.0, "5 / 20 steps")
    assert (rows["scoring"].percent, rows["model_evaluation"].percent, rows["verification"].percent) == (
        50,
        25,
        25,
    )
    assert (rows["import"].percent, rows["import"].progress_text) == (
        None,
        "1,200 rows",
    )  # total not known yet


@pytest.mark.parametrize(
    "query,kinds",
    [
        ("kind=training", {"training"}),
        ("kind=verification", {"verification"}),
        ("status=queued", {"evaluation"}),
        ("status=running", {"import", "verification", "scoring", "model_evaluation", "training"}),
        ("status=active&kind=evaluation", {"evaluation"}),
        ("status=succeeded", set()),
    ],
)
def test_it_filters_by_kind_and_status_from_the_url(
    client_as: Any, viewer: Any, every_kind: dict[str, Any], query: str, kinds: set[str]
) -> None:
    response = client_as(viewer).get(reverse("jobs:list") + "?" + query)
    assert {key.rsplit("-", 1)[0] for key in _keys(response)} == kinds


def test_it_shows_an_import_waiting_to_start_as_queued(client_as: Any, viewer: Any, curator: Any) -> None:
    batch = ImportBatch.objects.create(format="jsonl", filename="a.jsonl", path="/a", user=curator)
    response = client_as(viewer).get(reverse("jobs:list") + "?status=queued&kind=import")
    assert _keys(response) == [f"import-{batch.pk}"]


def test_it_keeps_only_my_jobs_with_mine(client_as: Any, trainer: Any, every_kind: dict[str, Any]) -> None:
    response = client_as(trainer).get(reverse("jobs:list") + "?mine=1")
    assert {key.rsplit("-", 1)[0] for key in _keys(response)} == {
        "evaluation",
        "model_evaluation",
        "training",
    }


@pytest.mark.parametrize("query", ["kind=nope", "status=done", "page=0", "page=x"])
def test_it_refuses_an_unknown_filter_value_naming_the_accepted_ones(
    client_as: Any, viewer: Any, query: str
) -> None:
    response = client_as(viewer).get(reverse("jobs:list") + "?" + query)
    assert response.status_code == 400
    assert "must be" in response.content.decode()


def test_it_pages_the_merged_list_and_keeps_the_filters_in_the_links(
    client_as: Any, viewer: Any, trainer: Any, curator: Any
) -> None:
    runs = [_run(trainer, f"r{i}") for i in range(20)]
    batches = [
        ImportBatch.objects.create(format="jsonl", filename=f"{i}.jsonl", path="/x", user=curator)
        for i in range(10)
    ]
    client = client_as(viewer)
    first = client.get(reverse("jobs:list") + "?status=queued")
    second = client.get(reverse("jobs:list") + "?status=queued&page=2")
    assert first.context["page"].count == 30 and first.context["page"].num_pages == 2
    assert len(_keys(first)) == 25 and len(_keys(second)) == 5
    every = [f"import-{b.pk}" for b in reversed(batches)] + [f"training-{r.pk}" for r in reversed(runs)]
    assert _keys(first) + _keys(second) == every
    assert "?status=queued&amp;page=2" in first.content.decode()


def test_it_needs_a_role(client: Any, client_as: Any, outsider: Any) -> None:
    assert client.get(reverse("jobs:list")).status_code == 302
    assert client_as(outsider).get(reverse("jobs:list")).status_code == 403


def _cancel_buttons(response: Any) -> set[str]:
    return {row.key for row, can in response.context["rows"] if can}


def test_it_shows_cancel_controls_by_the_owner_rule(
    client_as: Any, viewer: Any, trainer: Any, curator: Any, admin_user: Any, every_kind: dict[str, Any]
) -> None:
    ek = every_kind
    assert _cancel_buttons(client_as(viewer).get(reverse("jobs:list"))) == set()
    assert "Cancel</button>" not in client_as(viewer).get(reverse("jobs:list")).content.decode()
    assert _cancel_buttons(client_as(trainer).get(reverse("jobs:list"))) == {
        f"evaluation-{ek['evaluation'].pk}",
        f"model_evaluation-{ek['model_evaluation'].pk}",
        f"training-{ek['training'].pk}",
    }
    assert _cancel_buttons(client_as(curator).get(reverse("jobs:list"))) == {
        f"verification-{ek['verification'].pk}",
        f"scoring-{ek['scoring'].pk}",
    }
    # an admin cancels anything that can be cancelled; an import cannot
    assert _cancel_buttons(client_as(admin_user).get(reverse("jobs:list"))) == {
        key for key in _keys(client_as(admin_user).get(reverse("jobs:list"))) if not key.startswith("import-")
    }


@pytest.mark.parametrize(
    "kind,persona,allowed",
    [
        ("training", "trainer", True),
        ("training", "viewer", False),
        ("training", "curator", False),
        ("training", "admin_user", True),
        ("scoring", "curator", True),
        ("scoring", "trainer", False),
        ("model_evaluation", "trainer", True),
        ("verification", "curator", True),
        ("evaluation", "viewer", False),
    ],
)
def test_it_cancels_through_the_kinds_own_service_for_owners_and_admins_only(
    request: pytest.FixtureRequest,
    client_as: Any,
    every_kind: dict[str, Any],
    kind: str,
    persona: str,
    allowed: bool,
) -> None:
    obj = every_kind[kind]
    response = client_as(request.getfixturevalue(persona)).post(
        reverse("jobs:cancel", args=(kind, obj.pk)), {"next": "/jobs/?kind=" + kind}
    )
    obj.refresh_from_db()
    if allowed:
        assert response.status_code == 302 and response["Location"] == "/jobs/?kind=" + kind
        assert obj.status == "cancelled" or getattr(obj, "cancel_requested", False)
    else:
        assert response.status_code == 403
        assert obj.status != "cancelled" and not getattr(obj, "cancel_requested", False)


def test_it_says_an_import_cannot_be_cancelled(
    client_as: Any, curator: Any, every_kind: dict[str, Any]
) -> None:
    batch = every_kind["import"]
    response = client_as(curator).post(reverse("jobs:cancel", args=("import", batch.pk)), follow=True)
    assert "cannot be cancelled" in response.content.decode()
    batch.refresh_from_db()
    assert batch.status == "running"


def test_it_refuses_a_foreign_redirect_after_cancel(client_as: Any, trainer: Any) -> None:
    run = _run(trainer)
    response = client_as(trainer).post(
        reverse("jobs:cancel", args=("training", run.pk)), {"next": "https://evil.example/"}
    )
    assert response["Location"] == reverse("jobs:detail", args=("training", run.pk))


def test_it_answers_404_for_an_unknown_kind_or_job(client_as: Any, viewer: Any) -> None:
    assert client_as(viewer).get("/jobs/nope/1/").status_code == 404
    assert client_as(viewer).get("/jobs/training/999999/").status_code == 404


# ------------------------------------------------------------------------------------------- the log


def test_it_logs_a_run_from_queue_to_cancel_with_step_milestones(
    trainer: Any, tmp_path: Any, settings: Any
) -> None:
    settings.RUNS_DIR = tmp_path / "runs"
    release = tmp_path / "release.jsonl"
    release.write_text("{}\n")
    run = training_services.run_create(
        name="logged",
        config_dict={"model": "tiny", "dataset": {"release": str(release)}, "max_steps": 10},
        user=trainer,
    )
    job_changed(run, note="queued")
    TrainingRun.objects.filter(pk=run.pk).update(status="running")
    job_changed(run.pk, kind="training", note="running on node-1")
    for step in range(1, 5):
        training_services.metrics_record(run_id=run.pk, step=step, metrics={"reward": 0.5})
    training_services.run_cancel(run_id=run.pk, user=trainer)
    TrainingRun.objects.filter(pk=run.pk).update(status="cancelled")
    job_changed(run.pk, kind="training")
    lines = [(e.status, e.message) for e in job_log(kind="training", job_id=run.pk)]
    assert lines == [
        ("queued", "queued"),
        ("running", "started (running on node-1)"),
        ("running", "10 %: 1 / 10 steps"),
        ("running", "20 %: 2 / 10 steps"),
        ("running", "30 %: 3 / 10 steps"),
        ("running", "40 %: 4 / 10 steps"),
        ("running", "cancel requested"),
        ("cancelled", "cancelled after 4 / 10 steps"),
    ]


def test_it_logs_a_failure_with_its_reason_as_an_error(trainer: Any) -> None:
    job = EvaluationJob.objects.create(
        kind="submission", created_by=trainer, progress_total=1, status="running"
    )
    job_changed(job)
    job.status, job.error = "failed", "judge pool broke: worker died"
    job.save()
    job_changed(job)
    job_changed(job)  # republishing an ended job adds nothing
    lines = [(e.level, e.message) for e in job_log(kind="evaluation", job_id=job.pk)]
    assert lines == [
        ("info", "started"),
        ("error", "failed after 0 / 1 solution: judge pool broke: worker died"),
    ]


def test_the_kinds_own_services_write_the_log(trainer: Any) -> None:
    job = EvaluationJob.objects.create(kind="verify_references", created_by=trainer, progress_total=3)
    evaluation_cancel(job_id=job.pk, user=trainer)
    assert [e.message for e in job_log(kind="verification", job_id=job.pk)] == [
        "cancelled after 0 / 3 solutions"
    ]


def test_the_detail_page_shows_the_log_and_a_link_to_the_jobs_own_page(
    client_as: Any, viewer: Any, trainer: Any
) -> None:
    run = _run(trainer, "with-log", status="running", last_step=2)
    job_changed(run)
    response = client_as(viewer).get(reverse("jobs:detail", args=("training", run.pk)))
    html = response.content.decode()
    assert response.status_code == 200 and "started" in html and "10 %: 2 / 20 steps" in html
    assert reverse("training:run-detail", args=(run.pk,)) in html
    assert "Cancel</button>" not in html  # a viewer
    assert (
        "Cancel</button>"
        in client_as(trainer).get(reverse("jobs:detail", args=("training", run.pk))).content.decode()
    )


def test_a_broken_log_never_breaks_the_job(trainer: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("log table gone")

    monkeypatch.setattr(JobEvent.objects, "bulk_create", boom)
    job = EvaluationJob.objects.create(kind="submission", created_by=trainer, progress_total=1)
    assert evaluation_cancel(job_id=job.pk, user=trainer).status == "cancelled"


@pytest.mark.parametrize(
    "done,total,expected",
    [
        (0, 10, 0),
        (9, 10, 9),
        (10, 10, 10),
        (3, 0, 0),
        (99, None, 0),
        (100, None, 1),
        (199, None, 1),
        (200, None, 2),
        (500, None, 3),
        (1000, None, 4),
        (4999, None, 5),
        (12_000, None, 7),
    ],
)
def test_it_counts_milestones_by_tenths_or_by_1_2_5_steps(
    done: int, total: int | None, expected: int
) -> None:
    row = JobRow(
        kind="x",
        kind_label="X",
        id=1,
        title="",
        status="running",
        done=done,
        total=total,
        unit="",
        reason="",
        owner_id=None,
        owner_name="",
        created_at=timezone.now(),
        finished_at=None,
        detail_url="",
        cancellable=False,
    )
    assert milestone(row) == expected


def test_every_kind_has_a_detail_page_and_a_label() -> None:
    assert list(KINDS) == [
        "import",
        "verification",
        "evaluation",
        "scoring",
        "model_evaluation",
        "training",
        "sweep",
    ]


# ------------------------------------------------------------------------------------------- sweeps


@pytest.fixture
def sweep(trainer: Any) -> Any:
    """A sweep of three runs: one succeeded, one running, one queued."""
    from training.models import Sweep

    sweep = Sweep.objects.create(name="temperature sweep", created_by=trainer)
    for status in ("succeeded", "running", "queued"):
        _run(trainer, f"sweep-{status}", status=status, sweep=sweep)
    return sweep


def test_a_sweep_reads_its_status_and_progress_from_its_runs(client_as: Any, viewer: Any, sweep: Any) -> None:
    response = client_as(viewer).get(reverse("jobs:list") + "?kind=sweep")
    (row,) = [row for row, _ in response.context["rows"]]
    assert (row.title, row.status, row.progress_text) == ("temperature sweep", "running", "1 / 3 runs ended")
    assert reverse("training:sweep-detail", args=(sweep.pk,)) == row.detail_url


@pytest.mark.parametrize(
    "statuses,expected",
    [
        (("queued", "queued"), "queued"),
        (("succeeded", "queued"), "running"),
        (("succeeded", "failed", "cancelled"), "failed"),
        (("succeeded", "cancelled"), "cancelled"),
        (("succeeded", "succeeded"), "succeeded"),
    ],
)
def test_the_sweep_status_filter_agrees_with_the_sweep_model(
    client_as: Any, viewer: Any, trainer: Any, statuses: tuple[str, ...], expected: str
) -> None:
    from training.models import Sweep

    sweep = Sweep.objects.create(name="s", created_by=trainer)
    for status in statuses:
        _run(trainer, status=status, sweep=sweep)
    assert Sweep.status_of(statuses) == expected
    for status in ("queued", "running", "succeeded", "failed", "cancelled"):
        keys = _keys(client_as(viewer).get(reverse("jobs:list") + f"?kind=sweep&status={status}"))
        assert keys == ([f"sweep-{sweep.pk}"] if status == expected else []), status


def test_a_sweeps_owner_cancels_every_unfinished_run(
    client_as: Any, trainer: Any, viewer: Any, sweep: Any
) -> None:
    assert client_as(viewer).post(reverse("jobs:cancel", args=("sweep", sweep.pk))).status_code == 403
    client_as(trainer).post(reverse("jobs:cancel", args=("sweep", sweep.pk)))
    statuses = sorted(sweep.runs.values_list("status", "cancel_requested"))
    assert statuses == [("cancelled", True), ("running", True), ("succeeded", False)]
    lines = [e.message for e in job_log(kind="sweep", job_id=sweep.pk)]
    assert lines[-1] == "66.7 %: 2 / 3 runs ended (cancel requested, 1 cancelled)"


def test_a_runs_progress_also_moves_its_sweep(trainer: Any, sweep: Any) -> None:
    running = sweep.runs.get(status="running")
    TrainingRun.objects.filter(pk=running.pk).update(status="succeeded")
    job_changed(running.pk, kind="training")
    assert [e.message for e in job_log(kind="sweep", job_id=sweep.pk)] == [
        "started",
        "66.7 %: 2 / 3 runs ended",
    ]


# ---------------------------------------------------------------------------------------------- API


def test_the_api_lists_jobs_with_the_same_filters(
    api_as: Any, trainer: Any, every_kind: dict[str, Any]
) -> None:
    body = api_as(trainer).get("/api/jobs/?status=running&mine=1").json()
    assert body["count"] == 2
    assert [(r["key"], r["can_cancel"]) for r in body["results"]] == [
        (f"training-{every_kind['training'].pk}", True),
        (f"model_evaluation-{every_kind['model_evaluation'].pk}", True),
    ]
    assert api_as(trainer).get("/api/jobs/?kind=nope").status_code == 400


def test_the_api_needs_a_role(client: Any, api_as: Any, outsider: Any) -> None:
    assert client.get("/api/jobs/").status_code in (401, 403)
    assert api_as(outsider).get("/api/jobs/").status_code == 403


def test_the_api_shows_one_job_with_its_log(api_as: Any, viewer: Any, trainer: Any) -> None:
    run = _run(trainer, status="running", last_step=4)
    job_changed(run)
    body = api_as(viewer).get(f"/api/jobs/training/{run.pk}/").json()
    assert (body["percent"], body["can_cancel"]) == (20.0, False)
    assert [line["message"] for line in body["log"]] == ["started", "20 %: 4 / 20 steps"]
    assert api_as(viewer).get("/api/jobs/training/999999/").status_code == 404


def test_the_api_cancels_by_the_owner_rule(api_as: Any, viewer: Any, trainer: Any, curator: Any) -> None:
    run = _run(trainer)
    assert api_as(viewer).post(f"/api/jobs/training/{run.pk}/cancel/").status_code == 403
    response = api_as(trainer).post(f"/api/jobs/training/{run.pk}/cancel/")
    assert (response.status_code, response.json()["status"]) == (200, "cancelled")
    batch = ImportBatch.objects.create(format="jsonl", filename="a", path="/a", user=curator)
    assert api_as(curator).post(f"/api/jobs/import/{batch.pk}/cancel/").status_code == 409


def test_the_list_fragment_is_the_rows_alone_for_a_reconnecting_page(
    client_as: Any, viewer: Any, every_kind: dict[str, Any]
) -> None:
    html = client_as(viewer).get(reverse("jobs:list") + "?kind=training&fragment=rows").content.decode()
    assert html.lstrip().startswith("<tr") and "<html" not in html
    assert f'data-job="training-{every_kind["training"].pk}"' in html


def test_a_note_that_only_repeats_the_status_is_not_repeated(trainer: Any) -> None:
    run = _run(trainer, status="running", last_step=0)
    job_changed(run)
    TrainingRun.objects.filter(pk=run.pk).update(status="cancelled")
    job_changed(run.pk, kind="training", note="cancelled")
    assert [e.message for e in job_log(kind="training", job_id=run.pk)][-1] == "cancelled after 0 / 20 steps"
