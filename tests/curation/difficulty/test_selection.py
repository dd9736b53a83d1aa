"""Selection to a hard share: fewest drops, easiest first, never a hard problem, reasons given."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.buckets import bucket_from_platform
from curation.difficulty.selection import SelectItem, select_hard_share

DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "leetcodedataset"


def _items() -> list[SelectItem]:
    # 2 hard, 3 medium, 5 easy
    spec = [
        ("h1", "hard", 0.9),
        ("h2", "hard", 0.8),
        ("m1", "medium", 0.5),
        ("m2", "medium", 0.4),
        ("m3", "medium", 0.6),
        ("e1", "easy", 0.1),
        ("e2", "easy", 0.2),
        ("e3", "easy", 0.05),
        ("e4", "easy", 0.3),
        ("e5", "easy", 0.15),
    ]
    return [SelectItem(k, b, d) for k, b, d in spec]


def test_it_drops_the_fewest_non_hard_problems_easiest_first() -> None:
    # 2 hard at >= 50 % allow 4 problems: drop 6 = all 5 easy + the easiest medium (m2)
    sel = select_hard_share(_items(), target_hard_share=0.5)
    assert [k for k, _ in sel.dropped] == ["e3", "e1", "e5", "e2", "e4", "m2"]
    assert sel.kept == ["h1", "h2", "m1", "m3"]
    assert sel.hard_share_before == pytest.approx(0.2)
    assert sel.hard_share_after == pytest.approx(0.5)
    assert sel.before == {"easy": 5, "medium": 3, "hard": 2}
    assert sel.after == {"easy": 0, "medium": 2, "hard": 2}
    assert sel.target_reached


def test_it_says_why_each_problem_was_dropped() -> None:
    sel = select_hard_share(_items(), target_hard_share=0.5)
    assert dict(sel.dropped)["m2"] == "medium (difficulty 0.40): dropped to raise the hard share to 50%"


def test_it_caps_the_easy_share_after_reaching_the_hard_share() -> None:
    # target 0.2 is already met; at most 20 % easy: 10 -> drop easy until e/(n) <= 0.2:
    # 5/10 -> 4/9 -> 3/8 -> 2/7 -> 1/6 (0.167): four easy problems go
    sel = select_hard_share(_items(), target_hard_share=0.2, max_easy_share=0.2)
    assert [k for k, _ in sel.dropped] == ["e3", "e1", "e5", "e2"]
    assert sel.after["easy"] == 1
    assert "cap the easy share at 20%" in sel.dropped[0][1]


def test_it_never_drops_a_hard_problem_even_when_the_target_is_unreachable() -> None:
    items = [SelectItem("e1", "easy", 0.1), SelectItem("m1", "medium", 0.5)]
    sel = select_hard_share(items, target_hard_share=0.5)
    assert sel.dropped == [] and not sel.target_reached
    assert sel.notes


def test_it_breaks_ties_reproducibly_by_seed() -> None:
    items = [SelectItem(f"e{i}", "easy", 0.1) for i in range(6)] + [SelectItem("h", "hard", 0.9)]
    a = select_hard_share(items, target_hard_share=0.5, seed=3)
    b = select_hard_share(items, target_hard_share=0.5, seed=3)
    assert a.dropped == b.dropped and len(a.kept) == 2


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data (LeetCodeDataset) is absent")
def test_it_reaches_the_target_hard_share_on_real_leetcode_problems() -> None:
    from curation.importers import get_importer

    path = DATA / "LeetCodeDataset-v0.3.1-test.jsonl.gz"
    items = []
    for parsed in get_importer("leetcodedataset").parse(path):
        rec = parsed.record
        assert rec is not None
        bucket = bucket_from_platform(rec.difficulty, rec.rating)
        items.append(SelectItem(rec.external_id, bucket, {"easy": 0.2, "medium": 0.5, "hard": 0.8}[bucket]))
    sel = select_hard_share(items, target_hard_share=0.5)
    assert sel.hard_share_after >= 0.5
    assert sel.after["hard"] == sel.before["hard"]
    assert sel.after["easy"] == 0  # easy ones go before any medium one
    assert len(sel.kept) + len(sel.dropped) == len(items) == 228
