"""The worker's housekeeping between tests and solutions: which processes are the solution's, killing
what it left behind (strays, its uid's processes), removing its System V IPC objects, giving each solution
a fresh working directory: a tmpfs of its own with a size and an inode cap (``nr_inodes``), mounted by the
worker and detached afterwards, where the worker may mount (the root bwrap worker holds CAP_SYS_ADMIN for
this alone; runners drop every capability), else a directory wiped recursively (measured fallback).
Mixed into :class:`_worker.Worker`, whose attributes (``cfg``, ``root``, ``keep``, ``in_pid_ns``,
``runner``) it uses.

Standard library only (bind-mounted into the sandbox next to _worker.py).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import time
from typing import Any

if __package__:
    from ._account import has_ipc, remove_ipc
    from ._procs import RunnerHandle
else:  # running as a script inside the sandbox
    from _account import has_ipc, remove_ipc  # type: ignore[no-redef]
    from _procs import RunnerHandle  # type: ignore[no-redef]


class Housekeeping:
    """Clean-up methods of the worker (trusted)."""

    cfg: dict[str, Any]
    root: str
    keep: frozenset[str]
    in_pid_ns: bool
    runner: RunnerHandle | None
    #: whether solutions get a tmpfs of their own (:meth:`_probe_tmpfs`, once per worker)
    own_tmpfs: bool = False

    def _kill_strays(self, keep: int | None) -> None:
        """Kill every process the solution left behind except the runner ``keep``."""
        me = os.getpid()
        for _round in range(50):
            victims = [pid for pid in self._descendants() if pid not in (me, keep)]
            if not victims:
                return
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            for pid in victims:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            if _round:
                time.sleep(0.002)

    def _descendants(self) -> list[int]:
        if self.in_pid_ns:  # everything in our pid namespace but us (pid 1)
            return [int(p) for p in os.listdir("/proc") if p.isdigit() and p != "1"]
        # rlimit fallback: we are a child subreaper, so orphans of the solution become our children
        me = os.getpid()
        try:
            with open(f"/proc/{me}/task/{me}/children") as fh:
                return [int(p) for p in fh.read().split()]
        except OSError:
            return []

    def _solution_pids(self) -> list[int]:
        """Every process of the running solution (the runner first)."""
        runner = self.runner.pid if self.runner is not None else -1
        if self.in_pid_ns:
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and p != "1"]
        else:
            pids = self._tree(os.getpid())
        if self.cfg.get("drop_uid"):  # checker programs run under other uids: not the solution's
            pids = [p for p in pids if p == runner or _real_uid(p) == self.cfg["uid"]]
        return sorted(pids, key=lambda p: p != runner)

    @staticmethod
    def _tree(root: int) -> list[int]:
        """Descendants of ``root`` (rlimit fallback, where the whole /proc is the host's)."""
        out: list[int] = []
        todo = [root]
        while todo:
            pid = todo.pop()
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/children") as fh:
                        kids = [int(k) for k in fh.read().split()]
                except OSError:
                    continue
                out += kids
                todo += kids
        return out

    def _shm_uid(self) -> int | None:
        """Whose System V segments are the solution's: all of our private IPC namespace (None), else the
        runner's uid; -1 (none) when the runner shares the judge's uid on the host."""
        if self.in_pid_ns:
            return None
        return self.cfg["uid"] if self.cfg.get("drop_uid") else -1

    def _clean_ipc(self) -> None:
        """Remove the System V IPC objects the solution left (the next one must not see them). Removing
        needs the owner's uid, so a child switches to the runner's uid first."""
        uid = self._shm_uid()
        if uid == -1 or not has_ipc(uid):
            return
        if not self.cfg.get("drop_uid"):
            remove_ipc(uid)
            return
        pid = os.fork()
        if pid == 0:
            try:
                os.setresgid(self.cfg["gid"], self.cfg["gid"], self.cfg["gid"])
                os.setresuid(self.cfg["uid"], self.cfg["uid"], self.cfg["uid"])
                remove_ipc(self.cfg["uid"])
            finally:
                os._exit(0)
        os.waitpid(pid, 0)

    def _kill_uid(self) -> None:
        """Fallback mode only: kill everything owned by the runner's uid (escapes via setsid)."""
        if self.in_pid_ns or not self.cfg.get("drop_uid"):
            return
        pid = os.fork()
        if pid == 0:
            try:
                os.setresgid(self.cfg["gid"], self.cfg["gid"], self.cfg["gid"])
                os.setresuid(self.cfg["uid"], self.cfg["uid"], self.cfg["uid"])
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)

    def _stop_runner(self) -> None:
        if self.runner is not None:
            self.runner.close()
            self.runner = None
        self._kill_uid()
        self._kill_strays(None)
        self._clean_ipc()

    def _probe_tmpfs(self) -> bool:
        """Whether this worker can give solutions a tmpfs of their own (mount and detach one once)."""
        if not (self.in_pid_ns and self.cfg.get("workdir_mb") and _LIBC is not None):
            return False
        path = os.path.join(self.root, ".tmpfs-probe")
        try:
            os.mkdir(path, 0o700)
        except OSError:
            return False
        try:
            if _LIBC.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"size=1m,nr_inodes=16") != 0:
                return False
            _LIBC.umount2(path.encode(), _MNT_DETACH)
            return True
        finally:
            os.rmdir(path)

    def _fresh_workdir(self, path: str, max_files: int) -> bool:
        """Create the solution's working directory ``path``: a fresh tmpfs of ``cfg["workdir_mb"]`` MiB with
        room for ``max_files`` files and directories, owned by the runner's uid, when the worker may mount
        (then True); else a plain directory (False) that :meth:`_wipe` removes later."""
        os.mkdir(path, 0o700)
        uid, gid = (self.cfg["uid"], self.cfg["gid"]) if self.cfg.get("drop_uid") else (os.getuid(), os.getgid())
        if self.own_tmpfs:
            options = (f"size={int(self.cfg['workdir_mb'])}m,nr_inodes={int(max_files) + 1},mode=0700,"
                       f"uid={uid},gid={gid}").encode()
            if _LIBC.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options) == 0:
                return True
        if self.cfg.get("drop_uid"):
            os.chown(path, uid, gid)
        return False

    def _wipe(self) -> None:
        for name in os.listdir(self.root):
            if name in self.keep:
                continue
            path = os.path.join(self.root, name)
            if _LIBC is not None and _LIBC.umount2(path.encode(), _MNT_DETACH) == 0:
                os.rmdir(path)  # a solution's own tmpfs: gone at once, however many files it held
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


_MS_NOSUID, _MS_NODEV, _MNT_DETACH = 2, 4, 2


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _real_uid(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Uid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return -1
