"""Paired significance tests for comparing two evaluations on the same problems.

- ``mcnemar(b, c)``: b = problems solved by A only, c = solved by B only (the discordant pairs of a
  per-problem solved/unsolved table). Two-sided p-value of "A and B solve equally often": the exact
  binomial test (b ~ Binomial(b + c, 1/2)) when b + c < 25, else the chi-square statistic with
  continuity correction ``(|b - c| - 1)^2 / (b + c)`` on 1 degree of freedom.
- ``paired_bootstrap(a, b)``: per-problem scores of A and B (e.g. pass@1) in the same problem order;
  ``diff`` = mean(b) - mean(a) (positive: B is better), a percentile 95 % interval from resampling
  problems, and a two-sided p-value = 2 * the share of resampled differences on the other side of 0
  (capped at 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

EXACT_BELOW = 25


def mcnemar(b: int, c: int) -> float:
    """Two-sided McNemar p-value from the discordant counts (see module docstring)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    if n < EXACT_BELOW:
        tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2.0**n
        return min(1.0, 2.0 * tail)
    chi2 = (abs(b - c) - 1.0) ** 2 / n
    return float(math.erfc(math.sqrt(chi2 / 2.0)))  # survival function of chi-square with 1 df


def paired_bootstrap(a: Sequence[float], b: Sequence[float], *, n: int = 2000, seed: int = 0) -> dict[str, Any]:
    """``{"diff", "ci95": [lo, hi], "p_value"}`` for mean(b) - mean(a) over paired problems."""
    if len(a) != len(b):
        raise ValueError(f"paired samples must have the same length, got {len(a)} and {len(b)}")
    if not a:
        raise ValueError("paired_bootstrap needs at least one problem")
    d = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(n, d.size))].mean(axis=1)
    diff = float(d.mean())
    if diff > 0:
        other_side = float(np.mean(means <= 0))
    elif diff < 0:
        other_side = float(np.mean(means >= 0))
    else:
        other_side = 0.5
    return {
        "diff": diff,
        "ci95": [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))],
        "p_value": min(1.0, 2.0 * other_side),
    }


__all__ = ["mcnemar", "paired_bootstrap"]
