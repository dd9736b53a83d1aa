"""The pure constraint checks, on hand-built facts."""

from dataclasses import replace

import pytest

from curation.constraints import (
    ConstraintConfig,
    Outcome,
    ProblemFacts,
    SolutionFacts,
    check_all,
    check_has_tests,
    check_limits_valid,
    check_reference_passes,
    check_statement_length,
    check_tags_present,
    check_test_count,
    check_tests_well_formed,
    stage_from_outcomes,
    training_test_limit,
)

CFG = ConstraintConfig()
UNJUDGED = SolutionFacts("python", judged=False, verified=False)


def facts(**kw: object) -> ProblemFacts:
    base = ProblemFacts(
        io_mode="stdin", fn_name="", statement="x" * 200, time_limit_s=2.0, memory_mb=256, tags=("math",),
        tests=tuple((f"{i}\n", f"{i}\n") for i in range(10)), public_test_count=1, checker_kind="lenient",
        solutions=(UNJUDGED,),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_it_fails_a_problem_without_tests() -> None:
    assert check_has_tests(facts(tests=())).status == "failed"


def test_it_rejects_two_tests_with_one_input_and_different_outputs() -> None:
    out = check_tests_well_formed(facts(tests=(("1\n", "2\n"), ("1\n", "3\n"))))
    assert (out.status, out.reason) == ("failed", "tests 1 and 2 have the same input but different expected outputs")


def test_it_rejects_an_empty_expected_output() -> None:
    assert check_tests_well_formed(facts(tests=(("1", "  "),))).reason == "test 1: empty expected output"


def test_it_rejects_a_call_mode_test_without_arguments() -> None:
    out = check_tests_well_formed(facts(io_mode="call", fn_name="f", tests=(("", "1"),)))
    assert out.reason == "test 1: call-mode test without arguments"


def test_it_fails_a_time_limit_outside_the_configured_range() -> None:
    out = check_limits_valid(facts(time_limit_s=0.0), CFG)
    assert (out.status, out.reason) == ("failed", "time limit 0 s is outside [0.1, 60] s")


def test_it_fails_a_memory_limit_outside_the_configured_range() -> None:
    assert check_limits_valid(facts(memory_mb=-1), CFG).status == "failed"


def test_it_keeps_the_reference_constraint_pending_until_judged() -> None:
    out = check_reference_passes(facts(), CFG)
    assert (out.status, out.reason) == ("pending", "1 reference solution awaiting the evaluator")


def test_it_passes_the_reference_constraint_once_a_solution_is_verified() -> None:
    verified = SolutionFacts("python", judged=True, verified=True, verdict="AC")
    assert check_reference_passes(facts(solutions=(UNJUDGED, verified)), CFG).status == "passed"


def test_it_fails_the_reference_constraint_when_every_solution_was_rejected() -> None:
    rejected = SolutionFacts("python", judged=True, verified=False, verdict="WA", reason="test 3 differs")
    out = check_reference_passes(facts(solutions=(rejected,)), CFG)
    assert out.reason == "the evaluator rejected every reference solution (first verdict WA: test 3 differs)"


def test_it_fails_the_reference_constraint_without_a_solution() -> None:
    assert check_reference_passes(facts(solutions=()), CFG).status == "failed"


def test_it_fails_the_reference_constraint_when_no_solution_is_in_a_judged_language() -> None:
    out = check_reference_passes(facts(solutions=(SolutionFacts("java", judged=False, verified=False),)), CFG)
    assert out.reason.startswith("no reference solution in a judgeable language (java given")


def test_it_can_waive_the_reference_solution_by_configuration() -> None:
    cfg = ConstraintConfig(require_reference_solution=False)
    assert check_reference_passes(facts(solutions=()), cfg).status == "passed"


def test_it_flags_a_short_statement_softly() -> None:
    out = check_statement_length(facts(statement="too short"), CFG)
    assert (out.kind, out.status) == ("soft", "failed")


def test_it_records_that_only_the_first_n_tests_train_when_capped() -> None:
    cfg = ConstraintConfig(max_tests=8)
    out = check_test_count(facts(), cfg)
    assert out.reason == "10 tests (> 8); only the first 8 are used for training"
    assert training_test_limit(10, cfg) == 8
    assert training_test_limit(8, cfg) is None


def test_it_flags_missing_tags_softly() -> None:
    assert check_tags_present(facts(tags=()), CFG).status == "failed"


def test_it_orders_hard_constraints_before_soft_ones() -> None:
    kinds = [o.kind for o in check_all(facts(), CFG)]
    assert kinds == sorted(kinds)  # "hard" < "soft"


def test_it_derives_the_stage_from_hard_outcomes_only() -> None:
    soft_fail = Outcome("tags_present", "soft", "failed", "")
    assert stage_from_outcomes([Outcome("a", "hard", "passed", ""), soft_fail]) == "constraints_passed"
    assert stage_from_outcomes([Outcome("a", "hard", "pending", ""), soft_fail]) == "constraints_pending"
    assert stage_from_outcomes([Outcome("a", "hard", "failed", ""), Outcome("b", "hard", "pending", "")]) == (
        "constraints_failed"
    )


def test_it_rejects_an_inconsistent_configuration_with_a_fix() -> None:
    with pytest.raises(ValueError, match="need 1 <= min_tests <= max_tests"):
        ConstraintConfig(min_tests=10, max_tests=5)


def test_it_rejects_unknown_configuration_keys() -> None:
    with pytest.raises(ValueError, match="unknown constraint setting"):
        ConstraintConfig.from_dict({"max_test": 3})
