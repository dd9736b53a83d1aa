"""Dataset releases: a filter -> a frozen, content-hashed set of pinned problem versions."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Subquery

from curation.models import DatasetRelease, ProblemVersion, ReleaseItem
from curation.selectors import ReleaseFilter, problems_for_release


class EmptyReleaseError(ValueError):
    """The filter selects no problem; an empty release would train on nothing."""


def release_content_hash(items: Iterable[tuple[str, str, str, str]]) -> str:
    """sha256 over the sorted ``(platform, external_id, content_hash, difficulty)`` lines.

    Independent of the release's name, time, ids and order: the same problem versions with the same
    buckets hash the same; any changed problem, bucket or membership changes the hash.
    """
    lines = sorted("\t".join(item) for item in items)
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


@transaction.atomic
def release_create(
    *, name: str, filter_spec: dict[str, Any] | ReleaseFilter, user: Any = None, description: str = "",
    target_hard_share: float | None = None,
) -> DatasetRelease:
    """Freeze the problems ``filter_spec`` selects (``ReleaseFilter`` or its dict form) into a new
    version of release ``name`` (1, 2, ... per name). Each item pins the problem's current
    ``ProblemVersion`` and its bucket/stage/training-test cap at this moment. Raises ``ValueError``
    for a bad spec and ``EmptyReleaseError`` when nothing matches.

    With ``target_hard_share`` (0 < share <= 1) the matched problems go through ``select_hard_share``
    (see ``curation.services.selection``): the easiest are dropped until hard problems reach the share;
    the release stores what was dropped and why and the bucket counts before the selection."""
    name = name.strip()
    if not name:
        raise ValueError("a release needs a name")
    spec = filter_spec if isinstance(filter_spec, ReleaseFilter) else ReleaseFilter.from_dict(filter_spec)
    # One query reads each problem's state *and* the id of its current version, so an import that
    # commits meanwhile cannot make an item pin one version while storing another's hash.
    current_version = ProblemVersion.objects.filter(problem=OuterRef("pk"), version=OuterRef("version"))
    problems = problems_for_release(spec).annotate(version_id=Subquery(current_version.values("id")[:1]))
    rows = list(
        problems.values_list(
            "id", "platform__name", "external_id", "content_hash", "difficulty", "stage", "train_test_limit",
            "version_id",
        )
    )
    if not rows:
        raise EmptyReleaseError("the filter matches no problems")
    counts_before = dict(sorted(Counter(r[4] or "unknown" for r in rows).items()))
    dropped: list[dict[str, Any]] = []
    if target_hard_share is not None:
        from curation.services.selection import select_rows  # scipy/sklearn only when selecting

        rows, dropped = select_rows(rows, target_hard_share=target_hard_share)
        if not rows:
            raise EmptyReleaseError("the hard-share selection kept no problems")
    unversioned = [f"{r[1]}/{r[2]}" for r in rows if r[7] is None]
    if unversioned:
        raise ValueError(f"{len(unversioned)} problem(s) have no stored version (e.g. {unversioned[0]}); "
                         "re-import them before releasing")
    # Versions of one name are numbered under a lock on the existing rows of that name; the unique
    # constraint still guards the very first version against a concurrent create.
    previous = (DatasetRelease.objects.select_for_update().filter(name=name)
                .order_by("-version").values_list("version", flat=True).first())
    release = DatasetRelease.objects.create(
        name=name,
        version=(previous or 0) + 1,
        description=description,
        filter_spec=spec.to_dict(),
        content_hash=release_content_hash((r[1], r[2], r[3], r[4]) for r in rows),
        problem_count=len(rows),
        counts_by_platform=dict(sorted(Counter(r[1] for r in rows).items())),
        counts_by_difficulty=dict(sorted(Counter(r[4] or "unknown" for r in rows).items())),
        target_hard_share=target_hard_share,
        counts_before_selection=counts_before,
        dropped=dropped,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    ReleaseItem.objects.bulk_create(
        [
            ReleaseItem(
                release=release, problem_id=pid, problem_version_id=version_id, content_hash=chash,
                platform=platform, difficulty=bucket, stage=stage, train_test_limit=limit,
            )
            for pid, platform, _ext, chash, bucket, stage, limit, version_id in rows
        ],
        batch_size=2000,
    )
    return release
