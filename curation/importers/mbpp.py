"""MBPP JSONL (google-research, CC BY 4.0): ``task_id, text, code, test_list, test_setup_code``
(and ``challenge_test_list`` in the full release).

Uses the assert convention described in ``curation.importers.humaneval``: call mode,
``checker = {"kind": "assert"}``, ``input == ""``, the test program in ``output``. Each assert of
``test_list`` is its own test (``test_setup_code`` + the assert), public because MBPP prompts show
them; ``challenge_test_list`` asserts follow as private tests. MBPP does not name the function under
test: ``fn_name`` is the function that ``code`` defines and the first assert calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.importers.base import ParsedRow, RowRejected, parse_rows, require_str
from curation.importers.humaneval import assert_checker
from curation.importers.text import clean_code, clean_statement
from curation.records import ProblemRecord, SolutionRecord, TestRecord

_DEF = re.compile(r"^\s*def\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(", re.MULTILINE)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


class MbppImporter:
    name: str = "mbpp"
    description: str = "MBPP JSONL: Python functions checked by assert-style tests"
    platforms: tuple[str, ...] = ("mbpp",)

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        return bool(sample) and {"task_id", "text", "code", "test_list"} <= set(sample or {})

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        return parse_rows(path, convert_row)


def function_under_test(code: str, asserts: list[str]) -> str:
    """The function ``code`` defines that the first assert calls (or the first defined one)."""
    defined = _DEF.findall(code)
    if asserts:
        for called in _CALL.findall(asserts[0]):
            if called in defined:
                return called
    return defined[0] if defined else ""


def _asserts(obj: dict[str, Any], key: str) -> list[str]:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        raise RowRejected(f"field {key!r} must be a list of assert statements")
    return [clean_code(a).strip() for a in value if a.strip()]


def convert_row(obj: dict[str, Any]) -> ProblemRecord:
    if "task_id" not in obj:
        raise RowRejected("missing 'task_id' field")
    external_id = str(obj["task_id"]).strip()
    try:
        text = require_str(obj, "text")
        code = clean_code(require_str(obj, "code"))
        if "test_list" not in obj:
            raise RowRejected("missing 'test_list' field")
        public = _asserts(obj, "test_list")
        challenge = _asserts(obj, "challenge_test_list")
    except RowRejected as exc:
        raise RowRejected(exc.reason, external_id) from exc
    setup = clean_code(str(obj.get("test_setup_code") or "")).strip()
    fn_name = function_under_test(code, public)
    if not fn_name:
        raise RowRejected("cannot tell the function under test: 'code' defines no function", external_id)
    prefix = setup + "\n" if setup else ""
    tests = [TestRecord("", prefix + a + "\n", public=True) for a in public]
    tests += [TestRecord("", prefix + a + "\n", public=False) for a in challenge]
    statement = clean_statement(text)
    title = statement.split("\n", 1)[0]
    if len(title) > 80:
        title = title[:77].rstrip() + "..."
    return ProblemRecord(
        platform="mbpp",
        external_id=external_id,
        title=title,
        statement=statement,
        io_mode="call",
        fn_name=fn_name,
        license="CC-BY-4.0 (MBPP)",
        checker=assert_checker(),
        tests=tests,
        solutions=[SolutionRecord(code=code, language="python")],
        extra={"source": "MBPP"},
    )


IMPORTER = MbppImporter()
