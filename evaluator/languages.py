"""Languages the judge runs: Python (executed by the runner), C and C++ (compiled here, once per source).

A case's ``language`` is ``"python"`` (default), ``"c"`` or ``"cpp"`` (aliases: ``python3``, ``py``,
``c++``, ``cxx``, ``gnu c++17`` ...). C and C++ sources are compiled with Debian's gcc/g++::

    gcc -std=c11 -O2 -pipe -o a.out SOURCES -lm        (C)
    g++ -std=c++17 -O2 -pipe -o a.out SOURCES -lm      (C++)

Compilation runs in its own bubblewrap sandbox (no network, read-only system, only a fresh build
directory writable; as root every capability is dropped) with its own limits
(:class:`CompileLimits`: CPU seconds, wall seconds, address space, output file size). Without
bubblewrap it runs under the same rlimits only, like the judge's rlimit fallback.

Results are cached by ``sha256(language, compiler flags, sources)`` in a per-process dictionary and in
a cache directory (``MICROCODER_COMPILE_CACHE``, default ``$TMPDIR/microcoder-compile-<uid>``), so a
source is compiled once per machine however many times it is judged. A failed compilation is a
``CE`` verdict carrying the compiler's message (also cached). :func:`cache_stats` counts hits and
compilations (the tests assert on it).
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import shutil
import stat
import subprocess
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .sandbox import SandboxConfig, _is_root, _namespace_flags, _system_binds, bwrap_status

LANGUAGES = ("python", "c", "cpp")
_ALIASES = {
    "python": "python", "python3": "python", "py": "python", "py3": "python", "pypy3": "python",
    "c": "c", "gnu c": "c", "gnu c11": "c", "c11": "c",
    "cpp": "cpp", "c++": "cpp", "cxx": "cpp", "cc": "cpp", "c++17": "cpp", "gnu c++17": "cpp",
    "g++": "cpp", "c++14": "cpp", "c++11": "cpp", "c++20": "cpp",
}
COMPILERS = {"c": ("gcc", "-std=c11"), "cpp": ("g++", "-std=c++17")}
_EXTENSIONS = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".py": "python"}
_MESSAGE_LIMIT = 4000
_MB = 1 << 20


def normalize_language(value: object) -> str:
    """The canonical language name for a case's ``language`` (None -> python). Raises ValueError."""
    if value is None or value == "":
        return "python"
    if not isinstance(value, str):
        raise ValueError(f"language must be a string, got {type(value).__name__}")
    name = _ALIASES.get(value.strip().lower())
    if name is None:
        raise ValueError(f"language {value!r}: use one of {', '.join(LANGUAGES)}")
    return name


_C_LIKE = re.compile(r"^\s*#\s*include\s*[<\"]|\bint\s+main\s*\(", re.MULTILINE)
_CPP_ONLY = re.compile(r"\bstd::|\busing\s+namespace\b|#\s*include\s*<(?:bits/stdc\+\+\.h|iostream|vector|string|"
                       r"algorithm|map|set|queue|cstdio|cstdlib|cstring|cmath)>|\bcout\b|\bcin\b|\btemplate\s*<")


def detect_language(code: str) -> str:
    """The language a solution's source is written in, as far as its text tells: C or C++ when it has an
    ``#include`` or an ``int main(``, C++ when it also uses something only C++ has (``std::``, ``using
    namespace``, a C++ header, ``cout``/``cin``, templates), else Python."""
    if not _C_LIKE.search(code):
        return "python"
    return "cpp" if _CPP_ONLY.search(code) else "c"


