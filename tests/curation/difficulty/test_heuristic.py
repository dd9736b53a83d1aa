"""The heuristic scorer is deterministic, label-blind and follows its evidence."""

from __future__ import annotations

import json

from curation.difficulty import DIMENSIONS, ProblemInput, get_scorer, score_problems

SIMPLE = {
    "platform": "leetcode",
    "external_id": "sum",
    "statement": "Return the sum of nums.\nConstraints:\n1 <= nums.length <= 100\n",
    "solutions": [{"code": "class Solution:\n    def f(self, nums):\n        return sum(nums)\n"}],
    "difficulty": "Easy",
    "rating": 800,
}
HARD_CODE = """
class Solution:
    def f(self, n, edges, queries):
        import heapq
        g = [[] for _ in range(n)]
        for u, v, w in edges:
            g[u].append((v, w))
            g[v].append((u, w))
        dist = [float("inf")] * n
        dist[0] = 0
        pq = [(0, 0)]
        while pq:
            d, u = heapq.heappop(pq)
            if d > dist[u]:
                continue
            for v, w in g[u]:
                if d + w < dist[v]:
                    dist[v] = d + w
                    heapq.heappush(pq, (dist[v], v))
        mod = 10**9 + 7
        f = [[0] * (n + 1) for _ in range(n + 1)]
        for i in range(n):
            for j in range(n):
                if dist[i] < dist[j]:
                    f[i + 1][j + 1] = (f[i][j] + f[i + 1][j]) % mod
        return [f[a][b] for a, b in queries]
"""
HARD = {
    "id": "paths",
    "statement": "Given a weighted graph with n nodes (1 <= n <= 2 * 10^5) and q queries (1 <= q <= 10^5), "
    "count the shortest paths modulo 10^9 + 7. Edge weights satisfy 1 <= w <= 10^9.",
    "solutions": [{"code": HARD_CODE}],
    "tags": ["Graph", "Shortest Path", "Dynamic Programming"],
}


def _score(row: dict) -> dict:
    (result,) = score_problems([ProblemInput.from_row(row)], get_scorer("heuristic"), samples=3)
    return result.to_dict()


def test_it_scores_the_same_problem_identically_twice() -> None:
    assert _score(HARD) == _score(HARD)


def test_it_ignores_the_platform_label_and_rating() -> None:
    relabelled = {**SIMPLE, "difficulty": "Hard", "rating": 3500}
    assert _score(relabelled)["score"] == _score(SIMPLE)["score"]
    assert _score(relabelled)["samples"] == _score(SIMPLE)["samples"]


def test_it_rates_a_graph_dp_problem_harder_than_a_sum() -> None:
    simple, hard = _score(SIMPLE), _score(HARD)
    assert hard["score"] > simple["score"]
    for d in DIMENSIONS:
        assert hard["dimensions"][d] >= simple["dimensions"][d], d


def test_it_gives_every_dimension_a_rationale_naming_evidence() -> None:
    sample = _score(HARD)["samples"][0]
    assert set(sample["rationales"]) == set(DIMENSIONS)
    assert "shortest path" in sample["rationales"]["algorithmic_knowledge"]
    assert "modulo" in sample["rationales"]["mathematical_content"]
    assert "Halstead" in sample["rationales"]["implementation_complexity"]
    assert "largest bound 1e9" in sample["rationales"]["edge_cases_constraints"]


def test_it_makes_three_reproducible_raters_that_weigh_statement_and_code_differently() -> None:
    samples = _score(HARD)["samples"]
    assert [json.loads(s["raw"])["lambda"] for s in samples] == [0.5, 0.3, 0.7]
    assert len({json.dumps(s["dimensions"], sort_keys=True) for s in samples}) > 1


def test_it_scores_within_the_scale() -> None:
    for row in (SIMPLE, HARD, {"id": "bare", "statement": "x"}):
        for value in _score(row)["dimensions"].values():
            assert 1.0 <= value <= 10.0


def test_it_reads_a_cpp_solution_by_its_size() -> None:
    cpp = (
        "#include <bits/stdc++.h>\nint main() {\n"
        + "    for (int i = 0; i < n; i++) { x += i; }\n" * 30
        + "}\n"
    )
    short = {"id": "a", "statement": "Sum.", "solutions": ["int main() { return 0; }"]}
    long = {"id": "b", "statement": "Sum.", "solutions": [cpp]}
    assert (
        _score(long)["dimensions"]["implementation_complexity"]
        > _score(short)["dimensions"]["implementation_complexity"]
    )
