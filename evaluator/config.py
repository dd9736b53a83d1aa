"""Judge configuration: default limits for cases that set none, and the pool's shape."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .sandbox import Limits, SandboxConfig


@dataclass(frozen=True)
class JudgeConfig:
    """Defaults for cases that do not set their own limits, and the pool's shape."""

    time_limit_s: float = field(default=2.0, metadata={"help": "CPU seconds per test (case: time_limit_s)."})
    memory_mb: int = field(default=1024, metadata={"help": "Memory per solution in MiB (case: memory_mb)."})
    wall_factor: float = field(default=3.0, metadata={"help": "Wall limit per test = factor * time limit "
                                                      "+ wall_extra_s (load on the host inflates wall time)."})
    wall_extra_s: float = field(default=1.0, metadata={"help": "See wall_factor."})
    solution_time_limit_s: float = field(default=120.0, metadata={
        "help": "Wall seconds for all tests of one solution; beyond it the remaining tests are TLE."})
    output_limit_mb: int = field(default=32, metadata={"help": "Stdout / result size cap per test."})
    nproc: int = field(default=64, metadata={"help": "Processes and threads a solution may hold."})
    nofile: int = field(default=256, metadata={"help": "Open files a solution may hold."})
    load_time_limit_s: float = field(default=10.0, metadata={
        "help": "Compiling (and, in call mode, executing the module) of a solution."})
    watchdog_grace_s: float = field(default=10.0, metadata={
        "help": "Extra seconds a worker may take past its own deadlines before it is killed and replaced."})
    workers: int | None = field(default=None, metadata={"help": "Pool size; None = usable CPU cores."})
    sandbox: SandboxConfig = field(default_factory=SandboxConfig.from_env, metadata={
        "help": "How workers are sandboxed (see evaluator.sandbox)."})

    def __post_init__(self) -> None:
        for name in ("time_limit_s", "memory_mb", "wall_factor", "solution_time_limit_s", "output_limit_mb",
                     "nproc", "nofile", "load_time_limit_s", "watchdog_grace_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"JudgeConfig.{name} must be positive, got {getattr(self, name)!r}")
        if self.wall_factor < 1:
            raise ValueError("wall_factor below 1 would kill programs before their CPU limit")
        if self.workers is not None and self.workers < 1:
            raise ValueError("workers must be at least 1 (or None for one per core)")

    def limits(self, time_limit_s: float, memory_mb: int) -> Limits:
        return Limits(time_limit_s=time_limit_s, wall_limit_s=time_limit_s * self.wall_factor + self.wall_extra_s,
                      memory_mb=memory_mb, output_limit=self.output_limit_mb << 20, nproc=self.nproc,
                      nofile=self.nofile, load_limit_s=self.load_time_limit_s,
                      cpu_budget_s=self.solution_time_limit_s + self.load_time_limit_s,
                      watchdog_grace_s=self.watchdog_grace_s)


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


_default_config: JudgeConfig | None = None


def default_config() -> JudgeConfig:
    """The process-wide default (its sandbox settings come from the environment)."""
    global _default_config
    if _default_config is None:
        _default_config = JudgeConfig()
    return _default_config
