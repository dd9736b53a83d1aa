"""Imports know their total up front where it is cheap and exact (``curation.services.import_count``),
so their bar in the jobs view, on the import page and on the command line has an end."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from curation.services import problem_import
from curation.services.import_count import count_rows
from tests.curation.conftest import make_record
from webapp.jobs_kinds import KINDS


def test_it_counts_the_non_blank_lines_of_jsonl_across_blocks(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n\n   \r\n{"b": "' + b"x" * (3 << 20) + b'"}\r\n{"c": 3}')  # no final newline
    assert count_rows(path, max_bytes=1 << 30) == 3


def test_it_counts_gzipped_jsonl_and_gives_up_past_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl.gz"
    path.write_bytes(gzip.compress(b"{}\n" * 1000))
    assert count_rows(path, max_bytes=1 << 20) == 1000
    assert count_rows(path, max_bytes=100) is None


def test_it_reads_a_parquet_footer(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "a.parquet"
    pq.write_table(pa.table({"x": list(range(7))}), path)
    assert count_rows(path, max_bytes=1 << 20) == 7


@pytest.mark.parametrize("name", ["a.json", "folder", "a.zip", "broken.parquet", "missing.jsonl"])
def test_it_says_unknown_where_counting_is_not_cheap_or_not_possible(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    elif name != "missing.jsonl":
        path.write_text("[{}]")
    assert count_rows(path, max_bytes=1 << 20) is None


@pytest.mark.django_db
def test_an_import_shows_its_share_of_the_counted_rows(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(make_record(f"t{i}").to_export_dict()) + "\n" for i in range(8)))
    seen: list[tuple[float | None, str]] = []

    def progress(batch: Any) -> None:
        row = KINDS["import"].row(batch)
        seen.append((row.percent, row.progress_text))

    batch = problem_import(path=path, format="microcoder", batch_size=3, on_progress=progress)
    assert batch.expected_rows == 8
    assert seen == [(37.5, "3 / 8 rows"), (75.0, "6 / 8 rows"), (100.0, "8 / 8 rows")]
