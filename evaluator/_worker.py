"""The judge's worker: runs inside the sandbox, never executes untrusted code itself.

Started by :mod:`evaluator.sandbox` as ``python -I -B _worker.py FD`` where FD is a Unix socket to the
judge. Protocol (frames from :mod:`_protocol`): the judge sends ``init`` once, then per solution
``load`` (code), ``run`` (one test) any number of times and ``unload``; every request gets one reply.

Per solution the worker forks a *runner* (:mod:`_runner`): it drops privileges, applies the rlimits, compiles the code
(and, in call mode, executes the module once), then runs the tests it is sent one at a time in its own
process, each with fresh memfds wired to fds 0, 1 and 2. The worker watches the runner's CPU time (from
/proc, so the runner cannot lie about it) and wall time, kills it on a limit, kills every other process
the solution left behind after each test, and forks a new runner when the previous one died (crash,
``os._exit``, timeout). All verdict-relevant facts (limits, death, output size) are established here;
what the runner says about itself is only trusted for the solution's own disadvantage.

Standard library only: this file is bind-mounted into the sandbox next to _runner.py, _protocol.py and
calls.py.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import socket
import sys
import time
from typing import Any

if __package__:
    from . import _programs, _seccomp, calls
    from . import _protocol as proto
    from ._account import Usage, memory_oom_kills, resident, set_memory_limit
    from ._housekeeping import Housekeeping
    from ._outcomes import checked_reply, load_reply, test_reply
    from ._procs import RunnerHandle, _read_fd
    from ._runner import _PR_SET_DUMPABLE, _PR_SET_PDEATHSIG, _prctl, runner_entry
else:  # running as a script inside the sandbox
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _programs  # type: ignore[no-redef]
    import _protocol as proto  # type: ignore[no-redef]
    import _seccomp  # type: ignore[no-redef]
    import calls  # type: ignore[no-redef]
    from _account import Usage, memory_oom_kills, resident, set_memory_limit  # type: ignore[no-redef]
    from _housekeeping import Housekeeping  # type: ignore[no-redef]
    from _outcomes import checked_reply, load_reply, test_reply  # type: ignore[no-redef]
    from _procs import RunnerHandle, _read_fd  # type: ignore[no-redef]
    from _runner import _PR_SET_DUMPABLE, _PR_SET_PDEATHSIG, _prctl, runner_entry  # type: ignore[no-redef]

_PR_SET_CHILD_SUBREAPER = 36
#: how often the memory of a running solution is measured (also at the end of every test)
_MEMORY_EVERY_S = 0.05
_STDERR_TAIL = 4096
_FOOTPRINT_SLACK_MB = 64


class Worker(Housekeeping):
    """The worker's request loop (trusted)."""

    def __init__(self, ctl: socket.socket, cfg: dict[str, Any]) -> None:
        self.ctl = ctl
        self.cfg = cfg
        self.root = cfg["root"]
        # Entries present at start are the sandbox's own (e.g. the read-only bind of a virtualenv that
        # lives under /tmp): wiping never walks them, only what solutions left behind.
        self.keep = frozenset(os.listdir(self.root))
        self.in_pid_ns = cfg["mode"] == "bwrap"
        self.own_tmpfs = self._probe_tmpfs()
        self.sol: dict[str, Any] | None = None
        self.runner: RunnerHandle | None = None
        self.counter = 0
        for name in cfg.get("preimport", ()):
            try:
                __import__(name)
            except Exception:  # noqa: BLE001 - an optional module that is not installed
                pass
        self.prelude = calls.build_prelude_namespace()
        # built once here, loaded by every runner: "" when the filter is active, else why not
        self.seccomp = _seccomp.prepare() if cfg.get("seccomp", True) else "seccomp disabled by the judge"
        import gc

        gc.collect()
        gc.freeze()  # everything so far is shared copy-on-write with the runners: keep the GC off it
        #: what a runner may charge to the memory cgroup before its solution allocates anything: at most
        #: copies of the worker's pages, plus slack for the interpreter's own growth
        self.footprint = resident(os.getpid()) + (_FOOTPRINT_SLACK_MB << 20)

    # ---------------------------------------------------------------------------------- runners
    def _spawn(self) -> dict[str, Any]:
        assert self.sol is not None
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            parent_sock.close()
            runner_entry(child_sock, self.cfg, self.sol, self.prelude)
        child_sock.close()
        self.runner = RunnerHandle(pid, parent_sock)
        limit = self.sol["limits"]["load_limit_s"]
        outcome = self._await(limit, limit)
        if self.runner is not None and not outcome["dead"]:
            self.runner.memory_base = resident(pid)
        if outcome["reply"] is None or outcome["reply"].get("status") != "ready":
            self._stop_runner()
        return outcome

    def _await(self, cpu_limit: float, wall_limit: float, own_files: frozenset[tuple[int, int]] = frozenset(),
               nonce: str | None = None) -> dict[str, Any]:
        """Wait for the runner's next reply under the limits. Returns ``{"reply", "blob", "cpu_s",
        "wall_s", "killed" (None / "cpu" / "wall" / "memory" / ...), "dead" (bool)}``. CPU and memory are
        those of the whole solution (:mod:`_account`), measured while it runs and once more at the end."""
        runner = self.runner
        assert runner is not None and self.sol is not None
        start = time.monotonic()
        usage = Usage(runner, self._solution_pids, self._shm_uid(), own_files, runner.memory_base,
                      self.cfg.get("cgroup"), self.sol.get("fs"))
        max_files = self.sol["limits"].get("max_files", 10_000)
        oom0 = memory_oom_kills(self.sol.get("memcg"))
        memory_limit = self.sol["limits"]["memory_mb"] << 20
        poller = select.poll()
        poller.register(runner.sock.fileno(), select.POLLIN)
        if runner.pidfd >= 0:
            poller.register(runner.pidfd, select.POLLIN)
        out: dict[str, Any] = {"reply": None, "blob": b"", "killed": None, "dead": False}
        max_blob = 2 * self.sol["limits"]["output_limit"] + (1 << 20)
        last_memory = start
        cpu, first = 0.0, True  # nothing spent yet: sampling starts after the first poll
        while True:
            now = time.monotonic()
            if not first:
                cpu = usage.cpu()
            first = False
            if cpu > cpu_limit:
                out["killed"] = "cpu"
                break
            if now - start > wall_limit:
                out["killed"] = "wall"
                break
            if usage.helpers or now - last_memory >= _MEMORY_EVERY_S:
                last_memory = now
                if usage.exceeds(memory_limit):
                    out["killed"] = "memory"
                    break
                if usage.files_over(max_files):
                    out["killed"] = "files"
                    break
            step = min(wall_limit - (now - start), max(cpu_limit - cpu, 0.005), _MEMORY_EVERY_S) + 0.002
            if usage.helpers:  # several processes spend the remaining CPU budget faster than wall time
                step = min(step, 0.02)
            if runner.pidfd < 0:
                step = min(step, 0.01)
            events = poller.poll(step * 1000)
            if any(fd == runner.sock.fileno() for fd, _ in events):
                self._receive(runner, start + wall_limit + 0.05, max_blob, out, nonce)
                break
            if events or (runner.pidfd < 0 and runner.poll_dead()):
                out["dead"] = True
                break
        cpu = usage.cpu()
        oom = memory_oom_kills(self.sol.get("memcg"))
        if oom is not None and oom0 is not None and oom > oom0:  # the kernel stopped it at the hard limit
            out["killed"] = "memory"
        if not out["killed"]:  # helpers may still hold memory or have spent CPU since the last sample
            if usage.exceeds(memory_limit):
                out["killed"] = "memory"
            elif usage.files_over(max_files):
                out["killed"] = "files"
            elif cpu > cpu_limit:
                out["killed"] = "cpu"
        out["cpu_s"] = cpu
        out["wall_s"] = time.monotonic() - start
        if out["killed"]:
            runner.kill()
            out["dead"] = True
        elif out["dead"]:
            runner.wait_dead()
        if out["dead"]:
            if runner.rusage is not None:
                out["cpu_s"] = max(out["cpu_s"], runner.rusage.ru_utime + runner.rusage.ru_stime - usage.cpu0)
            out["status"] = runner.status
            out["rss_kb"] = runner.rusage.ru_maxrss if runner.rusage is not None else 0
        return out

    @staticmethod
    def _receive(runner: RunnerHandle, deadline: float, max_blob: int, out: dict[str, Any],
                 nonce: str | None) -> None:
        """Read the runner's reply into ``out``. The socket is reachable by the solution, so anything
        that is not exactly one well-formed reply is the solution's doing: the runner is killed (RE)."""
        try:
            out["reply"], out["blob"], _ = proto.recv(runner.sock, deadline, max_blob=max_blob)
        except proto.PeerTimeout:
            out["killed"] = "wall"
        except proto.FrameTooLarge:
            out["killed"], out["oversize"] = "oversize", True
        except proto.PeerClosed:
            out["dead"] = True
        except proto.ProtocolError:
            out["killed"], out["garbled"] = "protocol", True
        else:
            out["reply"] = checked_reply(out["reply"])
            forged = out["reply"] is None or (nonce is not None and out["reply"].get("n") != nonce)
            if forged or _pending(runner.sock):
                out["reply"], out["blob"] = None, b""
                out["killed"], out["garbled"] = "protocol", True

    # --------------------------------------------------------------------------------- requests
    def op_load(self, header: dict[str, Any], code: bytes) -> None:
        self._stop_runner()
        self._wipe()
        self.counter += 1
        workdir = os.path.join(self.root, f"s{self.counter}")
        own_fs = self._fresh_workdir(workdir, header["limits"].get("max_files", 10_000))
        self.sol = {"code": code, "mode": header["mode"], "fn_name": header.get("fn_name"),
                    "limits": header["limits"], "workdir": workdir,
                    # a tmpfs of its own, else the private /tmp (ours alone under bwrap): its usage is
                    # the solution's files
                    "fs": workdir if own_fs else (self.root if self.in_pid_ns else None)}
        self.sol["memcg"] = self._memory_limit(header["limits"]["memory_mb"] << 20)
        self.ctl_reply(load_reply(self._spawn(), header["limits"]))

    def _memory_limit(self, limit: int) -> str | None:
        """Set the memory cgroup's hard limit for this solution; the cgroup, or None when there is none
        (then no runner joins it: a stale, lower limit must never apply to this solution)."""
        memcg = self.cfg.get("memcg")
        if memcg and set_memory_limit(memcg, limit + self.footprint):
            return str(memcg)
        return None

    def op_run(self, header: dict[str, Any], data: bytes) -> None:
        check = header.get("check")  # a checker program to run on the output right here (see below)
        program = answer = b""
        if isinstance(check, dict):
            data, program, answer = (proto.split_parts(header, data) + [b"", b"", b""])[:3]
        if self.sol is None:
            self.ctl_reply({"status": "IE", "message": "run before load"})
            return
        restarted = False
        if self.runner is not None and self.runner.poll_dead():
            self._stop_runner()  # it died after its last reply (a thread called os._exit, ...)
        if self.runner is None:
            restarted = True
            load = load_reply(self._spawn(), self.sol["limits"])
            if load["status"] != "OK":
                load["restarted"] = True
                self.ctl_reply(load)
                return
        assert self.runner is not None
        limits = self.sol["limits"]
        kind = header.get("kind", "stdin")
        fds = [os.memfd_create(name, os.MFD_CLOEXEC) for name in ("stdin", "stdout", "stderr")]
        try:
            if kind == "stdin" and data:
                os.pwrite(fds[0], data, 0)
            try:
                nonce = os.urandom(8).hex()
                proto.send(self.runner.sock, {"op": "test", "kind": kind, "n": nonce},
                           [data] if kind != "stdin" else [], fds=fds)
                own = frozenset((st.st_dev, st.st_ino) for st in map(os.fstat, fds))
                outcome = self._await(limits["time_limit_s"], limits["wall_limit_s"], own, nonce)
            except OSError:
                self.runner.kill()
                outcome = {"reply": None, "blob": b"", "killed": None, "dead": True, "cpu_s": 0.0,
                           "wall_s": 0.0, "status": self.runner.status,
                           "rss_kb": self.runner.rusage.ru_maxrss if self.runner.rusage else 0}
            stdout = _read_fd(fds[1], limits["output_limit"] + 1)
            err_size = os.fstat(fds[2]).st_size
            stderr = os.pread(fds[2], _STDERR_TAIL, max(0, err_size - _STDERR_TAIL))
        finally:
            for fd in fds:
                os.close(fd)
        reply = test_reply(outcome, kind, limits, len(stdout))
        if outcome["dead"]:
            self._stop_runner()
        else:
            self._kill_strays(self.runner.pid)
        reply.update(cpu_s=round(outcome["cpu_s"], 4), wall_s=round(outcome["wall_s"], 4),
                     restarted=restarted)
        result = outcome["blob"] if reply["status"] == "OK" and kind == "call" else b""
        if reply["status"] == "OK" and kind == "call" and not result:
            reply = {"status": "RE", "message": "the call returned nothing", **{
                k: reply[k] for k in ("cpu_s", "wall_s", "restarted")}}
        nextpass = b""
        if isinstance(check, dict) and reply["status"] == "OK":  # judged here: no round trip to the judge
            if _programs.needs_program(self, check, program):
                reply["checked"] = {"need_program": True}
            else:
                reply["checked"], extra = _programs.check_output(self, check, program, data, answer,
                                                                 stdout[:limits["output_limit"]])
                nextpass = extra[0] if extra else b""
        self.ctl_reply(reply, [stdout[:limits["output_limit"]], stderr, result, nextpass])

    def ctl_reply(self, header: dict[str, Any], parts: list[bytes] | tuple[bytes, ...] = ()) -> None:
        proto.send(self.ctl, header, parts)

    def serve(self) -> None:
        while True:
            try:
                header, blob, _ = proto.recv(self.ctl)
            except proto.ProtocolError:
                break
            op = header.get("op")
            if op == "load":
                self.op_load(header, blob)
            elif op == "run":
                self.op_run(header, blob)
            elif op == "unload":
                self._stop_runner()
                self._wipe()
                self.sol = None
                self.ctl_reply({"status": "OK"})
            elif op == "ping":
                self.ctl_reply({"status": "OK", "pid": os.getpid()})
            elif op in ("check", "interact"):  # checker programs and interactive validators
                self.ctl_reply(*(_programs.op_check if op == "check" else _programs.op_interact)(self, header, blob))
            else:
                break
        self._stop_runner()


