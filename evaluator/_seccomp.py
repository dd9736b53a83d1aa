"""The seccomp filter of judged programs: system calls a solution never needs fail with EPERM.

Built once in the worker with libseccomp (through ``pyseccomp``, a ctypes binding of the Debian library
``libseccomp2``) and loaded in every runner after it dropped its privileges and before the solution's
code runs; it is inherited by every process and program the solution starts. EPERM rather than a kill,
so a runtime that probes a call (and copes with its absence) keeps working.

Denied: namespaces (``unshare``, ``setns``, ``clone`` with any ``CLONE_NEW*`` flag; ``clone3`` answers
ENOSYS, as its flags live in memory a filter cannot read, so glibc falls back to ``clone``), mounting and
changing roots, ``ptrace`` and ``process_vm_readv/writev``, the kernel keyring, ``bpf``,
``perf_event_open``, kernel modules and ``kexec``, ``userfaultfd``, ``io_uring``, POSIX message queues,
``personality`` flags that weaken the address space (``READ_IMPLIES_EXEC``, ``ADDR_NO_RANDOMIZE``, ...;
the ``0xffffffff`` query still works), and a few more administrative calls. Calls of another ABI (i386
``int 0x80``, x32) kill the process (libseccomp's bad-architecture action).

Standard library plus the optional ``pyseccomp`` (bind-mounted into the sandbox next to _worker.py; the
virtualenv is bound read-only). Without it, :func:`prepare` returns a reason and nothing is filtered.
"""

from __future__ import annotations

import errno
from typing import Any

DENIED = (
    "unshare", "setns", "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "ptrace", "process_vm_readv",
    "process_vm_writev", "kcmp", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "mq_open", "mq_unlink", "mq_timedsend",
    "mq_timedreceive", "mq_notify", "mq_getsetattr", "open_by_handle_at", "name_to_handle_at", "swapon",
    "swapoff", "reboot", "acct", "quotactl", "syslog", "vhangup", "iopl", "ioperm", "lookup_dcookie",
    "nfsservctl", "uselib", "fanotify_init", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "sethostname", "setdomainname",
)
#: CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME
CLONE_NAMESPACES = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
                    0x00000080)
#: personality flags a solution has no use for: ADDR_NO_RANDOMIZE, MMAP_PAGE_ZERO, ADDR_COMPAT_LAYOUT,
#: READ_IMPLIES_EXEC, ADDR_LIMIT_32BIT, SHORT_INODE, WHOLE_SECONDS, STICKY_TIMEOUTS, ADDR_LIMIT_3GB
PERSONALITY_FLAGS = (0x0040000, 0x0100000, 0x0200000, 0x0400000, 0x0800000, 0x1000000, 0x2000000, 0x4000000,
                     0x8000000)
#: the query ``personality(0xffffffff)`` has every bit set: rules require bit 31 clear, so it still works
_QUERY_BIT = 0x80000000

_FILTER: Any = None
#: the filter as a classic BPF program, generated once: a runner loads it with one prctl instead of
#: having libseccomp regenerate it (a few milliseconds per solution)
_PROGRAM: bytes = b""
_LOADER: tuple[Any, Any] | None = None  # (libc, struct sock_fprog) made in the worker, inherited by runners
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def prepare() -> str:
    """Build the filter (once, in the worker). Returns "" when it is ready, else why it is not."""
    global _FILTER
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # the package, or libseccomp.so.2 itself, is missing
        return f"seccomp unavailable: {exc}"
    try:
        filt = sc.SyscallFilter(defaction=sc.ALLOW)
        deny = sc.ERRNO(errno.EPERM)
        for name in DENIED:
            try:
                filt.add_rule(deny, name)
            except (OSError, ValueError):
                pass  # not a system call of this architecture
        for flag in CLONE_NAMESPACES:
            filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        for flag in PERSONALITY_FLAGS:
            filt.add_rule(deny, "personality", sc.Arg(0, sc.MASKED_EQ, _QUERY_BIT | flag, flag))
    except (OSError, ValueError, RuntimeError) as exc:
        return f"seccomp filter could not be built: {exc}"
    _FILTER = filt
    _export(sc)
    return ""


def _export(sc: Any) -> None:
    """Generate the BPF program once (a binary tree of system calls where libseccomp can)."""
    global _PROGRAM
    import tempfile

    try:
        _FILTER.set_attr(sc.Attr.CTL_OPTIMIZE, 2)
    except (OSError, ValueError, AttributeError):
        pass
    try:
        with tempfile.TemporaryFile() as fh:
            _FILTER.export_bpf(fh)
            fh.seek(0)
            program = fh.read()
    except (OSError, ValueError):
        return
    if program and len(program) % 8 == 0:  # struct sock_filter is 8 bytes
        import ctypes

        class SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

        global _LOADER
        _PROGRAM = program
        _LOADER = (ctypes.CDLL(None, use_errno=True), SockFprog(len(program) // 8, program))


def install() -> None:
    """Load the prepared filter into this process (a runner, before the solution runs). Sets
    no_new_privs. A no-op when :func:`prepare` failed; raises OSError when loading fails."""
    if _FILTER is None:
        return
    if _LOADER is not None:
        import ctypes

        libc, prog = _LOADER
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 and \
                libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0:
            return
    _FILTER.load()
