"""Model evaluation services: deterministic pass counts with fake sources, stored summary and breakdowns,
idempotent resume, cancel, failure, cut-off and contamination, pass-rate selectors (issue 8)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from training import selectors
from training.models import EvalStatus, ModelEvaluation, ModelEvaluationProblem, ModelEvaluationSample
from training.services.evaluations import model_evaluation_create
from training.services.evaluations_run import model_evaluation_attempt

from .evaluation_support import (
    FakeSource,
    always_right,
    always_wrong,
    make_release,
    right_on_even_indices,
    solves,
    toy_records,
)

pytestmark = pytest.mark.django_db


def _evaluation(release: Any, trainer: Any, **kw: Any) -> ModelEvaluation:
    kw.setdefault("engine", "transformers")
    kw.setdefault("model", "fake-model")
    kw.setdefault("k", 2)
    return model_evaluation_create(user=trainer, release_id=release.pk, **kw)


def _run(evaluation: ModelEvaluation, source: FakeSource) -> ModelEvaluation:
    model_evaluation_attempt(evaluation_id=evaluation.pk, source_factory=lambda e: source)
    evaluation.refresh_from_db()
    return evaluation


def test_it_counts_every_sample_of_a_known_correct_model_as_passed(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer), FakeSource(always_right))
    assert evaluation.status == EvalStatus.SUCCEEDED, evaluation.reason
    rows = list(ModelEvaluationProblem.objects.filter(evaluation=evaluation).values_list("passed", "attempts"))
    assert rows == [(2, 2)] * 4
    assert evaluation.summary["pass@1"] == 1.0 and evaluation.summary["pass@k"] == 1.0


def test_it_counts_a_known_wrong_model_as_never_passing(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer), FakeSource(always_wrong))
    assert evaluation.status == EvalStatus.SUCCEEDED
    assert set(ModelEvaluationProblem.objects.filter(evaluation=evaluation).values_list("passed", flat=True)) == {0}
    assert evaluation.summary["pass@1"] == 0.0
    assert set(ModelEvaluationSample.objects.filter(evaluation=evaluation).values_list("verdict", flat=True)) == {"WA"}


def test_it_stores_one_compressed_sample_per_problem_and_index(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer, k=3), FakeSource(right_on_even_indices))
    samples = list(ModelEvaluationSample.objects.filter(evaluation=evaluation))
    assert len(samples) == 12 and evaluation.samples_done == 12 and evaluation.problems_done == 4
    assert sorted({s.index for s in samples}) == [0, 1, 2]
    assert all(s.passed == (s.index % 2 == 0) for s in samples)
    assert "```python" in samples[0].completion and bytes(samples[0].completion_z) != samples[0].completion.encode()


def test_it_stores_the_summary_with_intervals_and_breakdowns(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer, k=2), FakeSource(solves("double", "square")))
    summary = evaluation.summary
    assert summary["pass@1"] == 0.5
    low, high = summary["ci95"]["pass@1"]
    assert 0.0 <= low <= 0.5 <= high <= 1.0
    assert set(summary["by_platform"]) == {"toy"} and set(summary["by_month"]) == {"2025-03"}
    assert set(summary["by_io_mode"]) == {"stdin"} and summary["infra_error_rate"] == 0.0
    assert evaluation.headline["pass1"] == 0.5 and evaluation.headline["pass1_ci"] == [low, high]


def test_a_completion_without_a_program_is_a_failure_not_an_infrastructure_error(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer, k=1), FakeSource(lambda key, index: None))
    row = ModelEvaluationProblem.objects.filter(evaluation=evaluation).first()
    assert row is not None and (row.attempts, row.passed, row.infra_errors) == (1, 0, 0)


class _WorkerDied(BaseException):
    """What a SIGKILL looks like from inside: nothing after it runs (not an ``Exception``)."""


def test_a_resumed_job_passes_stored_samples_and_generates_only_the_missing_ones(
    release: Any, trainer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from training.services import evaluations_exec

    evaluation = _evaluation(release, trainer, k=2)
    store = evaluations_exec._Recorder.on_sample

    def store_then_die_at_the_third(self: Any, key: str, result: Any) -> None:
        store(self, key, result)
        if ModelEvaluationSample.objects.filter(evaluation=evaluation).count() == 3:
            raise _WorkerDied()

    monkeypatch.setattr(evaluations_exec._Recorder, "on_sample", store_then_die_at_the_third)
    first = FakeSource(always_right, batch_size=1)
    with pytest.raises(_WorkerDied):
        model_evaluation_attempt(evaluation_id=evaluation.pk, source_factory=lambda e: first)
    monkeypatch.setattr(evaluations_exec._Recorder, "on_sample", store)
    stored = {(f"toy:{ext}", i) for ext, i in ModelEvaluationSample.objects.filter(
        evaluation=evaluation).values_list("problem__external_id", "index")}
    before = {s.pk: bytes(s.completion_z) for s in ModelEvaluationSample.objects.filter(evaluation=evaluation)}
    evaluation.refresh_from_db()
    assert evaluation.status == EvalStatus.RUNNING and len(stored) == 3
    # the dead worker's lease has lapsed: the redelivered task takes the job over
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(heartbeat_at=timezone.now() - dt.timedelta(hours=1))
    second = FakeSource(always_right)
    evaluation = _run(evaluation, second)
    assert evaluation.status == EvalStatus.SUCCEEDED and evaluation.attempts == 2
    assert len(second.requests) == 8 - 3 and not set(second.requests) & stored
    assert ModelEvaluationSample.objects.filter(evaluation=evaluation).count() == 8
    assert all(bytes(ModelEvaluationSample.objects.get(pk=pk).completion_z) == blob for pk, blob in before.items())
    assert evaluation.summary["pass@1"] == 1.0


def test_a_job_whose_samples_are_all_stored_needs_no_model(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer, k=1), FakeSource(always_right))
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(status=EvalStatus.RUNNING, lease_owner="",
                                                            summary={})
    evaluation = _run(evaluation, FakeSource(always_wrong))
    assert evaluation.status == EvalStatus.SUCCEEDED and evaluation.summary["pass@1"] == 1.0


def test_a_duplicate_delivery_leaves_a_job_with_a_live_owner_alone(release: Any, trainer: Any) -> None:
    evaluation = _evaluation(release, trainer)
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(
        status=EvalStatus.RUNNING, lease_owner="elsewhere:1:abc", heartbeat_at=timezone.now()
    )
    source = FakeSource(always_right)
    attempt = model_evaluation_attempt(evaluation_id=evaluation.pk, source_factory=lambda e: source)
    assert attempt.lease_wait_s is not None and attempt.lease_wait_s > 0 and source.requests == []


def test_a_model_that_crashes_fails_the_job_with_the_reason(release: Any, trainer: Any) -> None:
    source = FakeSource(always_right, fail_after=2)
    evaluation = _run(_evaluation(release, trainer), source)
    assert evaluation.status == EvalStatus.FAILED and "the fake model crashed" in evaluation.reason
    assert evaluation.finished_at is not None and source.closed


def test_a_cancel_stops_the_job_after_the_current_sample(release: Any, trainer: Any) -> None:
    from training.services.evaluations import model_evaluation_cancel

    evaluation = _evaluation(release, trainer, k=2)

    def cancels(key: str, index: int) -> str:
        if len(source.requests) == 2:
            model_evaluation_cancel(evaluation_id=evaluation.pk, user=trainer)
        return always_right(key, index)

    source = FakeSource(cancels, batch_size=1)
    evaluation = _run(evaluation, source)
    assert evaluation.status == EvalStatus.CANCELLED and "theo-trainer" in evaluation.reason
    assert 0 < ModelEvaluationSample.objects.filter(evaluation=evaluation).count() < 8


def test_the_cut_off_keeps_only_problems_from_later_contests(tmp_path: Path, trainer: Any) -> None:
    dates = {"double": "2024-06-01", "increment": "2025-02-01", "square": None, "negate": "2025-05-01"}
    release = make_release(tmp_path, toy_records(dates))
    evaluation = _run(_evaluation(release, trainer, cutoff_date=dt.date(2025, 1, 1)), FakeSource(always_right))
    keys = sorted(ModelEvaluationProblem.objects.filter(evaluation=evaluation).values_list("external_id", flat=True))
    assert keys == ["increment", "negate"]
    assert evaluation.selection["excluded"]["before_cutoff"] == 1
    assert evaluation.selection["excluded"]["no_contest_date"] == 1
    assert evaluation.summary["after"] == "2025-01-01"


def test_a_stated_cut_off_that_is_not_applied_evaluates_everything(tmp_path: Path, trainer: Any) -> None:
    release = make_release(tmp_path, toy_records({"double": "2020-01-01"}))
    evaluation = _evaluation(release, trainer, cutoff_date=dt.date(2025, 1, 1), exclude_before_cutoff=False)
    evaluation = _run(evaluation, FakeSource(always_right))
    assert evaluation.problems_done == 4 and evaluation.cutoff_date == dt.date(2025, 1, 1)


def _training_release(tmp_path: Path) -> Any:
    # the "square" statement copied onto another platform: a training problem the model has seen
    copied = [r for r in toy_records(platform="train") if r.external_id == "square"]
    return make_release(tmp_path, copied, name="train")


def test_the_contamination_check_excludes_problems_the_run_trained_on(tmp_path: Path, trainer: Any) -> None:
    release = make_release(tmp_path, toy_records())
    train = _training_release(tmp_path)
    evaluation = _evaluation(release, trainer, contamination="exclude", contamination_release_id=train.pk)
    evaluation = _run(evaluation, FakeSource(always_right))
    keys = set(ModelEvaluationProblem.objects.filter(evaluation=evaluation).values_list("external_id", flat=True))
    assert "square" not in keys and len(keys) == 3
    assert evaluation.contamination_report["toy:square"]["matched_train_ids"] == ["train:square"]
    assert evaluation.selection["excluded"]["contaminated"] == 1


def test_the_contamination_check_can_flag_and_keep_with_a_clean_summary(tmp_path: Path, trainer: Any) -> None:
    release = make_release(tmp_path, toy_records())
    train = _training_release(tmp_path)
    evaluation = _evaluation(release, trainer, contamination="flag", contamination_release_id=train.pk)
    evaluation = _run(evaluation, FakeSource(solves("square")))
    flagged = ModelEvaluationProblem.objects.get(evaluation=evaluation, external_id="square")
    assert flagged.contaminated and flagged.overlap == 1.0
    assert evaluation.summary["pass@1"] == 0.25 and evaluation.summary["clean"]["pass@1"] == 0.0


def test_the_pass_rate_selector_and_export_rows_follow_the_stored_results(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer, k=2), FakeSource(solves("negate")))
    rates = selectors.model_evaluation_pass_rates(evaluation_id=evaluation.pk)
    by_ext = {r["external_id"]: r for r in rates}
    assert by_ext["negate"]["passed"] == 2 and by_ext["double"]["passed"] == 0
    assert all(r["attempts"] == 2 and r["platform"] == "toy" and isinstance(r["problem_id"], int) for r in rates)
    rows = list(selectors.model_evaluation_export_rows(evaluation_id=evaluation.pk))
    assert rows[0].keys() == {"platform", "external_id", "passed", "attempts"} and len(rows) == 4
    label = selectors.model_evaluation_label(evaluation_id=evaluation.pk)
    assert "fake-model" in label and "k=2" in label


def test_the_pass_rates_leave_infrastructure_errors_out_of_the_attempts(release: Any, trainer: Any) -> None:
    evaluation = _run(_evaluation(release, trainer, k=2), FakeSource(always_right))
    ModelEvaluationProblem.objects.filter(evaluation=evaluation).update(attempts=1, infra_errors=1, passed=1)
    assert {r["attempts"] for r in selectors.model_evaluation_pass_rates(evaluation_id=evaluation.pk)} == {1}


def test_a_run_checkpoint_is_evaluated_from_its_model_directory_with_the_runs_prompts(
    release: Any, trainer: Any, settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import training.evaluate
    from training import services
    from training.models import Checkpoint
    from training.services.evaluations_run import default_source

    settings.RUNS_DIR = tmp_path / "runs"
    run = services.run_create(name="r", config_dict={"model": "tiny", "dataset": {"release": "x.jsonl"},
                                                      "prompt": {"system_prompt": "Be brief."}})
    Checkpoint.objects.create(run=run, step=50, path="/ckpt/checkpoint-00000050")
    evaluation = _evaluation(release, trainer, model="", run_id=run.pk, checkpoint_step=50)
    assert evaluation.model == "/ckpt/checkpoint-00000050/model" and "run #" in evaluation.label
    built: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    monkeypatch.setattr(training.evaluate, "make_source", lambda *a, **kw: built.append((a, kw)))
    default_source(evaluation)
    (args, kw), = built
    assert args == ("transformers", "/ckpt/checkpoint-00000050/model") and kw["api_key"] is None
    assert kw["prompt"].system_prompt == "Be brief."


def test_a_checkpoint_the_run_does_not_have_is_refused_by_step(release: Any, trainer: Any, settings: Any,
                                                                tmp_path: Path) -> None:
    from django.core.exceptions import ValidationError

    from training import services

    settings.RUNS_DIR = tmp_path / "runs"
    run = services.run_create(name="r", config_dict={"model": "tiny", "dataset": {"release": "x.jsonl"}})
    with pytest.raises(ValidationError) as err:
        _evaluation(release, trainer, model="", run_id=run.pk, checkpoint_step=7)
    assert "no checkpoint at step 7" in str(err.value.message_dict["checkpoint_step"])


def test_a_job_whose_workers_keep_dying_fails_with_the_reason(release: Any, trainer: Any, settings: Any) -> None:
    settings.MODEL_EVALUATION_MAX_ATTEMPTS = 2
    evaluation = _evaluation(release, trainer)
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(
        status=EvalStatus.RUNNING, attempts=2, lease_owner="dead:1:abc",
        heartbeat_at=timezone.now() - dt.timedelta(hours=1),
    )
    source = FakeSource(always_right)
    evaluation = _run(evaluation, source)
    assert evaluation.status == EvalStatus.FAILED and source.requests == []
    assert "died 2 times" in evaluation.reason and evaluation.finished_at is not None


def test_the_task_survives_a_dead_worker_and_fails_the_job_on_the_hard_time_limit(
    release: Any, trainer: Any
) -> None:
    from celery.exceptions import TimeLimitExceeded

    from training.tasks_evaluation import run_model_evaluation

    assert (run_model_evaluation.acks_late, run_model_evaluation.reject_on_worker_lost) == (True, True)
    assert run_model_evaluation.time_limit and run_model_evaluation.soft_time_limit < run_model_evaluation.time_limit
    evaluation = _evaluation(release, trainer)
    ModelEvaluation.objects.filter(pk=evaluation.pk).update(status=EvalStatus.RUNNING)
    run_model_evaluation.on_failure(TimeLimitExceeded(60), "task-id", [evaluation.pk], {}, None)
    evaluation.refresh_from_db()
    assert evaluation.status == EvalStatus.FAILED and "hard time limit" in evaluation.reason
