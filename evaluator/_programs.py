"""Checker programs and interactive validators inside the sandbox (native solutions: :mod:`_native`).

Loaded next to ``_worker.py`` / ``_runner.py`` (standard library only, bind-mounted into the sandbox).

- :func:`op_check`: the worker's ``check`` request runs a checker program on one test's output:
  ICPC (``program input answer feedback_dir [args] < output``; exit 42 accept, 43 reject, message from
  ``feedback_dir/judgemessage.txt``) or testlib (``program input output answer``; exit 0 accept, 1/2
  reject, 3 and anything else a checker failure; message from stderr).
- :func:`op_interact`: the worker's ``interact`` request runs the loaded solution and an ICPC
  interactive validator connected by two pipes and combines their outcomes (the validator's verdict
  wins; see :mod:`_interact`).

Checker programs are untrusted too: each runs in a fresh private directory (mode 0700), with its own
rlimits (CPU, address space, file size, processes), in its own session, and as root under a uid of its
own (the runner's uid + 512), so a solution running at the same time cannot read the judge's answer
or signal the validator. The reply reports only facts the worker observed (exit status, time, files).
"""

from __future__ import annotations

import os
import resource
import select
import shutil
import signal
import time
from typing import Any

if __package__:
    from ._native import _ENV, _MB, _write_all, binary_fd
else:  # inside the sandbox, as a top-level module
    from _native import _ENV, _MB, _write_all, binary_fd  # type: ignore[no-redef]

_MESSAGE = 4000
CHECKER_UID_OFFSET = 512
#: compiled checker programs a worker keeps warm (sealed memfds by hash; the oldest goes first)
_WARM_PROGRAMS = 16


def program_fd(worker: Any, key: str, program: bytes) -> int | None:
    """A descriptor of the sealed memfd holding the program named ``key``: written once per worker and
    reused by every later check (the judge then sends the hash alone). None when ``program`` is empty and
    the worker does not hold ``key`` (the judge must send it again)."""
    warm: dict[str, int] = worker.__dict__.setdefault("warm_programs", {})
    if key and key in warm:
        return os.dup(warm[key])
    if not program:
        return None
    fd = binary_fd(program)
    if key:
        if len(warm) >= _WARM_PROGRAMS:
            os.close(warm.pop(next(iter(warm))))
        warm[key] = os.dup(fd)
    return fd


def needs_program(worker: Any, spec: dict[str, Any], program: bytes) -> bool:
    """Whether a request named a compiled program the worker does not hold (and did not send it)."""
    return not program and not spec.get("interpreted") and spec.get("key") not in worker.__dict__.get(
        "warm_programs", {})


