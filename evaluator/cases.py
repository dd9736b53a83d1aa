"""A case being judged: validation, the state shared by its parallel chunks, and its verdict.

Formats are documented in :mod:`evaluator.runner`.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import calls, checkers
from .compare import Checker, compare_output, compare_value, parse_checker
from .config import JudgeConfig

_METHOD_RANK = {name: i for i, name in enumerate(
    ("exact", "strict", "icpc", "assert", "line_end_normalized", "whitespace_tokens", "float_tokens",
     "structural"))}
_TAIL = 1000
_HEAD = 200


class InvalidCase(ValueError):
    """The case cannot be judged as given (becomes an IE verdict)."""


@dataclass
class CaseTest:
    kind: str  # stdin | call | assert
    payload: bytes
    expected: str
    expected_bytes: bytes
    parsed: Any = None
    parsed_ready: bool = False


def _text(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise InvalidCase(f"{what} must be a string, got {type(value).__name__}")


def _positive(value: Any, what: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        raise InvalidCase(f"{what} must be a positive number, got {value!r}")
    return float(value)


class Case:
    """A validated case plus the shared state of its (possibly parallel) judging."""

    def __init__(self, raw: Mapping[str, Any], config: JudgeConfig, stop_on_first_failure: bool) -> None:
        self.id = raw.get("id") if isinstance(raw, Mapping) else None
        self.stop_on_first_failure = stop_on_first_failure
        self.lock = threading.Lock()
        self.records: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] | None = None  # a verdict decided for the whole case (CE, IE, ...)
        self.failed = False
        self.timed_out = False
        self.started: float | None = None
        self.finished: float | None = None
        self.sandbox = ""
        self.tests: list[CaseTest] = []
        self.code = ""
        self.mode = "stdin"
        self.fn_name: str | None = None
        self.checker = Checker()
        self.language = "python"  # python | c | cpp (evaluator.checkers.configure_case)
        self.program: checkers.ProgramChecker | None = None  # a {"kind": "program"} checker
        self.program_bytes = b""
        self.program_key = ""  # sha256 of program_bytes, computed once (evaluator.interactive)
        self.interactive = False
        self.passes = 1
        self.limits = config.limits(config.time_limit_s, config.memory_mb)
        self.deadline_s = config.solution_time_limit_s
        try:
            self._validate(raw, config)
        except InvalidCase as exc:
            self.final = {"verdict": "IE", "message": f"invalid case: {exc}"}

    def _validate(self, raw: Any, config: JudgeConfig) -> None:
        if not isinstance(raw, Mapping):
            raise InvalidCase(f"a case must be an object, got {type(raw).__name__}")
        self.mode = str(raw.get("mode") or "stdin")
        if self.mode not in ("stdin", "call"):
            raise InvalidCase(f"mode must be 'stdin' or 'call', got {self.mode!r}")
        if not isinstance(raw.get("code"), str):
            raise InvalidCase("'code' (the solution's source) is missing")
        self.code = raw["code"]
        try:
            checkers.configure_case(self, raw)  # language, checker program, interaction
        except ValueError as exc:
            raise InvalidCase(str(exc)) from exc
        try:
            if self.program is None:
                self.checker = parse_checker(raw.get("checker"))
        except (ValueError, TypeError) as exc:
            raise InvalidCase(f"checker: {exc}") from exc
        time_limit = _positive(raw.get("time_limit_s"), "time_limit_s", config.time_limit_s)
        memory = int(_positive(raw.get("memory_mb"), "memory_mb", config.memory_mb))
        self.limits = config.limits(time_limit, memory)
        tests = raw.get("tests")
        if not isinstance(tests, Sequence) or isinstance(tests, (str, bytes)) or not tests:
            raise InvalidCase("'tests' must be a non-empty list")
        fn_name = raw.get("fn_name")
        self.fn_name = str(fn_name) if fn_name else None
        for i, test in enumerate(tests):
            if not isinstance(test, Mapping):
                raise InvalidCase(f"test {i} must be an object")
            self.tests.append(self._test(i, test))
        if self.mode == "call" and not self.fn_name and any(t.kind == "call" for t in self.tests):
            raise InvalidCase("call mode needs 'fn_name' unless every test is an assert test")

    def _test(self, i: int, test: Mapping[str, Any]) -> CaseTest:
        expected = _text(test.get("output"), f"test {i} output")
        if self.mode == "call" and test.get("assert"):
            source = _text(test.get("assert"), f"test {i} assert")
            return CaseTest("assert", source.encode(), expected, b"")
        raw_input = test.get("input")
        if self.mode == "call" and isinstance(raw_input, list):
            raw_input = "\n".join(json.dumps(arg) for arg in raw_input)
        text = _text(raw_input, f"test {i} input")
        return CaseTest(self.mode, text.encode("utf-8", "surrogateescape"), expected,
                     expected.encode("utf-8", "surrogateescape"))

    # ---------------------------------------------------------------------------- shared state
    def should_stop(self) -> bool:
        return self.final is not None or (self.stop_on_first_failure and self.failed) or self.timed_out

    def begin(self) -> None:
        with self.lock:
            if self.started is None:
                self.started = time.monotonic()

    def over_budget(self) -> bool:
        return self.started is not None and time.monotonic() - self.started > self.deadline_s

    def decide(self, verdict: str, message: str) -> None:
        with self.lock:
            if self.final is None:
                self.final = {"verdict": verdict, "message": message}

    def record(self, index: int, rec: dict[str, Any]) -> None:
        with self.lock:
            self.records[index] = rec
            if rec["status"] != "AC":
                self.failed = True

    # -------------------------------------------------------------------------------- verdict
    def verdict(self) -> dict[str, Any]:
        records = [self.records[i] for i in sorted(self.records)]
        passed = sum(1 for r in records if r["status"] == "AC")
        elapsed = 0.0 if self.started is None else (self.finished or time.monotonic()) - self.started
        out: dict[str, Any] = {"id": self.id, "verdict": "AC", "passed": passed, "total": len(self.tests),
                               "method": None, "tests": records, "elapsed_s": round(elapsed, 4),
                               "sandbox": self.sandbox or None,
                               "checker": "program" if self.program else self.checker.kind}
        failing = next((r for r in records if r["status"] != "AC"), None)
        if self.final is not None:
            # OLE is a test status, not a verdict (DESIGN's set): an output flood is a runtime error
            out["verdict"] = "RE" if self.final["verdict"] == "OLE" else self.final["verdict"]
            out["message"] = self.final["message"]
        elif failing is not None:
            out["verdict"] = "RE" if failing["status"] == "OLE" else failing["status"]
        elif self.timed_out or len(records) < len(self.tests):
            out["verdict"] = "TLE"
            out["message"] = f"solution time limit ({self.deadline_s:g}s for all tests) exceeded"
        else:
            methods = [r.get("method") or "exact" for r in records]
            out["method"] = max(methods, key=lambda m: _METHOD_RANK.get(m, 0))
        return out


# ------------------------------------------------------------------------------------ judging
def evaluate_test(case: Case, test: CaseTest, reply: dict[str, Any], stdout: bytes, stderr: bytes,
              result: bytes) -> dict[str, Any]:
    status = str(reply.get("status"))
    rec: dict[str, Any] = {"status": status, "time_s": reply.get("cpu_s", 0.0), "wall_s": reply.get("wall_s", 0.0)}
    if status == "OK":
        if reply.get("judged"):  # decided by a checker program or an interactive validator
            rec.update(status="AC", method=reply["judged"], **({"message": reply["message"]}
                                                                if reply.get("message") else {}))
        elif test.kind == "assert":
            rec.update(status="AC", method="assert")
        elif test.kind == "stdin":
            if stdout == test.expected_bytes:
                equal, method = True, ("exact" if case.checker.kind == "lenient" else case.checker.kind)
            else:
                equal, method = compare_output(test.expected, stdout, case.checker)
            rec["status"] = "AC" if equal else "WA"
            if equal:
                rec["method"] = method
        else:
            try:
                value = calls.decode_result(result)
            except ValueError as exc:
                rec.update(status="WA", message=f"unreadable result: {exc}")
            else:
                if not test.parsed_ready:
                    test.parsed, test.parsed_ready = calls.parse_expected(test.expected), True
                equal, method = compare_value(test.expected, value, case.checker, test.parsed)
                rec["status"] = "AC" if equal else "WA"
                if equal:
                    rec["method"] = method
                else:
                    rec["output"] = repr(value)[:_HEAD]
        if reply.get("message") and rec["status"] != "AC":
            rec["message"] = reply["message"]
    elif status == "BAD_INPUT":
        try:
            calls.parse_call_input(test.payload.decode("utf-8", "surrogateescape"))
        except ValueError as exc:
            rec.update(status="IE", message=f"test input is not call arguments: {exc}")
        else:  # we can parse it, so the solution interfered with the runner's parser
            rec.update(status="RE", message="argument parsing failed inside the solution's process")
    elif status == "BAD_TEST":
        try:
            compile(test.payload.decode("utf-8", "surrogateescape"), "test.py", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            rec.update(status="IE", message=f"assert test does not compile: {exc}")
        else:
            rec.update(status="RE", message="the assert test failed to compile inside the solution's process")
    elif status in ("CE", "IE"):
        rec.update(status="RE" if status == "CE" else "IE", message=reply.get("message", ""))
    elif status not in ("WA", "TLE", "MLE", "RE", "OLE"):
        rec.update(status="IE", message=f"unknown worker status {status!r}")
    else:
        rec["message"] = reply.get("message", "")
    if rec["status"] != "AC":
        # excerpts shown like invalid UTF-8 is: a NUL would make PostgreSQL refuse the stored verdict
        if stderr:
            rec["stderr"] = stderr[-_TAIL:].decode("utf-8", "replace").replace("\x00", "\ufffd")
        if stdout and "output" not in rec:
            rec["output"] = stdout[:_HEAD].decode("utf-8", "replace").replace("\x00", "\ufffd")
    return rec
