"""The seccomp filter: each system call a judged program never needs fails with EPERM from a judged
Python solution (through ctypes), while ordinary solutions (threads, a Python subprocess, numpy) still
pass. One denied call per test; the judge keeps serving afterwards."""

from __future__ import annotations

import platform
from dataclasses import replace
from typing import Any

import pytest

from evaluator import judge_case

from .conftest import FAST, stdin_case

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="system call numbers are x86_64's")

# (name, x86_64 number, arguments): arguments that would succeed (or fail otherwise than EPERM) unfiltered
DENIED = [
    ("unshare", 272, (0x10000000,)),                 # CLONE_NEWUSER
    ("clone_newuser", 56, (0x10000000 | 17, 0, 0, 0, 0)),
    ("clone_newnet", 56, (0x40000000 | 17, 0, 0, 0, 0)),
    ("setns", 308, (0, 0)),
    ("mount", 165, (0, 0, 0, 0, 0)),
    ("umount2", 166, (0, 0)),
    ("pivot_root", 155, (0, 0)),
    ("ptrace", 101, (0, 0, 0, 0)),                   # PTRACE_TRACEME
    ("keyctl", 250, (0, -3, 0)),                     # KEYCTL_GET_KEYRING_ID of the session keyring
    ("add_key", 248, (0, 0, 0, 0, 0)),
    ("request_key", 249, (0, 0, 0, 0)),
    ("bpf", 321, (0, 0, 0)),
    ("perf_event_open", 298, (0, 0, -1, -1, 0)),
    ("kexec_load", 246, (0, 0, 0, 0)),
    ("init_module", 175, (0, 0, 0)),
    ("finit_module", 313, (-1, 0, 0)),
    ("delete_module", 176, (0, 0)),
    ("userfaultfd", 323, (0,)),
    ("io_uring_setup", 425, (1, 0)),
    ("process_vm_readv", 310, (1, 0, 0, 0, 0, 0)),
    ("process_vm_writev", 311, (1, 0, 0, 0, 0, 0)),
    ("personality_read_implies_exec", 135, (0x0400000,)),
    ("personality_no_randomize", 135, (0x0040000,)),
    ("mq_open", 240, (0, 0, 0, 0)),
]


#: ordinary programs get an ordinary memory limit (threads reserve 64 MB of stack each under RLIMIT_AS)
ROOMY = replace(FAST, memory_mb=1024)


def judge(code: str, expected: str) -> dict[str, Any]:
    return judge_case(stdin_case(code, [("", expected)]), config=ROOMY)


@pytest.fixture(autouse=True)
def judge_keeps_serving() -> Any:
    yield
    v = judge_case(stdin_case("print(int(input()) * 2)", [("21\n", "42\n")]), config=FAST)
    assert v["verdict"] == "AC", v


@pytest.mark.parametrize(("name", "number", "args"), DENIED, ids=[d[0] for d in DENIED])
def test_a_denied_system_call_fails_with_eperm(name: str, number: int, args: tuple[int, ...]) -> None:
    code = f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
result = libc.syscall({number}, *[ctypes.c_long(a) for a in {args!r}])
if result == 0 and {number} == 56:
    os._exit(0)                                  # the child of a clone that was let through
print(result, ctypes.get_errno())
"""
    v = judge(code, "-1 1\n")  # EPERM
    assert v["verdict"] == "AC", (name, v["tests"][0])


def test_the_personality_query_still_works() -> None:
    code = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nprint(libc.personality(0xffffffff) >= 0)\n"
    assert judge(code, "True\n")["verdict"] == "AC"


def test_threads_still_work() -> None:
    code = """
import threading
from concurrent.futures import ThreadPoolExecutor
with ThreadPoolExecutor(4) as pool:
    print(sum(pool.map(lambda x: x * x, range(100))))
t = threading.Thread(target=print, args=("thread",))
t.start()
t.join()
"""
    assert judge(code, "328350\nthread\n")["verdict"] == "AC"


def test_a_python_subprocess_still_works() -> None:
    code = "import subprocess, sys\nprint(subprocess.check_output([sys.executable, '-c', 'print(6 * 7)'], text=True).strip())\n"
    assert judge(code, "42\n")["verdict"] == "AC"


def test_numpy_still_works() -> None:
    pytest.importorskip("numpy")
    code = "import numpy as np\na = np.arange(12).reshape(3, 4)\nprint(int((a @ a.T).trace()))\n"
    assert judge(code, "506\n")["verdict"] == "AC"
