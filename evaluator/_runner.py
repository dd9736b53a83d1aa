"""The runner: the forked process in which a solution's code runs (untrusted once it starts).

Forked by the worker (:mod:`_worker`) once per solution, it drops privileges, applies the rlimits,
compiles the code (and in call mode executes the module once), answers ``ready``, then runs the tests it
is sent one at a time: each test arrives with three memfds that become fds 0, 1 and 2, and fresh
``sys.stdin`` / ``sys.stdout`` / ``sys.stderr`` objects wrap them. A stdin program is executed in fresh
globals per test (``__name__ == "__main__"``); a call-mode entry point is called on a new instance. At
the end of a test the runner does what interpreter shutdown would do (join non-daemon threads, run
atexit handlers, flush) and replies with a small status. Nothing it says is trusted for the solution's
benefit: the worker measures time, memory, death and output size itself.

Standard library only (bind-mounted into the sandbox).
"""

from __future__ import annotations

import atexit
import builtins
import ctypes
import io
import os
import resource
import signal
import socket
import sys
import threading
import traceback
from typing import Any

if __package__:
    from . import _native, _seccomp, calls
    from . import _protocol as proto
else:  # imported by _worker.py inside the sandbox
    import _native  # type: ignore[no-redef]
    import _protocol as proto  # type: ignore[no-redef]
    import _seccomp  # type: ignore[no-redef]
    import calls  # type: ignore[no-redef]

_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_STDERR_TAIL = 4096
_MB = 1 << 20


def _libc() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _prctl(option: int, value: int) -> None:
    if _LIBC is not None:
        _LIBC.prctl(option, value, 0, 0, 0)


_PR_SET_KEEPCAPS = 8
_PR_SET_NO_NEW_PRIVS = 38
_CAP_DAC_READ_SEARCH = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _drop_to(uid: int, gid: int, keep_read: bool) -> None:
    """Become ``uid``/``gid`` with no capabilities, or with only CAP_DAC_READ_SEARCH when
    ``keep_read`` (rlimit fallback as root when the interpreter lives in a private directory such as
    /root/.pyenv: the solution may still read files, but not write, signal or ptrace as root)."""
    if keep_read:
        _prctl(_PR_SET_KEEPCAPS, 1)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if keep_read:
        class Header(ctypes.Structure):
            _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

        class Data(ctypes.Structure):
            _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                        ("inheritable", ctypes.c_uint32)]

        bit = 1 << _CAP_DAC_READ_SEARCH
        data = (Data * 2)(Data(bit, bit, 0), Data(0, 0, 0))
        if _LIBC is None or _LIBC.capset(ctypes.byref(Header(_LINUX_CAPABILITY_VERSION_3, 0)), data) != 0:
            raise OSError("capset failed")
        _prctl(_PR_SET_KEEPCAPS, 0)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)


def _own_process_count() -> int:
    """Processes of our uid on the host (rlimit fallback without a uid of our own)."""
    me = os.getuid()
    count = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == me:
                    count += 1
            except OSError:
                pass
    return count


def _vm_bytes() -> int:
    with open("/proc/self/statm", "rb") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


