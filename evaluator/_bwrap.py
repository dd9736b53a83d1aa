"""Bubblewrap detection and the bind/namespace arguments of a sandboxed worker (judge side only).
Re-exported by :mod:`evaluator.sandbox`."""

from __future__ import annotations

import logging
import os
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path

from .sandbox_config import SandboxConfig

logger = logging.getLogger("evaluator.sandbox")

# CAP_SYS_PTRACE only lets the worker read the solution's smaps_rollup and open descriptors (memory
# accounting of processes under another uid); CAP_SYS_ADMIN only lets it mount each solution's own tmpfs
# (size and inode cap) inside the sandbox's mount namespace. Runners drop every capability when they switch
# uid, and their seccomp filter denies mount and the namespace calls anyway.
_ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER",
              "CAP_SYS_PTRACE", "CAP_SYS_ADMIN")
_detect_lock = threading.Lock()
_bwrap_state: dict[str, tuple[bool, str]] = {}
_warned: set[str] = set()


def _is_root() -> bool:
    return os.geteuid() == 0


def _namespace_flags(root: bool, disable_userns: bool) -> list[str]:
    if root:
        flags = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                 "--cap-drop", "ALL"]
        for cap in _ROOT_CAPS:
            flags += ["--cap-add", cap]
        return flags
    flags = ["--unshare-all", "--unshare-user"]
    return flags + (["--disable-userns"] if disable_userns else [])


def _probe_bwrap(config: SandboxConfig) -> tuple[bool, str]:
    """Run ``bwrap <our namespace flags> --ro-bind / / true`` (uncached)."""
    exe = shutil.which(config.bwrap)
    if exe is None:
        return False, f"{config.bwrap!r} not found (install the Debian package 'bubblewrap')"
    state = (False, "")
    for disable in (True, False):
        cmd = [exe, "--die-with-parent", *_namespace_flags(_is_root(), disable), "--ro-bind", "/", "/", "true"]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"bwrap did not run: {exc}"
        if proc.returncode == 0:
            return True, "" if disable else "no-disable-userns"
        reason = proc.stderr.decode(errors="replace").strip() or f"exit {proc.returncode}"
        state = (False, f"bwrap failed: {reason} (user namespaces unavailable?)")
    return state


def bwrap_status(config: SandboxConfig) -> tuple[bool, str]:
    """Whether bubblewrap works here with our flags, and why not. Checked once per executable."""
    with _detect_lock:
        if config.bwrap not in _bwrap_state:
            _bwrap_state[config.bwrap] = _probe_bwrap(config)
        return _bwrap_state[config.bwrap]


def _mark_bwrap_broken(config: SandboxConfig, reason: str) -> None:
    with _detect_lock:
        _bwrap_state[config.bwrap] = (False, reason)


def warn_fallback(reason: str) -> None:
    """Log, once per reason, that judging runs without namespaces."""
    if reason not in _warned:
        _warned.add(reason)
        logger.warning("SANDBOX DEGRADED: bubblewrap unavailable (%s); judging with rlimits only. Solutions "
                       "can read the file system, use the network and see other processes.", reason)


def warn_once(message: str) -> None:
    """Log ``message`` as a warning once per process."""
    if message not in _warned:
        _warned.add(message)
        logger.warning("%s", message)


def _world_accessible(path: Path) -> bool:
    """True when an unrelated uid can reach and read ``path`` (every ancestor searchable)."""
    try:
        real = path.resolve()
        st = real.stat()
        if not st.st_mode & (stat.S_IROTH | (stat.S_IXOTH if real.is_dir() else 0)):
            return False
        for parent in real.parents:
            if not parent.stat().st_mode & stat.S_IXOTH:
                return False
    except OSError:
        return False
    return True


def _python_roots(python: str) -> list[str]:
    """Directories that make up the interpreter (installation, virtualenv) outside /usr."""
    roots: set[str] = set()
    abs_python = os.path.abspath(python)
    venv = os.path.dirname(os.path.dirname(abs_python))
    if os.path.exists(os.path.join(venv, "pyvenv.cfg")):
        roots.add(venv)
    roots.add(os.path.dirname(os.path.dirname(os.path.realpath(abs_python))))
    if os.path.realpath(abs_python) == os.path.realpath(sys.executable):
        roots.update({sys.prefix, sys.base_prefix, sys.exec_prefix})
    keep = []
    for root in sorted(roots):
        real = os.path.realpath(root)
        if real in ("/", "/usr") or real.startswith("/usr/"):
            continue
        keep.append(root)
    return keep


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    if os.path.exists("/etc/ld.so.cache"):
        args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return args


def _parents(path: str, made: set[str]) -> list[str]:
    """bwrap options creating the ancestors of ``path`` world-searchable (bwrap's default is 0700,
    which would hide e.g. /root/.pyenv from a runner that switched uid)."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for i in range(len(parts)):
        parent = "/" + "/".join(parts[:i + 1])
        if parent not in made and parent not in ("/usr", "/tmp", "/proc", "/dev"):
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args
