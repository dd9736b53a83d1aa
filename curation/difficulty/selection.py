"""Select a release so that hard problems reach a target share (the paper: > 50 %).

Rules, in order:
1. A hard problem is never dropped.
2. To reach ``target_hard_share`` the fewest non-hard problems are dropped: easy ones before medium
   ones before unknown ones (bucket ``""``: we know least about them), the lowest calibrated
   difficulty first within a bucket, ties broken by a seeded shuffle (so a rerun gives the same set).
3. Then, if ``max_easy_share`` is given, further easy problems go (easiest first) until the easy share
   is at most that.
Each dropped problem gets a reason in words. If there is no hard problem the target cannot be
reached by dropping; nothing is dropped for rule 2 and ``target_reached`` says so.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

BUCKETS = ("easy", "medium", "hard")
_DROP_ORDER = {"easy": 0, "medium": 1, "": 2}


@dataclass(frozen=True)
class SelectItem:
    key: str
    bucket: str  # "easy" | "medium" | "hard" | "" (unknown)
    difficulty: float  # calibrated difficulty in [0, 1]


@dataclass
class Selection:
    kept: list[str]  # keys, in input order
    dropped: list[tuple[str, str]]  # (key, reason), in drop order
    before: dict[str, int]
    after: dict[str, int]
    hard_share_before: float
    hard_share_after: float
    target_reached: bool = True
    easy_share_before: float = 0.0
    easy_share_after: float = 0.0
    notes: list[str] = field(default_factory=list)


def _counts(items: Sequence[SelectItem]) -> dict[str, int]:
    c = Counter(i.bucket for i in items)
    out = {b: c.get(b, 0) for b in BUCKETS}
    if c.get(""):
        out["unknown"] = c[""]
    return out


def _share(n: int, total: int) -> float:
    return n / total if total else 0.0


def select_hard_share(
    items: Sequence[SelectItem],
    *,
    target_hard_share: float = 0.5,
    max_easy_share: float | None = None,
    seed: int = 0,
) -> Selection:
    """Apply the rules of the module docstring; ``ValueError`` for a share outside [0, 1], an unknown
    bucket or a duplicate key."""
    if not 0.0 <= target_hard_share <= 1.0:
        raise ValueError(f"target_hard_share must be in [0, 1], got {target_hard_share}")
    if max_easy_share is not None and not 0.0 <= max_easy_share <= 1.0:
        raise ValueError(f"max_easy_share must be in [0, 1], got {max_easy_share}")
    keys = [i.key for i in items]
    if len(set(keys)) != len(keys):
        raise ValueError("item keys must be unique")
    for i in items:
        if i.bucket not in _DROP_ORDER and i.bucket != "hard":
            raise ValueError(f"item {i.key}: unknown bucket {i.bucket!r} (easy, medium, hard or '')")

    total = len(items)
    hard = sum(1 for i in items if i.bucket == "hard")
    rng = random.Random(seed)
    tiebreak = {i.key: rng.random() for i in items}
    candidates = sorted(
        (i for i in items if i.bucket != "hard"),
        key=lambda i: (_DROP_ORDER[i.bucket], i.difficulty, tiebreak[i.key]),
    )
    dropped: list[tuple[str, str]] = []
    notes: list[str] = []
    reached = True
    if target_hard_share > 0 and hard == 0:
        reached = target_hard_share == 0 or total == 0
        notes.append("no hard problem: the hard share cannot be raised by dropping problems")
    elif target_hard_share > 0:
        # the largest release size whose hard share is still >= target
        allowed = math.floor(hard / target_hard_share + 1e-9)
        to_drop = max(0, total - allowed)
        label = f"{target_hard_share:.0%}"
        for item in candidates[:to_drop]:
            name = item.bucket or "unknown"
            dropped.append(
                (
                    item.key,
                    f"{name} (difficulty {item.difficulty:.2f}): dropped to raise the hard share to {label}",
                )
            )
    gone = {k for k, _ in dropped}
    if max_easy_share is not None:
        remaining = [i for i in items if i.key not in gone]
        easy_left = [i for i in candidates if i.bucket == "easy" and i.key not in gone]
        n_left, n_easy = len(remaining), len(easy_left)
        for item in easy_left:
            if _share(n_easy, n_left) <= max_easy_share + 1e-12:
                break
            dropped.append(
                (
                    item.key,
                    f"easy (difficulty {item.difficulty:.2f}): dropped to cap the easy share at {max_easy_share:.0%}",
                )
            )
            gone.add(item.key)
            n_left -= 1
            n_easy -= 1
    kept_items = [i for i in items if i.key not in gone]
    before, after = _counts(items), _counts(kept_items)
    hard_after = _share(after["hard"], len(kept_items))
    if target_hard_share > 0 and hard > 0:
        reached = hard_after + 1e-12 >= target_hard_share
    return Selection(
        kept=[i.key for i in kept_items],
        dropped=dropped,
        before=before,
        after=after,
        hard_share_before=_share(before["hard"], total),
        hard_share_after=hard_after,
        target_reached=reached,
        easy_share_before=_share(before["easy"], total),
        easy_share_after=_share(after["easy"], len(kept_items)),
        notes=notes,
    )
