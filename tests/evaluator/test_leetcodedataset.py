"""Real LeetCodeDataset rows: reference completions pass their own ``input_output`` tests."""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from evaluator import judge_batch

from .conftest import FAST, SHARED_DATA

DATA = SHARED_DATA / "leetcodedataset"
#: generous limits: the shared dev box is loaded and some reference solutions are slow
REAL = replace(FAST, time_limit_s=5.0, memory_mb=1024, solution_time_limit_s=120.0)
MAX_TESTS = 12


@cache
def rows() -> list[dict[str, Any]]:
    if not DATA.is_dir():
        pytest.skip(f"LeetCodeDataset is not available at {DATA}")
    out: list[dict[str, Any]] = []
    for name in ("LeetCodeDataset-v0.3.1-test.jsonl.gz", "LeetCodeDataset-v0.2.0-train.jsonl.gz"):
        with gzip.open(DATA / name, "rt") as fh:
            for line in fh:
                row = json.loads(line)
                row.setdefault("starter_code", row.get("meta", {}).get("lang_code", ""))
                out.append(row)
    return out


def usable_tests(row: dict[str, Any]) -> list[dict[str, str]]:
    """The dataset stores failures of its own generator as outputs ("Error: ...", "Execution timed
    out"); those are not expectations and are left out."""
    tests = [t for t in row["input_output"]
             if not t["output"].startswith("Error:") and t["output"] != "Execution timed out"]
    return tests[:MAX_TESTS]


def case_for(row: dict[str, Any], code: str | None = None) -> dict[str, Any]:
    return {"id": row["task_id"], "mode": "call", "code": code or row["completion"], "fn_name": row["entry_point"],
            "tests": usable_tests(row)}


def sample(predicate: Any, n: int, seed: int) -> list[dict[str, Any]]:
    pool = [r for r in rows() if predicate(r) and usable_tests(r)]
    return random.Random(seed).sample(pool, min(n, len(pool)))


def failures(verdicts: list[dict[str, Any]]) -> list[tuple[Any, Any, Any]]:
    return [(v["id"], v["verdict"], [t.get("message") for t in v["tests"] if t["status"] != "AC"][:1])
            for v in verdicts if v["verdict"] != "AC"]


def test_reference_completions_pass_their_tests_on_a_sample_of_real_problems() -> None:
    chosen = sample(lambda r: True, 30, seed=11)
    verdicts = judge_batch([case_for(r) for r in chosen], config=REAL)
    # a slow reference may time out on the loaded dev box; anything else is a judging error
    assert sum(v["verdict"] == "AC" for v in verdicts) >= 28, failures(verdicts)
    assert all(v["verdict"] in ("AC", "TLE") for v in verdicts), failures(verdicts)


def test_linked_list_and_tree_problems_build_and_serialize_nodes() -> None:
    chosen = sample(lambda r: "ListNode" in r["starter_code"] or "TreeNode" in r["starter_code"], 14, seed=5)
    assert any("ListNode" in r["starter_code"] for r in chosen) and any("TreeNode" in r["starter_code"] for r in chosen)
    verdicts = judge_batch([case_for(r) for r in chosen], config=REAL)
    assert all(v["verdict"] == "AC" for v in verdicts), failures(verdicts)


def test_the_dataset_check_functions_run_as_assert_tests() -> None:
    chosen = sample(lambda r: "def check(candidate)" in r["test"], 4, seed=3)
    cases = [{"id": r["task_id"], "mode": "call", "code": r["completion"],
              "tests": [{"input": "", "output": "", "assert": r["test"] + f"\ncheck({r['entry_point']})\n"}]}
             for r in chosen]
    verdicts = judge_batch(cases, config=REAL)
    assert all(v["verdict"] in ("AC", "TLE") for v in verdicts), failures(verdicts)
    assert sum(v["verdict"] == "AC" for v in verdicts) >= 3


def test_a_subtly_wrong_solution_to_a_real_problem_is_rejected() -> None:
    row = next(r for r in rows() if r["task_id"] == "two-sum")
    wrong = row["completion"] + (
        "\n_orig = Solution.twoSum\n"
        "def _off_by_one(self, nums, target):\n"
        "    i, j = _orig(self, nums, target)\n"
        "    return [i, j + 1]\n"
        "Solution.twoSum = _off_by_one\n")
    right, bad = judge_batch([case_for(row), case_for(row, wrong)], config=REAL)
    assert (right["verdict"], bad["verdict"]) == ("AC", "WA")
