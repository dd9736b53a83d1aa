"""Sweeps: expansion of a specification into runs, validation before anything is created, the cap,
launch on the gpu queue, cancel and clone of the whole sweep, the API and pages with their roles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from training.models import RunStatus, Sweep, TrainingRun
from training.services import sweeps

ANONYMOUS_API = (401, 403)


@pytest.fixture(autouse=True)
def runs_dir(settings: Any, tmp_path: Path) -> Path:
    settings.RUNS_DIR = tmp_path / "runs"
    return settings.RUNS_DIR


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Training task messages sent (the runs are not trained)."""
    from training import tasks

    messages: list[dict[str, Any]] = []
    monkeypatch.setattr(tasks.train_run, "apply_async", lambda **kw: messages.append(kw))
    return messages


@pytest.fixture
def base(dataset: str) -> dict[str, Any]:
    return {"model": "tiny", "dataset": {"release": dataset}, "max_steps": 5}


MASK_GRID = [{"path": "mask.policy", "values": ["conditional", "all"]},
             {"path": "mask.probability", "values": [0.1, 0.3]}]
TEMPERATURE_SETS = [
    {"_label": "constant 1.2", "temperature.policy": "constant", "temperature.value": 1.2},
    {"_label": "staged", "temperature.policy": "staged",
     "temperature.stages": [{"start_step": 1, "value": 0.6}, {"start_step": 3, "value": 1.8}]},
    {"_label": "diversity", "temperature.policy": "diversity"},
]


def _sweep(user: Any, base: dict[str, Any], **spec: Any) -> Sweep:
    return sweeps.sweep_create(name=spec.pop("name", "ablation"), base_config=base, user=user, **spec)


# --- expansion -----------------------------------------------------------------------------------


def test_it_expands_a_grid_into_the_cartesian_product_in_axis_order(base: dict[str, Any]) -> None:
    points = sweeps.sweep_expand(base_config=base, axes=MASK_GRID)
    assert [p.overrides for p in points] == [
        {"mask.policy": "conditional", "mask.probability": 0.1},
        {"mask.policy": "conditional", "mask.probability": 0.3},
        {"mask.policy": "all", "mask.probability": 0.1},
        {"mask.policy": "all", "mask.probability": 0.3},
    ]
    assert points[1].label == "mask.policy=conditional, mask.probability=0.3"
    assert points[3].config["mask"] == {"policy": "all", "probability": 0.3}
    assert points[3].config["max_steps"] == 5 and "mask" not in base  # the base is copied, never changed


def test_it_crosses_override_sets_with_seeds_and_labels_them(base: dict[str, Any]) -> None:
    points = sweeps.sweep_expand(base_config=base, override_sets=TEMPERATURE_SETS, seeds=[0, 1])
    assert len(points) == 6
    assert [p.label for p in points[:3]] == ["constant 1.2, seed=0", "constant 1.2, seed=1", "staged, seed=0"]
    assert points[2].config["temperature"]["stages"][1] == {"start_step": 3, "value": 1.8}
    assert points[5].overrides == {"temperature.policy": "diversity", "seed": 1}
    assert "_label" not in points[0].overrides


def test_it_sweeps_kl_against_clip_higher(base: dict[str, Any]) -> None:
    points = sweeps.sweep_expand(base_config=base, axes=[{"path": "kl_coef", "values": [0.0, 0.04]},
                                                         {"path": "clip.eps_high", "values": [0.2, 0.28]}])
    resolved = sweeps.sweep_validate(points=points, has_release=False)
    assert [(c["kl_coef"], c["clip"]["eps_high"]) for c in resolved] == [(0.0, 0.2), (0.0, 0.28), (0.04, 0.2), (0.04, 0.28)]


def test_it_accepts_dotted_keys_in_the_base_config(dataset: str) -> None:
    points = sweeps.sweep_expand(base_config={"model": "tiny", "dataset.release": dataset, "mask.probability": 0.2},
                                 seeds=[3])
    assert points[0].config["dataset"] == {"release": dataset} and points[0].config["mask"]["probability"] == 0.2


# --- validation ----------------------------------------------------------------------------------


def test_it_names_the_combination_and_field_of_an_invalid_run_and_creates_nothing(
    trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]]
) -> None:
    with pytest.raises(ValidationError) as caught:
        _sweep(trainer, base, axes=[{"path": "mask.probability", "values": [0.1, 1.5]}])
    message = " ".join(caught.value.message_dict["config"])
    assert "run 2 (mask.probability=1.5)" in message and "mask.probability" in message
    assert not Sweep.objects.exists() and not TrainingRun.objects.exists() and not sent


