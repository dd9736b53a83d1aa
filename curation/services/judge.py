"""Stored problem -> evaluator case (DESIGN.md section 4), for the verify job and the trainer."""

from __future__ import annotations

from typing import Any

from curation.models import Problem, TestCase, decompress_text
from curation.records import evaluator_tests


def problem_judge_case(problem: Problem | int, code: str, *, max_tests: int | None = None) -> dict[str, Any]:
    """The evaluator case that judges ``code`` on ``problem``'s current tests, in stored order.

    ``{"id", "mode", "code", "tests": [{"input", "output"}], "fn_name", "time_limit_s", "memory_mb",
    "checker"}`` (assert tests mapped by ``curation.records.evaluator_tests``); ``id`` is the problem's primary key as a string. ``max_tests`` keeps only the first
    N tests (training passes ``problem.train_test_limit``; verifying a reference solution uses all).
    """
    if isinstance(problem, Problem):
        p = problem
    else:
        p = Problem.objects.only("id", "io_mode", "fn_name", "time_limit_s", "memory_mb", "checker").get(pk=problem)
    rows = TestCase.objects.filter(problem_id=p.pk).order_by("order").values_list("input_z", "output_z")
    if max_tests is not None:
        rows = rows[: max(0, max_tests)]
    tests, checker = evaluator_tests(
        [{"input": decompress_text(i), "output": decompress_text(o)} for i, o in rows], p.checker
    )
    return {
        "id": str(p.pk),
        "mode": p.io_mode,
        "code": code,
        "tests": tests,
        "fn_name": p.fn_name,
        "time_limit_s": p.time_limit_s,
        "memory_mb": p.memory_mb,
        "checker": checker,
    }
