"""Whole-solution accounting measured from /proc: the CPU time and memory of *every* process of a
solution count against its limits, not only the runner's.

The judge's machines do not all offer delegated cgroup controllers (the dev container has a cgroup v1
hybrid whose unified hierarchy has no controllers), so the worker measures, while a test runs and once
more at its end:

- CPU: the runner's own and reaped-children time, plus the same for every other live (or zombie)
  process of the solution, plus the exact rusage of orphans the worker reaps itself (a double-forked
  helper is re-parented to the worker: pid 1 of the sandbox, or a child subreaper in the fallback),
  plus the last time seen of helpers that vanished without being waited for (their parent ignores
  SIGCHLD, so the kernel drops their time). Each process's stat already covers the children it waited
  for, so nothing is counted twice. Where the judge could give the worker a cgroup v2
  (:mod:`evaluator._cgroup`; no controller is needed), the runner cgroup's ``cpu.stat`` counts every
  process the solution ever had, exactly, and the larger figure applies. Without it, a helper that is
  born, burns CPU and is auto-reaped between two samples is missed (every 20 ms while helpers exist).
- memory: the proportional set size of anonymous and shared-memory pages of every process
  (``Pss_Anon + Pss_Shmem`` from smaps_rollup, so pages a fork shares copy-on-write are not counted
  twice; ``statm`` resident minus file-backed pages when smaps is not readable), plus System V shared
  memory segments no process has attached, plus the size of every memfd or deleted file a solution
  process holds open (the three test memfds excepted), plus the bytes a test writes to the private
  tmpfs. Charged relative to the runner's resident size when it became ready (what it shares with the
  worker is thereby free), like ``RLIMIT_AS`` is relative to the interpreter. Resident sizes are read
  first (statm, cheap): smaps_rollup only when they are over the limit.

Standard library only (bind-mounted into the sandbox next to _worker.py).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable
from typing import Any

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
_SIGCHLD_BIT = 1 << (signal.SIGCHLD - 1)


def proc_stat(pid: int) -> tuple[int, float, int] | None:
    """(start time in ticks, CPU seconds of ``pid`` and of the children it waited for, parent pid)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            rest = fh.read().rsplit(b")", 1)[1].split()
        ticks = int(rest[11]) + int(rest[12]) + int(rest[13]) + int(rest[14])
        return int(rest[19]), ticks / _CLK_TCK, int(rest[1])
    except (OSError, IndexError, ValueError):
        return None


def cgroup_cpu(stat_path: str | None) -> float | None:
    """CPU seconds ever spent in a cgroup v2 (``usage_usec`` of its cpu.stat), None when unreadable."""
    if not stat_path:
        return None
    try:
        with open(stat_path, "rb") as fh:
            for line in fh:
                if line.startswith(b"usage_usec "):
                    return int(line.split()[1]) / 1e6
    except (OSError, ValueError, IndexError):
        pass
    return None


def _ignores_sigchld(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"SigIgn:"):
                    return bool(int(line.split()[1], 16) & _SIGCHLD_BIT)
    except (OSError, ValueError, IndexError):
        pass
    return False


def process_memory(pid: int) -> int:
    """Bytes of anonymous + shared-memory pages charged to ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            total = 0
            for line in fh:
                if line.startswith((b"Pss_Anon:", b"Pss_Shmem:")):
                    total += int(line.split()[1]) * 1024
            return total
    except (OSError, ValueError, IndexError):
        pass
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            fields = fh.read().split()
        return max(0, int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def resident(pid: int) -> int:
    """Resident bytes of ``pid`` (statm: cheap; an upper bound of its proportional share)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def held_files(pids: Iterable[int], exclude: frozenset[tuple[int, int]]) -> int:
    """Bytes of memfds, shared-memory files and deleted files held open by ``pids`` (each file once)."""
    seen: set[tuple[int, int]] = set(exclude)
    total = 0
    for pid in pids:
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            path = f"/proc/{pid}/fd/{name}"
            try:
                target = os.readlink(path)
                if not (target.startswith(("/memfd:", "/dev/shm/", "/SYSV")) or target.endswith(" (deleted)")):
                    continue
                st = os.stat(path)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key not in seen:
                seen.add(key)
                total += st.st_blocks * 512
    return total


def sysv_table(kind: str) -> list[dict[str, int]]:
    """Rows of /proc/sysvipc/{shm,sem,msg} as dicts of integers (empty when unreadable)."""
    try:
        with open(f"/proc/sysvipc/{kind}") as fh:
            header = fh.readline().split()
            rows = []
            for line in fh:
                values = line.split()
                if len(values) >= len(header):
                    rows.append({k: int(v) for k, v in zip(header, values)})
            return rows
    except (OSError, ValueError):
        return []


def unattached_shm(uid: int | None) -> int:
    """Bytes of System V shared memory no process has attached (of ``uid``; all when None)."""
    total = 0
    for row in sysv_table("shm"):
        if row.get("nattch", 1) == 0 and (uid is None or row.get("uid") == uid):
            total += row.get("rss", row.get("size", 0))
    return total


def memory_oom_kills(path: str | None) -> int | None:
    """How many processes the kernel's OOM killer stopped in the memory cgroup ``path`` (None: unknown)."""
    if not path:
        return None
    try:
        with open(os.path.join(path, "memory.oom_control"), "rb") as fh:
            for line in fh:
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def set_memory_limit(path: str, limit: int) -> bool:
    """Set the hard limit (bytes) of the memory cgroup ``path`` (and of memory + swap where the kernel
    accounts swap: memsw may never be below the memory limit, so the order depends on the direction)."""
    files = [os.path.join(path, "memory.limit_in_bytes")]
    if os.path.exists(os.path.join(path, "memory.memsw.limit_in_bytes")):
        files.append(os.path.join(path, "memory.memsw.limit_in_bytes"))
    for order in (files, files[::-1]):
        try:
            for name in order:
                with open(name, "w") as fh:
                    fh.write(str(int(limit)))
            return True
        except OSError:
            continue
    return False


