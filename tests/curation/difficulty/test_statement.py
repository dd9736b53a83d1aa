"""Constraint magnitudes are read in every usual notation."""

from __future__ import annotations

import pytest

from curation.difficulty.statement import magnitudes, statement_features


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 <= n <= 2*10^5", 2e5),
        ("1 ≤ n ≤ 2·10^5", 2e5),
        ("1 ≤ n ≤ 2 × 10^5", 2e5),
        (r"$1 \le n \le 2 \cdot 10^{5}$", 2e5),
        (r"$n \leq 2\times 10^{5}$", 2e5),
        ("a_i <= 10**9", 1e9),
        ("n <= 1e5", 1e5),
        ("k <= 2e5", 2e5),
        ("n ≤ 10⁵", 1e5),
        ("n <= 200 000", 2e5),
        ("n <= 200,000", 2e5),
        ("1 <= x <= 10^18", 1e18),
        ("1 <= word.length <= 3 * 105", 3e5),  # LeetCode's flattened superscript
        ("-109 <= nums[i] <= 109", 1e9),
        ("1 <= x <= 1018", 1e18),
        ("1 <= n <= 100", 100),
    ],
)
def test_it_reads_the_largest_bound(text: str, expected: float) -> None:
    assert max(magnitudes(text)) == pytest.approx(expected)


def test_it_keeps_a_bare_105_literal_outside_constraint_lines() -> None:
    assert magnitudes("The answer is 105 in the first example.") == [105.0]


def test_it_does_not_glue_an_array_literal_into_one_number() -> None:
    assert max(magnitudes("x in [100,200,300] <= 5")) == 300


def test_it_separates_size_bounds_from_value_bounds() -> None:
    f = statement_features("Constraints:\n1 <= nums.length <= 10^5\n-10^9 <= nums[i] <= 10^9\n")
    assert f.size_log10 == pytest.approx(5)
    assert f.value_log10 == pytest.approx(9)
    assert f.negative_values


def test_it_spots_queries_test_cases_and_a_modulo() -> None:
    f = statement_features(
        "The first line contains t, the number of test cases. Then q queries follow. "
        "Print the answer modulo 998244353."
    )
    assert (f.queries, f.test_cases, f.modulo) == (True, True, True)


def test_it_notes_a_small_bound_that_invites_exhaustive_search() -> None:
    assert statement_features("1 <= n <= 15").small_bound == 15


def test_it_tells_an_optimization_from_a_decision() -> None:
    assert statement_features("Return the minimum number of operations.").optimization
    assert statement_features("Return true if s is a palindrome.").decision


def test_it_counts_numbered_subtasks_once_each() -> None:
    text = "Subtask 1 (20 points): n <= 100.\nSubtask 2 (80 points): n <= 10^5.\nIn subtask 2, ..."
    assert statement_features(text).subtasks == 2
