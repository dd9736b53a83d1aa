"""Without bubblewrap the judge still works, says so loudly, and drops what it can."""

from __future__ import annotations

import logging
import os
from dataclasses import replace
from pathlib import Path

import pytest

from evaluator import judge_case
from evaluator.sandbox import SandboxConfig, bwrap_status

from .conftest import FAST, stdin_case

PROJECT = Path(__file__).resolve().parents[2]


def test_a_missing_bwrap_is_detected_with_a_reason() -> None:
    ok, reason = bwrap_status(SandboxConfig(bwrap="/nonexistent/bwrap-for-detection"))
    assert not ok and "not found" in reason


def test_it_falls_back_to_rlimits_with_a_loud_warning(caplog: pytest.LogCaptureFixture) -> None:
    config = replace(FAST, sandbox=SandboxConfig(mode="auto", bwrap="/nonexistent/bwrap-for-fallback"))
    with caplog.at_level(logging.WARNING, logger="evaluator.sandbox"):
        v = judge_case(stdin_case("print(6 * 7)", [("", "42")]), config=config)
    assert (v["verdict"], v["sandbox"]) == ("AC", "rlimit")
    assert any("SANDBOX DEGRADED" in r.getMessage() for r in caplog.records)


def test_requiring_bwrap_fails_as_ie_instead_of_degrading() -> None:
    config = replace(FAST, sandbox=SandboxConfig(mode="bwrap", bwrap="/nonexistent/bwrap-required"))
    v = judge_case(stdin_case("print(1)", [("", "1")]), config=config)
    assert v["verdict"] == "IE" and "bwrap" in v["message"]


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root judge can switch the solution to another uid")
def test_the_fallback_runs_a_root_judge_s_solutions_under_another_uid() -> None:
    config = replace(FAST, sandbox=SandboxConfig(mode="rlimit"))
    target = PROJECT / "PWNED-fallback"
    code = (f"import os\nprint(os.getuid() != 0)\ntry:\n    open({str(target)!r}, 'w')\n"
            "except OSError:\n    print('read-only')\n")
    v = judge_case(stdin_case(code, [("", "True\nread-only\n")]), config=config)
    assert v["verdict"] == "AC", v
    assert not target.exists()
