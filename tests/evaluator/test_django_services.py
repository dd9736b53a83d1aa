"""Evaluation job services with the real judge: submissions, reference verification, the job's
state machine, progress events and the Celery task's retries."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import PermissionDenied

from curation.models import ReferenceSolution, Stage
from evaluator.models import EvaluationJob
from evaluator.services import (
    EvaluationError,
    evaluation_cancel,
    evaluation_run,
    evaluation_submit,
    references_verify,
    running,
)
from evaluator.tasks import run_evaluation
from webapp import realtime

from . import test_django_support as support
from .test_django_support import CORRECT_ADD, WRONG_ADD, ie_verdicts, reference_status, verdict_of

pytestmark = pytest.mark.django_db

# the shared fixtures, bound here so pytest finds them in this module
_eager_and_in_memory = support._eager_and_in_memory
make_problem = support.make_problem


def test_it_accepts_a_correct_submission_with_the_real_judge(make_problem: Any, trainer: Any) -> None:
    problem = make_problem()
    job = evaluation_submit(problem_id=problem.pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    job = evaluation_run(job_id=job.pk)
    assert (job.status, job.progress_done, job.progress_total) == ("succeeded", 1, 1)
    verdict = verdict_of(job)
    assert (verdict["verdict"], verdict["passed"], verdict["total"]) == ("AC", 5, 5)
    assert verdict["method"]
    assert len(verdict["tests"]) == 5


def test_it_rejects_a_wrong_submission_with_the_real_judge(make_problem: Any, trainer: Any) -> None:
    problem = make_problem()
    job = evaluation_submit(problem_id=problem.pk, code=WRONG_ADD, user=trainer, enqueue=False)
    job = evaluation_run(job_id=job.pk)
    assert job.status == "succeeded"  # the job ran; the code is what failed
    assert (verdict_of(job)["verdict"], verdict_of(job)["passed"]) == ("WA", 0)


def test_it_runs_every_test_when_asked_not_to_stop_at_the_first_failure(make_problem: Any, trainer: Any) -> None:
    problem = make_problem()
    code = "a, b = map(int, input().split())\nprint(a + b if a > 1 else 0)\n"  # right on 3 of 5 tests
    job = evaluation_submit(
        problem_id=problem.pk, code=code, user=trainer, stop_on_first_failure=False, enqueue=False
    )
    job = evaluation_run(job_id=job.pk)
    verdict = verdict_of(job)
    assert (verdict["verdict"], verdict["passed"], verdict["total"]) == ("WA", 3, 5)


def test_it_judges_with_the_checker_override_of_the_submission(make_problem: Any, trainer: Any) -> None:
    problem = make_problem("half", tests=[("1\n", "0.5\n")], solutions=["print(0.5)\n"])
    code = "print(int(input()) / 2 + 1e-10)\n"  # 0.5000000001: within the float tolerance, not equal
    lenient = evaluation_run(
        job_id=evaluation_submit(problem_id=problem.pk, code=code, user=trainer, enqueue=False).pk
    )
    strict = evaluation_run(
        job_id=evaluation_submit(
            problem_id=problem.pk, code=code, user=trainer, checker={"kind": "strict"}, enqueue=False
        ).pk
    )
    assert (verdict_of(lenient)["verdict"], verdict_of(strict)["verdict"]) == ("AC", "WA")


def test_it_refuses_a_submission_without_code(make_problem: Any, trainer: Any) -> None:
    with pytest.raises(EvaluationError, match="empty"):
        evaluation_submit(problem_id=make_problem().pk, code="  \n", user=trainer)


def test_it_refuses_a_submission_for_an_unknown_problem(trainer: Any) -> None:
    with pytest.raises(EvaluationError, match="does not exist"):
        evaluation_submit(problem_id=987654, code=CORRECT_ADD, user=trainer)


def test_it_refuses_an_unknown_checker_kind(make_problem: Any, trainer: Any) -> None:
    with pytest.raises(EvaluationError, match="checker"):
        evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, checker={"kind": "vibes"})


def test_it_runs_the_job_when_the_transaction_commits(
    make_problem: Any, trainer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    problem = make_problem()
    with django_capture_on_commit_callbacks(execute=True):
        job = evaluation_submit(problem_id=problem.pk, code=CORRECT_ADD, user=trainer)
        assert EvaluationJob.objects.get(pk=job.pk).status == "queued"  # nothing runs before the commit
    job.refresh_from_db()
    assert (job.status, verdict_of(job)["verdict"]) == ("succeeded", "AC")
    assert job.celery_task_id


def test_it_publishes_progress_after_each_commit(
    make_problem: Any, trainer: Any, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, str, dict[str, Any]]] = []
    monkeypatch.setattr(realtime, "publish", lambda group, kind, data: sent.append((group, kind, data)))
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    with django_capture_on_commit_callbacks(execute=True):
        evaluation_run(job_id=job.pk)
    group = realtime.job_group(job.pk)
    sent = [event for event in sent if event[0] == group]  # the jobs view's own feed ("jobs") aside
    assert [(g, k) for g, k, _ in sent] == [(group, realtime.JOB_PROGRESS)] * 3
    assert [(d["status"], d["done"], d["total"]) for *_, d in sent] == [
        ("running", 0, 1), ("running", 1, 1), ("succeeded", 1, 1)
    ]


def test_it_leaves_a_finished_job_untouched_when_delivered_twice(
    make_problem: Any, trainer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = evaluation_run(
        job_id=evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False).pk
    )
    monkeypatch.setattr(running, "judge_batch", lambda *a, **k: pytest.fail("a finished job was judged again"))
    again = evaluation_run(job_id=job.pk)
    assert (again.status, again.results, again.finished_at) == (job.status, job.results, job.finished_at)


def test_it_verifies_a_correct_reference_and_passes_the_curation_constraint(make_problem: Any, curator: Any) -> None:
    problem = make_problem()
    assert reference_status(problem) == "pending"
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    problem.refresh_from_db()
    solution = ReferenceSolution.objects.get(problem=problem)
    assert (job.status, job.progress_done, job.progress_total) == ("succeeded", 1, 1)
    assert (reference_status(problem), problem.stage) == ("passed", Stage.CONSTRAINTS_PASSED)
    assert (solution.verified, solution.verdict) == (True, "AC")
    assert job.results[0]["outcome"] == "passed"


def test_it_fails_the_curation_constraint_when_the_reference_is_wrong(make_problem: Any, curator: Any) -> None:
    problem = make_problem(solutions=[WRONG_ADD])
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    problem.refresh_from_db()
    assert (reference_status(problem), problem.stage) == ("failed", Stage.CONSTRAINTS_FAILED)
    assert ReferenceSolution.objects.get(problem=problem).verdict == "WA"
    assert job.results[0]["outcome"] == "failed"
    assert job.results[0]["reason"].startswith("every reference solution was rejected; first: WA 0/5")


def test_it_passes_a_problem_when_one_of_its_references_is_accepted(make_problem: Any, curator: Any) -> None:
    problem = make_problem(solutions=[WRONG_ADD, CORRECT_ADD])
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    verdicts = list(ReferenceSolution.objects.filter(problem=problem).order_by("order").values_list("verdict", flat=True))
    assert verdicts == ["WA", "AC"]
    assert (job.progress_total, job.results[0]["outcome"], reference_status(problem)) == (2, "passed", "passed")


def test_it_leaves_the_reference_pending_on_an_infrastructure_error(
    make_problem: Any, curator: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    problem = make_problem()
    monkeypatch.setattr(running, "judge_batch", ie_verdicts)
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    solution = ReferenceSolution.objects.get(problem=problem)
    assert (solution.verified, solution.verdict) == (False, "")  # never reported as rejected
    assert reference_status(problem) == "pending"
    assert job.results[0]["outcome"] == "pending"
    assert "infrastructure error" in job.results[0]["reason"]
    assert "sandbox worker died" in job.results[0]["reason"]


def test_it_verifies_a_cpp_reference_solution_as_cpp(make_problem: Any, curator: Any) -> None:
    cpp = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n"
    problem = make_problem(solutions=[cpp], language="cpp")
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    solution = ReferenceSolution.objects.get(problem=problem)
    assert (job.progress_total, solution.language, solution.verdict) == (1, "cpp", "AC")
    assert reference_status(problem) == "passed"


def test_it_skips_problems_without_a_reference_in_a_judged_language(make_problem: Any, curator: Any) -> None:
    problem = make_problem(solutions=["class Main {}"], language="java")
    job = evaluation_run(job_id=references_verify(problem_ids=[problem.pk], user=curator, enqueue=False).pk)
    assert (job.status, job.progress_total) == ("succeeded", 0)
    assert job.results == [{
        "problem": problem.pk, "outcome": "skipped", "solutions": [],
        "reason": "no reference solution in a language the judge runs",
    }]


def test_it_refuses_to_verify_unknown_problems(curator: Any) -> None:
    with pytest.raises(EvaluationError, match="unknown problem id"):
        references_verify(problem_ids=[424242], user=curator)


def test_it_stops_a_cancelled_job_before_its_next_chunk(
    make_problem: Any, curator: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = make_problem("p1"), make_problem("p2")
    job = references_verify(problem_ids=[first.pk, second.pk], user=curator, enqueue=False)
    settings.EVALUATION_CHUNK_SIZE = 1
    real_judge = running.judge_batch

    def judge_then_cancel(cases: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
        verdicts = real_judge(cases, **kwargs)
        evaluation_cancel(job_id=job.pk, user=curator)  # the curator presses "cancel" mid-chunk
        return verdicts

    monkeypatch.setattr(running, "judge_batch", judge_then_cancel)
    job = evaluation_run(job_id=job.pk)
    assert (job.status, job.progress_done) == ("cancelled", 0)
    assert reference_status(first) == reference_status(second) == "pending"


def test_it_lets_only_the_creator_or_an_admin_cancel(
    make_problem: Any, trainer: Any, curator: Any, admin_user: Any
) -> None:
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    with pytest.raises(PermissionDenied):
        evaluation_cancel(job_id=job.pk, user=curator)
    assert evaluation_cancel(job_id=job.pk, user=admin_user).status == "cancelled"


def test_it_retries_infrastructure_errors_then_fails_the_job(
    make_problem: Any, trainer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []

    def broken_judge(cases: list[dict[str, Any]], **kwargs: Any) -> list[dict[str, Any]]:
        calls.append(len(cases))
        raise OSError("cannot start the sandbox: no space left on device")

    monkeypatch.setattr(running, "judge_batch", broken_judge)
    run_evaluation.app.conf.task_eager_propagates = False  # eager retries re-apply with the app's setting
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    result = run_evaluation.apply(args=(job.pk,))
    job.refresh_from_db()
    assert result.failed()
    assert len(calls) == 1 + 3  # the first try and three retries
    assert job.status == "failed"
    assert "infrastructure error after 3 retries" in job.error
    assert "no space left on device" in job.error


def test_it_fails_the_job_with_the_reason_when_its_data_cannot_be_judged(
    make_problem: Any, trainer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unreadable(problem: Any, code: str, **kwargs: Any) -> dict[str, Any]:
        raise ValueError("test 3 of problem 1 is not valid UTF-8")

    monkeypatch.setattr(running, "problem_judge_case", unreadable)
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    job = evaluation_run(job_id=job.pk)
    assert job.status == "failed"
    assert job.error == "cannot build the judge cases: test 3 of problem 1 is not valid UTF-8"


def test_it_routes_the_task_to_the_evaluate_queue() -> None:
    route = run_evaluation.app.amqp.router.route({}, run_evaluation.name, args=(1,), kwargs={})
    assert route["queue"].name == "evaluate"


def test_it_starts_over_a_job_a_dead_worker_left_running(make_problem: Any, trainer: Any) -> None:
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    EvaluationJob.objects.filter(pk=job.pk).update(status="running", attempts=1)  # its worker died
    job = evaluation_run(job_id=job.pk)
    assert (job.status, job.attempts) == ("succeeded", 2)


def test_it_fails_a_job_whose_workers_keep_dying_after_the_last_allowed_delivery(
    make_problem: Any, trainer: Any, settings: Any
) -> None:
    settings.EVALUATION_MAX_ATTEMPTS = 3
    job = evaluation_submit(problem_id=make_problem().pk, code=CORRECT_ADD, user=trainer, enqueue=False)
    EvaluationJob.objects.filter(pk=job.pk).update(status="running", attempts=3)  # three workers died on it
    job = evaluation_run(job_id=job.pk)
    assert job.status == "failed" and "EVALUATION_MAX_ATTEMPTS" in job.error and job.progress_done == 0
