"""Run untrusted programs: sandboxed, resource-limited, killable workers.

Design (measured on the 2-core dev box, see ``bench/evaluator.py``): starting ``bwrap`` + ``python`` costs
20-40 ms and a ``fork`` of a warm interpreter about 1.4 ms, while running a test in an existing process
costs about 0.06 ms. So the judge keeps one long-lived **worker** per pool slot inside bubblewrap; per
solution the worker forks a **runner** that drops privileges, applies rlimits and compiles the code
once; the runner then executes the tests it is sent one at a time (a stdin program is re-executed in
fresh globals per test, a call-mode function is called on a fresh ``Solution()``), with the test's input
on fd 0 and fresh memfds on fds 1 and 2 (``input()``, ``sys.stdin.buffer``, ``open(0)``,
``sys.stdout.buffer.write`` and ``os.write(1, ...)`` all work). Every test ends with a cleanup that kills
any process the solution left behind; a runner that crashed, exited or hit a limit is replaced by a
fresh fork for the next test. This is LeetCode's and LiveCodeBench's model (tests of one solution share
a process) made safe: tests never see expected outputs, which stay in the judge process.

What the sandbox does, with bubblewrap (``"sandbox": "bwrap"`` in verdicts):

- new pid, network, ipc, uts and cgroup namespaces: no network at all (only a downed loopback), no
  view of or signals to host processes; the worker is pid 1 of its namespace, so the solution cannot
  kill it (the kernel drops signals to a namespace init that has no handler);
- a private root: read-only binds of ``/usr`` (and the ``/bin``, ``/lib*`` links), the Python
  installation and virtualenv, and the three judge modules; a fresh ``/proc`` and minimal ``/dev``; a
  size-capped tmpfs ``/tmp`` holding a per-solution working directory: a tmpfs of its own
  (``SandboxConfig.workdir_mb``, ``nr_inodes`` = ``Limits.max_files`` + 1, owned by the runner's uid) that
  the worker mounts at load and detaches after the solution (the root worker holds CAP_SYS_ADMIN for this;
  where it cannot mount, a directory wiped recursively). The project directory, its settings, ``/etc``, ``/home`` and ``/root`` are not visible;
- ``--clearenv`` with a handful of fixed variables: secrets in the judge's environment are not visible;
- ``--die-with-parent`` and ``--new-session`` (no terminal injection);
- when the judge runs as root, bwrap keeps the real root only for the worker, with just the capabilities
  it needs (setuid/setgid/kill/chown/dac_override/fowner, sys_ptrace to read the solution's
  smaps_rollup and descriptors for memory accounting, sys_admin to mount each solution's tmpfs); every runner switches to a per-slot unused
  uid with no capabilities, so it cannot signal, ptrace or read the worker and RLIMIT_NPROC counts only
  its own processes. As a normal user bwrap uses a user namespace (``--unshare-all``) instead;
- the IPC namespace is the worker's: after each solution its System V shared memory, semaphores and
  message queues are removed (as the runner's uid), and POSIX message queues cannot be created
  (``RLIMIT_MSGQUEUE`` 0 and seccomp), so nothing of one solution reaches the next but its wiped files.

Always (also in the fallback): ``RLIMIT_CPU`` (per-solution backstop), ``RLIMIT_AS`` (``memory_mb`` on
top of the interpreter), ``RLIMIT_FSIZE`` (output cap: stdout and stderr are memfds, so a larger output
fails and is reported as output limit exceeded), ``RLIMIT_NPROC``, ``RLIMIT_NOFILE``, no core dumps; a
per-test CPU and memory limit on the *whole solution* measured by the worker (:mod:`_account`: every
process's CPU including double-forked orphans and auto-reaped children, PSS of every process, detached
System V segments and held memfds), and a wall-clock limit, after which the runner's whole process
group and every stray process is SIGKILLed; ``oom_score_adj=1000`` for the runner; a seccomp filter
(:mod:`_seccomp`: namespaces, mount, ptrace, keyring, bpf, perf, modules, userfaultfd, io_uring, ... fail
with EPERM); replies on the runner's socket are validated (a forged one is the solution's RE) and their
text cleaned of lone surrogates and NULs. Judges' conventions are applied:
``sys.set_int_max_str_digits(0)``, a high recursion limit, a large main-thread stack and a larger
default thread stack.

**What it does NOT protect against** (read before exposing the judge to the internet):

- kernel exploits through the system calls the filter allows (file, memory, socket, futex, ...);
  bubblewrap is not a VM;
- CPU *contention* between neighbours: no CPU controller shares the cores. A root judge gives each
  worker a cgroup v2 (:mod:`_cgroup`; no controller needed): its runner cgroup's ``cpu.stat`` makes CPU
  accounting exact; elsewhere a helper that is forked, burns CPU and is auto-reaped within one 20 ms
  sample is missed;
- memory where no memory controller is available to the judge: then memory is only *measured*: a peak
  shorter than a sample (50 ms, 20 ms with helpers) is missed and kernel memory is not counted. Where
  the judge may create a memory cgroup (the v1 ``memory`` hierarchy on the dev box, as root), every
  worker's runners join one whose hard limit is set per solution to ``memory_mb`` on top of the
  interpreter's footprint (the worker's resident size + 64 MiB): every process, shared memory segment,
  memfd, tmpfs file and kernel allocation of the solution is charged there and an OOM kill in it is MLE.
  The measured check still applies first, at ``memory_mb`` exactly; memfds both mapped and held count
  twice in it;
- files without an own tmpfs (no mount permission, the rlimit fallback): the working directory is wiped
  after each solution and the worker reads the private ``/tmp``'s usage (statvfs): bytes a test writes
  count as memory and more than ``Limits.max_files`` new inodes in a test is OLE. With an own tmpfs the
  kernel caps the solution's inodes (the last free one used up is OLE) and its bytes (``workdir_mb``), and
  the bytes count as memory. ``/dev/shm`` is read-only, so ``multiprocessing`` locks are unavailable;
- reading anything inside the bound system directories and the virtualenv (world-readable system files);
- side channels between tests of one solution (they share a process by design) and, because a worker is
  reused, timing side channels between solutions;
- assert-style tests: their code runs next to the solution and can be subverted by it;
- **the rlimit fallback** (``"sandbox": "rlimit"``, logged as a warning): no namespaces at all. The
  solution can read every file its uid can read (including the project's settings when they are
  world-readable), open network connections and see other processes. When the judge is root the runner
  still drops to an unused uid (when the Python installation is world-readable) so it cannot write the
  project, signal the worker or exceed its process limit, and strays are killed by uid; as a normal user
  the runner keeps the judge's uid (it could signal the worker, which then shows up as IE) and escaped
  double-forked processes are only caught as orphans. The working directory lives in the host's /tmp
  without a size cap (only RLIMIT_FSIZE per file).
"""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from . import _cgroup
from . import _protocol as proto
from ._bwrap import (
    _is_root,
    _mark_bwrap_broken,
    _namespace_flags,
    _parents,
    _probe_bwrap,
    _python_roots,
    _system_binds,
    _world_accessible,
    bwrap_status,
    warn_fallback,
    warn_once,
)
from .sandbox_config import DEFAULT_PREIMPORT, Limits, SandboxConfig