def test_it_suggests_the_field_meant_by_an_unknown_path(base: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        sweeps.sweep_expand(base_config=base, axes=[{"path": "mask.probabilty", "values": [0.1]}])
    assert "did you mean mask.probability?" in caught.value.message_dict["axes"][0]


def test_it_refuses_a_path_set_both_by_an_axis_and_an_override_set(base: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="also set by override set 1"):
        sweeps.sweep_expand(base_config=base, override_sets=[{"mask.probability": 0.2}],
                            axes=[{"path": "mask.probability", "values": [0.1, 0.3]}])


def test_it_refuses_seed_as_a_grid_axis_and_repeated_seeds(base: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="seeds axis"):
        sweeps.sweep_expand(base_config=base, axes=[{"path": "seed", "values": [1, 2]}])
    with pytest.raises(ValidationError, match="listed twice"):
        sweeps.sweep_expand(base_config=base, seeds=[1, 1])


def test_it_refuses_combinations_that_resolve_to_the_same_config(base: dict[str, Any]) -> None:
    points = sweeps.sweep_expand(base_config=base, override_sets=[{"mask.probability": 0.1}, {"mask.probability": 0.1}])
    with pytest.raises(ValidationError, match="resolve to the same config"):
        sweeps.sweep_validate(points=points, has_release=False)


def test_it_caps_the_number_of_runs_with_a_clear_error(settings: Any, base: dict[str, Any]) -> None:
    settings.SWEEP_MAX_RUNS = 6
    with pytest.raises(ValidationError) as caught:
        sweeps.sweep_expand(base_config=base, axes=MASK_GRID, seeds=[0, 1])
    message = caught.value.message_dict["__all__"][0]
    assert "8 runs (2 mask.policy x 2 mask.probability x 2 seeds)" in message and "limit is 6" in message


def test_it_needs_a_dataset_for_every_run(trainer: Any) -> None:
    with pytest.raises(ValidationError, match="choose a dataset release"):
        _sweep(trainer, {"model": "tiny"}, seeds=[0, 1])


def test_it_sweeps_the_three_presets(base: dict[str, Any]) -> None:
    presets = pytest.importorskip("training.presets")
    points = sweeps.sweep_expand(base_config=base, axes=[{"path": "preset", "values": presets.preset_names()}])
    resolved = sweeps.sweep_validate(points=points, has_release=False)
    by_preset = {c["preset"]: c for c in resolved}
    assert set(by_preset) == {"grpo", "dapo", "microcoder"}
    assert by_preset["grpo"]["kl_coef"] > 0 and by_preset["dapo"]["kl_coef"] == 0
    assert by_preset["grpo"]["clip"]["eps_high"] < by_preset["dapo"]["clip"]["eps_high"]
    assert all(c["max_steps"] == 5 for c in resolved)  # the base config's values apply on top of each preset


# --- launch, cancel, clone -----------------------------------------------------------------------


def test_it_creates_every_run_and_starts_them_on_the_gpu_queue(
    trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        sweep = _sweep(trainer, base, axes=MASK_GRID)
    runs = list(sweep.runs.order_by("id"))
    assert len(runs) == 4 and all(r.status == RunStatus.QUEUED and r.created_by == trainer for r in runs)
    assert runs[2].sweep_overrides == {"mask.policy": "all", "mask.probability": 0.1}
    assert runs[2].config["mask"]["policy"] == "all" and runs[2].name == "ablation [mask.policy=all, mask.probability=0.1]"
    assert len({r.output_dir for r in runs}) == 4
    assert [m["args"] for m in sent] == [[r.pk] for r in runs] and {m["queue"] for m in sent} == {"gpu"}


def test_it_cancels_every_unfinished_run_of_the_sweep(trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]]) -> None:
    sweep = _sweep(trainer, base, seeds=[0, 1, 2])
    first, second, third = sweep.runs.order_by("id")
    TrainingRun.objects.filter(pk=first.pk).update(status=RunStatus.SUCCEEDED)
    TrainingRun.objects.filter(pk=second.pk).update(status=RunStatus.RUNNING)
    sweeps.sweep_cancel(sweep_id=sweep.pk, user=trainer)
    statuses = dict(sweep.runs.values_list("pk", "status"))
    assert statuses == {first.pk: "succeeded", second.pk: "running", third.pk: "cancelled"}
    assert TrainingRun.objects.get(pk=second.pk).cancel_requested  # stops after its current step
    assert Sweep.objects.get(pk=sweep.pk).cancel_requested


