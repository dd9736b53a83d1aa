"""CodeContests: DeepMind layout (JSONL and Parquet) and the SandboxFusion sample layout."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from importer_testing import FIXTURES, errors, records, shared_file

CC = FIXTURES / "codecontests"


def _deepmind_rows() -> list[dict]:
    return [json.loads(line) for line in (CC / "deepmind.jsonl").read_text().splitlines()]


def test_a_codeforces_problem_gets_its_contest_index_id_title_url_and_limits() -> None:
    rec = records("codecontests", CC / "deepmind.jsonl")[0]
    assert (rec.platform, rec.external_id, rec.title) == ("codeforces", "1900A", "Sum Pairs")
    assert rec.url == "https://codeforces.com/problemset/problem/1900/A"
    assert (rec.difficulty, rec.rating, rec.tags) == ("A", 800, ["math", "implementation"])
    assert (rec.time_limit_s, rec.memory_mb, rec.io_mode) == (1.5, 256, "stdin")


def test_public_private_and_generated_tests_are_all_kept_in_that_order() -> None:
    rec = records("codecontests", CC / "deepmind.jsonl")[0]
    assert [(t.output, t.public) for t in rec.tests] == [
        ("3\n7\n", True),
        ("0\n", False),
        ("10\n", False),
        ("0\n2\n4\n", False),
    ]
    assert rec.tests[2].input == "1\n5 5\n"  # CRLF normalized
    assert rec.extra["test_counts"] == {"public": 1, "private": 1, "generated": 2}


def test_python3_and_cpp_solutions_become_reference_solutions() -> None:
    rec = records("codecontests", CC / "deepmind.jsonl")[0]
    assert sorted(s.language for s in rec.solutions) == ["cpp", "python", "python"]
    assert rec.extra["solutions_not_imported"] == 1  # the Python 2 one


def test_enum_names_work_as_well_as_enum_numbers_and_codechef_codes_are_upper_case() -> None:
    rec = records("codecontests", CC / "deepmind.jsonl")[1]
    assert (rec.platform, rec.external_id, rec.difficulty) == ("codechef", "SUMTRIP", "MEDIUM")
    assert (rec.time_limit_s, rec.memory_mb, rec.rating) == (2.0, 256, None)  # unset limits -> defaults


def test_parquet_rows_import_to_the_same_records_as_jsonl(tmp_path: Path) -> None:
    rows = _deepmind_rows()
    rows[1]["source"], rows[1]["difficulty"] = 1, 2  # a Parquet column has one type: the enum numbers
    path = tmp_path / "cc.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    from_parquet = records("codecontests", path)
    from_jsonl = records("codecontests", CC / "deepmind.jsonl")
    assert [r.content_hash() for r in from_parquet] == [r.content_hash() for r in from_jsonl]


def test_mismatched_test_columns_are_reported_and_the_next_row_still_parses(tmp_path: Path) -> None:
    bad, good = _deepmind_rows()
    bad["private_tests"]["output"].append("extra\n")
    path = tmp_path / "cc.jsonl"
    path.write_text(json.dumps(bad) + "\n" + json.dumps(good) + "\n")
    assert errors("codecontests", path) == ["row 1 (1900A): private_tests: 1 inputs but 2 outputs"]


def test_problems_reading_named_files_are_rejected(tmp_path: Path) -> None:
    row = _deepmind_rows()[0]
    row["input_file"] = "input.txt"
    path = tmp_path / "cc.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert "file I/O (input_file='input.txt') is unsupported" in errors("codecontests", path)[0]


def test_the_sandbox_layout_marks_the_trailing_statement_example_public() -> None:
    (rec,) = records("codecontests", CC / "sandbox.jsonl")
    assert (rec.platform, rec.external_id, rec.title, rec.difficulty) == (
        "codeforces",
        "1900A",
        "Sum Pairs",
        "A",
    )
    assert [t.public for t in rec.tests] == [False, True]


def test_the_real_sandbox_sample_parses_completely() -> None:
    recs = records("codecontests", shared_file("codecontests-sample/code_contests_sample.jsonl"))
    assert len(recs) == 20
    assert {r.platform for r in recs} == {"codechef", "codeforces"}
    assert sum(len(r.tests) for r in recs) == 2233
    assert all(r.io_mode == "stdin" for r in recs)
    by_id = {r.external_id: r for r in recs}
    assert by_id["1000A"].title == "Codehorses T-shirts"
    assert sum(t.public for t in by_id["1000A"].tests) == 3  # the statement's three examples
