"""Sampling and judging settings of a model evaluation (part of the job: stored with its results)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from datetime import date
from typing import Any

CHECKERS = ("problem", "lenient", "strict")


@dataclass(frozen=True)
class EvalSettings:
    """``k`` samples per problem at ``temperature`` / ``top_p`` with at most ``max_tokens`` new tokens.

    ``seed`` seeds every sample through (seed, problem id, sample index), so a resumed job regenerates
    identical missing samples. ``after`` keeps only problems whose contest_date is later than it (the
    model's training cut-off; problems without a date are excluded and counted). ``checker``: 'lenient'
    (the MicroCoder fallback chain), 'strict' (the LiveCodeBench-style baseline) or 'problem' (each
    problem's own checker). ``judge_workers``: parallel judge processes, 0 = the evaluator's default.
    """

    k: int = 4
    temperature: float = 0.6
    top_p: float = 0.95
    max_tokens: int = 4096
    seed: int = 0
    after: date | None = None
    checker: str = "lenient"
    judge_workers: int = 0

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")
        if not 0.0 < self.temperature <= 4.0:
            raise ValueError(f"temperature must be in (0, 4], got {self.temperature}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")
        if self.checker not in CHECKERS:
            raise ValueError(f"checker must be one of {', '.join(CHECKERS)}, got {self.checker!r}")
        if self.judge_workers < 0:
            raise ValueError(f"judge_workers must be >= 0 (0 = default), got {self.judge_workers}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: ``after`` as ``YYYY-MM-DD`` or None."""
        out = asdict(self)
        out["after"] = self.after.isoformat() if self.after else None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalSettings:
        """Inverse of ``to_dict``; unknown keys raise ValueError naming them."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown evaluation setting(s): {', '.join(unknown)}")
        values = dict(data)
        after = values.get("after")
        if isinstance(after, str):
            values["after"] = parse_date(after, field="after")
        return cls(**values)


def parse_date(text: str, *, field: str = "date") -> date:
    """``YYYY-MM-DD`` -> date, or ValueError naming ``field``."""
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError as exc:
        raise ValueError(f"{field} must be a date YYYY-MM-DD, got {text!r}") from exc


__all__ = ["CHECKERS", "EvalSettings", "parse_date"]
