"""Adversarial sandbox tests: one escape attempt each; every one is contained and the judge keeps
serving the next case."""

from __future__ import annotations

import os
import socket
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evaluator import judge_case
from evaluator.runner import get_pool

from .conftest import FAST, requires_bwrap, stdin_case

PROJECT = Path(__file__).resolve().parents[2]


def judge(code: str, tests: list[tuple[str, str]] | None = None, **kw: Any) -> dict[str, Any]:
    return judge_case(stdin_case(code, tests or [("", "")]), config=FAST, **kw)


def worker_pids() -> set[int]:
    return {s.worker.proc.pid for s in get_pool(FAST).slots if s.worker and s.worker.proc and s.worker.alive}


@pytest.fixture(autouse=True)
def judge_keeps_serving() -> Any:
    """After every escape attempt a normal case must still be judged correctly."""
    yield
    v = judge_case(stdin_case("print(int(input()) * 2)", [("21\n", "42\n")]), config=FAST)
    assert v["verdict"] == "AC", v


def host_processes_named(tag: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if Path(f"/proc/{name}/comm").read_text().strip() == tag:
                    found.append(int(name))
            except OSError:
                pass
    return found


@requires_bwrap
def test_network_connections_are_impossible() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = f"""
import socket
for host, port in (("127.0.0.1", {port}), ("1.1.1.1", 53), ("8.8.8.8", 443)):
    try:
        socket.create_connection((host, port), timeout=0.5)
        print("connected", host)
    except OSError:
        print("blocked")
"""
    try:
        v = judge(code, [("", "blocked\nblocked\nblocked\n")])
    finally:
        server.close()
    assert v["verdict"] == "AC", v


@requires_bwrap
def test_writing_outside_the_working_directory_fails() -> None:
    tag = uuid.uuid4().hex
    targets = [PROJECT / f"PWNED-{tag}", Path("/tmp") / f"PWNED-{tag}", Path.home() / f"PWNED-{tag}"]
    code = "import os\n" + "".join(
        f"try:\n    open({str(p)!r}, 'w').write('x')\nexcept OSError:\n    pass\n" for p in targets) + (
        "open('inside.txt', 'w').write('ok')\nprint(open('inside.txt').read())\n")
    v = judge(code, [("", "ok")])
    assert v["verdict"] == "AC", v  # writing the working directory is fine
    assert not any(p.exists() for p in targets)


@requires_bwrap
def test_the_project_settings_file_is_not_readable() -> None:
    settings = PROJECT / "webapp" / "settings.py"
    code = f"""
try:
    print(open({str(settings)!r}).read()[:20])
except OSError:
    print("hidden")
"""
    assert judge(code, [("", "hidden")])["verdict"] == "AC"


def test_environment_secrets_of_the_judge_are_not_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MICROCODER_FAKE_SECRET", "s3cr3t-value")
    code = """
import os
seen = [k for k, v in os.environ.items() if "s3cr3t" in v or k == "MICROCODER_FAKE_SECRET"]
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            if b"s3cr3t" in open(f"/proc/{pid}/environ", "rb").read():
                seen.append(pid)
        except OSError:
            pass
print(seen)
"""
    assert judge(code, [("", "[]")])["verdict"] == "AC"


def test_a_fork_bomb_is_contained() -> None:
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    v = judge(code)
    assert v["verdict"] in ("TLE", "RE"), v


def test_a_memory_bomb_is_mle() -> None:
    v = judge("blocks = []\nwhile True:\n    blocks.append(bytearray(10 ** 7))\n")
    assert v["verdict"] == "MLE", v


def test_an_infinite_loop_is_tle() -> None:
    start = time.monotonic()
    v = judge("while True:\n    pass\n")
    assert v["verdict"] == "TLE"
    test = v["tests"][0]
    # stopped by the CPU limit, or by the wall limit when the host is too loaded to give it the CPU
    assert test["time_s"] >= FAST.time_limit_s or test["wall_s"] >= FAST.time_limit_s * FAST.wall_factor
    assert time.monotonic() - start < 10


def test_sleeping_past_the_limit_is_tle_by_wall_clock() -> None:
    v = judge("import time\ntime.sleep(30)\n")
    assert v["verdict"] == "TLE"
    assert v["tests"][0]["wall_s"] < 5


def test_an_output_flood_is_output_limit_exceeded() -> None:
    v = judge("while True:\n    print('x' * 10000)\n")
    assert v["verdict"] == "RE" and v["tests"][0]["status"] == "OLE", v


def test_closing_stdout_only_hurts_the_solution() -> None:
    v = judge("import os, sys\nos.close(1)\nos.close(0)\nsys.stdout.close()\nprint('x')\n", [("", "x")])
    assert v["verdict"] in ("RE", "WA"), v


def test_killing_the_parent_does_not_kill_the_judge() -> None:
    judge("print(1)", [("", "1")])
    before = worker_pids()
    code = """
import os, signal
for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGSTOP):
    for pid in {os.getppid(), 1}:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
print("done")
"""
    v = judge(code, [("", "done")])
    assert v["verdict"] == "AC", v
    assert worker_pids() == before  # nothing had to be restarted


def test_a_background_process_does_not_outlive_the_run() -> None:
    tag = "mc" + uuid.uuid4().hex[:10]
    code = f"""
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, {tag.encode()!r}, 0, 0, 0)
        time.sleep(60)
    os._exit(0)
time.sleep(0.2)
print("parent done")
"""
    v = judge(code, [("", "parent done")])
    assert v["verdict"] == "AC", v
    deadline = time.monotonic() + 2
    while host_processes_named(tag) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert host_processes_named(tag) == []


def test_unbounded_recursion_through_c_frames_is_stopped() -> None:
    # lru_cache recursion consumes the C stack: it ends in a stack overflow (signal) or MemoryError
    code = ("import sys, functools\nsys.setrecursionlimit(10 ** 9)\n@functools.lru_cache(None)\n"
            "def f(n):\n    return f(n + 1) + 1\nprint(f(0))\n")
    v = judge(code)
    assert v["verdict"] in ("RE", "MLE", "TLE"), v


def test_a_solution_cannot_find_the_expected_output_of_another_test() -> None:
    secrets = [f"ANSWER-{uuid.uuid4().hex}" for _ in range(3)]
    code = """
import gc, os
found = set()
def scan(text):
    for word in text.replace("\\x00", " ").split():
        if word.startswith("ANSWER-"):
            found.add(word)
# The interpreter's read-only binds hold host files only (they can sit under /tmp in a CI checkout).
SKIP = set(%r)
for top in (os.getcwd(), "/tmp", "/judge", os.path.expanduser("~")):
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP]
        for name in files:
            try:
                scan(open(os.path.join(root, name), errors="replace").read(1 << 20))
            except OSError:
                pass
for pid in os.listdir("/proc"):
    for what in ("cmdline", "environ"):
        try:
            scan(open(f"/proc/{pid}/{what}", errors="replace").read())
        except OSError:
            pass
for obj in gc.get_objects():
    if isinstance(obj, (list, dict, tuple)):
        scan(repr(obj)[:100000])
print(" ".join(sorted(found)) or "nothing")
"""
    code = code.replace("%r", repr(sorted({sys.prefix, sys.base_prefix, sys.exec_prefix})), 1)
    tests = [(f"{i}\n", secret) for i, secret in enumerate(secrets)]
    v = judge(code, tests, stop_on_first_failure=False)
    assert [t["status"] for t in v["tests"]] == ["WA", "WA", "WA"], v
    assert all(t["output"].strip() == "nothing" for t in v["tests"]), v


@requires_bwrap
def test_a_python_installation_under_tmp_stays_visible_inside_the_private_tmp() -> None:
    """A CI checkout under /tmp puts the virtualenv there; the sandbox's own /tmp must not hide it."""
    import dataclasses
    import subprocess

    venv = Path("/tmp") / f"microcoder-venv-{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
        config = dataclasses.replace(FAST, sandbox=dataclasses.replace(
            FAST.sandbox, mode="bwrap", python=str(venv / "bin" / "python")))
        v = judge_case(stdin_case("import sys\nprint(sys.prefix)\n", [("", str(venv) + "\n")]), config=config)
        assert (v["verdict"], v["sandbox"]) == ("AC", "bwrap"), v
    finally:
        subprocess.run(["rm", "-rf", str(venv)], check=False)


def test_garbage_written_on_the_judges_channel_is_the_solutions_failure_not_an_infrastructure_error() -> None:
    code = """
import os, time
for fd in range(3, 256):
    try:
        if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
            os.write(fd, b"\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x00xx")
    except OSError:
        pass
time.sleep(30)
"""
    v = judge(code, [("", "1\n")])
    assert v["verdict"] in ("RE", "TLE"), v  # never IE: the hostile sample must keep its negative reward
    assert judge("print(1)\n", [("", "1\n")])["verdict"] == "AC"


@requires_bwrap
def test_cpu_spent_by_forked_helpers_counts_against_the_time_limit() -> None:
    code = """
import os
r, w = os.pipe()
for _ in range(4):
    if os.fork() == 0:
        x = 0
        for i in range(12_000_000):
            x += i
        os.write(w, b"x")
        os._exit(0)
done = b""
while len(done) < 4:
    done += os.read(r, 4)   # the parent only waits: its own CPU stays near zero
print(1)
"""
    # a wall limit far above the CPU limit: on a busy box only a CPU verdict shows the helpers counted
    v = judge_case(stdin_case(code, [("", "1\\n")]), config=replace(FAST, wall_factor=12.0))
    assert v["verdict"] == "TLE", v
    assert "cpu" in v["tests"][0].get("message", ""), v