class Runner:
    """Code that runs in the forked runner process (untrusted territory once the solution runs)."""

    def __init__(self, sock: socket.socket, cfg: dict[str, Any], sol: dict[str, Any],
                 prelude: dict[str, Any]) -> None:
        self.sock = sock
        self.cfg = cfg
        self.sol = sol
        self.prelude = prelude
        self.code: Any = None
        self.ns: dict[str, Any] = {}
        self.native = -1  # memfd of a compiled solution's executable
        self.native_limited = False  # whether the runner holds RLIMIT_AS at the memory limit

    def setup(self) -> None:
        os.setsid()
        keep = self.sock.fileno()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.closerange(3, keep)
        os.closerange(keep + 1, 1 << 16)
        try:
            with open("/proc/self/oom_score_adj", "w") as fh:
                fh.write("1000")  # under memory pressure the kernel kills the solution, not the judge
        except OSError:
            pass
        for group in ("cgroup", "memcg"):  # while still root: the solution's uid could not move back out
            if self.cfg.get(group) and (group == "cgroup" or self.sol.get("memcg")):
                try:
                    with open(os.path.join(self.cfg[group], "cgroup.procs"), "w") as fh:
                        fh.write("0")
                except OSError:
                    pass  # the worker's sampled accounting still applies
        limits = self.sol["limits"]
        if self.cfg.get("drop_uid"):
            _drop_to(self.cfg["uid"], self.cfg["gid"], bool(self.cfg.get("keep_read")))
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        cpu = max(1, int(limits["cpu_budget_s"]) + 1)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits["output_limit"] + 1, limits["output_limit"] + 1))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits["nofile"], limits["nofile"]))
        # counted per uid (per user namespace under bwrap); sharing the judge's uid, count what exists
        nproc = limits["nproc"]
        if not self.cfg.get("drop_uid") and self.cfg["mode"] != "bwrap":
            nproc += _own_process_count()
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        # POSIX message queues outlive the solution in the IPC namespace it shares with the next one
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
        memory = _vm_bytes() + limits["memory_mb"] * _MB
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        os.chdir(self.sol["workdir"])
        os.environ["HOME"] = os.environ["TMPDIR"] = self.sol["workdir"]
        sys.setrecursionlimit(self.cfg["recursion_limit"])
        if hasattr(sys, "set_int_max_str_digits"):
            sys.set_int_max_str_digits(0)
        threading.stack_size(self.cfg["thread_stack_mb"] * _MB)
        import random

        random.seed()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        atexit._clear()
        _seccomp.install()  # last: privileges are gone, and nothing above needs a denied call

    def reply(self, header: dict[str, Any], parts: list[bytes] | tuple[bytes, ...] = ()) -> None:
        proto.send(self.sock, header, parts)

    def prepare(self) -> None:
        """Compile (and in call mode execute) the solution; reply ``ready`` or its failure."""
        if self.sol["mode"] == "exec":  # a compiled C/C++ solution: keep the executable, run it per test
            self.native = _native.binary_fd(self.sol["code"])
            self.native_limited = _native.limit_runner(self.sol["limits"])
            self.reply({"status": "ready"})
            return
        try:
            self.code = compile(self.sol["code"], "solution.py", "exec", dont_inherit=True)
        except MemoryError:
            self.reply({"status": "exception", "exc": "MemoryError", "message": "out of memory compiling"})
            return
        except (SyntaxError, ValueError, RecursionError, OverflowError) as exc:
            self.reply({"status": "compile_error", "message": "".join(
                traceback.format_exception_only(type(exc), exc))[-2000:]})
            return
        if self.sol["mode"] == "call":
            self.ns = dict(self.prelude)
            failure = self._exec_module()
            if failure:
                self.reply(failure)
                return
            if self.sol.get("fn_name"):
                try:
                    calls.resolve_entry_point(self.ns, self.sol["fn_name"])
                except LookupError as exc:
                    self.reply({"status": "compile_error", "message": str(exc)})
                    return
                except BaseException as exc:  # noqa: BLE001 - the constructor is solution code
                    self.reply(self._exception(exc))
                    return
        self.reply({"status": "ready"})

    def _exec_module(self) -> dict[str, Any] | None:
        try:
            exec(self.code, self.ns)  # noqa: S102 - the sandboxed solution
        except SystemExit as exc:
            if exc.code not in (None, 0):
                return {"status": "exit", "code": str(exc.code)[:200]}
        except BaseException as exc:  # noqa: BLE001 - any failure of solution code is reported
            return self._exception(exc)
        return None

    @staticmethod
    def _exception(exc: BaseException) -> dict[str, Any]:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next  # start the traceback at the solution's own frames
        try:
            traceback.print_exception(type(exc), exc, tb, file=sys.stderr)
        except BaseException:  # noqa: BLE001 - stderr may be closed or full
            pass
        return {"status": "exception", "exc": type(exc).__name__, "message": str(exc)[:500]}

    def _streams(self, fds: list[int]) -> None:
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(  # type: ignore[misc]
            io.BufferedReader(io.FileIO(0, "rb", closefd=False)), encoding="utf-8", errors="surrogateescape")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(  # type: ignore[misc]
            io.BufferedWriter(io.FileIO(1, "wb", closefd=False)), encoding="utf-8", errors="surrogateescape")
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(  # type: ignore[misc]
            io.BufferedWriter(io.FileIO(2, "wb", closefd=False)), encoding="utf-8",
            errors="backslashreplace", line_buffering=True)

    def _finish_streams(self, stdout: Any, stderr: Any) -> None:
        # what interpreter shutdown would do: wait for threads, run atexit, flush
        main = threading.main_thread()
        for t in threading.enumerate():
            if t is not main and not t.daemon:
                t.join()
        try:
            atexit._run_exitfuncs()
        finally:
            atexit._clear()
        for stream in {id(s): s for s in (sys.stdout, sys.stderr, stdout, stderr)}.values():
            try:
                stream.flush()
            except BaseException:  # noqa: BLE001 - closed or broken by the solution
                pass
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)

    def run_test(self, header: dict[str, Any], data: bytes, fds: list[int]) -> None:
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            self.reply({"status": "protocol", "message": "expected three descriptors"})
            return
        self._streams(fds)
        stdout, stderr = sys.stdout, sys.stderr
        try:
            answer, parts = self._execute(str(header.get("kind")), data)
        except MemoryError:
            answer, parts = {"status": "exception", "exc": "MemoryError", "message": "out of memory"}, []
        except BaseException as exc:  # noqa: BLE001 - any failure of solution code is reported
            answer, parts = self._exception(exc), []
        self._finish_streams(stdout, stderr)
        if isinstance(header.get("n"), str):  # the request's nonce: a frame the solution forged lacks it
            answer = dict(answer, n=header["n"])
        self.reply(answer, parts)

    def _execute(self, kind: str, data: bytes) -> tuple[dict[str, Any], list[bytes]]:
        # a separate frame so the solution's globals are freed before the reply is built
        if kind == "stdin" and self.native >= 0:
            return _native.run_binary(self.native, self.sol["limits"], self.sol["workdir"],
                                      self.native_limited), []
        if kind == "stdin":
            g = {"__name__": "__main__", "__builtins__": builtins, "__file__": "solution.py"}
            try:
                exec(self.code, g)  # noqa: S102 - the sandboxed solution
            except SystemExit as exc:
                if exc.code not in (None, 0):
                    return {"status": "exit", "code": str(exc.code)[:200]}, []
            return {"status": "ok"}, []
        if kind == "call":
            return self._call(data.decode("utf-8", "surrogateescape"))
        if kind == "assert":
            return self._assert(data.decode("utf-8", "surrogateescape")), []
        return {"status": "protocol", "message": f"unknown test kind {kind!r}"}, []

    def _call(self, text: str) -> tuple[dict[str, Any], list[bytes]]:
        try:
            positional, named = calls.parse_call_input(text)
        except ValueError as exc:
            return {"status": "bad_input", "message": str(exc)[:500]}, []
        fn = calls.resolve_entry_point(self.ns, self.sol["fn_name"])
        args, kwargs = calls.bind_arguments(fn, positional, named, self.ns)
        try:
            result = fn(*args, **kwargs)
        except SystemExit as exc:
            return {"status": "exit", "code": str(exc.code)[:200]}, []
        if result is None and calls.returns_node(fn, self.ns):
            result = []  # LeetCode serializes an empty list / tree as []
        try:
            payload = calls.encode_result(result)
        except (ValueError, RecursionError) as exc:
            return {"status": "ok", "unencodable": str(exc)[:500]}, [b"null"]
        return {"status": "ok"}, [payload]

    def _assert(self, source: str) -> dict[str, Any]:
        try:
            test_code = compile(source, "test.py", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as exc:
            return {"status": "bad_test", "message": str(exc)[:500]}
        try:
            exec(test_code, self.ns)  # noqa: S102 - the dataset's own test code
        except AssertionError as exc:
            return {"status": "assert_failed", "message": str(exc)[:500]}
        return {"status": "ok"}

    def serve(self) -> None:
        self.prepare()
        while True:
            try:
                header, blob, fds = proto.recv(self.sock, with_fds=True)
            except proto.ProtocolError:
                os._exit(0)
            if header.get("op") == "test":
                self.run_test(header, blob, fds)
            else:
                os._exit(0)


def runner_entry(sock: socket.socket, cfg: dict[str, Any], sol: dict[str, Any],
                  prelude: dict[str, Any]) -> None:
    code = 70
    try:
        runner = Runner(sock, cfg, sol, prelude)
        runner.setup()
        runner.serve()
        code = 0
    except BaseException:  # noqa: BLE001 - the runner must never return into the worker's loop
        try:
            traceback.print_exc()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(code)
