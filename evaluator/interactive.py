"""Running one test of a case that needs more than a comparison: a checker program, an interactive
validator, several passes. Called by the pool in place of ``WorkerProcess.run``; returns the same
``(reply, stdout, stderr, result)`` so :func:`evaluator.cases.evaluate_test` turns it into a record.

The ICPC interactive protocol (as Kattis and DOMjudge run it): the validator is started as
``validator INPUT ANSWER FEEDBACK_DIR/ [args]`` with its stdout connected to the solution's stdin and
the solution's stdout to its stdin; it exits 42 to accept and 43 to reject, and writes its message to
``FEEDBACK_DIR/judgemessage.txt``. The solution has the case's time limit (judge side: CPU from kernel
accounting, wall = the case's wall limit); the validator has its own. The validator's verdict wins (see
:func:`evaluator._programs._combine`): a solution that stops reading or exits early is WA when the
validator says so, one that never flushes ends when its wall limit kills it (TLE).

Multi-pass (``passes`` > 1, the 2023-07 format's ``multi-pass`` type): when the validator accepts and
leaves ``FEEDBACK_DIR/nextpass.in``, the solution runs again with that file as its input (and the
validator with it as INPUT), up to ``passes`` runs; a test is accepted when the last pass is.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .cases import Case, CaseTest
from .sandbox import WorkerProcess

Outcome = tuple[dict[str, Any], bytes, bytes, bytes]


def run_test(worker: WorkerProcess, case: Case, test: CaseTest) -> Outcome:
    """Run ``test`` of ``case`` on ``worker`` (its solution already loaded). Raises SandboxError."""
    if case.program is None:
        return worker.run(test.kind, test.payload, case.limits)
    spec = case.program.wire(case.passes)
    data = test.payload
    cpu = wall = checker_cpu = 0.0
    stdout = stderr = b""
    reply: dict[str, Any] = {}
    for _pass in range(case.passes):
        if case.interactive:
            reply, stderr, nextpass = _interact(worker, case, spec, data, test.expected_bytes)
        else:
            reply, stdout, stderr, checked, nextpass = _run_checked(worker, case, spec, data, test.expected_bytes)
            if reply.get("status") == "OK":
                if checked is None or checked.get("need_program"):  # the worker lacked the program
                    checked, nextpass = _check(worker, case, spec, data, test.expected_bytes, stdout)
                checker_cpu += float(checked.get("checker_cpu_s") or 0.0)
                reply = dict(reply, **_verdict_of(checked))
        cpu += float(reply.get("cpu_s") or 0.0)
        wall += float(reply.get("wall_s") or 0.0)
        checker_cpu += float(reply.pop("checker_cpu_s", 0.0) or 0.0)
        if reply.get("status") != "OK" or not reply.get("nextpass"):
            break
        data = nextpass
    reply = dict(reply, cpu_s=round(cpu, 4), wall_s=round(wall, 4))
    if reply.get("status") == "OK":
        reply["judged"] = "interactive" if case.interactive else "program"
    reply.pop("nextpass", None)
    return reply, stdout, stderr, b""


def _timeout(case: Case, spec: dict[str, Any]) -> float:
    limits = case.limits
    return limits.wall_limit_s + spec["limits"]["wall_s"] + 2 * limits.load_limit_s + limits.watchdog_grace_s


def _program_request(worker: WorkerProcess, case: Case, op: str, spec: dict[str, Any], data: list[bytes],
                     timeout_s: float) -> tuple[dict[str, Any], list[bytes]]:
    """One ``check`` / ``interact`` request. A compiled program is sent to a worker once: the worker keeps
    it warm (a sealed memfd per program hash, :func:`evaluator._programs.program_fd`) and later requests
    name it by hash; a worker that no longer holds it asks for it again."""
    if not spec.get("interpreted"):
        if not case.program_key:
            case.program_key = hashlib.sha256(case.program_bytes).hexdigest()
        spec = dict(spec, key=case.program_key)
    known = "key" in spec and spec["key"] in worker.programs
    reply, parts = worker.request({"op": op, "program": spec}, [b"" if known else case.program_bytes, *data],
                                  timeout_s)
    if reply.get("need_program"):
        worker.programs.discard(spec["key"])
        reply, parts = worker.request({"op": op, "program": spec}, [case.program_bytes, *data], timeout_s)
    if "key" in spec and not reply.get("need_program"):
        worker.programs.add(spec["key"])
    return reply, parts


def _run_checked(worker: WorkerProcess, case: Case, spec: dict[str, Any], data: bytes, answer: bytes
                 ) -> tuple[dict[str, Any], bytes, bytes, dict[str, Any] | None, bytes]:
    """Run one test with the checker in the same request: the worker checks the output as soon as the
    test ends (no round trip through the judge). The program goes along only when the judge does not
    know the worker holds it warm. Returns (reply, stdout, stderr, checked or None, nextpass)."""
    if not case.program_key and not spec.get("interpreted"):
        case.program_key = hashlib.sha256(case.program_bytes).hexdigest()
    if not spec.get("interpreted"):
        spec = dict(spec, key=case.program_key)
    known = "key" in spec and spec["key"] in worker.programs
    limits = case.limits
    timeout = limits.wall_limit_s + limits.load_limit_s * 2 + limits.watchdog_grace_s + spec["limits"]["wall_s"]
    reply, parts = worker.request({"op": "run", "kind": "stdin", "check": spec},
                                  [data, b"" if known else case.program_bytes, answer], timeout)
    parts += [b""] * (4 - len(parts))
    checked = reply.pop("checked", None)
    if isinstance(checked, dict) and "key" in spec and not checked.get("need_program"):
        worker.programs.add(spec["key"])
    if isinstance(checked, dict) and checked.get("need_program"):
        worker.programs.discard(spec.get("key", ""))
    return reply, parts[0], parts[1], checked if isinstance(checked, dict) else None, parts[3]


def _check(worker: WorkerProcess, case: Case, spec: dict[str, Any], data: bytes, answer: bytes,
           output: bytes) -> tuple[dict[str, Any], bytes]:
    reply, parts = _program_request(worker, case, "check", spec, [data, answer, output], _timeout(case, spec))
    return reply, (parts[0] if parts and reply.get("nextpass") else b"")


def _verdict_of(checked: dict[str, Any]) -> dict[str, Any]:
    """A checker's result as a test reply: accept -> OK, reject -> WA, a failing checker -> IE."""
    result, message = checked.get("result"), str(checked.get("message") or "")
    if result == "accept":
        return {"status": "OK", "message": message, "nextpass": bool(checked.get("nextpass"))}
    if result == "reject":
        return {"status": "WA", "message": message or "rejected by the checker"}
    return {"status": "IE", "message": f"checker failure: {message}"}


def _interact(worker: WorkerProcess, case: Case, spec: dict[str, Any], data: bytes,
              answer: bytes) -> tuple[dict[str, Any], bytes, bytes]:
    reply, parts = _program_request(worker, case, "interact", spec, [data, answer], _timeout(case, spec))
    parts += [b""] * (2 - len(parts))
    return reply, parts[1], (parts[0] if reply.get("nextpass") else b"")
