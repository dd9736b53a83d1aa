"""problems_normalize: exact and near duplicates are linked, explained and never deleted."""

from __future__ import annotations

from typing import Any

import pytest

from curation.models import DuplicateLink, Problem, Stage
from curation.services import problems_normalize

from .conftest import LONG_STATEMENT, make_record

pytestmark = pytest.mark.django_db

NEAR_COPY = LONG_STATEMENT.replace("single space", "single blank")


def _problem(external_id: str) -> Problem:
    return Problem.objects.get(external_id=external_id)


def test_it_normalizes_distinct_problems_without_links(import_records: Any) -> None:
    import_records([make_record("a", statement="Sum two numbers " * 20), make_record("b")])
    report = problems_normalize()
    assert (report.normalized, DuplicateLink.objects.count()) == (2, 0)
    assert set(Problem.objects.values_list("stage", flat=True)) == {Stage.NORMALIZED}
    assert len(_problem("a").statement_hash) == 64


def test_it_links_an_exact_duplicate_to_the_earlier_problem(import_records: Any) -> None:
    import_records([
        make_record("1A", platform="codeforces", statement=LONG_STATEMENT),
        make_record("SUMTWO", platform="codechef", statement="  " + LONG_STATEMENT.upper() + "\n"),
    ])
    problems_normalize()
    link = DuplicateLink.objects.get()
    assert (link.problem, link.duplicate_of, link.kind, link.similarity) == (
        _problem("SUMTWO"), _problem("1A"), "exact", 1.0
    )
    assert "same statement hash" in link.explanation and "repeats codeforces/1A" in link.explanation


def test_it_marks_the_later_duplicate_and_keeps_both_problems(import_records: Any) -> None:
    import_records([
        make_record("1A", platform="codeforces", statement=LONG_STATEMENT),
        make_record("SUMTWO", platform="codechef", statement=LONG_STATEMENT),
    ])
    problems_normalize()
    assert (_problem("1A").stage, _problem("SUMTWO").stage) == (Stage.NORMALIZED, Stage.DUPLICATE)


def test_it_links_near_duplicates_across_platforms_with_their_similarity(import_records: Any) -> None:
    import_records([
        make_record("1A", platform="codeforces", statement=LONG_STATEMENT),
        make_record("two-sum", platform="leetcode", statement=NEAR_COPY),
    ])
    problems_normalize()
    link = DuplicateLink.objects.get()
    assert (link.kind, link.problem.external_id) == ("near", "two-sum")
    assert 0.8 <= link.similarity < 1.0
    assert "MinHash Jaccard" in link.explanation and "across leetcode and codeforces" in link.explanation


def test_it_does_not_link_near_duplicates_within_one_platform(import_records: Any) -> None:
    import_records([
        make_record("two-sum", statement=LONG_STATEMENT), make_record("two-sum-ii", statement=NEAR_COPY),
    ])
    problems_normalize()
    assert DuplicateLink.objects.count() == 0


def test_it_finds_a_new_problem_duplicating_one_normalized_earlier(import_records: Any) -> None:
    import_records([make_record("1A", platform="codeforces", statement=LONG_STATEMENT)])
    problems_normalize()
    import_records([make_record("abc001_a", platform="atcoder", statement=LONG_STATEMENT)])
    report = problems_normalize()
    assert (report.normalized, report.exact_links) == (1, 1)
    assert _problem("abc001_a").stage == Stage.DUPLICATE


def test_it_unlinks_a_duplicate_whose_original_changed(import_records: Any) -> None:
    import_records([
        make_record("1A", platform="codeforces", statement=LONG_STATEMENT),
        make_record("SUMTWO", platform="codechef", statement=LONG_STATEMENT),
    ])
    problems_normalize()
    import_records([make_record("1A", platform="codeforces", statement="A different task entirely. " * 10)])
    problems_normalize()
    assert DuplicateLink.objects.count() == 0
    assert _problem("SUMTWO").stage == Stage.NORMALIZED