def resolve_language(value: object, code: str) -> str:
    """``value`` as a canonical language name, ``"auto"`` detected from ``code``. Raises ValueError."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return detect_language(code)
    return normalize_language(value)


def language_of_file(path: str | Path) -> str:
    """The language of a source file by its extension (``.c``, ``.cpp``/``.cc``/``.cxx``, ``.py``)."""
    suffix = Path(path).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise ValueError(f"cannot tell the language of {Path(path).name!r}; pass --language")
    return _EXTENSIONS[suffix]


@dataclass(frozen=True)
class CompileLimits:
    """Limits of one compilation (the compiler is untrusted input's first reader)."""

    cpu_s: float = field(default=30.0, metadata={"help": "CPU seconds for the whole compiler driver."})
    wall_s: float = field(default=60.0, metadata={"help": "Wall seconds before the compiler is killed."})
    memory_mb: int = field(default=2048, metadata={"help": "Address space per compiler process."})
    output_mb: int = field(default=64, metadata={"help": "Largest file the compiler may write."})


@dataclass(frozen=True)
class Compiled:
    """Outcome of a compilation: ``binary`` (the executable's bytes) or ``message`` (the CE text)."""

    ok: bool
    binary: bytes = b""
    message: str = ""
    key: str = ""
    cached: bool = False


_lock = threading.Lock()
_memory: dict[str, Compiled] = {}
_key_locks: dict[str, threading.Lock] = {}
_stats = {"hits": 0, "compiles": 0}


def cache_stats() -> dict[str, int]:
    """``{"hits", "compiles"}`` since the process started (or :func:`clear_cache`)."""
    with _lock:
        return dict(_stats)


def clear_cache(*, disk: bool = False) -> None:
    """Forget the in-process cache (and with ``disk`` the cache directory); resets the counters."""
    with _lock:
        _memory.clear()
        _stats.update(hits=0, compiles=0)
    if disk:
        shutil.rmtree(cache_dir(), ignore_errors=True)


def cache_dir() -> Path:
    configured = os.environ.get("MICROCODER_COMPILE_CACHE")
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / f"microcoder-compile-{os.getuid()}"


def source_key(language: str, sources: Mapping[str, str]) -> str:
    compiler, std = COMPILERS[language]
    digest = hashlib.sha256(f"{language}\0{compiler}\0{std}\0-O2\0".encode())
    for name in sorted(sources):
        digest.update(name.encode() + b"\0" + sources[name].encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def compile_sources(language: str, sources: Mapping[str, str], *, limits: CompileLimits | None = None,
                    sandbox: SandboxConfig | None = None) -> Compiled:
    """Compile ``sources`` (file name -> text; every ``.c``/``.cpp`` file is a translation unit, the
    rest are headers) for ``language`` ("c" or "cpp"), once per content hash. Never raises for bad
    code: a failed compilation is ``Compiled(ok=False, message=...)``. Raises RuntimeError when the
    compiler cannot run at all (an infrastructure error)."""
    if language not in COMPILERS:
        raise ValueError(f"{language!r} is not a compiled language")
    key = source_key(language, sources)
    with _lock:
        hit = _memory.get(key)
        if hit is not None:
            _stats["hits"] += 1
            return Compiled(hit.ok, hit.binary, hit.message, key, cached=True)
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # two threads with the same source compile it once
        with _lock:
            hit = _memory.get(key)
            if hit is not None:
                _stats["hits"] += 1
                return Compiled(hit.ok, hit.binary, hit.message, key, cached=True)
        result = _from_disk(key)
        if result is None:
            result = _compile(language, sources, key, limits or CompileLimits(), sandbox or SandboxConfig.from_env())
            with _lock:
                _stats["compiles"] += 1
            _to_disk(result)
        else:
            with _lock:
                _stats["hits"] += 1
        with _lock:
            _memory[key] = result
        return result


def compile_source(language: str, source: str, **kwargs: object) -> Compiled:
    """One-file shorthand of :func:`compile_sources` (``main.c`` / ``main.cpp``)."""
    name = "main.c" if language == "c" else "main.cpp"
    return compile_sources(language, {name: source}, **kwargs)  # type: ignore[arg-type]


def _trusted(folder: Path) -> bool:
    """The cache directory is ours alone: a real directory owned by us that nobody else can write (a
    shared /tmp must not let another user plant executables under a name we would run)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _from_disk(key: str) -> Compiled | None:
    folder = cache_dir()
    if not _trusted(folder):
        return None
    try:
        binary = (folder / f"{key}.bin").read_bytes()
        return Compiled(True, binary, "", key, cached=True)
    except OSError:
        pass
    try:
        message = (folder / f"{key}.ce").read_text(encoding="utf-8", errors="replace")
        return Compiled(False, b"", message, key, cached=True)
    except OSError:
        return None


def _to_disk(result: Compiled) -> None:
    folder = cache_dir()
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _trusted(folder):
            return
        suffix, data = (".bin", result.binary) if result.ok else (".ce", result.message.encode())
        tmp = folder / f".{result.key}.{os.getpid()}.{threading.get_ident()}"
        tmp.write_bytes(data)
        os.replace(tmp, folder / f"{result.key}{suffix}")  # atomic: readers see all or nothing
    except OSError:
        pass  # the cache is an optimisation; the in-process one still holds the result


def _limit_child(limits: CompileLimits, uid: int | None) -> None:
    """preexec_fn of the compiler (runs between fork and exec; only async-safe work)."""
    os.setsid()
    cpu = max(1, int(limits.cpu_s))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * _MB, limits.memory_mb * _MB))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.output_mb * _MB, limits.output_mb * _MB))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)


def _compile(language: str, sources: Mapping[str, str], key: str, limits: CompileLimits,
             sandbox: SandboxConfig) -> Compiled:
    compiler, std = COMPILERS[language]
    exe = shutil.which(compiler)
    if exe is None:
        raise RuntimeError(f"{compiler} is not installed (Debian packages gcc and g++)")
    units = sorted(n for n in sources if Path(n).suffix.lower() in (".c", ".cc", ".cpp", ".cxx", ".c++"))
    if not units:
        raise ValueError("no C/C++ translation unit among the sources")
    build = tempfile.mkdtemp(prefix="microcoder-build-")
    uid = None
    try:
        for name, text in sources.items():
            if "/" in name or name.startswith("."):
                raise ValueError(f"source file name {name!r} must be a plain file name")
            Path(build, name).write_bytes(text.encode("utf-8", "surrogateescape"))
        use_bwrap = sandbox.mode != "rlimit" and bwrap_status(sandbox)[0]
        if _is_root() and not use_bwrap:  # the fallback drops root for a uid below the runners' ones
            uid = sandbox.uid_base - 1 - (os.getpid() % 100_000)
            os.chown(build, uid, uid)
        workdir = "/build" if use_bwrap else build
        argv = [exe, std, "-O2", "-pipe", "-o", f"{workdir}/a.out", *(f"{workdir}/{u}" for u in units), "-lm"]
        if use_bwrap:
            flags = (["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
                      "--cap-drop", "ALL"] if _is_root() else _namespace_flags(False, False))
            argv = [shutil.which(sandbox.bwrap) or sandbox.bwrap, "--die-with-parent", "--clearenv", *flags,
                    *_system_binds(), "--proc", "/proc", "--dev", "/dev",
                    "--tmpfs", "/tmp", "--bind", build, "/build", "--chdir", "/build",
                    "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LANG", "C.UTF-8", *argv]
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": build}
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=limits.wall_s, env=env, cwd=build,
                                  preexec_fn=lambda: _limit_child(limits, None if use_bwrap else uid),
                                  check=False)
        except subprocess.TimeoutExpired:
            return Compiled(False, b"", f"compilation exceeded {limits.wall_s:g}s", key)
        except OSError as exc:
            raise RuntimeError(f"cannot run the compiler: {exc}") from exc
        if use_bwrap and proc.returncode != 0 and proc.stderr.startswith(b"bwrap:"):
            raise RuntimeError(f"the compile sandbox failed: {proc.stderr.decode(errors='replace').strip()}")
        output = (proc.stderr + proc.stdout).decode("utf-8", "replace").replace(build, "").replace("/build/", "")
        if proc.returncode != 0:
            if proc.returncode < 0:
                output += f"\ncompiler killed by signal {-proc.returncode} (compile limits exceeded?)"
            return Compiled(False, b"", output.strip()[-_MESSAGE_LIMIT:] or "compilation failed", key)
        binary = Path(build, "a.out").read_bytes()
        return Compiled(True, binary, "", key)
    finally:
        shutil.rmtree(build, ignore_errors=True)
