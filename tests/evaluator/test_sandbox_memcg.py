"""The memory limit as a hard limit on the whole process tree: where the judge may create a memory cgroup
(the cgroup v1 memory hierarchy on the dev box), each worker's runners join one whose limit is set per
solution, so every process, shared memory segment and memfd of the solution is charged there and the
kernel stops it at the limit even between two samples of the measured accounting. One attack per test;
the worker keeps serving afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from evaluator import _cgroup
from evaluator.sandbox import Limits, SandboxConfig, WorkerProcess

from .conftest import requires_bwrap

LIMITS = Limits(time_limit_s=3.0, wall_limit_s=8.0, memory_mb=256, output_limit=1 << 20, nproc=32)


def memcg_available() -> bool:
    path = _cgroup.create_memory(998) if os.geteuid() == 0 else None
    _cgroup.remove(path)
    return path is not None


requires_memcg = pytest.mark.skipif(not memcg_available(), reason="no memory cgroup the judge may create here")


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    w = WorkerProcess(SandboxConfig.from_env(), slot=902)
    w.start()
    try:
        yield w
        assert run(w, "print(int(input()) * 2)", b"21\n") == ("OK", "42\n")  # still serving
    finally:
        w.kill()


def run(w: WorkerProcess, code: str, data: bytes = b"", limits: Limits = LIMITS) -> tuple[str, str]:
    load = w.load(code, "stdin", None, limits)
    if load["status"] != "OK":
        return load["status"], ""
    reply, stdout, _stderr, _result = w.run("stdin", data, limits)
    return reply["status"], stdout.decode()


def oom_kills(w: WorkerProcess) -> int:
    assert w.memcg is not None
    with open(os.path.join(w.memcg, "memory.oom_control")) as fh:
        return int(dict(line.split() for line in fh)["oom_kill"])


@requires_bwrap
@requires_memcg
def test_the_runner_of_each_solution_joins_a_memory_cgroup_limited_to_its_memory_limit(
        worker: WorkerProcess) -> None:
    assert worker.memcg is not None
    for memory_mb in (128, 512):  # set per solution: a smaller earlier limit never carries over
        limits = Limits(memory_mb=memory_mb, output_limit=1 << 20)
        assert worker.load("print(input())", "stdin", None, limits)["status"] == "OK"
        with open(os.path.join(worker.memcg, "cgroup.procs")) as fh:
            assert len(fh.read().split()) == 1  # the runner, waiting for its first test
        with open(os.path.join(worker.memcg, "memory.limit_in_bytes")) as fh:
            limit = int(fh.read())
        # the solution's limit on top of at most the interpreter's footprint
        assert memory_mb << 20 < limit < (memory_mb + 512) << 20


@requires_bwrap
@requires_memcg
def test_memory_of_a_burst_of_processes_and_shared_memory_is_stopped_at_the_hard_limit(
        worker: WorkerProcess) -> None:
    code = """
import ctypes, mmap, os, time
libc = ctypes.CDLL(None, use_errno=True)
kids = []
for kind in range(6):                                # 6 x 150 MB at once: 900 MB against a 256 MB limit
    pid = os.fork()
    if pid == 0:
        size = 150 << 20
        if kind % 3 == 0:
            buf = bytearray(size)
        elif kind % 3 == 1:
            buf = mmap.mmap(-1, size)                # shared anonymous memory (shmem, as a memfd's)
        else:
            seg = libc.shmget(0, size, 0o1600)
            libc.shmat.restype = ctypes.c_void_p
            buf = (ctypes.c_char * size).from_address(libc.shmat(seg, None, 0))
        for i in range(0, size, 4096):
            buf[i] = 1
        time.sleep(10)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
print("all allocated")
"""
    before = oom_kills(worker)
    assert run(worker, code)[0] == "MLE"
    assert oom_kills(worker) >= before  # the kernel's limit or the worker's sample, whichever came first
    with open(os.path.join(str(worker.memcg), "memory.max_usage_in_bytes")) as fh:
        peak = int(fh.read())
    with open(os.path.join(str(worker.memcg), "memory.limit_in_bytes")) as fh:
        assert peak <= int(fh.read())  # never past the hard limit, whatever the sampling saw


@requires_memcg
def test_a_worker_s_memory_cgroup_is_removed_with_it() -> None:
    worker = WorkerProcess(SandboxConfig.from_env(), slot=903)
    worker.start()
    path = worker.memcg
    assert path is not None and os.path.isdir(path)
    worker.kill()
    assert not os.path.exists(path)
