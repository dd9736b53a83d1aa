"""The difficulty bucket (easy / medium / hard / unknown) derived from what the platform says.

This is the import-time guess only: the difficulty matrix (LLM prediction calibrated against a target
model's pass rate) overwrites ``Problem.difficulty`` later. A numeric rating wins over a label because
it is finer; labels are matched case-insensitively across the platforms' vocabularies.
"""

from __future__ import annotations

import re

EASY, MEDIUM, HARD, UNKNOWN = "easy", "medium", "hard", ""

#: Codeforces-style ratings: below ``RATING_MEDIUM`` is easy, from ``RATING_HARD`` on is hard.
RATING_MEDIUM = 1400
RATING_HARD = 2000

_LABELS: dict[str, str] = {
    # LeetCode, LiveCodeBench, CodeContests, TACO
    "easy": EASY, "very_easy": EASY, "introductory": EASY,
    "medium": MEDIUM, "interview": MEDIUM,
    "medium_hard": HARD, "hard": HARD, "harder": HARD, "hardest": HARD, "very_hard": HARD,
    "competition": HARD,
}
#: Codeforces problem index letter (a Div. 2 round's A/B are easy, C/D medium, E and later hard)
_INDEX = re.compile(r"^([A-Z])\d?$")


def bucket_from_platform(label: str, rating: int | None) -> str:
    """``("Hard", None)`` -> ``"hard"``; ``("", 1500)`` -> ``"medium"``; ``("C", None)`` -> ``"medium"``;
    anything unrecognized -> ``""`` (unknown)."""
    if rating is not None and rating > 0:
        if rating < RATING_MEDIUM:
            return EASY
        return MEDIUM if rating < RATING_HARD else HARD
    key = (label or "").strip()
    bucket = _LABELS.get(key.lower().replace(" ", "_").replace("-", "_"))
    if bucket is not None:
        return bucket
    m = _INDEX.match(key.upper())
    if m:
        letter = m.group(1)
        if letter in "AB":
            return EASY
        return MEDIUM if letter in "CD" else HARD
    return UNKNOWN
