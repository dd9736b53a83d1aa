"""The five-dimension difficulty matrix: names, scale, weights, inputs, samples and their aggregation.

Django-free: everything here is plain data so the CLI, the benches and the Django layer share it.

A problem is scored ``samples`` (default 3) independent times; each ``Sample`` rates the five
dimensions on ``SCALE`` (1 = trivial, 10 = hardest) with a short rationale each. ``aggregate`` takes
the per-dimension mean over samples and the weighted mean of those (higher = harder).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

DIMENSIONS: tuple[str, ...] = (
    "algorithmic_knowledge",
    "reasoning_depth",
    "implementation_complexity",
    "mathematical_content",
    "edge_cases_constraints",
)

DIMENSION_LABELS: dict[str, str] = {
    "algorithmic_knowledge": "Algorithmic knowledge",
    "reasoning_depth": "Reasoning depth",
    "implementation_complexity": "Implementation complexity",
    "mathematical_content": "Mathematical content",
    "edge_cases_constraints": "Edge cases and constraints",
}

#: every dimension and every score lies on this closed interval
SCALE: tuple[float, float] = (1.0, 10.0)

#: sum to 1. Chosen on LeetCodeDataset v0.2.0-train with the heuristic backend (the split whose labels
#: bench/difficulty.py reports beside v0.3.1-test): the solution's size and the reasoning it encodes
#: rank problems best; knowledge and edge cases add less once those are known.
DEFAULT_WEIGHTS: dict[str, float] = {
    "algorithmic_knowledge": 0.15,
    "reasoning_depth": 0.25,
    "implementation_complexity": 0.35,
    "mathematical_content": 0.15,
    "edge_cases_constraints": 0.10,
}


class ScoreError(Exception):
    """A problem could not be scored: bad input row, malformed model answer, endpoint failure after
    retries. The message says what is wrong in words a curator can act on."""


@dataclass(frozen=True)
class ProblemInput:
    """What a scorer may see of a problem. Deliberately has no difficulty, rating or label field."""

    id: str
    statement: str
    solutions: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    starter_code: str = ""
    io_mode: str = "stdin"
    platform: str = ""
    external_id: str = ""
    title: str = ""

    @classmethod
    def from_row(cls, row: Mapping[str, Any], *, default_id: str = "") -> ProblemInput:
        """Read a docs/export-schema.md row. The key is ``row["id"]`` when present, else
        ``platform:external_id``, else ``default_id``; raises ``ScoreError`` when the row has no
        statement or no key. Only the fields listed on the class are read: never ``difficulty``,
        ``rating`` or other labels (those are what the scores are judged against)."""
        if not isinstance(row, Mapping):
            raise ScoreError(f"row must be a JSON object, got {type(row).__name__}")
        platform = _text(row.get("platform"))
        external_id = _text(row.get("external_id"))
        key = _text(row.get("id"))
        if not key and platform and external_id:
            key = f"{platform}:{external_id}"
        key = key or default_id
        statement = row.get("statement")
        if not isinstance(statement, str) or not statement.strip():
            raise ScoreError("row has no 'statement' (a non-empty string is required to score a problem)")
        if not key:
            raise ScoreError("row has no 'id' and no 'platform' + 'external_id' to name it")
        return cls(
            id=key,
            statement=statement,
            solutions=_solutions(row.get("solutions")),
            tags=tuple(str(t) for t in (row.get("tags") or ()) if str(t).strip()),
            starter_code=_text(row.get("starter_code")),
            io_mode=_text(row.get("io_mode")) or "stdin",
            platform=platform,
            external_id=external_id,
            title=_text(row.get("title")),
        )


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _solutions(value: Any) -> tuple[str, ...]:
    """Export rows carry ``[{"code", "language", "verified"}]``; plain strings are accepted too."""
    if not value:
        return ()
    if isinstance(value, str):
        return (value,)
    out = []
    for item in value:
        code = item.get("code") if isinstance(item, Mapping) else item
        if isinstance(code, str) and code.strip():
            out.append(code)
    return tuple(out)


@dataclass(frozen=True)
class Sample:
    """One independent rating of one problem: a score and a rationale per dimension, plus the raw
    answer (the model's text, or the heuristic's feature JSON) so the number is traceable."""

    index: int
    dimensions: dict[str, float]
    rationales: dict[str, str]
    raw: str
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "dimensions": dict(self.dimensions),
            "rationales": dict(self.rationales),
            "raw": self.raw,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Sample:
        return cls(
            index=int(d["index"]),
            dimensions={k: float(v) for k, v in d["dimensions"].items()},
            rationales={k: str(v) for k, v in d.get("rationales", {}).items()},
            raw=str(d.get("raw", "")),
            prompt_tokens=int(d.get("prompt_tokens", 0)),
            completion_tokens=int(d.get("completion_tokens", 0)),
        )


@runtime_checkable
class Scorer(Protocol):
    """A backend that rates one problem once. ``score_sample`` raises ``ScoreError``; samples with
    different ``index`` must be independent ratings (see each backend for how)."""

    backend: str
    model: str
    prompt_version: str

    def score_sample(self, problem: ProblemInput, *, index: int) -> Sample: ...


@dataclass
class ScoringResult:
    """The outcome for one problem; ``to_dict()`` is the CLI's output row."""

    id: str
    score: float | None
    dimensions: dict[str, float]
    samples: list[Sample]
    error: str = ""
    backend: str = ""
    prompt_version: str = ""

    def to_dict(self) -> dict[str, Any]:
        if self.error:
            return {"id": self.id, "error": self.error}
        return {
            "id": self.id,
            "score": self.score,
            "dimensions": dict(self.dimensions),
            "samples": [s.to_dict() for s in self.samples],
            "backend": self.backend,
            "prompt_version": self.prompt_version,
        }


