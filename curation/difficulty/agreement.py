"""Agreement statistics for spot-check reviews and prompt-version comparisons (pure functions).

- ``cohen_kappa``: two raters, chance-corrected agreement ``(po - pe) / (1 - pe)``, where ``pe`` comes
  from each rater's own label frequencies.
- ``fleiss_kappa``: any fixed number (>= 2) of raters per item (raters need not be the same people).
- ``wilson_interval``: the Wilson score interval of a binomial proportion (e.g. the error rate of a
  release estimated from its reviewed sample); sensible at 0/n and n/n, unlike the normal interval.

When every rating uses one and the same label, chance agreement is 1 and kappa is undefined; both
kappas return 1.0 then (the raters agree perfectly and there is nothing else to say).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa of two raters' labels for the same items (``ValueError`` on unequal or empty)."""
    if len(a) != len(b):
        raise ValueError(f"both raters must label the same items ({len(a)} != {len(b)})")
    n = len(a)
    if n == 0:
        raise ValueError("no items to compare")
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if expected >= 1.0:
        return 1.0
    return (observed - expected) / (1.0 - expected)


def fleiss_kappa(ratings: Sequence[Sequence[str]]) -> float:
    """Fleiss' kappa; ``ratings[i]`` holds the labels item ``i`` received, the same count for every
    item and at least 2 (``ValueError`` otherwise)."""
    if not ratings:
        raise ValueError("no items to compare")
    m = len(ratings[0])
    if m < 2:
        raise ValueError("each item needs at least two ratings")
    if any(len(r) != m for r in ratings):
        raise ValueError("every item needs the same number of ratings")
    n_items = len(ratings)
    totals: Counter[str] = Counter()
    p_items = 0.0
    for labels in ratings:
        counts = Counter(labels)
        totals.update(counts)
        p_items += (sum(c * c for c in counts.values()) - m) / (m * (m - 1))
    p_bar = p_items / n_items
    p_e = sum((c / (n_items * m)) ** 2 for c in totals.values())
    if p_e >= 1.0:
        return 1.0
    return (p_bar - p_e) / (1.0 - p_e)


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for ``successes / n`` (95 % for ``z = 1.96``); ``(0, 1)`` when ``n == 0``."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return max(0.0, center - half), min(1.0, center + half)
