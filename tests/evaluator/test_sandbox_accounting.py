"""Accounting across processes: the CPU time and memory of every process of a solution count against
its limits (helpers it forks, double-forked orphans, auto-reaped children, System V shared memory,
memfds). One attack per test; the judge keeps serving afterwards."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import pytest

from evaluator import judge_case

from .conftest import FAST, requires_bwrap, stdin_case

#: a burst of pure-Python CPU of about 0.35 s on the dev box (each helper stays under the 1 s limit)
BURN = "x = 0\nfor i in range(6_000_000):\n    x += i\n"
#: a wall limit far above the CPU limit: on a busy box the helpers' 1.75 s of CPU may take many seconds,
#: and only a verdict on CPU time shows that their time was counted
PATIENT = replace(FAST, wall_factor=12.0)


def judge(code: str, **kw: Any) -> dict[str, Any]:
    return judge_case(stdin_case(code, [("", "1\n")]), config=kw.pop("config", FAST), **kw)


@pytest.fixture(autouse=True)
def judge_keeps_serving() -> Any:
    yield
    v = judge_case(stdin_case("print(int(input()) * 2)", [("21\n", "42\n")]), config=FAST)
    assert v["verdict"] == "AC", v


def indent(code: str, by: str) -> str:
    return "".join(by + line + "\n" for line in code.splitlines())


@requires_bwrap
def test_cpu_of_double_forked_orphans_counts_against_the_time_limit() -> None:
    code = f"""
import os
r, w = os.pipe()
for _ in range(5):
    if os.fork() == 0:
        if os.fork() == 0:          # the grandchild is re-parented away from the solution
{indent(BURN, "            ")}
            os.write(w, b"x")
        os._exit(0)
    os.wait()
done = b""
while len(done) < 5:
    done += os.read(r, 5)
print(1)
"""
    v = judge(code, config=PATIENT)
    assert (v["verdict"], v["tests"][0].get("message")) == ("TLE", "cpu time limit exceeded"), v


@requires_bwrap
def test_cpu_of_auto_reaped_children_counts_against_the_time_limit() -> None:
    code = f"""
import os, signal
signal.signal(signal.SIGCHLD, signal.SIG_IGN)   # the kernel reaps them and keeps their time nowhere
r, w = os.pipe()
for _ in range(5):
    if os.fork() == 0:
{indent(BURN, "        ")}
        os.write(w, b"x")
        os._exit(0)
    os.read(r, 1)
print(1)
"""
    v = judge(code, config=PATIENT)
    assert (v["verdict"], v["tests"][0].get("message")) == ("TLE", "cpu time limit exceeded"), v


@requires_bwrap
def test_memory_of_several_processes_counts_against_the_memory_limit() -> None:
    code = """
import os, time
r, w = os.pipe()
kids = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        block = bytearray(90 << 20)          # 90 MB each, under the 256 MB limit alone
        for i in range(0, len(block), 4096):
            block[i] = 1
        os.write(w, b"x")
        time.sleep(3)
        os._exit(0)
    kids.append(pid)
done = b""
while len(done) < 4:
    done += os.read(r, 4)
time.sleep(0.3)
print(1)
"""
    v = judge(code)
    assert v["verdict"] == "MLE", v


@requires_bwrap
def test_unattached_system_v_shared_memory_counts_against_the_memory_limit() -> None:
    code = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
for n in range(4):
    seg = libc.shmget(0, 90 << 20, 0o1600)          # IPC_PRIVATE, IPC_CREAT, 0600
    addr = libc.shmat(seg, None, 0)
    ctypes.memset(addr, 1, 90 << 20)
    libc.shmdt(ctypes.c_void_p(addr))              # detached: in no process's address space any more
print(1)
"""
    v = judge(code)
    assert v["verdict"] == "MLE", v


@requires_bwrap
def test_memfds_held_open_count_against_the_memory_limit() -> None:
    code = """
import mmap, os
fds = []
for n in range(40):
    fd = os.memfd_create(f"hoard{n}")
    os.ftruncate(fd, 8 << 20)                      # under the output limit each (RLIMIT_FSIZE)
    with mmap.mmap(fd, 8 << 20) as m:
        for i in range(0, 8 << 20, 4096):
            m[i] = 1
    fds.append(fd)                                  # unmapped, still held: 320 MB in all
print(1)
"""
    v = judge(code, config=replace(FAST, output_limit_mb=10))
    assert v["verdict"] == "MLE", v


@requires_bwrap
def test_a_program_that_forks_a_small_helper_still_passes() -> None:
    code = """
import subprocess, sys
out = subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True, text=True).stdout
print(out.strip())
"""
    assert judge(code)["verdict"] == "AC"


def cgroup_v2_available() -> bool:
    from evaluator import _cgroup

    path = _cgroup.create(999) if os.geteuid() == 0 else None
    _cgroup.remove(path)
    return path is not None


requires_cgroup = pytest.mark.skipif(not cgroup_v2_available(), reason="no cgroup v2 hierarchy the judge may write")


@requires_bwrap
@requires_cgroup
def test_cpu_of_auto_reaped_bursts_shorter_than_a_sample_counts_with_a_cgroup() -> None:
    code = """
import os, signal
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
r, w = os.pipe()
for _ in range(150):
    if os.fork() == 0:
        x = 0
        for i in range(150_000):                     # about 10 ms each, 1.5 s in all
            x += i
        os.write(w, b"x")
        os._exit(0)
    os.read(r, 1)
print(1)
"""
    v = judge(code, config=PATIENT)
    assert (v["verdict"], v["tests"][0].get("message")) == ("TLE", "cpu time limit exceeded"), v


@requires_cgroup
def test_a_worker_s_cgroup_is_removed_with_it() -> None:
    from evaluator.sandbox import SandboxConfig, WorkerProcess

    worker = WorkerProcess(SandboxConfig.from_env(), slot=901)
    worker.start()
    path = worker.cgroup
    assert path is not None and os.path.isdir(path)
    worker.kill()
    assert not os.path.exists(path)


@requires_bwrap
def test_files_written_to_the_working_directory_count_against_the_memory_limit() -> None:
    code = """
block = b"x" * (1 << 20)
for n in range(300):                                 # 300 MB of 1 MB files on the in-memory tmpfs
    with open(f"f{n}", "wb") as fh:
        fh.write(block)
print(1)
"""
    v = judge(code)
    assert v["verdict"] == "MLE", v