# ------------------------------------------------------------------------------ checker programs
class _Program:
    """One run of a checker program: a private directory, a child process, its outcome."""

    def __init__(self, worker: Any, spec: dict[str, Any], program: bytes) -> None:
        self.worker = worker
        self.spec = spec
        worker.counter += 1
        self.dir = os.path.join(worker.root, f"c{worker.counter}")
        os.mkdir(self.dir, 0o700)
        self.uid = worker.cfg["uid"] + CHECKER_UID_OFFSET if worker.cfg.get("drop_uid") else None
        self.feedback = os.path.join(self.dir, "feedback")
        os.mkdir(self.feedback, 0o700)
        # a native program is exec'ed from a sealed memfd (works where /tmp is mounted noexec)
        fd = None if spec.get("interpreted") else program_fd(worker, str(spec.get("key") or ""), program)
        self.exe_fd = -1 if fd is None else fd  # None only for a program the caller checked was sent
        self.exe = self.file("program.py", program) if spec.get("interpreted") else "checker"
        self.pid = -1
        self.supervisor = -1
        self.status_fd = self.hold_fd = self.pidfd = -1
        self.status: int | None = None
        self.cpu_s = 0.0
        self.started = 0.0
        self.wall_s = 0.0

    def file(self, name: str, data: bytes) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "wb") as fh:
            fh.write(data)
        return path

    def start(self, args: list[str], stdin: int, stdout: int, stderr: int, supervised: bool = False) -> None:
        """Start the program. ``supervised`` when the worker's reaper may run meanwhile (interaction)."""
        if self.uid is not None:  # the checker's uid owns its directory; nobody else can enter it
            for root, dirs, files in os.walk(self.dir):
                for name in (root, *(os.path.join(root, n) for n in dirs + files)):
                    os.chown(name, self.uid, self.uid)
        limits = self.spec["limits"]
        argv = ([self.worker.cfg.get("python") or _python(), "-I", "-B", self.exe] if self.spec.get("interpreted")
                else [self.exe]) + args
        self.started = time.monotonic()
        if not supervised:  # nothing else waits for children during a plain check: one fork is enough
            self.pid = os.fork()
            if self.pid == 0:
                self._exec(argv, limits, stdin, stdout, stderr)
            self.pidfd = os.pidfd_open(self.pid)
            return
        # The checker runs under a small supervisor process that waits for it and reports its status on
        # a pipe: the worker reaps every dead child it has (its CPU accounting), which would otherwise
        # race us for the checker's exit code. The supervisor stays until ``close`` releases it.
        status_r, status_w = os.pipe2(os.O_CLOEXEC)
        hold_r, hold_w = os.pipe2(os.O_CLOEXEC)
        supervisor = os.fork()
        if supervisor == 0:
            try:
                pid = os.fork()
                if pid == 0:
                    self._exec(argv, limits, stdin, stdout, stderr)
                for fd in _open_fds():  # keep only the two pipes: peers must see EOF when the checker exits
                    if fd not in (status_w, hold_r):
                        _close(fd)
                os.write(status_w, f"{pid}\n".encode())
                _pid, status, rusage = os.wait4(pid, 0)
                os.write(status_w, f"{status} {rusage.ru_utime + rusage.ru_stime}\n".encode())
                os.read(hold_r, 1)
            finally:
                os._exit(0)
        os.close(status_w)
        os.close(hold_r)
        self.supervisor, self.status_fd, self.hold_fd = supervisor, status_r, hold_w
        self.pid = int(self._line())

    def _exec(self, argv: list[str], limits: dict[str, Any], stdin: int, stdout: int, stderr: int) -> None:
        """In the forked checker: untrusted from exec on."""
        try:
            os.setsid()
            for target, fd in ((0, stdin), (1, stdout), (2, stderr)):
                os.dup2(fd, target)
            if self.exe_fd >= 0:
                os.dup2(self.exe_fd, 3, inheritable=False)
            os.closerange(4 if self.exe_fd >= 0 else 3, 1 << 16)
            if self.uid is not None:
                # as the runner does: in the rlimit fallback with a private interpreter (/root/.pyenv)
                # keep only CAP_DAC_READ_SEARCH so a Python checker can still start
                _drop_privileges(self.uid, bool(self.worker.cfg.get("keep_read")))
            cpu = max(1, int(limits["cpu_s"] + 0.999))
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            memory = int(limits["memory_mb"]) * _MB
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 * _MB, 64 * _MB))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_NPROC, (64, 64))
            os.chdir(self.dir)
            _seccomp_filter()  # the solutions' system-call filter, where the worker has one
            env = dict(_ENV, HOME=self.dir, TMPDIR=self.dir)
            os.execve(3 if self.exe_fd >= 0 else argv[0], argv, env)
        finally:
            os._exit(127)

    def _line(self) -> str:
        data = b""
        while not data.endswith(b"\n"):
            chunk = os.read(self.status_fd, 64)
            if not chunk:
                raise OSError("the checker's supervisor vanished")
            data += chunk
        return data.decode()

    def done(self) -> bool:
        if self.status is None and self.pidfd >= 0:
            pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                self.status, self.cpu_s = status, rusage.ru_utime + rusage.ru_stime
                self.wall_s = time.monotonic() - self.started
        elif self.status is None and select.select([self.status_fd], [], [], 0)[0]:
            try:
                words = self._line().split()
                self.status, self.cpu_s = int(words[0]), float(words[1])
            except (OSError, ValueError, IndexError):
                self.status, self.cpu_s = signal.SIGKILL, 0.0  # the supervisor was killed
            self.wall_s = time.monotonic() - self.started
        return self.status is not None

    def wait(self, deadline: float) -> bool:
        """Wait until the program exits or ``deadline`` (monotonic); False when it was still running."""
        while not self.done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self.pidfd if self.pidfd >= 0 else self.status_fd], [], [], min(left, 1.0))
        return True

    def kill(self) -> None:
        if self.status is None and self.pid > 0:
            for target in (-self.pid, self.pid):
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
        if self.uid is not None:  # helpers that left the session: everything of the checker's uid
            for _round in range(20):
                victims = [p for p in _pids() if _owner(p) == self.uid]
                if not victims:
                    break
                for victim in victims:
                    try:
                        os.kill(victim, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.001)
        if self.status is None and self.pid > 0:
            self.wait(time.monotonic() + 5.0)

    def outcome(self) -> dict[str, Any]:
        """``{"exit", "signal", "cpu_s", "wall_s", "judgemessage", "teammessage", "nextpass"?}``."""
        status = self.status if self.status is not None else 0
        out: dict[str, Any] = {
            "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "cpu_s": round(self.cpu_s, 4),
            "wall_s": round(self.wall_s, 4)}
        for name in ("judgemessage", "teammessage"):
            out[name] = _head(os.path.join(self.feedback, f"{name}.txt"), _MESSAGE)
        return out

    def nextpass(self) -> bytes | None:
        path = os.path.join(self.feedback, "nextpass.in")
        if not os.path.isfile(path) or os.path.islink(path):
            return None
        with open(path, "rb") as fh:
            return fh.read(self.spec.get("max_nextpass", 64 * _MB))

    def close(self) -> None:
        if self.pid > 0:
            self.kill()
        for name in ("hold_fd", "status_fd", "exe_fd", "pidfd"):  # closing hold_fd releases the supervisor
            if getattr(self, name) >= 0:
                os.close(getattr(self, name))
                setattr(self, name, -1)
        if self.supervisor > 0:
            _reap(self.supervisor)
        shutil.rmtree(self.dir, ignore_errors=True)


