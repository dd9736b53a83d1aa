"""The release builder's hard-share selection, on real imported problems and on the release page."""

from __future__ import annotations

from typing import Any

import pytest

from curation.models import Problem
from curation.services import problem_import, release_create

from .conftest import make_record, shared_file

pytestmark = pytest.mark.django_db


def test_it_reaches_the_target_hard_share_on_real_leetcode_problems() -> None:
    path = shared_file("leetcodedataset", "LeetCodeDataset-v0.3.1-test.jsonl.gz")
    problem_import(path=path, format="leetcodedataset")
    hard = Problem.objects.filter(difficulty="hard").count()
    release = release_create(name="hard-half", filter_spec={}, target_hard_share=0.5)
    after = release.counts_by_difficulty
    assert release.counts_before_selection["hard"] == hard and after["hard"] == hard  # no hard one dropped
    assert after["hard"] / release.problem_count >= 0.5
    assert hard / sum(release.counts_before_selection.values()) < 0.5  # the selection had work to do
    assert len(release.dropped) == sum(release.counts_before_selection.values()) - release.problem_count
    easy_first = [d["bucket"] for d in release.dropped]
    assert easy_first == sorted(easy_first, key=["easy", "medium"].index)
    assert all(d["reason"] for d in release.dropped)


def test_it_shows_what_was_dropped_and_the_distribution_before_and_after(
    import_records: Any, client_as: Any, viewer: Any
) -> None:
    import_records([make_record(f"e{i}", difficulty="Easy") for i in range(3)]
                   + [make_record(f"h{i}", difficulty="Hard") for i in range(2)])
    release = release_create(name="r", filter_spec={}, target_hard_share=0.5)
    assert release.counts_by_difficulty == {"easy": 2, "hard": 2} and len(release.dropped) == 1
    html = client_as(viewer).get(f"/curation/releases/{release.pk}/").content.decode()
    assert "Hard-share selection" in html and release.dropped[0]["key"] in html
    assert release.dropped[0]["reason"] in html
    assert "0.400 → 0.500" in html  # hard share before and after


def test_it_refuses_a_target_share_outside_zero_to_one_naming_the_field(import_records: Any, api_as: Any,
                                                                         curator: Any) -> None:
    import_records([make_record("a")])
    response = api_as(curator).post("/api/releases/", {"name": "x", "target_hard_share": 1.5}, format="json")
    assert response.status_code == 400 and "target_hard_share" in response.json()
