"""The judge's public API: ``judge_case``, ``judge_batch`` and ``reward_from_verdict``.

A *case* is one solution with its problem's tests (DESIGN.md section 4)::

    {"id": "p1/s3", "mode": "stdin" | "call", "code": "...", "tests": [{"input": "...", "output": "..."}],
     "fn_name": "Solution().twoSum", "time_limit_s": 2, "memory_mb": 1024, "checker": {"kind": "lenient"}}

Call-mode conventions (argument formats, ListNode/TreeNode, assert tests) are in :mod:`evaluator.calls`,
the checkers in :mod:`evaluator.compare`, the sandbox in :mod:`evaluator.sandbox`.

A *verdict*::

    {"id", "verdict": "AC" | "WA" | "TLE" | "MLE" | "RE" | "CE" | "IE", "passed", "total",
     "method", "tests": [{"index", "status", "method"?, "time_s", "wall_s", "message"?, "stderr"?,
     "output"?}], "elapsed_s", "sandbox": "bwrap" | "rlimit", "checker": kind, "message"?}

- ``verdict`` is the status of the first failing test by index (tests are judged in parallel, so
  with ``stop_on_first_failure`` the tests after it may be skipped); ``AC`` needs every test accepted.
  A test's ``status`` may also be ``OLE`` (output limit exceeded), reported as verdict ``RE``.
- ``method`` is, for ``AC``, the loosest comparator any test needed (``exact`` < ``line_end_normalized``
  < ``whitespace_tokens`` < ``float_tokens`` < ``structural``; ``assert`` for assert tests, ``strict`` /
  ``icpc`` for those checkers) and None otherwise.
- ``IE`` means the judge failed (a malformed case, a test whose input is not valid call arguments, a
  worker that died or hung twice): never the solution's fault, and :func:`reward_from_verdict` gives
  None so a trainer drops the sample instead of punishing it.
- ``tests`` lists the tests that ran, by index; failures carry a ``message``, the tail of ``stderr`` and
  the head of the ``output``.

Execution: a process-wide pool of sandboxed workers (one per core by default) driven by one thread
each. Cases are spread over the workers; when there are fewer cases than workers a case's tests are
split into interleaved chunks judged in parallel. Limits: ``time_limit_s`` CPU seconds per test,
``wall_factor * time_limit_s + wall_extra_s`` wall seconds per test, ``solution_time_limit_s`` wall
seconds for all tests of a solution (then ``TLE``). Watchdog: every request to a worker has a deadline;
a worker that misses it (or dies) is killed and replaced and the request retried once, then ``IE``.
Implementation: :mod:`evaluator.config` (``JudgeConfig``), :mod:`evaluator.cases` (validation, verdict),
:mod:`evaluator.pool` (slots, scheduling, watchdog).
"""


from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .cases import Case
from .checkers import prepare_cases
from .config import JudgeConfig, default_config, usable_cores
from .pool import Batch, JudgePool, get_pool, shutdown_pools

VERDICTS = ("AC", "WA", "TLE", "MLE", "RE", "CE", "IE")
REWARD_MODES = ("pass_fail", "fraction")


def _chunks(n_tests: int, parts: int) -> list[list[int]]:
    parts = max(1, min(parts, n_tests))
    return [list(range(start, n_tests, parts)) for start in range(parts)]


def judge_batch(cases: Sequence[Mapping[str, Any]], *, workers: int | None = None,
                stop_on_first_failure: bool = True, config: JudgeConfig | None = None,
                on_case_done: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Judge ``cases`` in parallel; one verdict per case, in the same order. ``workers`` caps how many
    workers this call uses at once (default: one per core). With ``stop_on_first_failure=False`` every
    test runs, which ``reward_from_verdict(..., "fraction")`` needs. Never raises for a bad case or a
    sandbox failure: those come back as ``IE`` verdicts. ``on_case_done(i)`` (progress bars) is called
    once per case as soon as case ``i`` is decided, in completion order, possibly from a pool thread;
    every call has happened when this returns."""
    config = config or default_config()
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    states = [Case(raw, config, stop_on_first_failure) for raw in cases]
    limit = workers or config.workers or usable_cores()
    prepare_cases(states, config.sandbox, limit)  # C/C++ solutions and checker programs, once per source
    runnable = [s for s in states if s.final is None]
    if on_case_done is not None:
        for i, state in enumerate(states):
            if state.final is not None:  # decided before judging (a malformed case, CE)
                on_case_done(i)
    if runnable:
        pool = get_pool(config, limit)
        parts = max(1, math.ceil(limit / len(runnable)))
        plan = [_chunks(len(s.tests), parts) if s.final is None else [] for s in states]
        batch = Batch(plan, states, limit, pool, on_case_done)
        batch.feed()
        batch.done.wait()
    return [s.verdict() for s in states]


def judge_case(case: Mapping[str, Any], *, stop_on_first_failure: bool = True,
               config: JudgeConfig | None = None) -> dict[str, Any]:
    """Judge one case (its tests in parallel on the pool); see :func:`judge_batch`."""
    return judge_batch([case], stop_on_first_failure=stop_on_first_failure, config=config)[0]


def reward_from_verdict(verdict: Mapping[str, Any], mode: str = "pass_fail") -> float | None:
    """Training reward of a verdict: ``pass_fail`` = 1.0 for AC else 0.0; ``fraction`` = passed / total
    (judge with ``stop_on_first_failure=False``). None for ``IE``: the sample should be dropped."""
    if mode not in REWARD_MODES:
        raise ValueError(f"reward mode {mode!r}: use one of {REWARD_MODES}")
    if verdict.get("verdict") == "IE":
        return None
    if mode == "pass_fail":
        return 1.0 if verdict.get("verdict") == "AC" else 0.0
    total = int(verdict.get("total") or 0)
    return float(verdict.get("passed") or 0) / total if total else 0.0


def with_limits(config: JudgeConfig, **changes: Any) -> JudgeConfig:
    """A copy of ``config`` with some fields changed (frozen dataclass helper)."""
    return replace(config, **changes)


__all__ = ["JudgeConfig", "JudgePool", "judge_batch", "judge_case", "reward_from_verdict", "get_pool", "default_config",
           "shutdown_pools", "usable_cores", "VERDICTS", "REWARD_MODES", "with_limits"]
