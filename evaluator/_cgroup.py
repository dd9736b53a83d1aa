"""A cgroup v2 per worker, for exact CPU accounting of its solutions (judge side).

Where the judge may create cgroups in a cgroup v2 hierarchy (a pure v2 ``/sys/fs/cgroup`` or the unified
half of a v1 hybrid, as on the dev box; typically as root), every worker gets a cgroup
``microcoder-<judge pid>-<slot>-<n>`` under the judge's own, with a child ``runner``: bubblewrap starts
inside the worker's cgroup, the cgroup is bound into the sandbox at ``/judge-cgroup``, and each runner
moves itself into ``runner`` before it drops its privileges. Its ``cpu.stat`` then counts the CPU of
every process the solution ever had, auto-reaped helpers included (no controller is needed for that),
and the solution's uid cannot move out (``cgroup.procs`` belongs to root). Without such a hierarchy
:func:`create` returns None and the measured accounting alone applies.

Memory: where the judge may create a cgroup under its own in a hierarchy with the **memory controller**
(on the dev box the cgroup v1 ``memory`` hierarchy of the hybrid; the unified one has no controllers),
every worker also gets a memory cgroup (:func:`create_memory`), bound into the sandbox at ``/judge-memcg``;
each runner moves itself into it while still root, so everything the solution's processes allocate is
charged there: anonymous memory of every process, System V and POSIX shared memory, memfds, files written
to its tmpfs, kernel memory (page tables, sockets). The worker sets its hard limit per solution
(``memory_mb`` on top of an interpreter's footprint) and reads its OOM-kill counter: a solution the kernel
stopped there is MLE, however short its peak. Elsewhere the measured accounting of :mod:`_account` alone
applies (peaks shorter than a sample are missed).
"""

from __future__ import annotations

import atexit
import itertools
import os
import re
import time

from ._account import memory_oom_kills

_counter = itertools.count()
_created: set[str] = set()
_NAME = re.compile(r"microcoder-(\d+)-\d+-\d+")


def _v2_root() -> str | None:
    """The mount point of the cgroup v2 hierarchy, or None."""
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                left, _sep, right = line.partition(" - ")
                if right.split()[:1] == ["cgroup2"]:
                    return left.split()[4]
    except OSError:
        pass
    return None


def _own_path() -> str | None:
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                if line.startswith("0::"):
                    return line[3:].strip()
    except OSError:
        pass
    return None


def create(slot: int) -> str | None:
    """Create a worker cgroup (with its ``runner`` child) and return its path, or None when cgroup v2
    accounting is not available to this process."""
    root, own = _v2_root(), _own_path()
    if root is None or own is None:
        return None
    parent = os.path.join(root, own.lstrip("/"))
    _sweep(parent)
    path = os.path.join(parent, f"microcoder-{os.getpid()}-{slot}-{next(_counter)}")
    try:
        os.mkdir(path)
        os.mkdir(os.path.join(path, "runner"))
        with open(os.path.join(path, "runner", "cpu.stat")) as fh:
            fh.read()
    except OSError:
        remove(path)
        return None
    _created.add(path)
    return path


def _sweep(parent: str) -> None:
    """Remove the cgroups of judge processes that are gone (a crash or SIGKILL skips :func:`remove`)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        match = _NAME.fullmatch(name)
        if match and not os.path.exists(f"/proc/{match.group(1)}"):
            remove(os.path.join(parent, name))


def _v1_memory() -> str | None:
    """The judge's own cgroup directory in a cgroup v1 ``memory`` hierarchy, or None."""
    mount = None
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                left, _sep, right = line.partition(" - ")
                fields = right.split()
                if fields[:1] == ["cgroup"] and "memory" in fields[-1].split(","):
                    mount = left.split()[4]
        with open("/proc/self/cgroup") as fh:
            own = next((line.split(":", 2)[2].strip() for line in fh
                        if "memory" in line.split(":", 2)[1].split(",")), None)
    except (OSError, IndexError):
        return None
    return os.path.join(mount, own.lstrip("/")) if mount and own is not None else None


def create_memory(slot: int) -> str | None:
    """Create a worker's memory cgroup (see the module docstring) and return its path, or None when no
    memory controller is available to this process."""
    parent = _v1_memory()
    if parent is None:
        return None
    _sweep(parent)
    path = os.path.join(parent, f"microcoder-{os.getpid()}-{slot}-{next(_counter)}")
    try:
        os.mkdir(path)
        for name, value in (("memory.swappiness", "0"), ("memory.oom_control", "0")):
            try:  # no swapping of a solution's memory; the kernel kills instead of pausing at the limit
                with open(os.path.join(path, name), "w") as fh:
                    fh.write(value)
            except OSError:
                pass
        if memory_oom_kills(path) is None:
            raise OSError("no memory.oom_control")
    except OSError:
        remove(path)
        return None
    _created.add(path)
    return path


def enter(path: str) -> None:
    """Move the calling process into ``path`` (a ``preexec_fn``: only system calls, no allocation-heavy
    Python)."""
    fd = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY)
    try:
        os.write(fd, b"0")
    finally:
        os.close(fd)


def remove(path: str | None) -> None:
    """Remove a worker cgroup once its processes are gone (retrying briefly while they exit)."""
    if not path:
        return
    _created.discard(path)
    try:  # kills whatever is left in it (the worker, stray solution processes) at once (Linux 5.14+)
        with open(os.path.join(path, "cgroup.kill"), "w") as fh:
            fh.write("1")
    except OSError:
        pass
    for _ in range(50):
        try:
            for sub in (os.path.join(path, "runner"), path):
                if os.path.isdir(sub):
                    os.rmdir(sub)
            return
        except OSError:
            time.sleep(0.01)


@atexit.register
def _remove_all() -> None:
    for path in list(_created):
        remove(path)
