"""Runner behaviour: verdicts, stop-on-first-failure, fractions, parallel order, IE never WA."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from evaluator import judge_batch, judge_case, reward_from_verdict
from evaluator.runner import JudgeConfig, get_pool
from evaluator.sandbox import SandboxConfig

from .conftest import FAST, call_case, stdin_case

ADD = "a, b = map(int, input().split())\nprint(a + b)\n"
ADD_TESTS = [("1 2\n", "3\n"), ("5 5\n", "10\n"), ("-1 1\n", "0\n")]


def test_it_accepts_a_correct_stdin_program() -> None:
    v = judge_case(stdin_case(ADD, ADD_TESTS), config=FAST)
    assert (v["verdict"], v["passed"], v["total"], v["method"]) == ("AC", 3, 3, "exact")
    assert v["sandbox"] in ("bwrap", "rlimit")


def test_it_reports_the_loosest_comparator_that_was_needed() -> None:
    v = judge_case(stdin_case("print('%.9f' % (1 / 3))", [("", "0.333333\n")]), config=FAST)
    assert (v["verdict"], v["method"]) == ("AC", "float_tokens")


def test_it_reports_a_wrong_answer_with_the_output_head() -> None:
    v = judge_case(stdin_case("print(42)", [("", "41\n")]), config=FAST)
    assert v["verdict"] == "WA" and v["method"] is None
    assert v["tests"][0]["output"] == "42\n"


def test_it_reports_a_syntax_error_as_ce() -> None:
    v = judge_case(stdin_case("def f(:\n    pass", ADD_TESTS), config=FAST)
    assert v["verdict"] == "CE" and "SyntaxError" in v["message"]


def test_it_reports_an_exception_as_re_with_the_traceback() -> None:
    v = judge_case(stdin_case("raise KeyError('boom')", [("", "")]), config=FAST)
    assert v["verdict"] == "RE"
    assert "KeyError" in v["tests"][0]["stderr"] and "solution.py" in v["tests"][0]["stderr"]


def test_a_nonzero_exit_is_re_and_exit_zero_is_normal() -> None:
    assert judge_case(stdin_case("import sys\nprint(1)\nsys.exit(3)", [("", "1")]), config=FAST)["verdict"] == "RE"
    ok = stdin_case("import sys, os\nprint(1)\nsys.stdout.flush()\nos._exit(0)", [("", "1")])
    assert judge_case(ok, config=FAST)["verdict"] == "AC"


@pytest.mark.parametrize("read", ["input() + '\\n' + input()", "sys.stdin.buffer.read().decode()",
                                  "open(0).read()", "os.read(0, 100).decode()", "sys.stdin.read()"])
@pytest.mark.parametrize("write", ["print(s.strip())", "sys.stdout.buffer.write(s.strip().encode())",
                                   "os.write(1, s.strip().encode())"])
def test_every_stdio_api_reads_and_writes_real_descriptors(read: str, write: str) -> None:
    code = f"import os, sys\ns = {read}\n{write}\n"
    v = judge_case(stdin_case(code, [("ab\ncd\n", "ab\ncd\n")]), config=FAST)
    assert v["verdict"] == "AC", v


def test_digit_limit_and_recursion_limit_are_raised() -> None:
    code = ("import sys\n"
            "def depth(n):\n"
            "    return 0 if n == 0 else 1 + depth(n - 1)\n"
            "print(depth(50000), len(str(10 ** 10000)))\n")
    v = judge_case(stdin_case(code, [("", "50000 10001")]), config=FAST)
    assert v["verdict"] == "AC", v


def test_deep_memoized_recursion_has_the_stack_it_needs() -> None:
    code = ("import sys, functools\nsys.setrecursionlimit(10 ** 6)\n@functools.lru_cache(None)\n"
            "def f(n):\n    return 0 if n == 0 else f(n - 1) + 1\nprint(f(100000))\n")
    assert judge_case(stdin_case(code, [("", "100000")]), config=FAST)["verdict"] == "AC"


def test_a_thread_started_for_a_deep_stack_is_waited_for() -> None:
    code = ("import threading, sys\n"
            "threading.stack_size(1 << 26)\n"
            "def main():\n"
            "    print(sum(map(int, sys.stdin.read().split())))\n"
            "threading.Thread(target=main).start()\n")
    assert judge_case(stdin_case(code, [("1 2 3", "6")]), config=FAST)["verdict"] == "AC"


def test_it_stops_at_the_first_failure_by_default() -> None:
    tests = [("", "1")] * 3 + [("", "2")] + [("", "1")] * 6
    v = judge_batch([stdin_case("print(1)", tests)], workers=1, config=FAST)[0]
    assert v["verdict"] == "WA"
    assert len(v["tests"]) == 4 and v["passed"] == 3 and v["total"] == 10


def test_it_runs_every_test_for_a_fraction_reward() -> None:
    tests = [("", "1")] * 3 + [("", "2")] + [("", "1")] * 6
    v = judge_case(stdin_case("print(1)", tests), stop_on_first_failure=False, config=FAST)
    assert (v["verdict"], v["passed"], len(v["tests"])) == ("WA", 9, 10)
    assert reward_from_verdict(v, "fraction") == pytest.approx(0.9)
    assert reward_from_verdict(v, "pass_fail") == 0.0


def test_the_verdict_is_the_first_failing_test_by_index() -> None:
    code = "n = int(input())\nif n == 2: raise ValueError\nif n == 5: print('x')\nelse: print(n)\n"
    tests = [(f"{i}\n", f"{i}\n") for i in range(8)]
    v = judge_case(stdin_case(code, tests), stop_on_first_failure=False, config=FAST)
    assert v["verdict"] == "RE"
    assert [t["status"] for t in v["tests"]] == ["AC", "AC", "RE", "AC", "AC", "WA", "AC", "AC"]


def test_batch_verdicts_come_back_in_order() -> None:
    cases = [stdin_case(f"print({i})", [("", f"{i}\n")], id=f"c{i}") for i in range(12)]
    cases[5]["code"] = "print('no')"
    verdicts = judge_batch(cases, config=FAST)
    assert [v["id"] for v in verdicts] == [f"c{i}" for i in range(12)]
    assert [v["verdict"] for v in verdicts] == ["AC"] * 5 + ["WA"] + ["AC"] * 6


def test_a_malformed_case_is_ie_and_does_not_disturb_the_batch() -> None:
    verdicts = judge_batch([{"id": "x", "mode": "stdin", "tests": []}, stdin_case("print(1)", [("", "1")]),
                            {"id": "y", "mode": "sql", "code": "", "tests": [{"input": "", "output": ""}]}],
                           config=FAST)
    assert [v["verdict"] for v in verdicts] == ["IE", "AC", "IE"]
    assert "invalid case" in verdicts[0]["message"]


def test_reward_is_none_for_an_infrastructure_error() -> None:
    assert reward_from_verdict({"verdict": "IE", "passed": 0, "total": 3}) is None
    assert reward_from_verdict({"verdict": "IE", "passed": 0, "total": 3}, "fraction") is None
    assert reward_from_verdict({"verdict": "AC", "passed": 3, "total": 3}) == 1.0
    with pytest.raises(ValueError):
        reward_from_verdict({"verdict": "AC"}, "partial")


def test_a_broken_sandbox_gives_ie_never_wa() -> None:
    broken = replace(FAST, sandbox=SandboxConfig(mode="rlimit", python="/bin/false", start_timeout_s=5))
    v = judge_case(stdin_case("print(1)", [("", "2")]), config=broken)
    assert v["verdict"] == "IE" and "sandbox failure" in v["message"]
    assert reward_from_verdict(v) is None


def test_a_test_input_that_is_not_arguments_is_ie() -> None:
    v = judge_case(call_case("def f(x):\n    return x", "f", [{"input": "[1, 2", "output": "[1, 2]"}]), config=FAST)
    assert v["verdict"] == "IE" and "not call arguments" in v["message"]


def test_the_per_solution_time_limit_stops_a_slow_solution() -> None:
    config = replace(FAST, solution_time_limit_s=1.0)
    code = "import time\ntime.sleep(0.4)\nprint(1)"
    v = judge_batch([stdin_case(code, [("", "1")] * 10)], workers=1, config=config)[0]
    assert v["verdict"] == "TLE" and "solution time limit" in v["message"]
    assert 1 < len(v["tests"]) < 10


def descendants(pid: int) -> list[int]:
    out: list[int] = []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for child in map(int, children):
        out += [child, *descendants(child)]
    return out


def test_it_replaces_a_hung_worker_and_retries_the_test() -> None:
    config = replace(FAST, watchdog_grace_s=1.0, load_time_limit_s=0.5, time_limit_s=0.5, wall_extra_s=0.2)
    pool = get_pool(config, 1)
    judge_case(stdin_case("print(1)", [("", "1")]), config=config)  # make sure workers exist
    before = {slot.worker.proc.pid for slot in pool.slots if slot.worker and slot.worker.proc}

    def freeze_workers() -> None:
        time.sleep(0.3)
        for pid in before:  # the worker stops answering: only the watchdog can notice
            for victim in [pid, *descendants(pid)]:
                os.kill(victim, signal.SIGSTOP)

    threading.Thread(target=freeze_workers, daemon=True).start()
    code = "import time\ntime.sleep(0.6)\nprint(1)"
    v = judge_batch([stdin_case(code, [("", "1")])] * len(before), config=config)
    assert all(x["verdict"] == "AC" for x in v), v
    after = {slot.worker.proc.pid for slot in pool.slots if slot.worker and slot.worker.proc}
    assert not before & after


def test_the_judge_config_validates_its_fields() -> None:
    with pytest.raises(ValueError, match="time_limit_s"):
        JudgeConfig(time_limit_s=0)
    with pytest.raises(ValueError, match="wall_factor"):
        JudgeConfig(wall_factor=0.5)
