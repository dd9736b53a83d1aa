"""MicroCoder-Evaluator: a sandboxed, parallel code judge with the MicroCoder fallback comparison chain.

The core (this package minus its Django files) imports nothing from Django, so trainers and scripts can
use it as a library::

    from evaluator import judge_batch, reward_from_verdict
    verdicts = judge_batch(cases)                      # same order as cases
    rewards = [reward_from_verdict(v) for v in verdicts]  # None for infrastructure errors

or from the shell: ``python -m evaluator judge|batch|compare|package`` (see ``evaluator.cli``). Cases may be
C or C++ (:mod:`evaluator.languages`), carry a checker program (:mod:`evaluator.checkers`) or be
interactive (:mod:`evaluator.interactive`); ICPC/Kattis packages are read by :mod:`evaluator.package`.
"""

from __future__ import annotations

from .compare import compare_output, compare_value, parse_checker, parse_validator_flags
from .runner import JudgeConfig, judge_batch, judge_case, reward_from_verdict, shutdown_pools
from .sandbox import SandboxConfig

__all__ = [
    "JudgeConfig",
    "SandboxConfig",
    "compare_output",
    "compare_value",
    "judge_batch",
    "judge_case",
    "parse_checker",
    "parse_validator_flags",
    "reward_from_verdict",
    "shutdown_pools",
]
