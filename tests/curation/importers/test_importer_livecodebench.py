"""LiveCodeBench: the release layout (with compressed private tests), the sample layout, safe unpickling."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from pathlib import Path

import pytest
from importer_testing import FIXTURES, errors, records, shared_file

from curation.importers.base import RowRejected
from curation.importers.livecodebench import decode_private_tests, safe_unpickle, unwrap_prompt

LCB = FIXTURES / "livecodebench"


def _release_rows() -> list[dict]:
    return [json.loads(line) for line in (LCB / "release.jsonl").read_text().splitlines()]


def _b64zlib(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data)).decode()


def test_plain_json_private_tests_follow_the_public_ones() -> None:
    rec = records("livecodebench", LCB / "release.jsonl")[0]
    assert (rec.platform, rec.external_id, rec.contest_date) == ("atcoder", "abc999_a", "2024-05-04")
    assert rec.url == "https://atcoder.jp/contests/abc999/tasks/abc999_a"
    assert [(t.input, t.public) for t in rec.tests] == [
        ("3\n1 2 3\n", True),
        ("1\n100\n", False),
        ("2\n5 5\n", False),
    ]
    assert "\r" not in rec.statement


def test_functional_tests_with_pickled_private_tests_become_call_mode() -> None:
    rec = records("livecodebench", LCB / "release.jsonl")[1]
    assert (rec.io_mode, rec.fn_name, rec.external_id) == ("call", "sumAfterSkipping", "sum-after-skipping")
    assert rec.extra["question_id"] == "9101"
    assert [(t.input, t.output) for t in rec.tests] == [
        ("[1, 2, 3]\n2", "5"),
        ("[5]\n0", "5"),
        ("[]\n0", "0"),
    ]
    assert rec.starter_code.startswith("class Solution:")


def test_zlib_json_private_tests_decode_and_codeforces_ids_match_codecontests() -> None:
    rec = records("livecodebench", LCB / "release.jsonl")[2]
    assert (rec.external_id, len(rec.tests)) == ("1999B", 2)
    assert rec.url == "https://codeforces.com/problemset/problem/1999/B"


def test_corrupt_private_tests_are_a_row_error_naming_the_failed_step(tmp_path: Path) -> None:
    rows = _release_rows()
    rows[0]["private_test_cases"] = base64.b64encode(b"definitely not zlib").decode()
    path = tmp_path / "lcb.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert errors("livecodebench", path)[0].startswith(
        "row 1 (abc999_a): zlib decode of private tests failed"
    )
    assert len(records("livecodebench", LCB / "release.jsonl")) == 3


def test_functional_tests_without_a_func_name_are_rejected(tmp_path: Path) -> None:
    row = _release_rows()[1]
    row["metadata"] = "{}"
    path = tmp_path / "lcb.jsonl"
    path.write_text(json.dumps(row) + "\n")
    assert errors("livecodebench", path) == [
        "row 1 (sum-after-skipping): functional tests but metadata has no func_name"
    ]


class _Exploit:
    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self) -> tuple:
        return (os.mkdir, (self.target,))


def test_a_pickle_that_would_run_code_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = _b64zlib(pickle.dumps(_Exploit(str(marker))))
    with pytest.raises(RowRejected, match="unpickling private tests refused"):
        decode_private_tests(payload)
    assert not marker.exists()


def test_safe_unpickle_rebuilds_plain_data() -> None:
    data = {"input_output": json.dumps({"inputs": ["1"]}), "n": [1, 2.5, None, (b"x", True)]}
    assert safe_unpickle(pickle.dumps(data)) == data


def test_the_prompt_wrapper_is_removed_and_the_starter_code_recovered() -> None:
    content = (LCB / "sandbox.jsonl").read_text()
    question, starter = unwrap_prompt(json.loads(content)["content"])
    assert question.startswith("Given a list of integers nums") and "### Format" not in question
    assert starter.startswith("class Solution:\n    def largest(self, nums: List[int]) -> int:")


def test_the_sample_layout_skips_the_placeholder_solution_and_guesses_public_tests() -> None:
    (rec,) = records("livecodebench", LCB / "sandbox.jsonl")
    assert (rec.platform, rec.io_mode, rec.fn_name) == ("leetcode", "call", "largest")
    assert rec.solutions == [] and rec.extra["canonical_solution_placeholder"] == "import sys; sys.exit(0)"
    assert [t.public for t in rec.tests] == [True, False, False]


def test_the_real_sample_parses_completely() -> None:
    recs = records("livecodebench", shared_file("livecodebench-sample/livecodebench_v1_sample.jsonl"))
    by_platform = {r.platform: r for r in recs}
    assert set(by_platform) == {"codeforces", "leetcode", "atcoder"}
    assert [len(r.tests) for r in recs] == [5, 14, 15]
    leet = by_platform["leetcode"]
    assert (leet.io_mode, leet.fn_name) == ("call", "countSeniors")
    assert leet.starter_code.startswith("class Solution:")
    assert by_platform["codeforces"].external_id == "1873A"
    assert all(not r.statement.startswith("You are an expert") for r in recs)
