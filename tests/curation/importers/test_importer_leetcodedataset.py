"""LeetCodeDataset: both layouts, on fixtures and on the real files."""

from __future__ import annotations

import json
from pathlib import Path

from importer_testing import FIXTURES, errors, records, shared_file

LCD = FIXTURES / "leetcodedataset"


def test_the_v03_layout_maps_to_a_call_mode_leetcode_problem() -> None:
    rec = records("leetcodedataset", LCD / "v031_test_layout.jsonl")[0]
    assert (rec.platform, rec.external_id, rec.title) == ("leetcode", "sum-of-pair", "Sum Of Pair")
    assert (rec.io_mode, rec.fn_name) == ("call", "sumOfPair")
    assert rec.starter_code.startswith("class Solution:\n    def sumOfPair(self, a: int, b: int) -> int:")
    assert (rec.difficulty, rec.tags, rec.contest_date) == ("Easy", ["Math"], "2024-01-07")
    assert rec.url == "https://leetcode.com/problems/sum-of-pair/"
    assert rec.solutions[0].code.endswith("return a + b\n") and rec.solutions[0].language == "python"
    assert rec.extra["question_id"] == 9001


def test_inputs_keep_the_raw_name_equals_value_form() -> None:
    rec = records("leetcodedataset", LCD / "v031_test_layout.jsonl")[0]
    assert [(t.input, t.output) for t in rec.tests] == [
        ("a = 7, b = 8", "15"),
        ("a = 1, b = 2", "3"),
        ("a = -5, b = 5", "0"),
    ]


def test_tests_whose_input_is_a_statement_example_are_public() -> None:
    rec = records("leetcodedataset", LCD / "v031_test_layout.jsonl")[0]
    assert [t.public for t in rec.tests] == [False, True, True]


def test_the_v02_layout_reads_metadata_from_meta_and_has_no_tags() -> None:
    (rec,) = records("leetcodedataset", LCD / "v020_train_layout.jsonl")
    assert (rec.external_id, rec.difficulty, rec.tags, rec.contest_date) == (
        "count-even-digits",
        "Easy",
        [],
        None,
    )
    assert rec.statement.startswith("Given a non-negative integer n")
    assert rec.starter_code == "class Solution:\n    def countEvenDigits(self, n: int) -> int:"
    assert rec.extra["question_id"] == 9003


def test_an_input_output_pair_without_output_is_reported(tmp_path: Path) -> None:
    row = json.loads((LCD / "v031_test_layout.jsonl").read_text().splitlines()[0])
    row["input_output"][1] = {"input": "a = 1, b = 2"}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert errors("leetcodedataset", path) == [
        "row 1 (sum-of-pair): input_output[2] needs both 'input' and 'output'"
    ]


def test_pairs_whose_output_is_a_generator_error_are_dropped_and_counted(tmp_path: Path) -> None:
    row = json.loads((LCD / "v031_test_layout.jsonl").read_text().splitlines()[0])
    kept = len(row["input_output"]) - 1
    row["input_output"][1]["output"] = "Error: Solution.f() missing 1 required positional argument: 'b'"
    path = tmp_path / "generr.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (rec,) = records("leetcodedataset", path)
    assert len(rec.tests) == kept
    assert not any(t.output.startswith("Error: ") for t in rec.tests)
    assert rec.extra["dropped_tests"]["count"] == 1


def test_a_row_whose_every_pair_is_a_generator_error_is_rejected(tmp_path: Path) -> None:
    row = json.loads((LCD / "v031_test_layout.jsonl").read_text().splitlines()[0])
    for pair in row["input_output"]:
        pair["output"] = "Error: boom"
    path = tmp_path / "allbad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    n = len(row["input_output"])
    assert errors("leetcodedataset", path) == [f"row 1 (sum-of-pair): all {n} input_output pairs are test-generator errors"]


def test_the_real_v031_test_file_parses_completely() -> None:
    recs = records("leetcodedataset", shared_file("leetcodedataset/LeetCodeDataset-v0.3.1-test.jsonl.gz"))
    assert len(recs) == 228
    # 1,012 of the 24,246 pairs record the generator's own crash ("Error: ...") or time-out as output
    assert sum(len(r.tests) for r in recs) == 24246 - 1012
    assert sum(r.extra.get("dropped_tests", {}).get("count", 0) for r in recs) == 1012
    assert all(r.io_mode == "call" and r.fn_name and r.contest_date for r in recs)
    assert sum(bool(r.tags) for r in recs) > 200  # a few problems ship without tags


def test_the_real_v020_train_file_parses_completely() -> None:
    path = shared_file("leetcodedataset/LeetCodeDataset-v0.2.0-train.jsonl.gz")
    recs = records("leetcodedataset", path)
    assert len(recs) == 1890
    assert sum(len(r.tests) for r in recs) == 4752
    assert {r.difficulty for r in recs} == {"Easy", "Medium", "Hard"}
    assert all(r.solutions and "class Solution" in r.starter_code for r in recs)