__all__ = ["DEFAULT_PREIMPORT", "Limits", "SandboxConfig", "SandboxError", "WorkerDied", "WorkerHung",
           "WorkerProcess", "bwrap_status", "warn_fallback", "_is_root", "_namespace_flags", "_system_binds"]

_HERE = Path(__file__).resolve().parent
_JUDGE_FILES = ("_worker.py", "_runner.py", "_protocol.py", "calls.py", "_procs.py", "_outcomes.py",
                "_programs.py", "_native.py", "_account.py", "_seccomp.py", "_interact.py", "_housekeeping.py")
_SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "HOME": "/tmp",
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}
class SandboxError(RuntimeError):
    """The sandbox could not be started or a worker stopped answering: an infrastructure error."""


class WorkerDied(SandboxError):
    """The worker process exited or closed its socket."""


class WorkerHung(SandboxError):
    """The worker did not answer within its deadline and was killed (the watchdog)."""


# ------------------------------------------------------------------------------------------ worker
#: runner uids reserved per judge process (one per pool slot)
UIDS_PER_PROCESS = 1024


class WorkerProcess:
    """One sandboxed worker (see the module docstring). Not thread-safe: one driver thread at a time.

    The driver thread must stay alive while the worker runs: ``--die-with-parent`` ties the worker's
    life to the thread that started it.
    """

    def __init__(self, config: SandboxConfig, slot: int = 0) -> None:
        self.config = config
        self.slot = slot
        self.sandbox = "none"
        self.degraded_reason = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self._stderr: Any = None
        self._fallback_root: str | None = None
        #: this worker's cgroup v2 (exact CPU accounting of its runners), when the machine allows one
        self.cgroup: str | None = None
        #: this worker's memory cgroup (a hard limit on the whole solution), when the machine allows one
        self.memcg: str | None = None
        self.seccomp = False
        self.own_tmpfs = False
        #: hashes of the checker programs this worker holds warm (evaluator.interactive)
        self.programs: set[str] = set()

    # ------------------------------------------------------------------------------- lifecycle
    def start(self) -> None:
        """Start the worker (bwrap when possible). Raises SandboxError."""
        mode = self.config.mode
        if mode in ("auto", "bwrap"):
            ok, note = bwrap_status(self.config)
            if ok:
                try:
                    self._start_bwrap(disable_userns=note != "no-disable-userns")
                    return
                except SandboxError as exc:
                    if mode == "bwrap" or _probe_bwrap(self.config)[0]:
                        raise  # bwrap itself still works: a transient failure, not a reason to degrade
                    _mark_bwrap_broken(self.config, str(exc))
                    note = str(exc)
            elif mode == "bwrap":
                raise SandboxError(f"sandbox mode 'bwrap' requested but {note}")
        else:
            note = "sandbox mode 'rlimit' was requested"
        self.degraded_reason = note
        warn_fallback(note)
        self._start_rlimit()

    def _uid(self) -> int:
        """A uid of this slot alone: 1,024 per judge process (by pid), so no two slots of a pool share
        one (they would share RLIMIT_NPROC and kill each other's strays)."""
        if not 0 <= self.slot < UIDS_PER_PROCESS:
            raise SandboxError(f"slot {self.slot}: a judge process has at most {UIDS_PER_PROCESS} slots")
        return self.config.uid_base + (os.getpid() % 1_000_000) * UIDS_PER_PROCESS + self.slot

    def _init_config(self, mode: str, root: str, drop_uid: bool, keep_read: bool = False,
                     cgroup: str | None = None, memcg: str | None = None) -> dict[str, Any]:
        return {"op": "init", "mode": mode, "root": root, "drop_uid": drop_uid, "keep_read": keep_read,
                "seccomp": self.config.seccomp, "cgroup": cgroup, "memcg": memcg,
                "uid": self._uid(),
                "gid": self._uid(), "recursion_limit": self.config.recursion_limit,
                "thread_stack_mb": self.config.thread_stack_mb, "preimport": list(self.config.preimport),
                "workdir_mb": self.config.workdir_mb}

    def _start_bwrap(self, disable_userns: bool) -> None:
        root = _is_root()
        exe = shutil.which(self.config.bwrap) or self.config.bwrap
        args = [exe, "--die-with-parent", "--new-session", "--clearenv", "--as-pid-1",
                *_namespace_flags(root, disable_userns), *_system_binds()]
        # The private /tmp is mounted before the Python binds: bwrap applies mounts in order, so an
        # interpreter or virtualenv that lives under /tmp (a CI checkout, say) is bound on top of the
        # tmpfs instead of being hidden by it.
        args += ["--proc", "/proc", "--dev", "/dev", "--size", str(self.config.tmpfs_mb << 20), "--tmpfs", "/tmp"]
        made: set[str] = set()
        for path in (*_python_roots(self.config.python), *self.config.extra_ro_binds):
            args += _parents(path, made) + ["--ro-bind", path, path]
        args += _parents("/judge/x", made)
        for name in _JUDGE_FILES:
            args += ["--ro-bind", str(_HERE / name), f"/judge/{name}"]
        # only a root judge: a runner moves itself into the cgroup while still root, and the uid it then
        # switches to cannot move out (cgroup.procs belongs to root)
        self.cgroup = _cgroup.create(self.slot) if root else None
        if self.cgroup:
            args += ["--bind", self.cgroup, "/judge-cgroup"]
        self.memcg = _cgroup.create_memory(self.slot) if root else None
        if self.memcg:
            args += ["--bind", self.memcg, "/judge-memcg"]
        args += ["--chdir", "/tmp"]
        for key, value in _SANDBOX_ENV.items():
            args += ["--setenv", key, value]
        self._spawn(args + [self.config.python, "-I", "-B", "/judge/_worker.py"], env={}, cwd="/",
                    init=self._init_config("bwrap", "/tmp", drop_uid=root,
                                           cgroup="/judge-cgroup/runner" if self.cgroup else None,
                                           memcg="/judge-memcg" if self.memcg else None))
        self.sandbox = "bwrap"

    def _start_rlimit(self) -> None:
        root = _is_root()
        self._fallback_root = tempfile.mkdtemp(prefix="microcoder-judge-")
        # as root the runner always drops to a uid of its own; when the interpreter is not readable by
        # other users (e.g. /root/.pyenv) it keeps CAP_DAC_READ_SEARCH so imports still work
        needed = [Path(os.path.realpath(self.config.python)), Path(os.path.dirname(os.__file__)),
                  *(_HERE / name for name in _JUDGE_FILES)]
        readable = all(_world_accessible(p) for p in needed)
        os.chmod(self._fallback_root, 0o711 if root else 0o700)
        env = dict(_SANDBOX_ENV, HOME=self._fallback_root)
        self.cgroup = _cgroup.create(self.slot) if root else None
        self.memcg = _cgroup.create_memory(self.slot) if root else None
        self._spawn([self.config.python, "-I", "-B", str(_HERE / "_worker.py")], env=env,
                    cwd=self._fallback_root,
                    init=self._init_config("rlimit", self._fallback_root, drop_uid=root,
                                           keep_read=root and not readable,
                                           cgroup=os.path.join(self.cgroup, "runner") if self.cgroup else None,
                                           memcg=self.memcg))
        self.sandbox = "rlimit"

    def _spawn(self, cmd: list[str], env: dict[str, str], cwd: str, init: dict[str, Any]) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._stderr = tempfile.TemporaryFile()
        fd = theirs.fileno()
        try:
            self.proc = subprocess.Popen(
                [*cmd, str(fd), str(self.config.stack_mb << 20)], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=self._stderr, env=env, cwd=cwd, pass_fds=(fd,),
                start_new_session=True, close_fds=True,
                preexec_fn=functools.partial(_cgroup.enter, self.cgroup) if self.cgroup else None)
        except (OSError, subprocess.SubprocessError) as exc:
            ours.close()
            _cgroup.remove(self.cgroup)
            _cgroup.remove(self.memcg)
            self.cgroup = self.memcg = None
            raise SandboxError(f"cannot start the worker: {exc}") from exc
        finally:
            theirs.close()
        self.sock = ours
        try:
            proto.send(ours, init)
            hello, _blob, _ = proto.recv(ours, time.monotonic() + self.config.start_timeout_s)
        except (proto.ProtocolError, OSError) as exc:
            detail = self._stderr_text()
            self.kill()
            raise SandboxError(f"worker failed to start: {detail or exc}") from exc
        if hello.get("status") != "OK":
            self.kill()
            raise SandboxError(f"worker refused to start: {hello}")
        self.seccomp = hello.get("seccomp") == ""
        #: whether each solution gets a tmpfs of its own (else a directory wiped after it)
        self.own_tmpfs = bool(hello.get("tmpfs"))
        if self.config.seccomp and not self.seccomp:
            warn_once(f"SANDBOX DEGRADED: no seccomp filter ({hello.get('seccomp')}); install the Debian package "
                      "libseccomp2 and the PyPI package pyseccomp")

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            return str(self._stderr.read()[-2000:].decode(errors="replace").strip())
        except (OSError, ValueError):
            return ""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and self.sock is not None

    def kill(self) -> None:
        """Stop the worker and everything under it, now."""
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
            try:
                self.proc.kill()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._fallback_root:
            shutil.rmtree(self._fallback_root, ignore_errors=True)
            self._fallback_root = None
        _cgroup.remove(self.cgroup)
        _cgroup.remove(self.memcg)
        self.cgroup = self.memcg = None
        self.programs = set()

    close = kill

    # -------------------------------------------------------------------------------- requests
    def request(self, header: dict[str, Any], parts: tuple[bytes, ...] | list[bytes],
                timeout_s: float) -> tuple[dict[str, Any], list[bytes]]:
        """One request/reply. Raises WorkerDied / WorkerHung (the worker is then killed)."""
        if not self.alive or self.sock is None:
            raise WorkerDied("the worker is not running")
        try:
            proto.send(self.sock, header, parts)
            reply, blob, _ = proto.recv(self.sock, time.monotonic() + timeout_s)
        except proto.PeerTimeout as exc:
            self.kill()
            raise WorkerHung(f"worker did not answer {header.get('op')!r} within {timeout_s:.1f}s") from exc
        except (proto.ProtocolError, OSError) as exc:
            detail = self._stderr_text()
            self.kill()
            raise WorkerDied(f"worker died during {header.get('op')!r}: {detail or exc}") from exc
        return reply, proto.split_parts(reply, blob)

    def load(self, code: str, mode: str, fn_name: str | None, limits: Limits) -> dict[str, Any]:
        """Start a runner for ``code``: ``{"status": "OK" | "CE" | "RE" | "TLE" | "MLE", "message"?}``."""
        header = {"op": "load", "mode": mode, "fn_name": fn_name, "limits": limits.as_dict()}
        reply, _ = self.request(header, [code.encode("utf-8", "surrogateescape")],
                                limits.load_limit_s * 2 + limits.watchdog_grace_s)
        return reply

    def run(self, kind: str, data: bytes, limits: Limits) -> tuple[dict[str, Any], bytes, bytes, bytes]:
        """Run one test: (reply, stdout, stderr tail, call result). A reply whose ``restarted`` is true
        re-loaded the solution first (the previous runner died)."""
        timeout = limits.wall_limit_s + limits.load_limit_s * 2 + limits.watchdog_grace_s
        reply, parts = self.request({"op": "run", "kind": kind}, [data], timeout)
        parts += [b""] * (3 - len(parts))
        return reply, parts[0], parts[1], parts[2]

    def unload(self) -> None:
        self.request({"op": "unload"}, [], 30)
