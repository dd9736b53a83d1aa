"""The release builder's hard-share selection: a Django adapter around ``select_hard_share``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from curation.difficulty.selection import SelectItem, select_hard_share
from curation.selectors_difficulty import problem_difficulty_values

#: a problem without a calibrated value is ordered inside its bucket by this stand-in
BUCKET_MIDPOINT = {"easy": 0.2, "medium": 0.5, "hard": 0.8}


def select_rows(
    rows: Sequence[tuple[Any, ...]], *, target_hard_share: float
) -> tuple[list[tuple[Any, ...]], list[dict[str, Any]]]:
    """Rows are ``(problem_id, platform, external_id, content_hash, bucket, ...)``. Returns the kept
    rows (input order) and ``[{problem_id, key, bucket, difficulty, reason}]`` for the dropped ones.
    Within a bucket, the calibrated difficulty (1 - pass rate) of the latest applied calibration
    orders the drops (bucket midpoints stand in where there is none); problems without a bucket are
    dropped after easy and medium ones (the core's rule: we know least about them)."""
    if not 0.0 < float(target_hard_share) <= 1.0:
        raise ValueError("target_hard_share: must be greater than 0 and at most 1")
    values = problem_difficulty_values(problem_ids=[r[0] for r in rows])
    by_key = {f"{r[1]}:{r[2]}": r for r in rows}
    items = [
        SelectItem(key=key, bucket=r[4] if r[4] in BUCKET_MIDPOINT else "",
                   difficulty=values.get(r[0], BUCKET_MIDPOINT.get(r[4], 0.5)))
        for key, r in by_key.items()
    ]
    selection = select_hard_share(items, target_hard_share=float(target_hard_share))
    kept = set(selection.kept)
    dropped: list[dict[str, Any]] = []
    for key, reason in selection.dropped:
        r = by_key[key]
        dropped.append({"problem_id": r[0], "key": key, "bucket": r[4] or "unknown",
                        "difficulty": values.get(r[0]), "reason": reason})
    return [r for r in rows if f"{r[1]}:{r[2]}" in kept], dropped
