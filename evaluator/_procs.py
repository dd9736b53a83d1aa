"""Process facts the worker reads from the kernel: CPU time from /proc, memfd contents, and a handle on
the forked runner (its pidfd, wait status and rusage).

Standard library only (bind-mounted into the sandbox next to _worker.py).
"""

from __future__ import annotations

import os
import signal
import socket
from typing import Any

_CLK_TCK = os.sysconf("SC_CLK_TCK")


def _proc_cpu_s(pid: int) -> float:
    """CPU seconds of ``pid`` and of the children it has waited for (kernel accounting)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            rest = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(rest[11]) + int(rest[12]) + int(rest[13]) + int(rest[14])) / _CLK_TCK


def _read_fd(fd: int, limit: int) -> bytes:
    size = min(os.fstat(fd).st_size, limit)
    chunks = []
    pos = 0
    while pos < size:
        chunk = os.pread(fd, min(size - pos, 1 << 26), pos)
        if not chunk:
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)


class RunnerHandle:
    def __init__(self, pid: int, sock: socket.socket) -> None:
        self.pid = pid
        self.sock = sock
        self.pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else -1
        self.status: int | None = None
        self.rusage: Any = None
        #: the runner's own memory when it became ready (see _account.Usage)
        self.memory_base = 0

    def poll_dead(self) -> bool:
        if self.status is not None:
            return True
        try:
            pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:
            self.status = -1
            return True
        if pid == 0:
            return False
        self.status, self.rusage = status, rusage
        return True

    def wait_dead(self) -> None:
        if self.status is None:
            try:
                _pid, self.status, self.rusage = os.wait4(self.pid, 0)
            except ChildProcessError:
                self.status = -1

    def kill(self) -> None:
        if self.status is None:
            for target in (-self.pid, self.pid):
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
            self.wait_dead()

    def close(self) -> None:
        self.kill()
        self.sock.close()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