def test_only_the_owner_or_an_admin_may_cancel_a_sweep(
    trainer: Any, admin_user: Any, django_user_model: Any, base: dict[str, Any], sent: list[dict[str, Any]]
) -> None:
    from django.contrib.auth.models import Group

    other = django_user_model.objects.create_user(username="tina-trainer", password="x")
    other.groups.add(Group.objects.get(name="trainer"))
    sweep = _sweep(trainer, base, seeds=[0, 1])
    with pytest.raises(PermissionDenied):
        sweeps.sweep_cancel(sweep_id=sweep.pk, user=other)
    assert not sweep.runs.filter(status=RunStatus.CANCELLED).exists()
    sweeps.sweep_cancel(sweep_id=sweep.pk, user=admin_user)
    assert set(sweep.runs.values_list("status", flat=True)) == {"cancelled"}


def test_it_clones_the_whole_sweep_for_another_trainer(
    trainer: Any, admin_user: Any, base: dict[str, Any], sent: list[dict[str, Any]]
) -> None:
    source = _sweep(trainer, base, override_sets=TEMPERATURE_SETS[:2], seeds=[0, 1])
    clone = sweeps.sweep_clone(sweep_id=source.pk, user=admin_user)
    assert clone.pk != source.pk and clone.cloned_from_id == source.pk and clone.name == "ablation (clone)"
    assert clone.created_by == admin_user and clone.runs.count() == 4
    assert sorted(map(str, clone.runs.values_list("sweep_overrides", flat=True))) == sorted(
        map(str, source.runs.values_list("sweep_overrides", flat=True))
    )


def test_the_sweep_status_follows_its_runs() -> None:
    assert Sweep.status_of([]) == "empty"
    assert Sweep.status_of(["queued", "queued"]) == "queued"
    assert Sweep.status_of(["succeeded", "queued"]) == "running"
    assert Sweep.status_of(["failed", "running"]) == "running"
    assert Sweep.status_of(["failed", "succeeded", "cancelled"]) == "failed"
    assert Sweep.status_of(["succeeded", "cancelled"]) == "cancelled"
    assert Sweep.status_of(["succeeded", "succeeded"]) == "succeeded"


# --- API -----------------------------------------------------------------------------------------


def _api(api_as: Any, user: Any) -> Any:
    from rest_framework.test import APIClient

    return APIClient() if user is None else api_as(user)


@pytest.mark.parametrize(
    "persona,read,write",
    [("anonymous", ANONYMOUS_API, ANONYMOUS_API), ("outsider", (403,), (403,)), ("viewer", (200,), (403,)),
     ("trainer", (200,), (201,))],
)
def test_it_lets_every_role_read_sweeps_and_only_trainers_launch_them(
    api_as: Any, request: pytest.FixtureRequest, trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]],
    persona: str, read: tuple[int, ...], write: tuple[int, ...],
) -> None:
    sweep = _sweep(trainer, base, seeds=[0, 1])
    client = _api(api_as, None if persona == "anonymous" else request.getfixturevalue(persona))
    assert client.get("/api/sweeps/").status_code in read
    assert client.get(f"/api/sweeps/{sweep.pk}/").status_code in read
    body = {"name": "api sweep", "base_config": base, "axes": [{"path": "mask.probability", "values": [0.1, 0.2]}]}
    assert client.post("/api/sweeps/", body, format="json").status_code in write
    assert client.post(f"/api/sweeps/{sweep.pk}/clone/", {}, format="json").status_code in write


def test_it_launches_a_sweep_through_the_api(
    api_as: Any, trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    body = {"name": "temps", "base_config": base, "override_sets": TEMPERATURE_SETS, "seeds": [0, 1]}
    with django_capture_on_commit_callbacks(execute=True):
        response = api_as(trainer).post("/api/sweeps/", body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["run_count"] == 6 and data["status"] == "queued" and data["counts"]["queued"] == 6
    assert [r["sweep_overrides"].get("seed") for r in data["runs"]] == [0, 1, 0, 1, 0, 1]
    assert data["compare_url"] == f"/training/compare/?sweep={data['id']}"
    assert len(sent) == 6
    listed = api_as(trainer).get("/api/sweeps/").json()
    assert listed["results"][0]["id"] == data["id"] if isinstance(listed, dict) else listed[0]["id"] == data["id"]


def test_it_answers_an_invalid_sweep_with_400_naming_the_run_and_field(
    api_as: Any, trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]]
) -> None:
    body = {"name": "bad", "base_config": base, "axes": [{"path": "group_size", "values": [4, 1]}]}
    response = api_as(trainer).post("/api/sweeps/", body, format="json")
    assert response.status_code == 400
    assert "run 2 (group_size=1)" in response.json()["config"][0] and "group_size" in response.json()["config"][0]
    assert not Sweep.objects.exists()


