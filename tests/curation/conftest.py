"""Fixtures for the curation tests: hand-made records written as MicroCoder export JSONL files."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from curation.records import ProblemRecord, SolutionRecord, TestRecord

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"

#: ~120 words, so a near-duplicate that changes a few words stays above Jaccard 0.8 on 5-word shingles
LONG_STATEMENT = (
    "You are given an array of integers and a target value. Find two distinct positions whose values add up "
    "to the target and return them in increasing order. Each input has exactly one answer, and you may not "
    "use the same element twice. The array has between two and ten thousand elements, every element lies "
    "between minus one billion and one billion, and the target lies in the same range. Think about how a "
    "hash map lets you check, for every element, whether its complement was already seen, which gives a "
    "linear time solution instead of the quadratic scan over all pairs. Print the two positions separated "
    "by a single space on one line. Positions are counted from zero. The judge accepts only the unique "
    "correct pair, so make sure that the smaller position comes first in your output line."
)


def make_record(
    external_id: str = "p1",
    *,
    platform: str = "leetcode",
    statement: str | None = None,
    tests: int = 6,
    difficulty: str = "Medium",
    rating: int | None = None,
    tags: Iterable[str] = ("array",),
    contest_date: str | None = "2024-05-01",
    solutions: int = 1,
    title: str | None = None,
    time_limit_s: float = 2.0,
) -> ProblemRecord:
    """A well-formed stdin problem with ``tests`` tests (the first one public)."""
    return ProblemRecord(
        platform=platform,
        external_id=external_id,
        title=title or f"Problem {external_id}",
        statement=statement if statement is not None else f"{LONG_STATEMENT} Variant {external_id}.",
        io_mode="stdin",
        time_limit_s=time_limit_s,
        tags=list(tags),
        difficulty=difficulty,
        rating=rating,
        contest_date=contest_date,
        url=f"https://example.org/{platform}/{external_id}",
        license="CC-BY-4.0",
        tests=[TestRecord(f"{i} {i + 1}\n", f"{2 * i + 1}\n", public=(i == 0)) for i in range(tests)],
        solutions=[SolutionRecord("a, b = map(int, input().split())\nprint(a + b)\n")] * solutions,
        extra={"source": "test"},
    )


def write_jsonl(path: Path, rows: Iterable[ProblemRecord | dict[str, Any] | str]) -> Path:
    """Write records (as export dicts), raw dicts, or raw lines to ``path`` (format ``microcoder``)."""
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            if isinstance(row, ProblemRecord):
                row = row.to_export_dict()
            fh.write((row if isinstance(row, str) else json.dumps(row)) + "\n")
    return path


@pytest.fixture
def jsonl_file(tmp_path: Path) -> Callable[..., Path]:
    """``jsonl_file(rows, name="rows.jsonl")`` -> path of a freshly written microcoder JSONL file."""

    def write(rows: Iterable[ProblemRecord | dict[str, Any] | str], name: str = "rows.jsonl") -> Path:
        return write_jsonl(tmp_path / name, rows)

    return write


@pytest.fixture
def import_records(jsonl_file: Callable[..., Path]) -> Callable[..., Any]:
    """``import_records([records], **kwargs)`` -> the finished ImportBatch of importing them."""
    from curation.services import problem_import

    counter = {"n": 0}

    def run(records: Iterable[ProblemRecord | dict[str, Any] | str], **kwargs: Any) -> Any:
        counter["n"] += 1
        path = jsonl_file(records, name=f"import-{counter['n']}.jsonl")
        return problem_import(path=path, format="microcoder", **kwargs)

    return run


@pytest.fixture(autouse=True)
def _fast_test_settings(settings: Any, tmp_path: Path) -> None:
    """Uploads land in a per-test folder, never in the checkout's var/."""
    settings.MEDIA_ROOT = str(tmp_path / "media")


def shared_file(*parts: str) -> Path:
    """A file of the shared real data, or skip the test when the data is absent."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data {path} is not available")
    return path
