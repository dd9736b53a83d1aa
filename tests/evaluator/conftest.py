"""Shared helpers for the evaluator tests: small limits so hostile programs are stopped quickly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evaluator.runner import JudgeConfig
from evaluator.sandbox import SandboxConfig, bwrap_status

#: real data shared with the project (read-only); tests skip when it is absent
SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"

FAST = JudgeConfig(time_limit_s=1.0, memory_mb=256, wall_factor=2.0, wall_extra_s=0.5,
                   solution_time_limit_s=30.0, output_limit_mb=1, nproc=32, load_time_limit_s=5.0,
                   watchdog_grace_s=10.0)


def bwrap_works() -> bool:
    return bwrap_status(SandboxConfig.from_env())[0] and SandboxConfig.from_env().mode != "rlimit"


requires_bwrap = pytest.mark.skipif(not bwrap_works(), reason="bubblewrap cannot run here (rlimit fallback)")


def stdin_case(code: str, tests: list[tuple[str, str]] | None = None, **extra: Any) -> dict[str, Any]:
    tests = tests if tests is not None else [("", "")]
    return {"id": extra.pop("id", "case"), "mode": "stdin", "code": code,
            "tests": [{"input": i, "output": o} for i, o in tests], **extra}


def call_case(code: str, fn_name: str | None, tests: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"id": extra.pop("id", "case"), "mode": "call", "code": code, "fn_name": fn_name, "tests": tests,
            **extra}


@pytest.fixture
def fast() -> JudgeConfig:
    return FAST