def _drop_privileges(uid: int, keep_read: bool) -> None:
    try:
        from ._runner import _drop_to
    except ImportError:  # inside the sandbox, as a top-level module
        from _runner import _drop_to  # type: ignore[no-redef]
    _drop_to(uid, uid, keep_read)


def _seccomp_filter() -> None:
    try:
        import _seccomp  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return
    _seccomp.install()


def _pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def _owner(pid: int) -> int:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return -1


def _open_fds() -> list[int]:
    return [int(n) for n in os.listdir("/proc/self/fd") if n.isdigit() and int(n) > 2]


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass  # the worker's own reaper was first


def _python() -> str:
    import sys

    return sys.executable


def _head(path: str, limit: int) -> str:
    try:
        if os.path.islink(path):
            return ""
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _memfd(name: str, data: bytes = b"") -> int:
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    if data:
        _write_all(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _tail(fd: int, limit: int) -> str:
    size = os.fstat(fd).st_size
    return os.pread(fd, limit, max(0, size - limit)).decode("utf-8", "replace").strip()


def _classify(spec: dict[str, Any], run: _Program, finished: bool, stderr: str) -> dict[str, Any]:
    """``{"result": "accept" | "reject" | "fail", "message"}`` of a checker run."""
    facts = run.outcome()
    cpu_limit = spec["limits"]["cpu_s"]
    base = {"checker_cpu_s": facts["cpu_s"], "checker_wall_s": facts["wall_s"]}
    if not finished:
        return {"result": "hang", "message": "the checker did not finish in time", **base}
    if facts["signal"] is not None or facts["cpu_s"] > cpu_limit:
        why = "its cpu time limit" if facts["cpu_s"] > cpu_limit else f"signal {facts['signal']}"
        return {"result": "fail", "message": f"the checker was killed ({why}) {stderr[-500:]}".strip(), **base}
    code = facts["exit"]
    if spec.get("protocol", "icpc") == "testlib":
        message = stderr or facts["judgemessage"]
        results = {0: "accept", 1: "reject", 2: "reject"}
    else:
        message = facts["judgemessage"] or facts["teammessage"] or stderr
        results = {42: "accept", 43: "reject"}
    result = results.get(code, "fail")
    if result == "fail":
        message = f"the checker exited with code {code}: {message}"
    return {"result": result, "message": message[:_MESSAGE], **base}


def op_check(worker: Any, header: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """Run a checker on ``[program, input, answer, output]``; reply ``{"result", "message", ...}``
    plus, for multi-pass problems, the validator's ``nextpass.in`` as the reply's only part."""
    from _protocol import split_parts  # type: ignore[import-not-found,unused-ignore]

    spec = header["program"]
    program, test_in, answer, output = split_parts(header, blob)
    if needs_program(worker, spec, program):
        return {"need_program": True}, []
    return check_output(worker, spec, program, test_in, answer, output)


def check_output(worker: Any, spec: dict[str, Any], program: bytes, test_in: bytes, answer: bytes,
                 output: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """Run the checker ``spec`` on one test's ``output`` (see :func:`op_check`; also called by the
    worker's ``run`` request when it carries the checker, which saves a round trip to the judge)."""
    run = _Program(worker, spec, program)
    fds: list[int] = []
    try:
        in_path, ans_path = run.file("input", test_in), run.file("answer", answer)
        stdin, stdout, stderr = _memfd("output", output), _memfd("stdout"), _memfd("stderr")
        fds += [stdin, stdout, stderr]
        if spec.get("protocol", "icpc") == "testlib":
            args = [in_path, run.file("output", output), ans_path]
        else:
            args = [in_path, ans_path, run.feedback + "/", *spec.get("args", [])]
        run.start(args, stdin, stdout, stderr)
        finished = run.wait(time.monotonic() + spec["limits"]["wall_s"])
        if not finished:
            run.kill()
        reply = _classify(spec, run, finished, _tail(stderr, _MESSAGE))
        nextpass = run.nextpass() if reply["result"] == "accept" and spec.get("passes", 1) > 1 else None
        reply["nextpass"] = nextpass is not None
        return reply, [nextpass or b""]
    finally:
        for fd in fds:
            os.close(fd)
        run.close()


# ----------------------------------------------------------------------------------- interaction
def op_interact(worker: Any, header: dict[str, Any], blob: bytes) -> tuple[dict[str, Any], list[bytes]]:
    """The worker's ``interact`` request (implemented in :mod:`_interact`)."""
    try:
        from . import _interact
    except ImportError:  # inside the sandbox, as a top-level module
        import _interact  # type: ignore[import-not-found,no-redef,unused-ignore]
    return _interact.op_interact(worker, header, blob)
