"""Spot-checks: stratified review queues, verdicts per reviewer, adjudication of disagreements."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, F

from curation.models import (
    REASON_CODES,
    Adjudication,
    DatasetRelease,
    ReleaseItem,
    ReviewAssignment,
    ReviewItem,
    ReviewQueue,
    ReviewVerdict,
    Verdict,
)
from curation.selectors import ReleaseFilter, problems_for_release

MAX_SAMPLE = 5000


def stratified_sample(
    population: Sequence[tuple[int, str, str]], *, size: int, seed: int
) -> tuple[list[tuple[int, str, str]], dict[str, list[int]]]:
    """Sample ``size`` of ``(problem_id, platform, bucket)`` rows, stratified by platform x bucket with
    proportional allocation (largest remainders; every non-empty stratum gets at least one when
    ``size`` allows). Returns the sample (in a shuffled order) and ``{"platform/bucket": [population,
    sampled]}``. Deterministic for a seed."""
    strata: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    for row in sorted(population):
        strata[f"{row[1]}/{row[2] or 'unknown'}"].append(row)
    total = len(population)
    size = min(size, total)
    keys = sorted(strata)
    quota = {k: size * len(strata[k]) / total for k in keys} if total else {}
    alloc = {k: int(quota[k]) for k in keys}
    if size >= len(keys):
        for k in keys:
            alloc[k] = max(alloc[k], 1)
    # hand out what is left by largest remainder, never beyond a stratum's size
    order = sorted(keys, key=lambda k: (-(quota[k] - int(quota[k])), k))
    while sum(alloc.values()) < size:
        for k in order:
            if sum(alloc.values()) >= size:
                break
            if alloc[k] < len(strata[k]):
                alloc[k] += 1
    while sum(alloc.values()) > size:  # the minimum of one per stratum overshot: trim the largest
        k = max(keys, key=lambda key: (alloc[key], key))
        alloc[k] -= 1
    rng = random.Random(seed)
    sample: list[tuple[int, str, str]] = []
    for k in keys:
        sample.extend(rng.sample(strata[k], alloc[k]))
    rng.shuffle(sample)
    return sample, {k: [len(strata[k]), alloc[k]] for k in keys}


@transaction.atomic
def review_queue_create(
    *,
    name: str,
    sample_size: int,
    user: Any = None,
    release_id: int | None = None,
    filter_spec: dict[str, Any] | None = None,
    double_review_share: float = 0.2,
    seed: int = 0,
) -> ReviewQueue:
    """A queue of a stratified random sample (platform x bucket) of release ``release_id``'s problems
    (their buckets as pinned by the release) or of those ``filter_spec`` selects; a
    ``double_review_share`` of the items needs two reviewers. Raises ``ValueError`` naming the field."""
    if not name.strip():
        raise ValueError("name: a review queue needs a name")
    if not isinstance(sample_size, int) or not 1 <= sample_size <= MAX_SAMPLE:
        raise ValueError(f"sample_size: must be an integer from 1 to {MAX_SAMPLE}")
    if not 0.0 <= float(double_review_share) <= 1.0:
        raise ValueError("double_review_share: must lie between 0 and 1")
    if release_id is not None:
        if not DatasetRelease.objects.filter(pk=release_id).exists():
            raise ValueError(f"release: no release #{release_id}")
        population = list(ReleaseItem.objects.filter(release_id=release_id)
                          .values_list("problem_id", "platform", "difficulty"))
    else:
        try:
            spec = ReleaseFilter.from_dict(filter_spec or {})
        except ValueError as exc:
            raise ValueError(f"filter_spec: {exc}") from exc
        population = list(problems_for_release(spec).values_list("pk", "platform__name", "difficulty"))
    if not population:
        raise ValueError("release: the selection has no problems to review")
    sample, strata = stratified_sample(population, size=sample_size, seed=seed)
    queue = ReviewQueue.objects.create(
        name=name.strip(), release_id=release_id, filter_spec=filter_spec or {}, sample_size=len(sample),
        double_review_share=float(double_review_share), seed=seed, strata=strata,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    doubles = set(random.Random(seed + 1).sample(range(len(sample)), round(len(sample) * double_review_share)))
    ReviewItem.objects.bulk_create([
        ReviewItem(queue=queue, problem_id=pid, position=i + 1, platform=platform, bucket=bucket or "",
                   required_reviews=2 if i in doubles else 1)
        for i, (pid, platform, bucket) in enumerate(sample)
    ])
    return queue


def review_next_item(*, queue_id: int, user: Any) -> ReviewItem | None:
    """The first item (by position) that still needs a verdict and that ``user`` has not judged;
    records the assignment. ``None`` when the queue has nothing left for this user."""
    item = (ReviewItem.objects.filter(queue_id=queue_id).exclude(verdicts__reviewer=user)
            .annotate(n=Count("verdicts")).filter(n__lt=F("required_reviews"))
            .select_related("problem").order_by("position").first())
    if item is not None:
        try:
            with transaction.atomic():
                ReviewAssignment.objects.get_or_create(item=item, reviewer=user)
        except IntegrityError:
            pass  # two tabs of the same reviewer asked at once: the assignment exists
        return item
    return None


@transaction.atomic
def review_verdict_submit(
    *, item_id: int, user: Any, verdict: str, reason_codes: Sequence[str] = (), note: str = ""
) -> ReviewVerdict:
    """Record (or change) ``user``'s verdict on an item. Raises ``ValueError`` naming the field."""
    if verdict not in Verdict.values:
        raise ValueError(f"verdict: must be one of {', '.join(Verdict.values)}, got {verdict!r}")
    codes = list(dict.fromkeys(reason_codes))
    unknown = [c for c in codes if c not in REASON_CODES]
    if unknown:
        raise ValueError(f"reason_codes: unknown code(s) {unknown}; known: {', '.join(REASON_CODES)}")
    if verdict == Verdict.ACCEPT and codes:
        raise ValueError("reason_codes: an accept carries no reason codes")
    try:
        item = ReviewItem.objects.get(pk=item_id)
    except ReviewItem.DoesNotExist:
        raise ValueError(f"item: no review item #{item_id}") from None
    row, _ = ReviewVerdict.objects.update_or_create(
        item=item, reviewer=user, defaults={"verdict": verdict, "reason_codes": codes, "note": note.strip()}
    )
    ReviewAssignment.objects.get_or_create(item=item, reviewer=user)
    return row


@transaction.atomic
def review_adjudicate(*, item_id: int, user: Any, verdict: str, note: str = "") -> Adjudication:
    """Settle an item whose reviewers disagree. Raises ``ValueError`` when there is nothing to settle."""
    if verdict not in Verdict.values:
        raise ValueError(f"verdict: must be one of {', '.join(Verdict.values)}, got {verdict!r}")
    try:
        item = ReviewItem.objects.select_for_update().get(pk=item_id)
    except ReviewItem.DoesNotExist:
        raise ValueError(f"item: no review item #{item_id}") from None
    if len(set(item.verdicts.values_list("verdict", flat=True))) < 2:
        raise ValueError("item: its reviewers do not disagree; nothing to adjudicate")
    adjudication, _ = Adjudication.objects.update_or_create(
        item=item, defaults={"verdict": verdict, "note": note.strip(), "adjudicator": user}
    )
    return adjudication