def fs_usage(root: str) -> tuple[int, int]:
    """(bytes, inodes) in use on the file system of ``root`` (the worker's private tmpfs)."""
    st = os.statvfs(root)
    return (st.f_blocks - st.f_bfree) * st.f_frsize, st.f_files - st.f_ffree


class Usage:
    """The running totals of one solution over one test (or its load)."""

    def __init__(self, runner: Any, list_pids: Callable[[], list[int]], shm_uid: int | None,
                 own_files: frozenset[tuple[int, int]], memory_base: int, cgroup: str | None = None,
                 fs_root: str | None = None) -> None:
        self.runner = runner  # a _procs.RunnerHandle: wait status and rusage land there when we reap it
        self.list_pids = list_pids
        self.shm_uid = shm_uid
        self.own_files = own_files
        self.memory_base = memory_base
        self.seen: dict[tuple[int, int], tuple[float, int]] = {}
        self.reaped = 0.0
        self.lost = 0.0
        first = proc_stat(runner.pid)
        self.cpu0 = first[1] if first else 0.0
        self.cgroup_stat = os.path.join(cgroup, "cpu.stat") if cgroup else None
        self.cgroup0 = cgroup_cpu(self.cgroup_stat)
        #: (root, bytes, inodes) of the private tmpfs when the test began: files written count as memory
        #: (a tmpfs lives in memory); those of earlier tests stay bounded by the tmpfs size
        self.fs = (fs_root, *fs_usage(fs_root)) if fs_root else None
        self.helpers = False
        self.pids: list[int] = [runner.pid]  # as of the last cpu() sample, reused by exceeds()

    def reap_orphans(self) -> None:
        """Wait for every dead child of the worker: orphans' exact CPU, the runner's status."""
        while True:
            try:
                pid, status, rusage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.runner.pid:
                self.runner.status, self.runner.rusage = status, rusage
            else:
                self.reaped += rusage.ru_utime + rusage.ru_stime
                self.seen = {k: v for k, v in self.seen.items() if k[0] != pid}

    def cpu(self) -> float:
        """CPU seconds the solution spent since this test began."""
        self.reap_orphans()
        current: dict[tuple[int, int], tuple[float, int]] = {}
        self.pids = self.list_pids()
        for pid in self.pids:
            stat = proc_stat(pid)
            if stat is not None:
                current[(pid, stat[0])] = (stat[1], stat[2])
        for key, (last, ppid) in self.seen.items():
            if key not in current and ppid in {k[0] for k in current} and _ignores_sigchld(ppid):
                self.lost += last  # auto-reaped: the kernel kept its time nowhere
        self.seen = current
        self.helpers = len(current) > 1
        sampled = sum(v[0] for v in current.values()) + self.reaped + self.lost - self.cpu0
        exact = cgroup_cpu(self.cgroup_stat)
        if exact is not None and self.cgroup0 is not None:
            sampled = max(sampled, exact - self.cgroup0)
        return max(0.0, sampled)

    def files_over(self, cap: int) -> bool:
        """Whether the solution created more than ``cap`` files and directories (an inode cap)."""
        if self.fs is None:
            return False
        st = os.statvfs(self.fs[0])  # a solution's own tmpfs has room for ``cap`` inodes: full is over
        return st.f_files - st.f_ffree - self.fs[2] > cap or (st.f_files <= cap + 1 and st.f_ffree == 0)

    def exceeds(self, limit: int) -> bool:
        """Whether the solution holds more than ``limit`` bytes beyond the runner's own footprint when it
        became ready. Resident sizes (cheap, from statm) bound the proportional ones from above, so the
        costly smaps_rollup is read only when that bound is over the limit. Uses the processes of the
        last :meth:`cpu` sample (the worker always samples CPU first)."""
        pids = self.pids
        extra = unattached_shm(self.shm_uid) + held_files(pids, self.own_files) - self.memory_base
        if self.fs is not None:  # files the solution wrote live in memory too (tmpfs)
            extra += max(0, fs_usage(self.fs[0])[0] - self.fs[1])
        if sum(resident(pid) for pid in pids) + extra <= limit:
            return False
        return sum(process_memory(pid) for pid in pids) + extra > limit


def remove_ipc(uid: int | None) -> int:
    """Remove every System V shared memory segment, semaphore set and message queue (of ``uid``; all
    when None). Run as the owner: removing another uid's objects needs CAP_SYS_ADMIN. Returns how many."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    removed = 0
    ipc_rmid = 0
    for kind, id_col, remove in (
            ("shm", "shmid", lambda i: libc.shmctl(i, ipc_rmid, None)),
            ("sem", "semid", lambda i: libc.semctl(i, 0, ipc_rmid)),
            ("msg", "msqid", lambda i: libc.msgctl(i, ipc_rmid, None))):
        for row in sysv_table(kind):
            if uid is None or row.get("uid") == uid or row.get("cuid") == uid:
                if remove(row[id_col]) == 0:
                    removed += 1
    return removed


def has_ipc(uid: int | None) -> bool:
    """Whether any System V IPC object (of ``uid``; any when None) exists."""
    return any(uid is None or row.get("uid") == uid or row.get("cuid") == uid
               for kind in ("shm", "sem", "msg") for row in sysv_table(kind))
