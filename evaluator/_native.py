"""Native (C/C++) solutions inside the sandbox: the runner keeps the compiled executable in a sealed memfd
and, per test, starts it on the test's fds 0, 1, 2 with ``RLIMIT_AS`` set to the solution's memory limit.
The worker's limits see the child (it is a descendant of the runner), so CPU time, wall time, output size
and strays are handled as for Python.

Loaded next to ``_worker.py`` / ``_runner.py`` (standard library only, bind-mounted into the sandbox).
"""

from __future__ import annotations

import os
import resource
import signal
from typing import Any

_MB = 1 << 20
_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
_PRLIMIT = "/usr/bin/prlimit"  # util-linux (Essential in Debian)
_F_ADD_SEALS, _F_SEAL_SEAL, _F_SEAL_SHRINK, _F_SEAL_GROW, _F_SEAL_WRITE = 1033, 1, 2, 4, 8


def binary_fd(binary: bytes) -> int:
    """A sealed, close-on-exec memfd holding ``binary`` (nothing can change it afterwards)."""
    fd = os.memfd_create("solution", os.MFD_CLOEXEC | getattr(os, "MFD_ALLOW_SEALING", 2))
    _write_all(fd, binary)
    os.fchmod(fd, 0o555)
    try:
        import fcntl

        fcntl.fcntl(fd, _F_ADD_SEALS, _F_SEAL_SEAL | _F_SEAL_SHRINK | _F_SEAL_GROW | _F_SEAL_WRITE)
    except OSError:
        pass
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def limit_runner(limits: dict[str, Any]) -> bool:
    """In the runner of a native solution (which runs no Python solution code): set its own
    ``RLIMIT_AS`` to the solution's memory limit, soft and hard, so every test's program inherits it
    and starts with one exec. False (nothing changed) when the runner itself would not fit under it."""
    memory = int(limits["memory_mb"]) * _MB
    with open("/proc/self/statm", "rb") as fh:
        size = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    if size + 64 * _MB > memory:
        return False
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return True


def run_binary(fd: int, limits: dict[str, Any], workdir: str, limited: bool = False) -> dict[str, Any]:
    """Run the executable in ``fd`` once on the current fds 0, 1, 2; a runner-style reply.

    Started with ``posix_spawn`` (vfork: no copy of the runner's page tables, about 2 ms instead of
    15-20 ms for a fork of the interpreter on a loaded host): directly when the runner already holds
    ``RLIMIT_AS`` at the memory limit (``limited``, :func:`limit_runner`), else through util-linux's
    ``prlimit``, which sets it and execs the program; without ``prlimit``, fork + exec."""
    memory = int(limits["memory_mb"]) * _MB
    env = dict(_ENV, HOME=workdir, TMPDIR=workdir)
    if limited:
        pid = os.posix_spawn("/proc/self/fd/3", ["solution"], env, file_actions=[(os.POSIX_SPAWN_DUP2, fd, 3)])
    elif os.path.exists(_PRLIMIT):
        pid = os.posix_spawn(_PRLIMIT, ["prlimit", f"--as={memory}:{memory}", "--", "/proc/self/fd/3"], env,
                             file_actions=[(os.POSIX_SPAWN_DUP2, fd, 3)])
    else:
        pid = os.fork()
        if pid == 0:
            try:
                resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
                os.execve(fd, ["solution"], env)
            finally:
                os._exit(127)
    while True:
        try:
            _pid, status, rusage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        return {"status": "ok"} if code == 0 else {"status": "exit", "code": str(code)}
    sig = os.WTERMSIG(status)
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
    near = rusage.ru_maxrss * 1024 >= 0.8 * int(limits["memory_mb"]) * _MB
    if sig == signal.SIGXCPU:
        return {"status": "exception", "exc": "TimeLimit", "message": "cpu time limit exceeded"}
    if near or (sig == signal.SIGABRT and _stderr_mentions(b"bad_alloc")):
        return {"status": "exception", "exc": "MemoryError", "message": f"killed by {name} near the memory limit"}
    return {"status": "exception", "exc": name, "message": f"killed by signal {name}"}


def _stderr_mentions(word: bytes) -> bool:
    try:
        size = os.fstat(2).st_size
        return word in os.pread(2, 4096, max(0, size - 4096))
    except OSError:
        return False
