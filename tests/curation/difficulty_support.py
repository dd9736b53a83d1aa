"""Shared helpers of the difficulty and review tests: a small varied catalogue, scored and calibrated."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from curation.models import Problem, ScoringJob
from curation.records import ProblemRecord, SolutionRecord

from .conftest import make_record

EASY_CODE = "a, b = map(int, input().split())\nprint(a + b)\n"
HARD_CODE = """import sys
from functools import lru_cache
def main():
    data = sys.stdin.read().split()
    n = int(data[0]); mod = 10**9 + 7
    g = [[] for _ in range(n)]
    for i in range(1, n):
        u, v = int(data[2 * i - 1]) - 1, int(data[2 * i]) - 1
        g[u].append(v); g[v].append(u)
    dp = [[0, 0] for _ in range(n)]
    order, seen, stack = [], [False] * n, [0]
    while stack:
        x = stack.pop(); seen[x] = True; order.append(x)
        for y in g[x]:
            if not seen[y]:
                stack.append(y)
    for x in reversed(order):
        a, b = 1, 1
        for y in g[x]:
            if dp[y] != [0, 0]:
                a = a * (dp[y][0] + dp[y][1]) % mod
                b = b * dp[y][0] % mod
        dp[x] = [a, b]
    print(sum(dp[0]) % mod)
main()
"""


def varied_record(i: int, *, platform: str = "leetcode", bucket: str = "Medium") -> ProblemRecord:
    """Problem ``i``: even ones are tiny sums, odd ones are tree DP with big constraints."""
    hard = i % 2 == 1
    statement = (
        f"Problem {i}. Given a tree with n vertices, count independent sets modulo 10^9+7 using dynamic "
        f"programming over subtrees; answer q queries. Constraints: 1 <= n <= 2*10^5, 1 <= q <= 10^5, "
        f"values up to 10^18. Variant {i}."
        if hard else f"Problem {i}. Read two integers a and b and print their sum. 1 <= a, b <= 10. Variant {i}."
    )
    record = make_record(f"p{i}", platform=platform, statement=statement, difficulty=bucket,
                         tags=("dynamic-programming", "tree") if hard else ("math",))
    record.solutions = [SolutionRecord(HARD_CODE if hard else EASY_CODE)]
    return record


def catalogue(import_records: Callable[..., Any], n: int = 10, **kwargs: Any) -> list[Problem]:
    import_records([varied_record(i, **kwargs) for i in range(n)])
    return sorted(Problem.objects.all(), key=lambda p: int(p.external_id[1:]))


def scored(user: Any = None, *, problem_ids: list[int] | None = None, samples: int = 3) -> ScoringJob:
    """A finished heuristic scoring of ``problem_ids`` (default: every problem)."""
    from curation.services.difficulty import scoring_create, scoring_run

    ids = problem_ids or list(Problem.objects.values_list("pk", flat=True))
    job = scoring_create(backend="heuristic", problem_ids=ids, samples=samples, user=user, enqueue=False)
    return scoring_run(scoring_id=job.pk)
