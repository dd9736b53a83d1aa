"""Checker programs (``{"kind": "program"}``): ICPC output validators and testlib-style checkers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from evaluator.runner import judge_batch, judge_case

from .conftest import FAST, requires_bwrap
from .program_fixtures import (
    PAIR_ANY,
    PAIR_OTHER,
    PAIR_TESTS,
    PAIR_VALIDATOR_CPP,
    PAIR_WRONG,
    PY_SUM,
    PY_SUM_WRONG,
    SUM_TESTS,
    TESTLIB_CHECKER_C,
    VALIDATE_H,
    checker_spec,
)

PAIR_CHECKER = {"kind": "program", "protocol": "icpc",
                "sources": {"validator.cpp": PAIR_VALIDATOR_CPP, "validate.h": VALIDATE_H}}
TESTLIB = checker_spec(TESTLIB_CHECKER_C, "c", protocol="testlib")


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MICROCODER_COMPILE_CACHE", str(tmp_path / "compile-cache"))


def pair_case(code: str, **extra: object) -> dict[str, object]:
    return {"id": "pair", "code": code, "tests": PAIR_TESTS, "checker": PAIR_CHECKER, **extra}


def test_it_accepts_any_valid_answer_through_an_icpc_validator() -> None:
    verdicts = judge_batch([pair_case(PAIR_ANY), pair_case(PAIR_OTHER)], config=FAST)
    assert [(v["verdict"], v["method"], v["checker"]) for v in verdicts] == [("AC", "program", "program")] * 2


def test_it_rejects_an_invalid_answer_with_the_validators_message() -> None:
    verdict = judge_case(pair_case(PAIR_WRONG), config=FAST)
    assert verdict["verdict"] == "WA"
    assert verdict["tests"][0]["message"] == "the sum is wrong"


def test_it_records_the_validators_message_on_accepted_tests() -> None:
    verdict = judge_case(pair_case(PAIR_ANY), config=FAST)
    assert verdict["tests"][0]["message"] == "a valid pair"


def test_it_passes_validator_flags_as_arguments() -> None:
    echo_flags = ("import sys\nopen(sys.argv[3] + 'judgemessage.txt', 'w').write(' '.join(sys.argv[4:]))\n"
                  "sys.exit(42)\n")
    spec = checker_spec(echo_flags, "python", args=["float_tolerance", "1e-6"])
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS[:1], "checker": spec}, config=FAST)
    assert verdict["tests"][0]["message"] == "float_tolerance 1e-6"


def test_it_runs_a_testlib_checker_with_input_output_answer() -> None:
    good, bad = judge_batch([{"code": PY_SUM, "tests": SUM_TESTS, "checker": TESTLIB},
                             {"code": PY_SUM_WRONG, "tests": SUM_TESTS, "checker": TESTLIB}], config=FAST)
    assert good["verdict"] == "AC" and good["tests"][1]["message"] == "ok 42"
    assert bad["verdict"] == "WA" and bad["tests"][0]["message"] == "wrong answer: expected 3, found 2"


def test_it_reports_a_failing_testlib_checker_as_a_judge_error() -> None:
    failing = checker_spec("import sys\nsys.stderr.write('FAIL: bad answer file')\nsys.exit(3)\n", "python",
                           protocol="testlib")
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS, "checker": failing}, config=FAST)
    assert verdict["verdict"] == "IE" and "exited with code 3" in verdict["message"]


def test_it_stops_a_checker_at_its_own_time_limit() -> None:
    spinning = checker_spec("while True:\n    pass\n", "python", time_limit_s=0.5)
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS[:1], "checker": spinning}, config=FAST)
    assert verdict["verdict"] == "IE" and "checker" in verdict["message"]


def test_it_reports_a_checker_that_does_not_compile_as_a_judge_error() -> None:
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS, "checker": checker_spec("int main( {", "c")},
                         config=FAST)
    assert verdict["verdict"] == "IE" and "does not compile" in verdict["message"]


def test_it_refuses_an_unknown_checker_protocol_naming_the_field() -> None:
    spec = checker_spec("pass", "python", protocol="polygon")
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS, "checker": spec}, config=FAST)
    assert verdict["verdict"] == "IE" and "protocol 'polygon'" in verdict["message"]


@requires_bwrap
def test_it_runs_the_checker_inside_the_sandbox() -> None:
    settings = Path(__file__).resolve().parents[2] / "webapp" / "settings.py"
    snoop = (f"import os, sys, socket\nseen = os.path.exists({str(settings)!r})\n"
             "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=1); net = True\n"
             "except OSError:\n    net = False\n"
             "open(sys.argv[3] + 'judgemessage.txt', 'w').write(f'project={seen} net={net}')\n"
             "sys.exit(43 if seen or net else 42)\n")
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS[:1], "checker": checker_spec(snoop, "python")},
                         config=FAST)
    assert verdict["verdict"] == "AC", verdict["tests"]


@requires_bwrap
def test_it_hides_the_judge_answer_from_a_solution_running_beside_the_checker() -> None:
    # a daemon thread of the solution keeps looking for the checker's files while test 1 is checked;
    # had it read one, test 2 (same runner process) would print LEAK
    snoop = ("import os, sys, threading, time\n"
             "def look():\n    while True:\n        for d in os.listdir('/tmp'):\n"
             "            try:\n                open('/tmp/' + d + '/answer').read(); sys.leaked = True\n"
             "            except OSError:\n                pass\n        time.sleep(0.001)\n"
             "if getattr(sys, 'leaked', False):\n    print('LEAK')\n    raise SystemExit\n"
             "if not getattr(sys, 'snooping', False):\n    sys.snooping = True\n"
             "    threading.Thread(target=look, daemon=True).start()\n" + PY_SUM)
    slow_checker = checker_spec("import sys, time\ntime.sleep(0.3)\nsys.exit(42)\n", "python")
    one_worker = replace(FAST, workers=1)  # both tests in the same runner process
    verdict = judge_case({"code": snoop, "tests": SUM_TESTS, "checker": slow_checker}, config=one_worker)
    assert verdict["verdict"] == "AC"


@requires_bwrap
def test_it_applies_the_solutions_system_call_filter_to_checkers() -> None:
    seccomp = pytest.importorskip("evaluator._seccomp")
    if seccomp.prepare():
        pytest.skip("no seccomp filter on this machine")
    unshare = ("import ctypes, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"
               "denied = libc.unshare(0x10000000) == -1 and ctypes.get_errno() == 1\n"  # CLONE_NEWUSER, EPERM
               "sys.exit(42 if denied else 43)\n")
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS[:1], "checker": checker_spec(unshare, "python")},
                         config=FAST)
    assert verdict["verdict"] == "AC"


def test_it_runs_a_python_checker_in_the_rlimit_fallback_too() -> None:
    from evaluator.sandbox import SandboxConfig

    fallback = replace(FAST, sandbox=SandboxConfig(mode="rlimit"))
    accept = checker_spec("import sys\nsys.exit(42)\n", "python")
    verdict = judge_case({"code": PY_SUM, "tests": SUM_TESTS[:1], "checker": accept}, config=fallback)
    assert (verdict["verdict"], verdict["sandbox"]) == ("AC", "rlimit")


@requires_bwrap
def test_a_compiled_checker_is_sent_to_a_worker_once_and_kept_warm_there() -> None:
    import hashlib

    from evaluator.checkers import ProgramChecker, build
    from evaluator.sandbox import Limits, SandboxConfig, WorkerProcess

    checker = ProgramChecker(protocol="testlib", language="c", sources=(("checker.c", TESTLIB_CHECKER_C),))
    program, error = build(checker)
    assert not error
    spec = dict(checker.wire(), key=hashlib.sha256(program).hexdigest())
    worker = WorkerProcess(SandboxConfig.from_env(), slot=904)
    worker.start()
    try:
        assert worker.load("print(input())", "stdin", None, Limits())["status"] == "OK"
        first, _ = worker.request({"op": "check", "program": spec}, [program, b"3\n", b"3\n", b"3\n"], 30)
        again, _ = worker.request({"op": "check", "program": spec}, [b"", b"3\n", b"3\n", b"4\n"], 30)
        unknown = dict(spec, key="0" * 64)
        missing, _ = worker.request({"op": "check", "program": unknown}, [b"", b"3\n", b"3\n", b"3\n"], 30)
    finally:
        worker.kill()
    assert (first["result"], again["result"], missing) == ("accept", "reject", {"need_program": True})


def test_a_worker_that_lost_a_warm_checker_is_sent_it_again(monkeypatch: pytest.MonkeyPatch) -> None:
    v = judge_case(pair_case(PAIR_ANY), config=FAST)
    assert v["verdict"] == "AC", v
    from evaluator.runner import get_pool

    for slot in get_pool(FAST).slots:  # fresh worker processes the judge believes hold the validator
        if slot.worker is not None and slot.worker.programs:
            believed = set(slot.worker.programs)
            slot.worker.kill()
            slot.worker.start()
            slot.worker.programs |= believed
    from evaluator.sandbox import WorkerProcess

    asked: list[bool] = []
    request = WorkerProcess.request

    def spy(self: WorkerProcess, *args: object, **kwargs: object) -> object:
        reply = request(self, *args, **kwargs)  # type: ignore[arg-type]
        header = reply[0]  # asked on its own or in the run request that carries the checker
        asked.append(bool(header.get("need_program") or (header.get("checked") or {}).get("need_program")))
        return reply

    monkeypatch.setattr(WorkerProcess, "request", spy)
    v = judge_case(pair_case(PAIR_ANY), config=FAST)
    assert v["verdict"] == "AC", v
    assert True in asked  # the worker asked for the program and got it


def test_a_checked_test_takes_one_request_the_worker_checks_the_output_itself(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from evaluator.sandbox import WorkerProcess

    ops: list[str] = []
    request = WorkerProcess.request

    def spy(self: WorkerProcess, header: dict[str, object], *args: object, **kwargs: object) -> object:
        ops.append(str(header.get("op")) + ("+check" if header.get("check") else ""))
        return request(self, header, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(WorkerProcess, "request", spy)
    v = judge_case(pair_case(PAIR_ANY), config=replace(FAST, workers=1))
    assert v["verdict"] == "AC" and v["passed"] == len(PAIR_TESTS), v
    assert ops.count("run+check") == len(PAIR_TESTS) and "check" not in ops, ops
