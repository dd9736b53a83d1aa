"""Isolation between solutions judged one after the other by the same worker: nothing one leaves
behind (System V IPC objects, POSIX message queues, files, used-up inodes) reaches the next. One attack per test; the
worker keeps serving afterwards."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace

import pytest

from evaluator.sandbox import Limits, SandboxConfig, WorkerProcess

from .conftest import requires_bwrap

LIMITS = Limits(time_limit_s=2.0, wall_limit_s=5.0, memory_mb=256, output_limit=1 << 20, nproc=32)
KEY = 0x5EC0DE

CREATE = {
    "shm": f"print(libc.shmget({KEY}, 4096, 0o1666) >= 0)",
    "sem": f"print(libc.semget({KEY}, 1, 0o1666) >= 0)",
    "msg": f"print(libc.msgget({KEY}, 0o1666) >= 0)",
}
FIND = {
    "shm": f"print(libc.shmget({KEY}, 0, 0) >= 0)",
    "sem": f"print(libc.semget({KEY}, 0, 0) >= 0)",
    "msg": f"print(libc.msgget({KEY}, 0) >= 0)",
}
LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    w = WorkerProcess(SandboxConfig.from_env(), slot=900)
    w.start()
    try:
        yield w
        assert run(w, "print(int(input()) * 2)", b"21\n") == ("OK", "42\n")  # still serving
    finally:
        w.kill()


def run(w: WorkerProcess, code: str, data: bytes = b"") -> tuple[str, str]:
    load = w.load(code, "stdin", None, LIMITS)
    if load["status"] != "OK":
        return load["status"], ""
    reply, stdout, _stderr, _result = w.run("stdin", data, LIMITS)
    return reply["status"], stdout.decode()


@requires_bwrap
@pytest.mark.parametrize("kind", ["shm", "sem", "msg"])
def test_system_v_ipc_objects_of_one_solution_never_reach_the_next(worker: WorkerProcess, kind: str) -> None:
    assert run(worker, LIBC + CREATE[kind]) == ("OK", "True\n")
    assert run(worker, LIBC + FIND[kind]) == ("OK", "False\n")


@requires_bwrap
def test_posix_message_queues_cannot_be_left_for_the_next_solution(worker: WorkerProcess) -> None:
    create = LIBC + "print(libc.mq_open(b'/judge-leak', 0o100 | 2, 0o600, None) >= 0)"
    find = LIBC + "print(libc.mq_open(b'/judge-leak', 2) >= 0)"
    assert run(worker, create) == ("OK", "False\n")
    assert run(worker, find) == ("OK", "False\n")


@requires_bwrap
def test_files_of_one_solution_never_reach_the_next(worker: WorkerProcess) -> None:
    leave = """
import os
os.makedirs("deep/er", exist_ok=True)
open("deep/er/secret.txt", "w").write("answer")
os.chmod("deep/er", 0)
os.chmod("deep", 0)
for target in ("/tmp/leak", "/dev/shm/leak", "../leak"):
    try:
        open(target, "w").write("x")
    except OSError:
        pass
print(sorted(os.listdir(".")))
"""
    look = """
import os
found = []
for root in (".", "..", "/tmp", "/dev/shm"):
    try:
        found += [n for n in os.listdir(root) if "leak" in n or n == "deep"]
    except OSError:
        pass
print(found)
"""
    assert run(worker, leave) == ("OK", "['deep']\n")
    assert run(worker, look) == ("OK", "[]\n")


@requires_bwrap
def test_a_solution_that_creates_too_many_files_is_stopped(worker: WorkerProcess) -> None:
    code = """
import os
for i in range(200):
    os.mkdir(f"d{i}")
    for j in range(100):
        open(f"d{i}/{j}", "w").close()            # 20,000 empty files: no bytes, only inodes
print("done")
"""
    assert run(worker, code)[0] == "OLE"


def own_tmpfs_possible() -> bool:
    return os.geteuid() == 0  # the root bwrap worker holds CAP_SYS_ADMIN to mount it


@requires_bwrap
@pytest.mark.skipif(not own_tmpfs_possible(), reason="the worker may not mount here (wiped directory instead)")
def test_each_solution_gets_a_fresh_tmpfs_whose_inode_cap_the_previous_one_cannot_use_up(
        worker: WorkerProcess) -> None:
    limits = replace(LIMITS, max_files=300)
    fill = """
import os
made = 0
try:
    for i in range(1000):
        os.mkdir(f"d{i}")                            # the cap is the kernel's: ENOSPC at the 301st
        made += 1
except OSError:
    pass
print(made)
"""
    look = """
import os
st = os.statvfs(".")
mount = [line.split(" - ")[1].split()[0] for line in open("/proc/self/mountinfo")
         if line.split()[4] == os.getcwd()]
print(mount, st.f_files - st.f_ffree, st.f_ffree, sorted(os.listdir(".")))
"""
    load = worker.load(fill, "stdin", None, limits)
    assert load["status"] == "OK"
    reply, stdout, _err, _res = worker.run("stdin", b"", limits)
    assert (reply["status"], stdout) == ("OLE", b"300\n")
    assert worker.load(look, "stdin", None, limits)["status"] == "OK"
    reply, stdout, _err, _res = worker.run("stdin", b"", limits)
    assert (reply["status"], stdout.decode()) == ("OK", "['tmpfs'] 1 300 []\n")