@pytest.mark.parametrize("field,value", [
    ("release_id", 99999999999999999999), ("release_id", 424242), ("seeds", [-1]), ("seeds", [2**40]),
    ("axes", [{"path": "mask.probability"}]), ("override_sets", [{"no.such.field": 1}]), ("base_config", [1]),
])
def test_it_answers_a_bad_part_of_a_sweep_with_400_naming_it(
    api_as: Any, trainer: Any, base: dict[str, Any], field: str, value: Any
) -> None:
    body = {"name": "bad", "base_config": base, "seeds": [0, 1], field: value}
    response = api_as(trainer).post("/api/sweeps/", body, format="json")
    assert response.status_code == 400 and field in response.json(), response.content
    assert not Sweep.objects.exists()


def test_the_pages_answer_a_bad_sweep_id_with_404(client_as: Any, trainer: Any) -> None:
    for query in ("from=%C2%B2", "from=99999999999999999999", "from=424242"):
        assert client_as(trainer).get(reverse("training:sweep-create") + "?" + query).status_code == 404
    assert client_as(trainer).get(reverse("training:compare") + "?sweep=%C2%B2").status_code == 400


def test_it_answers_a_too_big_sweep_with_400(api_as: Any, trainer: Any, base: dict[str, Any], settings: Any) -> None:
    settings.SWEEP_MAX_RUNS = 3
    response = api_as(trainer).post("/api/sweeps/", {"name": "big", "base_config": base, "seeds": [0, 1, 2, 3]},
                                    format="json")
    assert response.status_code == 400 and "limit is 3" in response.json()["non_field_errors"][0]


def test_it_cancels_through_the_api_for_the_owner_only(
    api_as: Any, trainer: Any, viewer: Any, admin_user: Any, django_user_model: Any, base: dict[str, Any],
    sent: list[dict[str, Any]],
) -> None:
    from django.contrib.auth.models import Group

    other = django_user_model.objects.create_user(username="tina-trainer", password="x")
    other.groups.add(Group.objects.get(name="trainer"))
    sweep = _sweep(trainer, base, seeds=[0, 1])
    assert api_as(viewer).post(f"/api/sweeps/{sweep.pk}/cancel/").status_code == 403
    assert api_as(other).post(f"/api/sweeps/{sweep.pk}/cancel/").status_code == 403
    response = api_as(trainer).post(f"/api/sweeps/{sweep.pk}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert api_as(trainer).post("/api/sweeps/99999/cancel/").status_code == 404


def test_it_documents_the_sweep_endpoints_in_the_openapi_schema(api_as: Any, viewer: Any) -> None:
    schema = api_as(viewer).get("/api/schema/?format=json").json()
    assert {"/api/sweeps/", "/api/sweeps/{id}/", "/api/sweeps/{id}/cancel/", "/api/sweeps/{id}/clone/",
            "/api/runs/compare/"} <= set(schema["paths"])


# --- pages ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("persona,expected", [("outsider", 403), ("viewer", 200), ("trainer", 200)])
def test_it_shows_sweep_pages_to_every_role_only(
    client_as: Any, request: pytest.FixtureRequest, trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]],
    persona: str, expected: int,
) -> None:
    sweep = _sweep(trainer, base, seeds=[0, 1])
    client = client_as(request.getfixturevalue(persona))
    for url in (reverse("training:sweep-list"), reverse("training:sweep-detail", args=[sweep.pk]),
                f"{reverse('training:compare')}?sweep={sweep.pk}"):
        assert client.get(url).status_code == expected, url


def test_it_shows_the_create_form_to_trainers_only(client_as: Any, viewer: Any, trainer: Any) -> None:
    assert client_as(viewer).get(reverse("training:sweep-create")).status_code == 403
    page = client_as(trainer).get(reverse("training:sweep-create") + "?example=mask").content.decode()
    assert "mask.policy: [conditional, all]" in page


