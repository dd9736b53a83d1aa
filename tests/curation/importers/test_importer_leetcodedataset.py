"""LeetCodeDataset: both layouts, on fixtures and on the real files."""

from __future__ import annotations

import json
import time
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


def test_the_real_v031_test_file_parses_completely() -> None:
    recs = records("leetcodedataset", shared_file("leetcodedataset/LeetCodeDataset-v0.3.1-test.jsonl.gz"))
    assert len(recs) == 228
    assert sum(len(r.tests) for r in recs) == 24246
    assert all(r.io_mode == "call" and r.fn_name and r.contest_date for r in recs)
    assert sum(bool(r.tags) for r in recs) > 200  # a few problems ship without tags


def test_the_real_v020_train_file_parses_completely_within_seconds() -> None:
    path = shared_file("leetcodedataset/LeetCodeDataset-v0.2.0-train.jsonl.gz")
    start = time.perf_counter()
    recs = records("leetcodedataset", path)
    elapsed = time.perf_counter() - start
    assert len(recs) == 1890
    assert sum(len(r.tests) for r in recs) == 4752
    assert {r.difficulty for r in recs} == {"Easy", "Medium", "Hard"}
    assert all(r.solutions and "class Solution" in r.starter_code for r in recs)
    assert elapsed < 10, f"parsing took {elapsed:.1f}s; it should take about half a second"