def _pending(sock: socket.socket) -> bool:
    """Whether more bytes wait on ``sock`` (a runner sends exactly one reply per request)."""
    return bool(select.select([sock], [], [], 0)[0])


def main(argv: list[str]) -> int:
    fd = int(argv[1])
    ctl = socket.socket(fileno=fd)
    stack = int(argv[2]) if len(argv) > 2 else 0
    if stack and "--restacked" not in argv:
        # the main thread's stack may only grow as far as RLIMIT_STACK allowed at exec time
        soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
        want = stack if hard == resource.RLIM_INFINITY else min(stack, hard)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_STACK, (want, hard))
            os.set_inheritable(fd, True)
            os.execv(sys.executable, [sys.executable, "-I", "-B", *argv, "--restacked"])
    devnull = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1):
        os.dup2(devnull, target)
    os.close(devnull)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _prctl(_PR_SET_DUMPABLE, 0)  # the solution (same uid in some modes) may not ptrace or read us
    try:
        header, _blob, _ = proto.recv(ctl)
    except proto.ProtocolError:
        return 1
    cfg = header
    if cfg.get("mode") != "bwrap":
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    worker = Worker(ctl, cfg)
    proto.send(ctl, {"status": "OK", "pid": os.getpid(), "uid": os.getuid(), "seccomp": worker.seccomp,
                     "tmpfs": worker.own_tmpfs,
                     "drop_uid": bool(cfg.get("drop_uid")), "python": sys.version.split()[0]})
    worker.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
