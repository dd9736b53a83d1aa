"""Result records of a model evaluation: one ``SampleResult`` per (problem, sample index), one
``ProblemResult`` per problem and the ``EvalSummary`` of the whole job. All JSON-safe via ``to_dict``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class SampleResult:
    """One judged sample. ``verdict``: the evaluator's (AC, WA, TLE, MLE, RE, CE, IE) or ``NA`` (no
    program in the completion, a failure). ``infra_error``: judging or generation failed (IE): the
    sample is left out of the attempts, never counted as a failure. ``method``: the comparator that
    accepted (AC) or the infrastructure error message (IE)."""

    index: int
    completion: str
    verdict: str
    passed: bool
    infra_error: bool
    method: str | None
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SampleResult:
        return cls(
            index=int(data["index"]),
            completion=str(data.get("completion", "")),
            verdict=str(data["verdict"]),
            passed=bool(data["passed"]),
            infra_error=bool(data.get("infra_error", data["verdict"] == "IE")),
            method=data.get("method"),
            elapsed_s=float(data.get("elapsed_s", 0.0)),
        )


@dataclass(frozen=True)
class ProblemResult:
    """A problem's outcome over its samples. ``attempts`` = samples without an infrastructure error,
    ``passed`` = accepted samples among them, ``verdicts`` = every sample's verdict by index (IE
    included). ``pass_at_1`` / ``pass_at_k`` are None when no attempt was judged (all IE).
    ``difficulty`` is the bucket (easy / medium / hard / unknown)."""

    id: str
    platform: str
    external_id: str
    io_mode: str
    difficulty: str
    contest_date: str | None
    attempts: int
    passed: int
    infra_errors: int
    verdicts: list[str]
    pass_at_1: float | None
    pass_at_k: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def cli_row(self) -> dict[str, Any]:
        """The command line's stdout row: ``{"id", "attempts", "passed", "pass@1", "pass@k", "verdicts"}``."""
        return {
            "id": self.id,
            "attempts": self.attempts,
            "passed": self.passed,
            "pass@1": self.pass_at_1,
            "pass@k": self.pass_at_k,
            "verdicts": list(self.verdicts),
        }

    def pass_rate_row(self) -> dict[str, Any]:
        """The calibration export row ``{"platform", "external_id", "passed", "attempts"}``."""
        return {
            "platform": self.platform,
            "external_id": self.external_id,
            "passed": self.passed,
            "attempts": self.attempts,
        }


@dataclass
class EvalSummary:
    """A finished evaluation: per-problem results in input order, the aggregate (``summarize``), what
    was excluded and why (``excluded``: counts by reason; ``excluded_ids``: id -> reason), and timings
    (``generate_s``, ``judge_s``: summed busy time of each side; ``wall_s``; ``samples_generated``)."""

    settings: dict[str, Any]
    problems: list[ProblemResult]
    summary: dict[str, Any]
    excluded: dict[str, int] = field(default_factory=dict)
    excluded_ids: dict[str, str] = field(default_factory=dict)
    timing: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "problems": [p.to_dict() for p in self.problems],
            "summary": self.summary,
            "excluded": dict(self.excluded),
            "excluded_ids": dict(self.excluded_ids),
            "timing": dict(self.timing),
        }


__all__ = ["EvalSummary", "ProblemResult", "SampleResult"]
