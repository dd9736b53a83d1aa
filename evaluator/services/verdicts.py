"""Pure helpers that turn evaluator verdicts into what a job stores and what curation is told."""

from __future__ import annotations

from typing import Any

#: longest text kept per field of a per-test result (stdout/stderr excerpts stay readable, rows stay small)
MAX_RESULT_TEXT = 500
#: verdict keys stored in a job's results
VERDICT_KEYS = ("verdict", "passed", "total", "method", "elapsed_s")


def compact_verdict(verdict: dict[str, Any]) -> dict[str, Any]:
    """The part of an evaluator verdict a job stores: the summary, the sandbox and checker used, and per
    test its status, method, times and short excerpts (texts cut to ``MAX_RESULT_TEXT`` characters)."""
    out = {k: verdict.get(k) for k in VERDICT_KEYS}
    out["tests"] = [_compact_test(t) for t in verdict.get("tests") or [] if isinstance(t, dict)]
    for key in ("message", "sandbox", "checker"):
        if verdict.get(key):
            out[key] = _cut(verdict[key])
    return out


def _compact_test(test: dict[str, Any]) -> dict[str, Any]:
    # the runner's per-test record: index, status, method, time_s, wall_s, message, stderr, output
    return {k: _cut(v) for k, v in test.items() if k not in ("input", "expected", "code")}


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_RESULT_TEXT:
        return value[:MAX_RESULT_TEXT] + f"... [{len(value) - MAX_RESULT_TEXT} more characters]"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value[:50]]
    return value


def verdict_reason(verdict: dict[str, Any]) -> str:
    """One line for curation: ``AC 6/6 (method exact)`` or ``WA 2/6: test 3: <its message>`` (tests
    counted from 1)."""
    head = f"{verdict.get('verdict')} {verdict.get('passed')}/{verdict.get('total')}"
    if verdict.get("verdict") == "AC":
        return f"{head} (method {verdict.get('method') or '?'})"
    for test in verdict.get("tests") or []:
        if isinstance(test, dict) and test.get("status") not in (None, "AC"):
            detail = test.get("message") or test.get("status")
            number = test["index"] + 1 if isinstance(test.get("index"), int) else "?"
            return f"{head}: test {number}: {_cut(str(detail))}"
    detail = verdict.get("message")
    return f"{head}: {_cut(str(detail))}" if detail else head


def problem_outcome(problem_id: int, solutions: list[dict[str, Any]]) -> dict[str, Any]:
    """passed (some solution AC) > pending (some IE) > failed (every solution rejected)."""
    accepted = [s for s in solutions if s["verdict"] == "AC"]
    broken = [s for s in solutions if s["verdict"] == "IE"]
    if accepted:
        outcome, reason = "passed", f"reference solution {accepted[0]['solution']} accepted: {accepted[0]['reason']}"
    elif broken:
        outcome = "pending"
        reason = f"infrastructure error judging reference solution {broken[0]['solution']}: {broken[0]['reason']}"
    else:
        outcome, reason = "failed", f"every reference solution was rejected; first: {solutions[0]['reason']}"
    return {"problem": problem_id, "outcome": outcome, "reason": reason, "solutions": solutions}
