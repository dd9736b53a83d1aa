"""The difficulty matrix core: predict (score), calibrate, select, agree. Imports nothing from Django.

Public surface (CONTRACTS section A; the README's "Difficulty scoring" section shows the CLI)::

    from curation.difficulty import get_scorer, score_problems, ProblemInput
    scorer = get_scorer("heuristic")                    # or "openai" (OPENAI_BASE_URL, DIFFICULTY_MODEL ...)
    for result in score_problems(problems, scorer, samples=3):
        print(result.to_dict())

Calibration lives in ``curation.difficulty.calibrate``, agreement statistics in ``.agreement`` and the
hard-share selection in ``.selection`` (imported lazily: they pull in scikit-learn/scipy).
"""

from __future__ import annotations

from typing import Any

from .core import (
    DEFAULT_WEIGHTS,
    DIMENSION_LABELS,
    DIMENSIONS,
    SCALE,
    ProblemInput,
    Sample,
    ScoreError,
    Scorer,
    ScoringResult,
    TokenUsage,
    aggregate,
    normalize_weights,
    parse_weights,
)
from .runner import score_problems

BACKENDS: tuple[str, ...] = ("heuristic", "openai")

#: options only the network backend understands; the heuristic ignores them so callers can pass one set
_NETWORK_OPTIONS = frozenset({"base_url", "api_key", "model", "concurrency", "timeout_s", "max_retries"})


def get_scorer(backend: str, **options: Any) -> Scorer:
    """A scorer for ``backend``. ``openai`` takes ``base_url``, ``api_key``, ``model``, ``concurrency``,
    ``timeout_s``, ``max_retries`` (and the other ``OpenAIScorer`` keywords), reading
    ``OPENAI_BASE_URL``, ``OPENAI_API_KEY`` and ``DIFFICULTY_MODEL`` for those not given. ``None``
    values count as not given. Raises ``ValueError`` for an unknown backend or option."""
    given = {k: v for k, v in options.items() if v is not None}
    if backend == "heuristic":
        from .heuristic import HeuristicScorer

        unknown = sorted(set(given) - _NETWORK_OPTIONS)
        if unknown:
            raise ValueError(f"the heuristic backend takes no option {', '.join(unknown)}")
        return HeuristicScorer()
    if backend == "openai":
        from .openai_backend import OpenAIScorer

        try:
            return OpenAIScorer(**given)
        except TypeError as exc:
            raise ValueError(f"bad option for the openai backend: {exc}") from None
    raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")


__all__ = [
    "BACKENDS",
    "DEFAULT_WEIGHTS",
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "SCALE",
    "ProblemInput",
    "Sample",
    "ScoreError",
    "Scorer",
    "ScoringResult",
    "TokenUsage",
    "aggregate",
    "get_scorer",
    "normalize_weights",
    "parse_weights",
    "score_problems",
]
