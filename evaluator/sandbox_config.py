"""Configuration of the judge's sandbox: how workers start (:class:`SandboxConfig`) and the per-solution
limits they enforce (:class:`Limits`). Re-exported by :mod:`evaluator.sandbox`."""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_PREIMPORT = (
    "array", "bisect", "cmath", "collections", "copy", "dataclasses", "datetime", "decimal", "enum",
    "fractions", "functools", "heapq", "inspect", "io", "itertools", "json", "math", "numbers", "operator",
    "os", "queue", "random", "re", "statistics", "string", "struct", "sys", "threading", "time", "typing",
    "sortedcontainers",
)



@dataclass(frozen=True)
class SandboxConfig:
    """How workers are started. ``from_env()`` reads ``MICROCODER_SANDBOX`` / ``MICROCODER_BWRAP``."""

    mode: str = field(default="auto", metadata={"help": "'auto' (bwrap when it works, else rlimit with a "
                                                "warning), 'bwrap' (fail instead of falling back) or 'rlimit'."})
    bwrap: str = field(default="bwrap", metadata={"help": "bubblewrap executable (name on PATH or path)."})
    python: str = field(default=sys.executable, metadata={"help": "Interpreter that runs the solutions; "
                                                          "its installation and virtualenv are bound read-only."})
    tmpfs_mb: int = field(default=512, metadata={"help": "Size of the sandbox's private /tmp (bwrap only)."})
    workdir_mb: int = field(default=512, metadata={"help": "Size of each solution's own tmpfs working directory "
                                                   "(bwrap only, where the worker may mount; its inode cap is "
                                                   "Limits.max_files)."})
    uid_base: int = field(default=1_900_000_000, metadata={"help": "When the judge runs as root, runners "
                                                           "use unused uids from here (one per slot)."})
    recursion_limit: int = field(default=1_000_000, metadata={"help": "sys.setrecursionlimit in solutions."})
    stack_mb: int = field(default=1024, metadata={"help": "Main-thread stack limit (RLIMIT_STACK)."})
    thread_stack_mb: int = field(default=64, metadata={"help": "threading.stack_size for new threads."})
    preimport: tuple[str, ...] = field(default=DEFAULT_PREIMPORT, metadata={
        "help": "Modules imported once in the worker so solutions get them for free (missing ones skipped)."})
    extra_ro_binds: tuple[str, ...] = field(default=(), metadata={
        "help": "More host paths bound read-only at the same place (bwrap only)."})
    start_timeout_s: float = field(default=30.0, metadata={"help": "Deadline for a worker to start."})
    seccomp: bool = field(default=True, metadata={
        "help": "Load the seccomp filter of evaluator/_seccomp.py into every runner (needs pyseccomp and "
                "libseccomp2; without them the judge runs unfiltered and logs a warning)."})

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "bwrap", "rlimit"):
            raise ValueError(f"sandbox mode {self.mode!r}: use 'auto', 'bwrap' or 'rlimit'")
        for name in ("tmpfs_mb", "workdir_mb", "stack_mb", "thread_stack_mb", "recursion_limit"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.recursion_limit < 1000:
            raise ValueError("recursion_limit below Python's default 1000 would break ordinary programs")

    @classmethod
    def from_env(cls) -> SandboxConfig:
        return cls(mode=os.environ.get("MICROCODER_SANDBOX", "auto") or "auto",
                   bwrap=os.environ.get("MICROCODER_BWRAP", "bwrap") or "bwrap")


@dataclass(frozen=True)
class Limits:
    """Per-solution limits sent to the worker (all enforced inside the sandbox)."""

    time_limit_s: float = field(default=2.0, metadata={"help": "CPU seconds per test."})
    wall_limit_s: float = field(default=4.5, metadata={"help": "Wall seconds per test."})
    memory_mb: int = field(default=1024, metadata={"help": "Address space on top of the interpreter's."})
    output_limit: int = field(default=32 << 20, metadata={"help": "Bytes of stdout (and of a call result)."})
    nproc: int = field(default=64, metadata={"help": "Processes + threads the solution may hold."})
    nofile: int = field(default=256, metadata={"help": "Open file descriptors."})
    max_files: int = field(default=10_000, metadata={
        "help": "Files and directories a solution may hold in its private /tmp (an inode cap; bwrap only)."})
    load_limit_s: float = field(default=10.0, metadata={"help": "Compile + module execution (call mode)."})
    cpu_budget_s: float = field(default=120.0, metadata={"help": "RLIMIT_CPU backstop for one runner."})
    watchdog_grace_s: float = field(default=10.0, metadata={
        "help": "A worker that has not answered this long after its own deadline is killed (judge side)."})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
