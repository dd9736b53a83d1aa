"""LeetCodeDataset JSONL(.gz) (newfacade/LeetCodeDataset, MIT).

Two layouts exist and both are read:

- v0.3.x (e.g. ``v0.3.1-test``): ``task_id, question_id, difficulty, tags, problem_description,
  starter_code, estimated_date, completion, entry_point, input_output, ...``
- v0.2.0 (``v0.2.0-train``): the metadata sits in ``meta`` (``question_id, difficulty,
  question_title, lang_code``) and there is no ``tags`` / ``estimated_date``. In that layout
  ``meta.question_title`` holds the full description and ``meta.lang_code`` the starter code.

Mapping: platform ``leetcode``, external id = the ``task_id`` slug, title from the slug, call mode with
``fn_name`` taken from ``entry_point`` (``Solution().twoSum`` -> ``twoSum``), ``completion`` as the
reference solution, ``estimated_date`` as ``contest_date``. Each ``input_output`` pair becomes a test
whose input keeps LeetCodeDataset's raw ``name = value, ...`` form: the evaluator's call mode accepts it
(DESIGN.md section 4), and splitting it here would need a Python-literal parser that is stricter than the
judge. The ``test`` (assert) field and the unverified model ``response`` are not imported: the
``input_output`` pairs are the same checks in data form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.importers.base import (
    ParsedRow,
    RowRejected,
    iso_date,
    parse_rows,
    require_str,
    slug_title,
    to_python_fn_name,
)
from curation.importers.text import clean_code, clean_statement, clean_test_text
from curation.records import ProblemRecord, SolutionRecord, TestRecord

LICENSE = "MIT (LeetCodeDataset)"
_EXAMPLE_INPUT = re.compile(r"^\s*Input:\s*(.+?)\s*$", re.MULTILINE)
_GENERATOR_ERROR = re.compile(r"^(Error: |Execution timed out$)")


class LeetCodeDatasetImporter:
    name: str = "leetcodedataset"
    description: str = "LeetCodeDataset JSONL(.gz), v0.3.x and v0.2.0 layouts (LeetCode, function-call tests)"
    platforms: tuple[str, ...] = ("leetcode",)

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        return bool(sample) and {"task_id", "entry_point", "input_output"} <= set(sample or {})

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        return parse_rows(path, convert_row)


def convert_row(obj: dict[str, Any]) -> ProblemRecord:
    """One LeetCodeDataset row -> a call-mode ``ProblemRecord`` (raises ``RowRejected`` with a reason)."""
    slug = require_str(obj, "task_id").strip()
    meta: dict[str, Any] = obj["meta"] if isinstance(obj.get("meta"), dict) else {}
    if "problem_description" in obj:
        statement = require_str(obj, "problem_description")
    elif meta.get("question_title"):
        statement = str(meta["question_title"])  # v0.2.0 keeps the description under this name
    else:
        raise RowRejected("missing 'problem_description' field (and no meta.question_title)", slug)
    starter = obj.get("starter_code") if "starter_code" in obj else meta.get("lang_code", "")
    difficulty = obj.get("difficulty", meta.get("difficulty", ""))
    question_id = obj.get("question_id", meta.get("question_id"))

    fn_name = to_python_fn_name(require_str(obj, "entry_point"))
    pairs = obj.get("input_output")
    if pairs is None:
        raise RowRejected("missing 'input_output' field", slug)
    if not isinstance(pairs, list):
        raise RowRejected("field 'input_output' must be a list of {input, output}", slug)
    tests = []
    generator_errors = 0
    for i, pair in enumerate(pairs, start=1):
        if not isinstance(pair, dict) or "input" not in pair or "output" not in pair:
            raise RowRejected(f"input_output[{i}] needs both 'input' and 'output'", slug)
        if not isinstance(pair["input"], str) or not isinstance(pair["output"], str):
            raise RowRejected(f"input_output[{i}]: input and output must be strings", slug)
        if _GENERATOR_ERROR.match(pair["output"]):
            # The dataset's test generator recorded its own crash or time-out as the expected output
            # ("Error: Solution.f() missing 1 required positional argument"): not a test.
            generator_errors += 1
            continue
        tests.append(TestRecord(clean_test_text(pair["input"]), clean_test_text(pair["output"])))
    if not tests:
        raise RowRejected(f"all {generator_errors} input_output pairs are test-generator errors", slug)
    statement = clean_statement(statement)
    # The dataset does not flag its examples (and shuffles them among generated pairs): a test is
    # public when its input is exactly one of the statement's "Input: ..." lines.
    examples = {"".join(m.split()) for m in _EXAMPLE_INPUT.findall(statement)}
    for test in tests:
        test.public = "".join(test.input.split()) in examples

    solutions = []
    completion = obj.get("completion")
    if isinstance(completion, str) and completion.strip():
        solutions.append(SolutionRecord(code=clean_code(completion), language="python"))

    tags = obj.get("tags") or []
    if not isinstance(tags, list):
        raise RowRejected("field 'tags' must be a list", slug)

    extra: dict[str, Any] = {"source": "LeetCodeDataset"}
    if question_id is not None:
        extra["question_id"] = question_id
    if generator_errors:
        extra["dropped_tests"] = {"count": generator_errors, "reason": "expected output is a test-generator error"}
    return ProblemRecord(
        platform="leetcode",
        external_id=slug,
        title=slug_title(slug),
        statement=statement,
        io_mode="call",
        fn_name=fn_name,
        starter_code=clean_code(starter or ""),
        tags=[str(t) for t in tags],
        difficulty=str(difficulty or ""),
        contest_date=iso_date(obj.get("estimated_date")),
        url=f"https://leetcode.com/problems/{slug}/",
        license=LICENSE,
        tests=tests,
        solutions=solutions,
        extra=extra,
    )


IMPORTER = LeetCodeDatasetImporter()
