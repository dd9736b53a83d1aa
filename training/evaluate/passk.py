"""pass@k (the unbiased estimator of Chen et al. 2021), bootstrap intervals over problems, breakdowns.

For a problem with n judged samples of which c pass, ``pass_at_k(n, c, k) = 1 - C(n-c, k) / C(n, k)``:
the probability that at least one of k samples drawn without replacement passes. It is computed as a
product (no huge binomials). With fewer than k judged samples (infrastructure errors removed some) the
estimator is read as "at least one pass among the n we have": 1 when c > 0, else 0.

``summarize`` averages per-problem values (every problem counts once, however many samples it has)
and gives a 95 % percentile bootstrap interval obtained by resampling problems; breakdowns group by
platform, difficulty bucket, contest month (``YYYY-MM``) and io mode. Problems with no judged sample
(all IE) are counted apart and left out of every mean.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from training.evaluate.results import ProblemResult


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem with ``n`` samples, ``c`` correct (0 <= c <= n, k >= 1)."""
    if k < 1 or n < 0 or not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs k >= 1 and 0 <= c <= n, got n={n}, c={c}, k={k}")
    if c == 0:
        return 0.0
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def bootstrap_ci(
    values: Sequence[float], *, n: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (resampled with replacement)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return (float("nan"), float("nan"))
    if arr.size == 1 or n < 1:
        return (float(arr.mean()), float(arr.mean()))
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(n, arr.size))].mean(axis=1)
    tail = (1.0 - level) / 2.0
    return (float(np.quantile(means, tail)), float(np.quantile(means, 1.0 - tail)))


def _aggregate(results: Sequence[ProblemResult], *, bootstrap: int, seed: int) -> dict[str, Any]:
    judged = [r for r in results if r.pass_at_1 is not None]
    p1 = [float(r.pass_at_1) for r in judged if r.pass_at_1 is not None]
    pk = [float(r.pass_at_k) for r in judged if r.pass_at_k is not None]
    attempts = sum(r.attempts for r in results)
    infra = sum(r.infra_errors for r in results)
    samples = attempts + infra
    return {
        "problems": len(results),
        "judged_problems": len(judged),
        "pass@1": float(np.mean(p1)) if p1 else None,
        "pass@k": float(np.mean(pk)) if pk else None,
        "ci95": {
            "pass@1": list(bootstrap_ci(p1, n=bootstrap, seed=seed)) if p1 else None,
            "pass@k": list(bootstrap_ci(pk, n=bootstrap, seed=seed + 1)) if pk else None,
        },
        "attempts": attempts,
        "passed": sum(r.passed for r in results),
        "infra_errors": infra,
        "infra_error_rate": infra / samples if samples else 0.0,
    }


def difficulty_key(r: ProblemResult) -> str:
    return r.difficulty or "unknown"


def month_key(r: ProblemResult) -> str:
    return r.contest_date[:7] if r.contest_date else "unknown"


BREAKDOWNS: dict[str, Callable[[ProblemResult], str]] = {
    "by_platform": lambda r: r.platform or "unknown",
    "by_difficulty": difficulty_key,
    "by_month": month_key,
    "by_io_mode": lambda r: r.io_mode or "unknown",
}


def summarize(results: Sequence[ProblemResult], k: int, *, bootstrap: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Aggregate ``pass@1`` / ``pass@k`` with ``ci95`` (bootstrap over problems), counts,
    ``infra_error_rate`` (IE share of all samples) and the four breakdowns, each key -> the same
    aggregate for its problems (sorted keys)."""
    out = {"k": k, **_aggregate(results, bootstrap=bootstrap, seed=seed)}
    for name, key in BREAKDOWNS.items():
        groups: dict[str, list[ProblemResult]] = {}
        for r in results:
            groups.setdefault(key(r), []).append(r)
        out[name] = {g: _aggregate(groups[g], bootstrap=bootstrap, seed=seed) for g in sorted(groups)}
    return out


def format_summary(summary: dict[str, Any], *, excluded: dict[str, int] | None = None) -> str:
    """The human-readable summary table (the CLI prints it on stderr)."""

    def pct(v: float | None) -> str:
        return "   n/a" if v is None else f"{100 * v:6.2f}"

    def ci(c: list[float] | None) -> str:
        return "" if not c else f"[{100 * c[0]:5.1f}, {100 * c[1]:5.1f}]"

    k = summary["k"]
    lines = [
        f"problems {summary['problems']} (judged {summary['judged_problems']}), samples judged "
        f"{summary['attempts']}, passed {summary['passed']}, infrastructure errors {summary['infra_errors']} "
        f"({100 * summary['infra_error_rate']:.1f} %, not counted as failures)",
        f"pass@1 {pct(summary['pass@1'])} %  95% CI {ci(summary['ci95']['pass@1'])}",
        f"pass@{k} {pct(summary['pass@k'])} %  95% CI {ci(summary['ci95']['pass@k'])}",
    ]
    for name in BREAKDOWNS:
        lines.append(f"{name.removeprefix('by_')}:")
        for key, agg in summary[name].items():
            lines.append(
                f"  {key:<24} n={agg['problems']:<5} pass@1 {pct(agg['pass@1'])}  pass@{k} {pct(agg['pass@k'])}"
            )
    if excluded:
        parts = ", ".join(f"{reason}: {count}" for reason, count in sorted(excluded.items()) if count)
        lines.append(f"excluded problems: {parts or 'none'}")
    return "\n".join(lines)


__all__ = ["BREAKDOWNS", "bootstrap_ci", "format_summary", "pass_at_k", "summarize"]
