"""release_create: filters, frozen versions, counts and a stable content hash."""

from __future__ import annotations

from typing import Any

import pytest

from curation.models import Problem, Stage
from curation.selectors import ReleaseFilter
from curation.services import EmptyReleaseError, problems_normalize, release_create

from .conftest import LONG_STATEMENT, make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue(import_records: Any) -> None:
    import_records([
        make_record("lc-easy", difficulty="Easy", tags=["array"], contest_date="2023-01-10"),
        make_record("lc-hard", difficulty="Hard", tags=["dp", "graph"], contest_date="2024-09-01"),
        make_record("cf-hard", platform="codeforces", difficulty="", rating=2400, tags=["dp"], contest_date=None),
        make_record("cc-med", platform="codechef", difficulty="MEDIUM", tags=[], contest_date="2024-10-05"),
    ])


def _ids(release: Any) -> list[str]:
    return sorted(release.problems.values_list("external_id", flat=True))


def test_it_selects_problems_by_platform_and_difficulty(catalogue: None) -> None:
    release = release_create(name="r", filter_spec={"platforms": ["leetcode"], "difficulties": ["hard"]})
    assert _ids(release) == ["lc-hard"]


def test_it_applies_a_contamination_cut_off_excluding_undated_problems(catalogue: None) -> None:
    release = release_create(name="r", filter_spec={"contest_date_from": "2024-08-01"})
    assert _ids(release) == ["cc-med", "lc-hard"]


def test_it_can_keep_undated_problems_after_a_cut_off(catalogue: None) -> None:
    release = release_create(name="r", filter_spec={"contest_date_from": "2024-08-01", "include_undated": True})
    assert _ids(release) == ["cc-med", "cf-hard", "lc-hard"]


def test_it_selects_problems_having_any_of_the_tags(catalogue: None) -> None:
    assert _ids(release_create(name="r", filter_spec={"tags": ["dp"]})) == ["cf-hard", "lc-hard"]


def test_it_selects_problems_by_stage(catalogue: None) -> None:
    Problem.objects.filter(external_id="lc-easy").update(stage=Stage.CONSTRAINTS_PASSED)
    assert _ids(release_create(name="r", filter_spec={"stages": ["constraints_passed"]})) == ["lc-easy"]


def test_it_excludes_linked_duplicates(import_records: Any) -> None:
    import_records([
        make_record("1A", platform="codeforces", statement=LONG_STATEMENT),
        make_record("SUMTWO", platform="codechef", statement=LONG_STATEMENT),
    ])
    problems_normalize()
    assert _ids(release_create(name="r", filter_spec={})) == ["1A"]


def test_it_counts_problems_by_platform_and_difficulty(catalogue: None) -> None:
    release = release_create(name="r", filter_spec={})
    assert release.counts_by_platform == {"codechef": 1, "codeforces": 1, "leetcode": 2}
    assert release.counts_by_difficulty == {"easy": 1, "hard": 2, "medium": 1}
    assert release.problem_count == 4


def test_it_numbers_versions_per_release_name(catalogue: None) -> None:
    first, second = (release_create(name="hard-set", filter_spec={}) for _ in range(2))
    assert (first.version, second.version) == (1, 2)


def test_it_hashes_the_same_content_identically(catalogue: None) -> None:
    a = release_create(name="a", filter_spec={"difficulties": ["hard"]})
    b = release_create(name="b", filter_spec={"difficulties": ["hard"], "platforms": ["leetcode", "codeforces"]})
    assert a.content_hash == b.content_hash


def test_it_changes_the_hash_when_a_problem_changes(catalogue: None, import_records: Any) -> None:
    before = release_create(name="r", filter_spec={})
    import_records([make_record("lc-easy", difficulty="Easy", tags=["array"], contest_date="2023-01-10", tests=9)])
    assert release_create(name="r", filter_spec={}).content_hash != before.content_hash


def test_it_pins_the_version_a_problem_had_when_the_release_froze(catalogue: None, import_records: Any) -> None:
    release = release_create(name="r", filter_spec={"platforms": ["codechef"]})
    import_records([make_record("cc-med", platform="codechef", difficulty="MEDIUM", tags=[], tests=2,
                                contest_date="2024-10-05")])
    item = release.items.get()
    assert (item.problem.version, item.problem_version.version) == (2, 1)


def test_it_refuses_an_empty_release(catalogue: None) -> None:
    with pytest.raises(EmptyReleaseError, match="matches no problems"):
        release_create(name="r", filter_spec={"platforms": ["atcoder"]})


def test_it_rejects_an_unknown_filter_key_by_name() -> None:
    with pytest.raises(ValueError, match=r"unknown filter key\(s\) \['platform'\]"):
        ReleaseFilter.from_dict({"platform": "leetcode"})


def test_it_rejects_an_unknown_difficulty_bucket() -> None:
    with pytest.raises(ValueError, match="difficulties: unknown value"):
        ReleaseFilter.from_dict({"difficulties": ["extreme"]})


def test_it_refuses_to_release_a_problem_that_has_no_stored_version(import_records: Any) -> None:
    from curation.models import ProblemVersion

    import_records([make_record("p1"), make_record("p2")])
    ProblemVersion.objects.filter(problem__external_id="p2").delete()
    with pytest.raises(ValueError, match=r"1 problem\(s\) have no stored version \(e.g. leetcode/p2\)"):
        release_create(name="r", filter_spec={})


def test_it_pins_each_problems_current_version(import_records: Any) -> None:
    from curation.models import ProblemVersion

    import_records([make_record("p1")])
    import_records([make_record("p1", tests=7)])  # a changed problem: version 2
    release = release_create(name="r", filter_spec={})
    item = release.items.get()
    assert item.problem_version == ProblemVersion.objects.get(problem=item.problem, version=2)
    assert item.content_hash == item.problem_version.content_hash
