"""The worker pool: one thread per slot owns one sandboxed worker and judges jobs (a case, or an
interleaved chunk of a case's tests) from a shared queue. A worker that dies or misses its deadline
(the watchdog in :meth:`evaluator.sandbox.WorkerProcess.request`) is killed, replaced and the request
retried once; a second failure is an infrastructure error (IE).
"""

from __future__ import annotations

import atexit
import collections
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .cases import Case, evaluate_test
from .config import JudgeConfig, default_config, usable_cores
from .interactive import run_test
from .sandbox import SandboxConfig, SandboxError, WorkerProcess


@dataclass
class Job:
    case: Case
    indices: list[int]
    batch: Batch


class Batch:
    """One judge_batch call: feeds at most ``limit`` jobs at a time into the pool."""

    def __init__(self, jobs_per_case: list[list[list[int]]], cases: list[Case], limit: int,
                 pool: JudgePool, on_case_done: Callable[[int], None] | None = None) -> None:
        self.pool = pool
        self.on_case_done = on_case_done
        self.limit = limit
        self.lock = threading.Lock()
        self.pending: collections.deque[Job] = collections.deque()
        self.left_per_case = [len(chunks) for chunks in jobs_per_case]
        self.done = threading.Event()
        self.left = sum(self.left_per_case)
        self.in_flight = 0
        for case, chunks in zip(cases, jobs_per_case):
            for chunk in chunks:
                self.pending.append(Job(case, chunk, self))
        self.index = {id(case): i for i, case in enumerate(cases)}
        if self.left == 0:
            self.done.set()

    def feed(self) -> None:
        with self.lock:
            while self.pending and self.in_flight < self.limit:
                self.in_flight += 1
                self.pool.jobs.put(self.pending.popleft())

    def job_done(self, job: Job) -> None:
        with self.lock:
            self.in_flight -= 1
            self.left -= 1
            i = self.index[id(job.case)]
            self.left_per_case[i] -= 1
            case_done = self.left_per_case[i] == 0
            if case_done:
                job.case.finished = time.monotonic()
            all_done = self.left == 0
        try:
            if case_done and self.on_case_done is not None:
                self.on_case_done(i)
        finally:
            if all_done:  # after the callback: judge_batch returns with every case reported
                self.done.set()
        self.feed()


class Slot:
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

    def _run(self, job: Job) -> None:
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
                reply, stdout, stderr, result = run_test(self.worker, case, test)
            except SandboxError:
                try:  # the retry re-loads the solution on a fresh worker
                    self._ensure_loaded(case)
                    assert self.worker is not None
                    reply, stdout, stderr, result = run_test(self.worker, case, test)
                except SandboxError as exc:
                    message = f"sandbox failure: {exc}"
                    case.record(index, {"index": index, "status": "IE", "message": message, "time_s": 0.0,
                                        "wall_s": 0.0})
                    case.decide("IE", message)
                    return
            rec = evaluate_test(case, test, reply, stdout, stderr, result)
            case.record(index, {"index": index, **rec})
            if rec["status"] == "IE":
                case.decide("IE", str(rec.get("message", "infrastructure error")))
                return

    def _ensure_loaded(self, case: Case) -> None:
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
        self.jobs: queue.Queue[Job | None] = queue.Queue()
        self.lock = threading.Lock()
        self.slots: list[Slot] = []
        self.grow(size)

    @property
    def size(self) -> int:
        return len(self.slots)

    def grow(self, size: int) -> None:
        with self.lock:
            while len(self.slots) < size:
                self.slots.append(Slot(self, len(self.slots)))

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
