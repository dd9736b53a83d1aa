"""Reads for spot-checks: queue progress, final verdicts, agreement (kappa), the adjudication queue,
and a release's estimated error rate with its Wilson 95 % interval."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Prefetch, QuerySet

from curation.models import ReviewItem, ReviewQueue, ReviewVerdict, Verdict


def review_queue_list() -> QuerySet[ReviewQueue]:
    return ReviewQueue.objects.select_related("release", "created_by").annotate(item_count=Count("items")).order_by("-id")


def _items(queue_ids: list[int]) -> list[ReviewItem]:
    verdicts = Prefetch("verdicts", queryset=ReviewVerdict.objects.select_related("reviewer").order_by("created_at", "id"))
    return list(ReviewItem.objects.filter(queue_id__in=queue_ids).select_related("problem", "adjudication")
                .prefetch_related(verdicts).order_by("queue_id", "position"))


def _adjudication(item: ReviewItem) -> Any:
    return getattr(item, "adjudication", None) if hasattr(item, "adjudication") else None


def item_final_verdict(item: ReviewItem) -> str:
    """``accept`` / ``reject`` / ``needs_fix`` once settled; ``disputed`` while reviewers disagree
    (until adjudicated); ``pending`` while it lacks verdicts."""
    adjudication = _adjudication(item)
    if adjudication is not None:
        return adjudication.verdict
    labels = [v.verdict for v in item.verdicts.all()]
    if len(set(labels)) > 1:
        return "disputed"
    if len(labels) < item.required_reviews:
        return "pending"
    return labels[0]


@dataclass
class ReviewStats:
    """Everything the queue and release pages show about a set of review items."""

    items: int = 0
    settled: int = 0
    pending: int = 0
    disputed: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    reviews_done: int = 0
    reviews_needed: int = 0
    agreement_items: int = 0
    agreement_raters: int = 0
    kappa: float | None = None
    kappa_kind: str = ""
    raw_agreement: float | None = None
    rejected: int = 0
    error_rate: float | None = None
    error_ci: tuple[float, float] | None = None

    @property
    def percent_done(self) -> int:
        return round(100 * self.reviews_done / self.reviews_needed) if self.reviews_needed else 0


def review_stats(items: list[ReviewItem]) -> ReviewStats:
    """Progress, agreement and error rate. Agreement uses items with two or more verdicts: Cohen's
    kappa when every such item has exactly two (first vs second verdict), Fleiss' kappa over the items
    with the most common number of raters otherwise. The error rate is the rejected share of settled
    items with a Wilson 95 % interval."""
    from curation.difficulty.agreement import cohen_kappa, fleiss_kappa, wilson_interval  # scipy: lazily

    stats = ReviewStats(items=len(items))
    finals: Counter[str] = Counter()
    multi: list[list[str]] = []
    for item in items:
        labels = [v.verdict for v in item.verdicts.all()]
        stats.reviews_done += min(len(labels), item.required_reviews)
        stats.reviews_needed += item.required_reviews
        final = item_final_verdict(item)
        finals[final] += 1
        if len(labels) >= 2:
            multi.append(labels)
    stats.pending, stats.disputed = finals.pop("pending", 0), finals.pop("disputed", 0)
    stats.verdicts = {v: finals.get(v, 0) for v in Verdict.values}
    stats.settled = sum(finals.values())
    stats.rejected = finals.get(str(Verdict.REJECT), 0)
    if stats.settled:
        stats.error_rate = stats.rejected / stats.settled
        stats.error_ci = wilson_interval(stats.rejected, stats.settled)
    if multi:
        if all(len(labels) == 2 for labels in multi):
            stats.kappa_kind = "Cohen"
            stats.kappa = cohen_kappa([x[0] for x in multi], [x[1] for x in multi])
            stats.agreement_raters = 2
            rated = multi
        else:
            raters = Counter(len(x) for x in multi).most_common(1)[0][0]
            rated = [x for x in multi if len(x) == raters]
            stats.kappa_kind = "Fleiss"
            stats.kappa = fleiss_kappa(rated)
            stats.agreement_raters = raters
        stats.agreement_items = len(rated)
        stats.raw_agreement = sum(len(set(x)) == 1 for x in rated) / len(rated)
    return stats


def queue_stats(*, queue: ReviewQueue) -> ReviewStats:
    return review_stats(_items([queue.pk]))


def release_review_stats(*, release_id: int) -> ReviewStats | None:
    """The stats over every review queue drawn from the release; ``None`` when it has none."""
    queue_ids = list(ReviewQueue.objects.filter(release_id=release_id).values_list("pk", flat=True))
    return review_stats(_items(queue_ids)) if queue_ids else None


def queue_items(*, queue: ReviewQueue) -> list[ReviewItem]:
    return _items([queue.pk])


def disputed_items(*, queue_id: int | None = None) -> list[ReviewItem]:
    """Items whose reviewers disagree and that no one has adjudicated yet (the adjudication queue)."""
    candidates = (ReviewItem.objects.filter(adjudication__isnull=True).annotate(n=Count("verdicts")).filter(n__gte=2))
    if queue_id is not None:
        candidates = candidates.filter(queue_id=queue_id)
    ids = list(candidates.values_list("pk", flat=True))
    items = list(ReviewItem.objects.filter(pk__in=ids).select_related("problem", "queue")
                 .prefetch_related("verdicts__reviewer").order_by("queue_id", "position"))
    return [i for i in items if len({v.verdict for v in i.verdicts.all()}) > 1]