def normalize_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """Weights over ``DIMENSIONS`` summing to 1. ``None`` -> ``DEFAULT_WEIGHTS``; a dimension the
    mapping does not name weighs 0. Raises ``ValueError`` naming an unknown dimension, a negative or
    non-finite weight, or weights that are all zero."""
    if weights is None:
        return dict(DEFAULT_WEIGHTS)
    unknown = sorted(set(weights) - set(DIMENSIONS))
    if unknown:
        raise ValueError(f"unknown dimension(s) {', '.join(unknown)}; known: {', '.join(DIMENSIONS)}")
    for name, w in weights.items():
        if not math.isfinite(float(w)) or float(w) < 0:
            raise ValueError(f"weight of {name} must be a finite number >= 0, got {w!r}")
    total = sum(float(w) for w in weights.values())
    if total <= 0:
        raise ValueError("weights are all zero; give at least one dimension a positive weight")
    return {d: float(weights.get(d, 0.0)) / total for d in DIMENSIONS}


def parse_weights(text: str) -> dict[str, float]:
    """``"algorithmic_knowledge=2,reasoning_depth=1"`` -> normalized weights (see ``normalize_weights``)."""
    raw: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"weight {part!r} must look like name=value")
        try:
            raw[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"weight of {name.strip()} is not a number: {value!r}") from None
    return normalize_weights(raw)


def aggregate(
    samples: Sequence[Sample], weights: Mapping[str, float] | None = None
) -> tuple[float, dict[str, float]]:
    """``(weighted score, per-dimension mean)`` over ``samples``; raises ``ScoreError`` on no samples
    or a sample missing a dimension."""
    if not samples:
        raise ScoreError("no samples to aggregate")
    w = normalize_weights(weights)
    means: dict[str, float] = {}
    for d in DIMENSIONS:
        values = []
        for s in samples:
            if d not in s.dimensions:
                raise ScoreError(f"sample {s.index} has no value for dimension {d!r}")
            values.append(float(s.dimensions[d]))
        means[d] = sum(values) / len(values)
    score = sum(w[d] * means[d] for d in DIMENSIONS)
    return score, means


def clamp(value: float) -> float:
    """``value`` limited to ``SCALE``."""
    lo, hi = SCALE
    return min(hi, max(lo, value))


@dataclass(frozen=True)
class TokenUsage:
    """A snapshot of the counters a scorer accumulates over its life (the openai backend fills them;
    ``retries`` counts re-sent requests, ``failures`` requests that finally failed)."""

    requests: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "requests": self.requests,
            "retries": self.retries,
            "failures": self.failures,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
