"""Contamination guard: statement 13-gram overlap between evaluation problems and a training release.

As in the GPT-3 and LLaMA decontamination reports: statements are normalized (lower case, words =
runs of letters and digits, punctuation and whitespace dropped) and cut into word n-grams (n = 13);
an evaluation problem is flagged when it shares at least ``threshold`` n-grams with a training
problem. A statement shorter than n words is one n-gram of all its words, so a short copy is still
caught. The same problem (same ``platform:external_id``) in both sets is always flagged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def problem_key(row: Mapping[str, Any]) -> str:
    """``platform:external_id`` of an export row (an explicit ``id`` field wins)."""
    if row.get("id"):
        return str(row["id"])
    return f"{row.get('platform', '')}:{row.get('external_id', '')}"


def statement_ngrams(text: str, n: int = 13) -> set[tuple[str, ...]]:
    """The word n-grams of a normalized statement (one n-gram of every word when it is shorter)."""
    words = _WORD.findall(text.lower())
    if not words:
        return set()
    if len(words) < n:
        return {tuple(words)}
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def contamination_report(
    eval_rows: Iterable[Mapping[str, Any]],
    train_rows: Iterable[Mapping[str, Any]],
    *,
    n: int = 13,
    threshold: int = 1,
) -> dict[str, dict[str, Any]]:
    """Flagged evaluation problems only: id -> ``{"overlap", "shared", "matched_train_ids"}``.

    ``shared`` = the number of the problem's n-grams found in any training statement, ``overlap`` =
    that count over the problem's n-grams (0..1), ``matched_train_ids`` = training problems sharing
    at least ``threshold`` n-grams with it (or the same id), sorted."""
    if threshold < 1:
        raise ValueError("threshold must be >= 1 shared n-gram")
    index: dict[tuple[str, ...], set[str]] = {}
    train_ids: set[str] = set()
    for row in train_rows:
        key = problem_key(row)
        train_ids.add(key)
        for gram in statement_ngrams(str(row.get("statement", "")), n):
            index.setdefault(gram, set()).add(key)
    report: dict[str, dict[str, Any]] = {}
    for row in eval_rows:
        key = problem_key(row)
        grams = statement_ngrams(str(row.get("statement", "")), n)
        per_train: dict[str, int] = {}
        shared = 0
        for gram in grams:
            hits = index.get(gram)
            if hits:
                shared += 1
                for tid in hits:
                    per_train[tid] = per_train.get(tid, 0) + 1
        matched = {tid for tid, count in per_train.items() if count >= threshold}
        if key in train_ids:
            matched.add(key)
        if matched:
            report[key] = {
                "overlap": shared / len(grams) if grams else 1.0,
                "shared": shared,
                "matched_train_ids": sorted(matched),
            }
    return report


__all__ = ["contamination_report", "problem_key", "statement_ngrams"]
