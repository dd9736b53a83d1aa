"""Code extraction, evaluator cases and rewards (with the real evaluator and with injected judges)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from curation.records import ProblemRecord, TestRecord
from training.config import RewardConfig
from training.rewards import NO_ANSWER, build_case, extract_code, score_completions

ECHO = ProblemRecord(
    platform="toy",
    external_id="echo",
    title="Echo",
    statement="Print the input.",
    tests=[TestRecord("5\n", "5\n"), TestRecord("7\n", "7\n")],
)
ADD = ProblemRecord(
    platform="leetcode",
    external_id="add",
    title="Add",
    statement="Add.",
    io_mode="call",
    fn_name="add",
    checker={"kind": "icpc", "float_tolerance": 1e-6},
    tests=[TestRecord("1\n2", "3")],
)


def test_it_takes_the_last_python_block() -> None:
    text = "Try:\n```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\n```\nDone."
    assert extract_code(text) == "print(2)\n"


def test_a_python_block_wins_over_a_later_block_in_another_language() -> None:
    assert extract_code("```python\nprint(1)\n```\nOutput:\n```text\n1\n```") == "print(1)\n"


def test_an_untagged_block_is_used_when_there_is_no_python_block() -> None:
    assert extract_code("```\nprint(3)\n```") == "print(3)\n"


def test_a_completion_without_a_fence_is_taken_raw() -> None:
    assert extract_code("print(int(input()) * 2)") == "print(int(input()) * 2)\n"


def test_a_truncated_completion_cut_inside_its_program_has_no_answer() -> None:
    assert extract_code("Here:\n```python\nfor i in range(", truncated=True) is None
    assert extract_code("print(1", truncated=True) is None


def test_a_truncated_completion_keeps_a_program_it_finished_before_the_cut() -> None:
    assert (
        extract_code("```python\nprint(4)\n```\nLet me explain in detail wh", truncated=True) == "print(4)\n"
    )


def test_a_final_unclosed_fence_counts_when_the_model_stopped_itself() -> None:
    assert extract_code("```python\nprint(1)\n```\nFixed:\n```python\nprint(2)\n") == "print(2)\n"


def test_drafts_inside_thinking_are_ignored() -> None:
    text = "<think>\n```python\nprint(0)\n```\n</think>\n```python\nprint(9)\n```"
    assert extract_code(text) == "print(9)\n"
    assert extract_code("<think>still thinking ```python\nprint(0)\n```", truncated=True) is None


def test_a_call_mode_case_carries_the_function_name_and_the_problems_checker() -> None:
    case = build_case(ADD, "class Solution: ...", case_id="7")
    assert case["mode"] == "call" and case["fn_name"] == "add" and case["id"] == "7"
    assert case["checker"] == {"kind": "icpc", "float_tolerance": 1e-6}
    assert case["tests"] == [{"input": "1\n2", "output": "3"}]


def test_the_checker_can_be_forced_and_tests_capped() -> None:
    case = build_case(ECHO, "print(input())", case_id="0", checker="strict", max_tests=1)
    assert case["checker"] == {"kind": "strict"} and len(case["tests"]) == 1 and "fn_name" not in case


def test_a_release_training_cap_limits_the_tests_sent_to_the_judge() -> None:
    capped = dict(ECHO.to_export_dict(), extra={"curation": {"train_test_limit": 1}})
    assert len(build_case(capped, "print(input())", case_id="0")["tests"]) == 1
    assert len(build_case(ECHO.to_export_dict(), "print(input())", case_id="0")["tests"]) == 2


def test_assert_style_tests_reach_the_judge_in_its_assert_form() -> None:
    problem = ProblemRecord(
        platform="humaneval",
        external_id="HumanEval/0",
        title="inc",
        statement="Increment.",
        io_mode="call",
        fn_name="inc",
        checker={"kind": "assert"},
        tests=[TestRecord("", "assert inc(1) == 2")],
    )
    case = build_case(problem, "def inc(x):\n    return x + 1\n", case_id="0")
    assert case["tests"] == [{"input": "", "output": "", "assert": "assert inc(1) == 2"}]
    assert case["checker"] == {"kind": "lenient"}


def _fake_judge(verdicts: list[str]) -> Any:
    calls: list[dict[str, Any]] = []

    def judge(
        cases: list[dict[str, Any]], *, workers: int | None = None, stop_on_first_failure: bool = True
    ) -> list[dict[str, Any]]:
        calls.append({"n": len(cases), "stop": stop_on_first_failure})
        return [
            {"id": c["id"], "verdict": v, "passed": 1 if v == "AC" else 0, "total": 1}
            for c, v in zip(cases, verdicts)
        ]

    judge.calls = calls  # type: ignore[attr-defined]
    return judge


def _reward(v: Any, mode: str = "pass_fail") -> float | None:
    return None if v["verdict"] == "IE" else float(v["verdict"] == "AC")


def test_an_infrastructure_error_gives_no_reward_rather_than_zero() -> None:
    judge = _fake_judge(["AC", "IE"])
    out = score_completions(
        [ECHO, ECHO],
        ["print(1)", "print(2)"],
        [False, False],
        RewardConfig(),
        judge=judge,
        reward_from_verdict=_reward,
    )
    assert [(r.reward, r.verdict) for r in out] == [(1.0, "AC"), (None, "IE")]


def test_a_completion_without_a_program_is_not_sent_to_the_judge() -> None:
    judge = _fake_judge(["AC"])
    out = score_completions(
        [ECHO, ECHO],
        ["```python\nprint(", "print(1)"],
        [True, False],
        RewardConfig(),
        judge=judge,
        reward_from_verdict=_reward,
    )
    assert [(r.reward, r.verdict, r.has_code) for r in out] == [(0.0, NO_ANSWER, False), (1.0, "AC", True)]
    assert judge.calls == [{"n": 1, "stop": True}]


def test_fraction_rewards_ask_the_judge_to_run_every_test() -> None:
    judge = _fake_judge(["WA"])
    score_completions(
        [ECHO], ["print(1)"], [False], RewardConfig(mode="fraction"), judge=judge, reward_from_verdict=_reward
    )
    assert judge.calls[0]["stop"] is False


def test_the_real_evaluator_rewards_a_correct_program_and_not_a_wrong_one() -> None:
    pytest.importorskip("evaluator.runner")
    out = score_completions(
        [ECHO, ECHO, ECHO],
        ["```python\nprint(input())\n```", "print(5)", "```python\nprint(\n```"],
        [False, False, False],
        RewardConfig(workers=2),
    )
    assert [(r.verdict, r.reward) for r in out] == [("AC", 1.0), ("WA", 0.0), ("CE", 0.0)]


def test_fraction_mode_with_the_real_evaluator_gives_the_share_of_tests_passed() -> None:
    pytest.importorskip("evaluator.runner")
    (result,) = score_completions([ECHO], ["print(5)"], [False], RewardConfig(mode="fraction", workers=1))
    assert result.reward == pytest.approx(0.5) and (result.passed, result.total) == (1, 2)


def test_identical_programs_for_the_same_problem_are_judged_once() -> None:
    judge = _fake_judge(["AC", "WA", "AC"])
    other = dataclasses.replace(ECHO, tests=[TestRecord(input="9\n", output="9\n", public=True)])
    out = score_completions(
        [ECHO, ECHO, other, ECHO],
        ["print(1)", "print(1)", "print(1)", "print(2)"],
        [False] * 4,
        RewardConfig(),
        judge=judge,
        reward_from_verdict=_reward,
    )
    # (ECHO, print(1)) once, (other, print(1)) and (ECHO, print(2)) once each.
    assert judge.calls == [{"n": 3, "stop": True}]
    assert [r.verdict for r in out] == ["AC", "AC", "WA", "AC"]


def test_a_verdict_cache_carries_across_calls_but_never_keeps_an_infrastructure_error() -> None:
    cache: dict[str, Any] = {}
    first = _fake_judge(["AC", "IE"])
    score_completions(
        [ECHO, ECHO],
        ["print(1)", "print(2)"],
        [False, False],
        RewardConfig(),
        judge=first,
        reward_from_verdict=_reward,
        verdict_cache=cache,
    )
    second = _fake_judge(["WA"])
    out = score_completions(
        [ECHO, ECHO],
        ["print(1)", "print(2)"],
        [False, False],
        RewardConfig(),
        judge=second,
        reward_from_verdict=_reward,
        verdict_cache=cache,
    )
    assert second.calls == [{"n": 1, "stop": True}]  # print(1) reused; print(2) judged again after IE
    assert [r.verdict for r in out] == ["AC", "WA"]
