"""How the worker turns what it observed of a runner (its reply, its death, the limits it hit) into a
test or load status. Facts come from the kernel and the worker's own measurements; the runner's reply is
trusted only for the solution's own disadvantage.

Standard library only (bind-mounted into the sandbox next to _worker.py).
"""

from __future__ import annotations

import os
import signal
from typing import Any

#: reply fields a runner may send besides ``status`` (all text) and ``parts`` (sizes of the blob)
_TEXT_FIELDS = ("message", "exc", "code", "unencodable", "n")
_MAX_FIELD = 4096


def clean_text(value: str) -> str:
    """``value`` as text every consumer accepts: lone surrogates and NULs become backslash escapes."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def checked_reply(reply: dict[str, Any]) -> dict[str, Any] | None:
    """A runner's reply with clean text fields, or None when it is not one a runner sends (the runner's
    socket is reachable by the solution, so a forged frame must not reach the verdict logic)."""
    status = reply.get("status")
    if not isinstance(status, str) or len(status) > 64:
        return None
    out: dict[str, Any] = {"status": clean_text(status)}
    for key, value in reply.items():
        if key == "status":
            continue
        if key == "parts":
            if not (isinstance(value, list) and all(type(n) is int and n >= 0 for n in value)):
                return None
        elif key not in _TEXT_FIELDS or not isinstance(value, str) or len(value) > _MAX_FIELD:
            return None
        else:
            out[key] = clean_text(value)
    return out


def death(outcome: dict[str, Any], limits: dict[str, Any], call_like: bool) -> dict[str, Any]:
    """Classify a runner that died or was killed (facts from the kernel, not from the solution)."""
    if outcome.get("oversize"):
        return {"status": "OLE", "message": "result larger than the output limit"}
    if outcome.get("garbled"):
        return {"status": "RE", "message": "the solution wrote garbage on the judge's channel"}
    if outcome["killed"] == "files":
        return {"status": "OLE", "message": "too many files (the working directory's inode limit)"}
    if outcome["killed"] == "memory":
        return {"status": "MLE", "message": "memory limit exceeded (all processes, shared memory and memfds "
                                            "of the solution together)"}
    if outcome["killed"]:
        return {"status": "TLE", "message": f"{outcome['killed']} time limit exceeded"}
    status = outcome.get("status")
    rss_mb = outcome.get("rss_kb", 0) / 1024
    near_memory = rss_mb >= 0.9 * limits.get("memory_mb", 1 << 30)
    if status is None or status < 0:
        return {"status": "RE", "message": "the solution process vanished"}
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return {"status": "TLE", "message": "cpu time limit exceeded"}
        if sig == signal.SIGXFSZ:
            return {"status": "OLE", "message": "output limit exceeded"}
        if near_memory:
            return {"status": "MLE", "message": f"killed by signal {sig} near the memory limit"}
        return {"status": "RE", "message": f"killed by signal {signal.Signals(sig).name}"}
    code = os.WEXITSTATUS(status)
    if code == 0 and not call_like:
        return {"status": "OK"}
    if near_memory:
        return {"status": "MLE", "message": f"exit code {code} near the memory limit"}
    return {"status": "RE", "message": f"exit code {code}" + (" before returning" if code == 0 else "")}


def load_reply(outcome: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    reply = outcome["reply"]
    if reply is None:
        died = death(outcome, limits, call_like=True)
        return {"status": died["status"], "message": "while loading: " + died.get("message", "")}
    status = reply.get("status")
    if status == "ready":
        return {"status": "OK"}
    if status == "compile_error":
        return {"status": "CE", "message": str(reply.get("message", ""))[:2000]}
    if status == "exception" and reply.get("exc") == "MemoryError":
        return {"status": "MLE", "message": "out of memory while loading"}
    if status in ("exception", "exit"):
        return {"status": "RE", "message": f"{reply.get('exc', 'exit')}: {reply.get('message', '')}"[:2000]}
    return {"status": "RE", "message": f"unexpected runner reply {status!r}"}


def test_reply(outcome: dict[str, Any], kind: str, limits: dict[str, Any], out_len: int) -> dict[str, Any]:
    if out_len > limits["output_limit"] or len(outcome["blob"]) > limits["output_limit"] \
            or outcome.get("oversize"):
        return {"status": "OLE", "message": "output limit exceeded"}
    if outcome["killed"] in ("memory", "files"):
        return death(outcome, limits, call_like=kind != "stdin")
    if outcome["cpu_s"] > limits["time_limit_s"]:
        return {"status": "TLE", "message": "cpu time limit exceeded"}
    reply = outcome["reply"]
    if reply is None:
        return death(outcome, limits, call_like=kind != "stdin")
    status = reply.get("status")
    if status == "ok":
        extra = {"message": "result not serializable: " + reply["unencodable"]} \
            if reply.get("unencodable") else {}
        return {"status": "OK", **extra}
    if status == "exception":
        if reply.get("exc") == "MemoryError":
            return {"status": "MLE", "message": "MemoryError"}
        return {"status": "RE", "message": f"{reply.get('exc')}: {reply.get('message', '')}"[:2000]}
    if status == "exit":
        return {"status": "RE", "message": f"exit code {reply.get('code')}"}
    if status == "assert_failed":
        return {"status": "WA", "message": ("assertion failed " + str(reply.get("message", ""))[:500]).strip()}
    if status == "bad_input":
        return {"status": "BAD_INPUT", "message": str(reply.get("message", ""))[:500]}
    if status == "bad_test":
        return {"status": "BAD_TEST", "message": str(reply.get("message", ""))[:500]}
    return {"status": "RE", "message": f"unexpected runner reply {status!r}"}
