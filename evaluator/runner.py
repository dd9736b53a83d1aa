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
"""

from __future__ import annotations

import atexit
import collections
import math
import os
import queue
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from . import calls
from .compare import Checker, compare_output, compare_value, parse_checker
from .sandbox import Limits, SandboxConfig, SandboxError, WorkerProcess

VERDICTS = ("AC", "WA", "TLE", "MLE", "RE", "CE", "IE")
REWARD_MODES = ("pass_fail", "fraction")
_METHOD_RANK = {name: i for i, name in enumerate(
    ("exact", "strict", "icpc", "assert", "line_end_normalized", "whitespace_tokens", "float_tokens",
     "structural"))}
_TAIL = 1000
_HEAD = 200


@dataclass(frozen=True)
class JudgeConfig:
    """Defaults for cases that do not set their own limits, and the pool's shape."""

    time_limit_s: float = field(default=2.0, metadata={"help": "CPU seconds per test (case: time_limit_s)."})
    memory_mb: int = field(default=1024, metadata={"help": "Memory per solution in MiB (case: memory_mb)."})
    wall_factor: float = field(default=3.0, metadata={"help": "Wall limit per test = factor * time limit "
                                                      "+ wall_extra_s (load on the host inflates wall time)."})
    wall_extra_s: float = field(default=1.0, metadata={"help": "See wall_factor."})
    solution_time_limit_s: float = field(default=120.0, metadata={
        "help": "Wall seconds for all tests of one solution; beyond it the remaining tests are TLE."})
    output_limit_mb: int = field(default=32, metadata={"help": "Stdout / result size cap per test."})
    nproc: int = field(default=64, metadata={"help": "Processes and threads a solution may hold."})
    nofile: int = field(default=256, metadata={"help": "Open files a solution may hold."})
    load_time_limit_s: float = field(default=10.0, metadata={
        "help": "Compiling (and, in call mode, executing the module) of a solution."})
    watchdog_grace_s: float = field(default=10.0, metadata={
        "help": "Extra seconds a worker may take past its own deadlines before it is killed and replaced."})
    workers: int | None = field(default=None, metadata={"help": "Pool size; None = usable CPU cores."})
    sandbox: SandboxConfig = field(default_factory=SandboxConfig.from_env, metadata={
        "help": "How workers are sandboxed (see evaluator.sandbox)."})

    def __post_init__(self) -> None:
        for name in ("time_limit_s", "memory_mb", "wall_factor", "solution_time_limit_s", "output_limit_mb",
                     "nproc", "nofile", "load_time_limit_s", "watchdog_grace_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"JudgeConfig.{name} must be positive, got {getattr(self, name)!r}")
        if self.wall_factor < 1:
            raise ValueError("wall_factor below 1 would kill programs before their CPU limit")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be at least 1 (or None for one per core)")

    def limits(self, time_limit_s: float, memory_mb: int) -> Limits:
        return Limits(time_limit_s=time_limit_s, wall_limit_s=time_limit_s * self.wall_factor + self.wall_extra_s,
                      memory_mb=memory_mb, output_limit=self.output_limit_mb << 20, nproc=self.nproc,
                      nofile=self.nofile, load_limit_s=self.load_time_limit_s,
                      cpu_budget_s=self.solution_time_limit_s + self.load_time_limit_s,
                      watchdog_grace_s=self.watchdog_grace_s)


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


# ------------------------------------------------------------------------------------------ cases
class InvalidCase(ValueError):
    """The case cannot be judged as given (becomes an IE verdict)."""


@dataclass
class _Test:
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


class _Case:
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
        self.tests: list[_Test] = []
        self.code = ""
        self.mode = "stdin"
        self.fn_name: str | None = None
        self.checker = Checker()
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

    def _test(self, i: int, test: Mapping[str, Any]) -> _Test:
        expected = _text(test.get("output"), f"test {i} output")
        if self.mode == "call" and test.get("assert"):
            source = _text(test.get("assert"), f"test {i} assert")
            return _Test("assert", source.encode(), expected, b"")
        raw_input = test.get("input")
        if self.mode == "call" and isinstance(raw_input, list):
            import json

            raw_input = "\n".join(json.dumps(arg) for arg in raw_input)
        text = _text(raw_input, f"test {i} input")
        return _Test(self.mode, text.encode("utf-8", "surrogateescape"), expected,
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
                               "sandbox": self.sandbox or None, "checker": self.checker.kind}
        failing = next((r for r in records if r["status"] != "AC"), None)
        if self.final is not None:
            out["verdict"] = self.final["verdict"]
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
def _evaluate(case: _Case, test: _Test, reply: dict[str, Any], stdout: bytes, stderr: bytes,
              result: bytes) -> dict[str, Any]:
    status = str(reply.get("status"))
    rec: dict[str, Any] = {"status": status, "time_s": reply.get("cpu_s", 0.0), "wall_s": reply.get("wall_s", 0.0)}
    if status == "OK":
        if test.kind == "assert":
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
        if stderr:
            rec["stderr"] = stderr[-_TAIL:].decode("utf-8", "replace")
        if stdout and "output" not in rec:
            rec["output"] = stdout[:_HEAD].decode("utf-8", "replace")
    return rec


@dataclass
class _Job:
    case: _Case
    indices: list[int]
    batch: _Batch


class _Batch:
    """One judge_batch call: feeds at most ``limit`` jobs at a time into the pool."""

    def __init__(self, jobs_per_case: list[list[list[int]]], cases: list[_Case], limit: int,
                 pool: JudgePool) -> None:
        self.pool = pool
        self.limit = limit
        self.lock = threading.Lock()
        self.pending: collections.deque[_Job] = collections.deque()
        self.left_per_case = [len(chunks) for chunks in jobs_per_case]
        self.done = threading.Event()
        self.left = sum(self.left_per_case)
        self.in_flight = 0
        for case, chunks in zip(cases, jobs_per_case):
            for chunk in chunks:
                self.pending.append(_Job(case, chunk, self))
        self.index = {id(case): i for i, case in enumerate(cases)}
        if self.left == 0:
            self.done.set()

    def feed(self) -> None:
        with self.lock:
            while self.pending and self.in_flight < self.limit:
                self.in_flight += 1
                self.pool.jobs.put(self.pending.popleft())

    def job_done(self, job: _Job) -> None:
        with self.lock:
            self.in_flight -= 1
            self.left -= 1
            i = self.index[id(job.case)]
            self.left_per_case[i] -= 1
            if self.left_per_case[i] == 0:
                job.case.finished = time.monotonic()
            if self.left == 0:
                self.done.set()
        self.feed()


class _Slot:
    """A pool slot: one thread that owns (and replaces) one sandboxed worker."""

    def __init__(self, pool: JudgePool, index: int) -> None:
        self.pool = pool
        self.index = index
        self.worker: WorkerProcess | None = None
        self.thread = threading.Thread(target=self._loop, name=f"judge-slot-{index}", daemon=True)
        self.thread.start()

    def _ensure(self) -> WorkerProcess:
        if self.worker is None or not self.worker.alive:
            if self.worker is not None:
                self.worker.kill()
            self.worker = None
            worker = WorkerProcess(self.pool.sandbox, self.index)
            worker.start()
            self.worker = worker
        return self.worker

    def _loop(self) -> None:
        while True:
            job = self.pool.jobs.get()
            if job is None:
                break
            try:
                self._run(job)
            except Exception as exc:  # noqa: BLE001 - a judge bug must not kill the slot
                job.case.decide("IE", f"judge error: {type(exc).__name__}: {exc}")
            finally:
                job.batch.job_done(job)
                if self.pool.jobs.empty() and self.worker is not None and self.worker.alive:
                    try:
                        self.worker.unload()  # free the idle runner's memory
                    except SandboxError:
                        self.worker.kill()
        if self.worker is not None:
            self.worker.kill()

    def _with_retry(self, action: Any) -> Any:
        """Run ``action(worker)``; on an infrastructure failure replace the worker and retry once."""
        try:
            return action(self._ensure())
        except SandboxError:
            if self.worker is not None:
                self.worker.kill()
            self.worker = None
            return action(self._ensure())

    def _run(self, job: _Job) -> None:
        case = job.case
        if case.should_stop():
            return
        case.begin()
        try:
            load = self._with_retry(lambda w: w.load(case.code, case.mode, case.fn_name, case.limits))
        except SandboxError as exc:
            case.decide("IE", f"sandbox failure: {exc}")
            return
        assert self.worker is not None
        case.sandbox = self.worker.sandbox
        if load.get("status") != "OK":
            case.decide(str(load.get("status")), str(load.get("message", "")))
            return
        for index in job.indices:
            if case.should_stop():
                return
            if case.over_budget():
                case.timed_out = True
                return
            test = case.tests[index]
            try:
                reply, stdout, stderr, result = self.worker.run(test.kind, test.payload, case.limits)
            except SandboxError:
                try:  # the retry re-loads the solution on a fresh worker
                    self._ensure_loaded(case)
                    assert self.worker is not None
                    reply, stdout, stderr, result = self.worker.run(test.kind, test.payload, case.limits)
                except SandboxError as exc:
                    message = f"sandbox failure: {exc}"
                    case.record(index, {"index": index, "status": "IE", "message": message, "time_s": 0.0,
                                        "wall_s": 0.0})
                    case.decide("IE", message)
                    return
            rec = _evaluate(case, test, reply, stdout, stderr, result)
            case.record(index, {"index": index, **rec})
            if rec["status"] == "IE":
                case.decide("IE", str(rec.get("message", "infrastructure error")))
                return

    def _ensure_loaded(self, case: _Case) -> None:
        if self.worker is not None:
            self.worker.kill()
        self.worker = None
        load = self._ensure().load(case.code, case.mode, case.fn_name, case.limits)
        if load.get("status") != "OK":
            raise SandboxError(f"re-load after a worker failure answered {load.get('status')}")


class JudgePool:
    """Slots (threads + sandboxed workers) shared by every judge_batch call of the process."""

    def __init__(self, size: int, sandbox: SandboxConfig) -> None:
        self.sandbox = sandbox
        self.jobs: queue.Queue[_Job | None] = queue.Queue()
        self.lock = threading.Lock()
        self.slots: list[_Slot] = []
        self.grow(size)

    @property
    def size(self) -> int:
        return len(self.slots)

    def grow(self, size: int) -> None:
        with self.lock:
            while len(self.slots) < size:
                self.slots.append(_Slot(self, len(self.slots)))

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Stop the slots after their current job (at most ``timeout_s``), then kill any worker left."""
        with self.lock:
            for _ in self.slots:
                self.jobs.put(None)
            deadline = time.monotonic() + timeout_s
            for slot in self.slots:
                slot.thread.join(timeout=max(0.0, deadline - time.monotonic()))
                if slot.worker is not None:
                    slot.worker.kill()
            self.slots.clear()


_pool_lock = threading.Lock()
_pools: dict[SandboxConfig, JudgePool] = {}


def get_pool(config: JudgeConfig | None = None, workers: int | None = None) -> JudgePool:
    """The process-wide pool for ``config.sandbox``, grown to at least ``workers`` slots."""
    config = config or default_config()
    want = workers or config.workers or usable_cores()
    with _pool_lock:
        pool = _pools.get(config.sandbox)
        if pool is None:
            pool = _pools[config.sandbox] = JudgePool(want, config.sandbox)
    pool.grow(want)
    return pool


def shutdown_pools() -> None:
    """Stop every worker (also run at interpreter exit)."""
    with _pool_lock:
        pools = list(_pools.values())
        _pools.clear()
    for pool in pools:
        pool.shutdown()


atexit.register(shutdown_pools)

_default_config: JudgeConfig | None = None


def default_config() -> JudgeConfig:
    global _default_config
    if _default_config is None:
        _default_config = JudgeConfig()
    return _default_config


def _chunks(n_tests: int, parts: int) -> list[list[int]]:
    parts = max(1, min(parts, n_tests))
    return [list(range(start, n_tests, parts)) for start in range(parts)]


def judge_batch(cases: Sequence[Mapping[str, Any]], *, workers: int | None = None,
                stop_on_first_failure: bool = True, config: JudgeConfig | None = None) -> list[dict[str, Any]]:
    """Judge ``cases`` in parallel; one verdict per case, in the same order. ``workers`` caps how many
    workers this call uses at once (default: one per core). With ``stop_on_first_failure=False`` every
    test runs, which ``reward_from_verdict(..., "fraction")`` needs. Never raises for a bad case or a
    sandbox failure: those come back as ``IE`` verdicts."""
    config = config or default_config()
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    states = [_Case(raw, config, stop_on_first_failure) for raw in cases]
    runnable = [s for s in states if s.final is None]
    limit = workers or config.workers or usable_cores()
    if runnable:
        pool = get_pool(config, limit)
        parts = max(1, math.ceil(limit / len(runnable)))
        plan = [_chunks(len(s.tests), parts) if s.final is None else [] for s in states]
        batch = _Batch(plan, states, limit, pool)
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


__all__ = ["JudgeConfig", "JudgePool", "judge_batch", "judge_case", "reward_from_verdict", "get_pool",
           "shutdown_pools", "usable_cores", "VERDICTS", "REWARD_MODES", "with_limits"]
