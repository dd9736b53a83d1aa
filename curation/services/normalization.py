"""The "normalize" stage on stored problems: statement hashes, MinHash signatures, duplicate links.

- Exact duplicates: problems whose canonical statements hash the same, on any platforms.
- Near duplicates: MinHash/LSH estimated Jaccard >= ``settings.NEAR_DUPLICATE_THRESHOLD`` between
  problems of *different* platforms (within one platform, similar statements are usually deliberate
  variants such as "Two Sum II", and each platform's ids already separate true copies).
- The later problem (higher id: imported later) is linked to the earlier one with an explanation, and
  its stage becomes ``duplicate``. Nothing is deleted; a release excludes duplicates by filter.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from curation.models import DuplicateKind, DuplicateLink, Problem, Stage
from curation.normalize import (
    DEFAULT_THRESHOLD,
    Fingerprint,
    NearDuplicateIndex,
    explain_duplicate,
    minhash_signature,
    sig_from_bytes,
    sig_to_bytes,
    statement_hash,
)

CHUNK_SIZE = 500


@dataclass
class NormalizeReport:
    normalized: int = 0
    exact_links: int = 0
    near_links: int = 0
    duplicate_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _Desired:
    problem_id: int
    duplicate_of_id: int
    kind: str
    similarity: float
    explanation: str


def problems_normalize(
    *, problem_ids: Iterable[int] | None = None, threshold: float | None = None
) -> NormalizeReport:
    """Normalize ``problem_ids`` (default: every problem not normalized since its last change) and
    (re)link their duplicates. Targets go to ``normalized`` or ``duplicate`` and must pass the
    constraints stage again; a problem that a target now duplicates-in-reverse becomes ``duplicate``."""
    threshold = float(threshold if threshold is not None else getattr(settings, "NEAR_DUPLICATE_THRESHOLD",
                                                                        DEFAULT_THRESHOLD))
    if problem_ids is None:
        targets = list(Problem.objects.filter(normalized_at__isnull=True).order_by("id").values_list("id", flat=True))
    else:
        targets = sorted(set(problem_ids))
    report = NormalizeReport()
    if not targets:
        return report
    _fingerprint(targets)
    report.normalized = len(targets)

    with transaction.atomic():
        desired = _find_links(set(targets), threshold)
        DuplicateLink.objects.filter(problem_id__in=targets).delete()
        DuplicateLink.objects.bulk_create(
            [
                DuplicateLink(
                    problem_id=d.problem_id, duplicate_of_id=d.duplicate_of_id, kind=d.kind,
                    similarity=round(d.similarity, 4), explanation=d.explanation,
                )
                for d in desired
            ],
            ignore_conflicts=True,
        )
        linked = {d.problem_id for d in desired}
        duplicates = linked | set(
            DuplicateLink.objects.filter(problem_id__in=targets).values_list("problem_id", flat=True)
        )
        now = timezone.now()
        Problem.objects.filter(pk__in=targets).exclude(pk__in=duplicates).update(
            stage=Stage.NORMALIZED, normalized_at=now, constraints_checked_at=None
        )
        Problem.objects.filter(pk__in=[t for t in targets if t in duplicates]).update(
            stage=Stage.DUPLICATE, normalized_at=now, constraints_checked_at=None
        )
        # Earlier-normalized problems that turn out to repeat a target become duplicates too.
        Problem.objects.filter(pk__in=linked - set(targets), normalized_at__isnull=False).update(
            stage=Stage.DUPLICATE
        )
    report.exact_links = sum(1 for d in desired if d.kind == DuplicateKind.EXACT)
    report.near_links = len(desired) - report.exact_links
    report.duplicate_ids = sorted(linked)
    return report


def _fingerprint(ids: list[int]) -> None:
    """Store statement hash + MinHash signature of each problem (chunked bulk updates)."""
    for start in range(0, len(ids), CHUNK_SIZE):
        chunk = list(Problem.objects.filter(pk__in=ids[start:start + CHUNK_SIZE]).only("id", "statement"))
        for p in chunk:
            p.statement_hash = statement_hash(p.statement)
            p.minhash = sig_to_bytes(minhash_signature(p.statement))
        with transaction.atomic():
            Problem.objects.bulk_update(chunk, ["statement_hash", "minhash"])


def _find_links(targets: set[int], threshold: float) -> list[_Desired]:
    """The duplicate links that involve a target, computed against every fingerprinted problem."""
    rows = list(
        Problem.objects.exclude(statement_hash="").exclude(minhash=None)
        .order_by("id").values_list("id", "platform__name", "external_id", "statement_hash", "minhash")
    )
    info = {pid: (platform, ext) for pid, platform, ext, _h, _m in rows}
    prints = {pid: Fingerprint(str(pid), platform, h, sig_from_bytes(m)) for pid, platform, _e, h, m in rows}

    by_hash: dict[str, list[int]] = defaultdict(list)
    for pid, _p, _e, h, _m in rows:
        by_hash[h].append(pid)  # ascending ids: the first is the original
    desired: dict[tuple[int, int], _Desired] = {}
    exact_dups: set[int] = set()
    for members in by_hash.values():
        if len(members) < 2 or not targets.intersection(members):
            if len(members) > 1:
                exact_dups.update(members[1:])
            continue
        original = members[0]
        for dup in members[1:]:
            exact_dups.add(dup)
            desired[(dup, original)] = _Desired(
                dup, original, str(DuplicateKind.EXACT), 1.0,
                _explain(prints[dup], prints[original], info[original], threshold),
            )

    index = NearDuplicateIndex(threshold=threshold)
    for pid in prints:
        if pid not in exact_dups:  # an exact copy's original stands for it
            index.add(str(pid), prints[pid].signature)
    for t in sorted(targets):
        if t not in prints or t in exact_dups:
            continue
        for key, j in index.query(prints[t].signature):
            other = int(key)
            if other == t or prints[other].platform == prints[t].platform:
                continue
            if prints[other].statement_hash == prints[t].statement_hash:
                continue
            later, earlier = max(t, other), min(t, other)
            if later in exact_dups:
                continue
            if (later, earlier) not in desired:
                desired[(later, earlier)] = _Desired(
                    later, earlier, str(DuplicateKind.NEAR), j,
                    _explain(prints[later], prints[earlier], info[earlier], threshold),
                )
    return list(desired.values())


def _explain(dup: Fingerprint, original: Fingerprint, original_info: tuple[str, str], threshold: float) -> str:
    platform, external_id = original_info
    return f"{explain_duplicate(dup, original, threshold)}; repeats {platform}/{external_id} (#{original.key})"