def test_it_lists_the_runs_of_a_checked_sweep_before_launching_it(
    client_as: Any, trainer: Any, dataset: str, sent: list[dict[str, Any]], django_capture_on_commit_callbacks: Any
) -> None:
    form = {"name": "grid", "base_config": f"model: tiny\ndataset: {{release: {dataset}}}\n",
            "axes": "mask.policy: [conditional, all]\nmask.probability: [0.1, 0.3]\n", "seeds": "0, 1",
            "action": "check"}
    page = client_as(trainer).post(reverse("training:sweep-create"), form).content.decode()
    assert "8 runs" in page and "mask.policy=all, mask.probability=0.3, seed=1" in page
    assert not Sweep.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = client_as(trainer).post(reverse("training:sweep-create"), {**form, "action": "launch"})
    sweep = Sweep.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("training:sweep-detail", args=[sweep.pk])
    assert sweep.runs.count() == 8 and len(sent) == 8


def test_it_keeps_the_form_and_says_why_when_the_sweep_is_invalid(client_as: Any, trainer: Any, dataset: str) -> None:
    form = {"name": "bad", "base_config": f"model: tiny\ndataset: {{release: {dataset}}}\n",
            "axes": "mask.probability: [0.1, 2.0]\n", "action": "launch"}
    page = client_as(trainer).post(reverse("training:sweep-create"), form).content.decode()
    assert "run 2 (mask.probability=2.0)" in page and "mask.probability: [0.1, 2.0]" in page
    assert not Sweep.objects.exists()


def test_it_prefills_the_form_from_another_sweep(
    client_as: Any, trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]]
) -> None:
    sweep = _sweep(trainer, base, axes=MASK_GRID[:1], seeds=[4, 5])
    page = client_as(trainer).get(reverse("training:sweep-create") + f"?from={sweep.pk}").content.decode()
    assert "ablation (clone)" in page and "mask.policy:" in page and "4, 5" in page


def test_only_the_owner_sees_and_may_use_the_cancel_button(
    client_as: Any, trainer: Any, viewer: Any, base: dict[str, Any], sent: list[dict[str, Any]]
) -> None:
    sweep = _sweep(trainer, base, seeds=[0, 1])
    url = reverse("training:sweep-detail", args=[sweep.pk])
    assert 'id="cancel-form"' in client_as(trainer).get(url).content.decode()
    assert 'id="cancel-form"' not in client_as(viewer).get(url).content.decode()
    assert client_as(viewer).post(reverse("training:sweep-cancel", args=[sweep.pk])).status_code == 403
    response = client_as(trainer).post(reverse("training:sweep-cancel", args=[sweep.pk]))
    assert response.status_code == 302 and set(sweep.runs.values_list("status", flat=True)) == {"cancelled"}


def test_the_run_list_offers_compare_selected(client_as: Any, viewer: Any, trainer: Any, base: dict[str, Any],
                                              sent: list[dict[str, Any]]) -> None:
    sweep = _sweep(trainer, base, seeds=[0, 1])
    page = client_as(viewer).get(reverse("training:run-list")).content.decode()
    assert 'id="compare-selected"' in page and f'href="/training/sweeps/{sweep.pk}/"' in page
    ids = list(sweep.runs.values_list("pk", flat=True))
    response = client_as(viewer).get(reverse("training:compare"), {"runs": [str(i) for i in ids]})
    assert response.status_code == 200 and f'"run_ids": [{ids[0]}, {ids[1]}]' in response.content.decode()


def test_the_compare_page_says_what_is_wrong_with_its_runs(client_as: Any, viewer: Any) -> None:
    response = client_as(viewer).get(reverse("training:compare") + "?runs=1,x")
    assert response.status_code == 400 and "integers" in response.content.decode()
    assert client_as(viewer).get(reverse("training:compare") + "?runs=424242").status_code == 404


def test_a_run_of_a_sweep_links_back_to_its_sweep_and_the_comparison(
    client_as: Any, viewer: Any, trainer: Any, base: dict[str, Any], sent: list[dict[str, Any]]
) -> None:
    sweep = _sweep(trainer, base, seeds=[0, 1])
    run = sweep.runs.order_by("id").first()
    page = client_as(viewer).get(reverse("training:run-detail", args=[run.pk])).content.decode()
    assert f'href="{reverse("training:sweep-detail", args=[sweep.pk])}"' in page
    assert f'{reverse("training:compare")}?sweep={sweep.pk}' in page
