"""What an evaluation job stores of a verdict and what it tells curation (pure functions)."""

from __future__ import annotations

from typing import Any

from evaluator.services.verdicts import MAX_RESULT_TEXT, compact_verdict, problem_outcome, verdict_reason


def _solution(sid: int, verdict: str, reason: str) -> dict[str, Any]:
    return {"solution": sid, "verdict": verdict, "passed": 0, "total": 3, "method": None, "reason": reason}


def test_it_names_the_comparator_of_an_accepted_verdict() -> None:
    verdict = {"verdict": "AC", "passed": 3, "total": 3, "method": "float_tokens", "tests": []}
    assert verdict_reason(verdict) == "AC 3/3 (method float_tokens)"


def test_it_explains_a_rejection_by_its_first_failing_test_counted_from_one() -> None:
    verdict = {
        "verdict": "WA", "passed": 1, "total": 3, "method": None,
        "tests": [{"index": 0, "status": "AC"}, {"index": 1, "status": "WA", "message": "line 1 differs"}],
    }
    assert verdict_reason(verdict) == "WA 1/3: test 2: line 1 differs"


def test_it_explains_a_verdict_without_tests_by_its_message() -> None:
    verdict = {"verdict": "CE", "passed": 0, "total": 3, "tests": [], "message": "SyntaxError: invalid syntax"}
    assert verdict_reason(verdict) == "CE 0/3: SyntaxError: invalid syntax"


def test_it_cuts_long_texts_and_drops_inputs_from_stored_tests() -> None:
    verdict = {
        "id": "0", "verdict": "WA", "passed": 0, "total": 1, "method": None, "elapsed_s": 0.01,
        "sandbox": "bwrap", "checker": "lenient",
        "tests": [{"index": 0, "status": "WA", "time_s": 0.001, "wall_s": 0.002, "output": "x" * 2000,
                   "input": "secret test input"}],
    }
    stored = compact_verdict(verdict)
    (test,) = stored["tests"]
    assert "input" not in test
    assert test["output"] == "x" * MAX_RESULT_TEXT + "... [1500 more characters]"
    assert (stored["verdict"], stored["sandbox"], stored["checker"]) == ("WA", "bwrap", "lenient")


def test_it_passes_a_problem_when_any_reference_is_accepted_even_beside_an_infrastructure_error() -> None:
    outcome = problem_outcome(7, [_solution(1, "IE", "IE 0/3"), _solution(2, "AC", "AC 3/3 (method exact)")])
    assert (outcome["outcome"], outcome["reason"]) == ("passed", "reference solution 2 accepted: AC 3/3 (method exact)")


def test_it_keeps_a_problem_pending_when_a_reference_could_not_be_judged() -> None:
    outcome = problem_outcome(7, [_solution(1, "WA", "WA 0/3"), _solution(2, "IE", "IE 0/3: worker died")])
    assert outcome["outcome"] == "pending"
    assert outcome["reason"] == "infrastructure error judging reference solution 2: IE 0/3: worker died"


def test_it_fails_a_problem_only_when_every_reference_was_rejected() -> None:
    outcome = problem_outcome(7, [_solution(1, "WA", "WA 0/3: test 1: x"), _solution(2, "TLE", "TLE 0/3")])
    assert (outcome["outcome"], outcome["reason"]) == (
        "failed", "every reference solution was rejected; first: WA 0/3: test 1: x"
    )
