"""problems_check_constraints, reference verdicts from the evaluator, and judge cases."""

from __future__ import annotations

from typing import Any

import pytest

from curation.constraints import ConstraintConfig
from curation.models import ConstraintResult, Problem, ReferenceSolution, Stage
from curation.selectors import reference_solutions_to_verify
from curation.services import (
    problem_judge_case,
    problem_set_reference_verdict,
    problems_check_constraints,
    problems_normalize,
)

from .conftest import LONG_STATEMENT, make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def checked(import_records: Any) -> Problem:
    import_records([make_record("p1", tests=6)])
    problems_normalize()
    problems_check_constraints()
    return Problem.objects.get()


def _status(problem: Problem, name: str) -> tuple[str, str]:
    r = ConstraintResult.objects.get(problem=problem, name=name)
    return r.status, r.reason


def test_it_keeps_the_reference_constraint_pending_before_the_evaluator_judged(checked: Problem) -> None:
    assert checked.stage == Stage.CONSTRAINTS_PENDING
    assert _status(checked, "reference_passes") == ("pending", "1 reference solution awaiting the evaluator")


def test_it_records_every_constraint_with_a_reason(checked: Problem) -> None:
    results = ConstraintResult.objects.filter(problem=checked)
    assert {r.kind for r in results} == {"hard", "soft"}
    assert all(r.reason for r in results)


def test_it_passes_the_problem_when_the_evaluator_accepts_its_reference(checked: Problem) -> None:
    problem = problem_set_reference_verdict(problem_id=checked.pk, passed=True, verdict="AC", reason="6/6")
    solution = ReferenceSolution.objects.get()
    assert (problem.stage, solution.verified, solution.verdict) == (Stage.CONSTRAINTS_PASSED, True, "AC")
    assert solution.verified_at is not None
    assert _status(problem, "reference_passes")[0] == "passed"


def test_it_fails_the_problem_when_the_evaluator_rejects_its_reference(checked: Problem) -> None:
    problem = problem_set_reference_verdict(problem_id=checked.pk, passed=False, verdict="WA", reason="test 2")
    assert problem.stage == Stage.CONSTRAINTS_FAILED
    assert _status(problem, "reference_passes") == (
        "failed", "the evaluator rejected every reference solution (first verdict WA: test 2)"
    )


def test_it_keeps_a_verdict_when_constraints_are_checked_again(checked: Problem) -> None:
    problem_set_reference_verdict(problem_id=checked.pk, passed=True, verdict="AC")
    problems_check_constraints(problem_ids=[checked.pk])
    assert Problem.objects.get().stage == Stage.CONSTRAINTS_PASSED


def test_it_fails_a_problem_without_tests(import_records: Any) -> None:
    import_records([make_record("p1", tests=0)])
    problems_normalize()
    problems_check_constraints()
    problem = Problem.objects.get()
    assert problem.stage == Stage.CONSTRAINTS_FAILED
    assert _status(problem, "has_tests")[0] == "failed"


def test_it_caps_excessive_tests_for_training(import_records: Any) -> None:
    import_records([make_record("p1", tests=12)])
    problems_normalize()
    problems_check_constraints(config=ConstraintConfig(max_tests=10))
    problem = Problem.objects.get()
    assert problem.train_test_limit == 10
    assert _status(problem, "test_count")[1] == "12 tests (> 10); only the first 10 are used for training"


def test_it_keeps_a_duplicate_in_the_duplicate_stage(import_records: Any) -> None:
    import_records([
        make_record("1A", platform="codeforces", statement=LONG_STATEMENT),
        make_record("SUMTWO", platform="codechef", statement=LONG_STATEMENT),
    ])
    problems_normalize()
    problems_check_constraints()
    assert Problem.objects.get(external_id="SUMTWO").stage == Stage.DUPLICATE


def test_it_builds_an_evaluator_case_for_a_stored_problem(checked: Problem) -> None:
    case = problem_judge_case(checked, "print(1)")
    assert case == {
        "id": str(checked.pk), "mode": "stdin", "code": "print(1)",
        "tests": [{"input": f"{i} {i + 1}\n", "output": f"{2 * i + 1}\n"} for i in range(6)],
        "fn_name": "", "time_limit_s": 2.0, "memory_mb": 256, "checker": {"kind": "lenient"},
    }


def test_it_limits_a_judge_case_to_the_first_tests(checked: Problem) -> None:
    assert len(problem_judge_case(checked.pk, "print(1)", max_tests=2)["tests"]) == 2


def test_it_lists_reference_solutions_still_waiting_for_the_evaluator(checked: Problem, import_records: Any) -> None:
    import_records([make_record("p2")])
    problem_set_reference_verdict(problem_id=checked.pk, passed=True, verdict="AC")
    assert [s.problem.external_id for s in reference_solutions_to_verify()] == ["p2"]
