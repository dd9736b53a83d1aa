"""Spot-checks: stratified sampling, double review, agreement, adjudication, the release's error rate."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group

from curation.models import ReviewItem
from curation.selectors_review import disputed_items, queue_stats, release_review_stats
from curation.services import release_create
from curation.services.review import (
    review_adjudicate,
    review_next_item,
    review_queue_create,
    review_verdict_submit,
    stratified_sample,
)

from .conftest import make_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def release(import_records: Any) -> Any:
    records = [make_record(f"lc{i}", platform="leetcode", difficulty="Easy" if i % 3 else "Hard") for i in range(9)]
    records += [make_record(f"cf{i}", platform="codeforces", difficulty="Medium") for i in range(3)]
    import_records(records)
    return release_create(name="r", filter_spec={})


@pytest.fixture
def second_curator(django_user_model: Any, curator: Any) -> Any:
    user = django_user_model.objects.create_user(username="cleo-curator", password="x")
    user.groups.add(Group.objects.get(name="curator"))
    return user


def test_it_samples_every_platform_and_bucket_proportionally() -> None:
    population = [(i, "lc", "easy") for i in range(60)] + [(100 + i, "lc", "hard") for i in range(30)]
    population += [(200 + i, "cf", "medium") for i in range(10)]
    sample, strata = stratified_sample(population, size=10, seed=3)
    assert strata == {"cf/medium": [10, 1], "lc/easy": [60, 6], "lc/hard": [30, 3]}
    assert len({row[0] for row in sample}) == 10
    assert stratified_sample(population, size=10, seed=3)[0] == sample  # reproducible for a seed


def test_it_gives_a_small_stratum_at_least_one_item() -> None:
    population = [(i, "lc", "easy") for i in range(98)] + [(500, "cf", "hard"), (501, "cf", "hard")]
    _, strata = stratified_sample(population, size=5, seed=0)
    assert strata["cf/hard"][1] == 1 and sum(v[1] for v in strata.values()) == 5


def test_it_marks_the_double_review_share_of_a_queue(release: Any, curator: Any) -> None:
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=10, double_review_share=0.3,
                                user=curator)
    assert ReviewItem.objects.filter(queue=queue, required_reviews=2).count() == 3
    assert set(queue.strata) == {"codeforces/medium", "leetcode/easy", "leetcode/hard"}


def test_it_hands_each_curator_the_items_they_still_owe(release: Any, curator: Any, second_curator: Any) -> None:
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=2, double_review_share=1.0)
    first = review_next_item(queue_id=queue.pk, user=curator)
    assert first is not None
    review_verdict_submit(item_id=first.pk, user=curator, verdict="accept")
    assert review_next_item(queue_id=queue.pk, user=second_curator) == first  # needs a second review
    assert review_next_item(queue_id=queue.pk, user=curator) != first


def test_it_sends_a_disagreement_to_adjudication_and_settles_it(release: Any, curator: Any,
                                                               second_curator: Any, admin_user: Any) -> None:
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=1, double_review_share=1.0)
    item = queue.items.get()
    review_verdict_submit(item_id=item.pk, user=curator, verdict="accept")
    review_verdict_submit(item_id=item.pk, user=second_curator, verdict="reject", reason_codes=["wrong_tests"])
    assert disputed_items() == [item] and queue_stats(queue=queue).disputed == 1
    review_adjudicate(item_id=item.pk, user=admin_user, verdict="reject", note="tests are wrong")
    assert disputed_items() == []
    stats = queue_stats(queue=queue)
    assert (stats.disputed, stats.rejected, stats.settled) == (0, 1, 1)


def test_it_refuses_to_adjudicate_an_item_without_disagreement(release: Any, curator: Any) -> None:
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=1, double_review_share=0.0)
    item = queue.items.get()
    review_verdict_submit(item_id=item.pk, user=curator, verdict="accept")
    with pytest.raises(ValueError, match="^item: its reviewers do not disagree"):
        review_adjudicate(item_id=item.pk, user=curator, verdict="reject")


def test_it_rejects_an_unknown_reason_code_naming_the_field(release: Any, curator: Any) -> None:
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=1)
    with pytest.raises(ValueError, match="^reason_codes: unknown"):
        review_verdict_submit(item_id=queue.items.get().pk, user=curator, verdict="reject", reason_codes=["meh"])


def _double_review(release: Any, a: Any, b: Any, pairs: list[tuple[str, str]]) -> Any:
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=len(pairs), double_review_share=1.0)
    for item, (va, vb) in zip(queue.items.order_by("position"), pairs, strict=True):
        review_verdict_submit(item_id=item.pk, user=a, verdict=va)
        review_verdict_submit(item_id=item.pk, user=b, verdict=vb)
    return queue


def test_it_reports_cohens_kappa_for_two_reviewers(release: Any, curator: Any, second_curator: Any) -> None:
    # 4 items: agree accept, agree accept, agree reject, disagree -> po = 0.75, pe = 0.5*0.75 + 0.5*0.25 = 0.5
    pairs = [("accept", "accept"), ("accept", "accept"), ("reject", "reject"), ("reject", "accept")]
    stats = queue_stats(queue=_double_review(release, curator, second_curator, pairs))
    assert stats.kappa_kind == "Cohen" and stats.kappa == pytest.approx(0.5)
    assert stats.raw_agreement == pytest.approx(0.75)


def test_it_shows_kappa_and_the_wilson_interval_of_the_error_rate_on_the_release_page(
    release: Any, curator: Any, second_curator: Any, client_as: Any, viewer: Any
) -> None:
    pairs = [("accept", "accept"), ("accept", "accept"), ("reject", "reject"), ("reject", "accept")]
    _double_review(release, curator, second_curator, pairs)
    stats = release_review_stats(release_id=release.pk)
    assert stats is not None and (stats.rejected, stats.settled) == (1, 3)  # the dispute is not settled
    html = client_as(viewer).get(f"/curation/releases/{release.pk}/").content.decode()
    assert "Cohen&#x27;s κ" in html or "Cohen's κ" in html
    assert "0.500" in html  # kappa
    # Wilson 95 % for 1 of 3: (0.0615, 0.7923)
    assert "0.061–0.792" in html and "1 rejected of 3 reviewed" in html


def test_it_reports_fleiss_kappa_when_items_have_three_reviewers(
    release: Any, curator: Any, second_curator: Any, admin_user: Any
) -> None:
    # per item (accept, reject) counts (3,0), (2,1), (0,3), (1,2): P = (1 + 1/3 + 1 + 1/3) / 4 = 2/3,
    # p_accept = p_reject = 1/2, Pe = 1/2 -> kappa = (2/3 - 1/2) / (1/2) = 1/3
    ratings = [("accept",) * 3, ("accept", "accept", "reject"), ("reject",) * 3, ("accept", "reject", "reject")]
    queue = review_queue_create(name="q", release_id=release.pk, sample_size=4, double_review_share=1.0)
    for item, labels in zip(queue.items.order_by("position"), ratings, strict=True):
        for user, label in zip((curator, second_curator, admin_user), labels, strict=True):
            review_verdict_submit(item_id=item.pk, user=user, verdict=label)
    stats = queue_stats(queue=queue)
    assert stats.kappa_kind == "Fleiss" and stats.agreement_raters == 3 and stats.agreement_items == 4
    assert stats.kappa == pytest.approx(1 / 3)
