"""Interactive problems inside the sandbox: the worker's ``interact`` request.

The loaded solution and an ICPC interactive validator run connected by two pipes; their outcomes are
combined by :func:`_combine` (the validator's verdict wins). Standard library only, bind-mounted next to
``_worker.py`` and ``_programs.py`` (which runs the validator as a checker program).
"""

from __future__ import annotations

import os
import time
from typing import Any

if __package__:
    from ._outcomes import load_reply, test_reply
    from ._programs import _classify, _memfd, _Program, _tail, needs_program
    from ._protocol import send, split_parts
else:  # inside the sandbox
    from _outcomes import load_reply, test_reply  # type: ignore[no-redef]
    from _programs import _classify, _memfd, _Program, _tail, needs_program  # type: ignore[no-redef]
    from _protocol import send, split_parts  # type: ignore[no-redef]

_MESSAGE = 4000


def op_interact(worker: Any, header: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """Run the loaded solution against an interactive validator on ``[program, input, answer]``."""
    if worker.sol is None:
        return {"status": "IE", "message": "interact before load"}, []
    spec = header["program"]
    program, test_in, answer = split_parts(header, blob)
    if needs_program(worker, spec, program):
        return {"need_program": True}, []
    limits = worker.sol["limits"]
    if worker.runner is not None and worker.runner.poll_dead():
        worker._stop_runner()
    if worker.runner is None:
        load = load_reply(worker._spawn(), limits)
        if load["status"] != "OK":
            return dict(load, restarted=True), []
    run = _Program(worker, spec, program)
    to_sol_r, to_sol_w = os.pipe2(os.O_CLOEXEC)
    to_val_r, to_val_w = os.pipe2(os.O_CLOEXEC)
    sol_err, val_err, val_out = _memfd("stderr"), _memfd("vstderr"), -1
    mine = [to_sol_r, to_sol_w, to_val_r, to_val_w, sol_err, val_err]
    try:
        args = [run.file("input", test_in), run.file("answer", answer), run.feedback + "/", *spec.get("args", [])]
        run.start(args, to_val_r, to_sol_w, val_err, supervised=True)
        for fd in (to_val_r, to_sol_w):  # only the validator holds these ends now
            os.close(fd)
            mine.remove(fd)
        try:
            send(worker.runner.sock, {"op": "test", "kind": "stdin"}, [], fds=[to_sol_r, to_val_w, sol_err])
        finally:
            for fd in (to_sol_r, to_val_w):  # EOF reaches each side when its peer exits
                os.close(fd)
                mine.remove(fd)
        outcome = worker._await(limits["time_limit_s"], limits["wall_limit_s"])
        validator_first = run.done()
        finished = run.wait(time.monotonic() + spec["limits"]["wall_s"])
        if not finished:
            run.kill()
        checked = _classify(spec, run, finished, _tail(val_err, _MESSAGE))
        solution = test_reply(outcome, "stdin", limits, 0)
        reply = _combine(solution, checked, validator_first)
        if outcome["dead"]:
            worker._stop_runner()
        else:
            worker._kill_strays(worker.runner.pid)
        nextpass = run.nextpass() if reply["status"] == "OK" and spec.get("passes", 1) > 1 else None
        reply.update(cpu_s=round(outcome["cpu_s"], 4), wall_s=round(outcome["wall_s"], 4),
                     checker_cpu_s=checked["checker_cpu_s"], nextpass=nextpass is not None)
        size = os.fstat(sol_err).st_size
        return reply, [nextpass or b"", os.pread(sol_err, 4096, max(0, size - 4096))]
    finally:
        for fd in mine + ([val_out] if val_out >= 0 else []):
            os.close(fd)
        run.close()


def _combine(solution: dict[str, Any], checked: dict[str, Any], validator_first: bool) -> dict[str, Any]:
    """The verdict of one interactive run (the peers' rule, as DOMjudge and Kattis apply it):

    - the validator rejected before the solution ended -> WA, whatever the solution did after;
    - the solution exceeded a limit -> its TLE / MLE / OLE;
    - the validator rejected -> WA (even if the solution then crashed: the validator's verdict wins);
    - the validator did not finish in time -> TLE (it is waiting for output the solution never
      flushed or never wrote);
    - the validator failed (another exit code, a crash, its own CPU limit) -> IE;
    - the validator accepted -> the solution's own status (OK, or RE for a crash / non-zero exit).
    """
    status = solution.get("status")
    result = checked["result"]
    message = checked.get("message", "")
    if result == "reject" and validator_first:
        return {"status": "WA", "message": message}
    if status in ("TLE", "MLE", "OLE"):
        return {"status": status, "message": solution.get("message", "")}
    if result == "reject":
        return {"status": "WA", "message": message}
    if result == "hang":
        return {"status": "TLE", "message": "the interaction did not finish (output not flushed or missing?)"}
    if result == "fail":
        return {"status": "IE", "message": message}
    if status == "OK":
        return {"status": "OK", "message": message} if message else {"status": "OK"}
    return {"status": status or "RE", "message": solution.get("message", "")}
