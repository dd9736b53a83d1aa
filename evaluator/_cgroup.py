"""A cgroup v2 per worker, for exact CPU accounting of its solutions (judge side).

Where the judge may create cgroups in a cgroup v2 hierarchy (a pure v2 ``/sys/fs/cgroup`` or the unified
half of a v1 hybrid, as on the dev box; typically as root), every worker gets a cgroup
``microcoder-<judge pid>-<slot>-<n>`` under the judge's own, with a child ``runner``: bubblewrap starts
inside the worker's cgroup, the cgroup is bound into the sandbox at ``/judge-cgroup``, and each runner
moves itself into ``runner`` before it drops its privileges. Its ``cpu.stat`` then counts the CPU of
every process the solution ever had, auto-reaped helpers included (no controller is needed for that),
and the solution's uid cannot move out (``cgroup.procs`` belongs to root). Memory stays measured
(:mod:`evaluator._account`): no memory controller is delegated here. Without such a hierarchy
:func:`create` returns None and the measured accounting alone applies.
"""

from __future__ import annotations

import atexit
import itertools
import os
import re
import time

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
