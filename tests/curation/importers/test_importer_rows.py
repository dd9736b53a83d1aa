"""Row-level behaviour shared by all importers: numbering, error reports, validation."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from importer_testing import FIXTURES, parse_all

from curation.importers import get_importer
from curation.importers.base import RowError, check_record, iter_raw_rows, mark_statement_samples
from curation.records import ProblemRecord, TestRecord


def _lcd_rows() -> list[str]:
    return (FIXTURES / "leetcodedataset" / "v031_test_layout.jsonl").read_text().splitlines()


def test_a_bad_json_line_is_reported_with_its_line_number_and_parsing_continues(tmp_path: Path) -> None:
    good = _lcd_rows()
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join([good[0], '{"task_id": "broken", ', good[1]]) + "\n")
    rows = parse_all("leetcodedataset", path)
    assert [r.row for r in rows] == [1, 2, 3]
    assert rows[0].record is not None and rows[2].record is not None
    assert rows[1].error is not None and rows[1].error.row == 2
    assert str(rows[1].error).startswith("row 2: invalid JSON at line 2:")


def test_a_row_missing_a_required_field_names_the_field_and_the_problem(tmp_path: Path) -> None:
    row = json.loads(_lcd_rows()[0])
    del row["input_output"]
    path = tmp_path / "missing.jsonl"
    path.write_text(_lcd_rows()[1] + "\n" + json.dumps(row) + "\n")
    rows = parse_all("leetcodedataset", path)
    assert rows[0].record is not None
    assert str(rows[1].error) == "row 2 (sum-of-pair): missing 'input_output' field"


def test_blank_lines_count_toward_row_numbers_so_they_match_an_editor(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_text("\n\n" + _lcd_rows()[0] + "\n")
    assert [r.row for r in parse_all("leetcodedataset", path)] == [3]


def test_a_json_value_that_is_not_an_object_is_a_row_error(tmp_path: Path) -> None:
    path = tmp_path / "list.jsonl"
    path.write_text("[1, 2]\n")
    (row,) = parse_all("leetcodedataset", path)
    assert row.error is not None and "not an object" in row.error.reason


def test_gzipped_jsonl_is_read_transparently(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(_lcd_rows()) + "\n")
    assert [r.record.external_id for r in parse_all("leetcodedataset", path) if r.record] == [
        "sum-of-pair",
        "reverse-word-order-ii",
    ]


def test_a_json_file_holding_one_object_per_line_is_read_as_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text("\n".join(_lcd_rows()) + "\n")
    assert [row for row, _ in iter_raw_rows(path)] == [1, 2]


def test_row_error_text_carries_row_and_external_id() -> None:
    assert str(RowError(17, "missing 'test' field", "two-sum")) == "row 17 (two-sum): missing 'test' field"
    assert (
        str(RowError(3, "invalid JSON at line 3: Expecting value"))
        == "row 3: invalid JSON at line 3: Expecting value"
    )


def _record(**kwargs: object) -> ProblemRecord:
    base = ProblemRecord("leetcode", "x", "X", "statement", tests=[TestRecord("1", "2")])
    for key, value in kwargs.items():
        setattr(base, key, value)
    return base


def test_check_record_accepts_a_well_formed_record() -> None:
    assert check_record(_record()) is None


def test_call_mode_without_a_function_name_is_not_well_formed() -> None:
    assert "call mode needs a function name" in (check_record(_record(io_mode="call")) or "")


def test_a_test_whose_output_is_not_a_string_is_not_well_formed() -> None:
    problem = check_record(_record(tests=[TestRecord("1", 2)]))  # type: ignore[arg-type]
    assert problem == "test 1: input and output must be strings"


def test_an_unknown_checker_or_icpc_flag_is_not_well_formed() -> None:
    assert "checker kind" in (check_record(_record(checker={"kind": "fuzzy"})) or "")
    assert "unknown ICPC validator flag" in (check_record(_record(checker={"kind": "icpc", "tol": 1})) or "")
    assert "needs a number" in (check_record(_record(checker={"kind": "icpc", "float_tolerance": "x"})) or "")


def test_a_contest_date_must_be_an_iso_date() -> None:
    assert "ISO date" in (check_record(_record(contest_date="2024-13-01")) or "")
    assert check_record(_record(contest_date="2024-02-29")) is None


def test_a_problem_without_tests_is_still_well_formed_for_the_constraints_stage_to_judge() -> None:
    assert check_record(_record(tests=[])) is None


def test_statement_samples_are_only_the_leading_or_trailing_matching_run() -> None:
    statement = "Example\nInput\n2\n1 2\nOutput\n3"
    inputs = ["2\n1 2\n", "7\n", "2", "9\n", "2 \n 1 2"]
    # "2" occurs in the statement but sits between unmatched tests: not an example.
    assert mark_statement_samples(statement, inputs) == [True, False, False, False, True]


def test_a_truncated_gzip_raises_after_the_rows_it_could_read(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    blob = gzip.compress(("\n".join(_lcd_rows() * 50) + "\n").encode())
    path.write_bytes(blob[: len(blob) // 2])
    rows = get_importer("leetcodedataset").parse(path)
    assert next(rows).record is not None
    with pytest.raises(EOFError):
        list(rows)


def test_a_missing_file_raises_instead_of_yielding_rows(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        parse_all("microcoder", tmp_path / "missing.jsonl")


def test_a_broken_json_document_raises_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "apps.json"
    path.write_text('[{"question": "x",')
    with pytest.raises(ValueError, match="apps.json is not a valid JSON document"):
        parse_all("apps", path)
