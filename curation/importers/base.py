"""Types and helpers shared by every importer.

An importer turns one platform's file or folder into a stream of ``ParsedRow`` objects: either a
well-formed ``ProblemRecord`` or a ``RowError`` saying which row was rejected and why. Importers never
stop at a bad row: the import service decides what to do with the errors (report them; keep the batch
atomic). Nothing here imports Django.

Row numbers are 1-based: the line number in a JSONL file (blank lines count, so the number matches what
an editor shows), the element index in a JSON array, the row index in a Parquet file, or the entry index
of a package folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from curation.importers.reading import RawRow, first_raw_row, iter_raw_rows, open_text
from curation.importers.rows import ParsedRow, RowError
from curation.records import ProblemRecord

__all__ = [
    "Importer", "ParsedRow", "RawRow", "RowError", "RowRejected", "first_raw_row", "iter_raw_rows", "open_text",
]

#: Checker kinds a record may carry. ``assert`` is the HumanEval/MBPP convention documented in
#: ``curation.importers.humaneval``; the others are the evaluator's (DESIGN.md section 4).
CHECKER_KINDS = frozenset({"lenient", "strict", "icpc", "assert", "program"})

#: Flags of the ICPC default output validator and the type of their value.
ICPC_FLAG_TYPES: dict[str, type] = {
    "case_sensitive": bool,
    "space_change_sensitive": bool,
    "float_tolerance": float,
    "float_absolute_tolerance": float,
    "float_relative_tolerance": float,
}

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@runtime_checkable
class Importer(Protocol):
    """A registered format. ``name`` is the ``--format`` value; ``platforms`` lists the platforms its
    records can carry. ``parse`` streams: it reads the input once and yields rows as it goes."""

    name: str
    description: str
    platforms: tuple[str, ...]

    def parse(self, path: Path) -> Iterator[ParsedRow]: ...

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        """Whether ``path`` looks like this format; ``sample`` is its first JSON/Parquet row, if any."""
        ...


class RowRejected(Exception):
    """Raised inside an importer's row conversion; becomes a ``RowError`` with the message as reason."""

    def __init__(self, reason: str, external_id: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.external_id = external_id


def parse_rows(path: Path, convert: Callable[[dict[str, Any]], ProblemRecord]) -> Iterator[ParsedRow]:
    """Drive ``convert`` over every raw row of a data file, turning failures into row errors.

    ``convert`` raises ``RowRejected`` (or, for sloppy input, ``KeyError``/``TypeError``/``ValueError``)
    to reject a row; every record it returns is validated with ``check_record`` before it is yielded.
    """
    for row, obj in iter_raw_rows(path):
        if isinstance(obj, RowError):
            yield ParsedRow(row, None, obj)
            continue
        yield convert_one(row, obj, convert)


def convert_one(row: int, obj: Any, convert: Callable[[Any], ProblemRecord]) -> ParsedRow:
    """Run one conversion and validation, mapping any rejection to a ``ParsedRow`` with an error."""
    guess = guess_external_id(obj)
    try:
        record = convert(obj)
    except RowRejected as exc:
        return ParsedRow(row, None, RowError(row, exc.reason, exc.external_id or guess))
    except KeyError as exc:
        return ParsedRow(row, None, RowError(row, f"missing {exc.args[0]!r} field", guess))
    except (TypeError, ValueError, AttributeError) as exc:
        return ParsedRow(row, None, RowError(row, f"malformed row: {exc}", guess))
    problem = check_record(record)
    if problem:
        return ParsedRow(row, None, RowError(row, problem, record.external_id))
    return ParsedRow(row, record, None)


def guess_external_id(obj: Any) -> str:
    """A best-effort id for error messages, before the row is understood."""
    if not isinstance(obj, dict):
        return ""
    for key in ("external_id", "task_id", "question_id", "name", "problem_id", "id"):
        value = obj.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
            return str(value)
    return ""


# ---------------------------------------------------------------------------------------- validation


def check_record(rec: ProblemRecord) -> str | None:
    """Why ``rec`` is not well formed, or ``None``.

    Checks shape only (types, required fields, call mode has a function name, tests are strings,
    checker flags are typed). Whether the problem is *good* — it has tests at all, its limits are sane,
    its reference solution passes — is the constraints stage's job, recorded with reasons there.
    """
    for name in ("platform", "external_id", "title", "statement"):
        value = getattr(rec, name)
        if not isinstance(value, str) or not value.strip():
            return f"empty or missing {name}"
    if rec.io_mode not in ("stdin", "call"):
        return f"io_mode must be 'stdin' or 'call', got {rec.io_mode!r}"
    if rec.io_mode == "call" and not (isinstance(rec.fn_name, str) and _IDENTIFIER.match(rec.fn_name)):
        return f"call mode needs a function name (a Python identifier), got {rec.fn_name!r}"
    for name in ("fn_name", "starter_code", "difficulty", "url", "license"):
        if not isinstance(getattr(rec, name), str):
            return f"{name} must be a string"
    if isinstance(rec.time_limit_s, bool) or not isinstance(rec.time_limit_s, int | float):
        return f"time_limit_s must be a number, got {rec.time_limit_s!r}"
    if isinstance(rec.memory_mb, bool) or not isinstance(rec.memory_mb, int):
        return f"memory_mb must be an integer, got {rec.memory_mb!r}"
    if rec.rating is not None and (isinstance(rec.rating, bool) or not isinstance(rec.rating, int)):
        return f"rating must be an integer or null, got {rec.rating!r}"
    if rec.contest_date is not None and not _valid_iso_date(rec.contest_date):
        return f"contest_date must be an ISO date YYYY-MM-DD, got {rec.contest_date!r}"
    if not isinstance(rec.tags, list) or not all(isinstance(t, str) for t in rec.tags):
        return "tags must be a list of strings"
    checker_problem = _check_checker(rec.checker)
    if checker_problem:
        return checker_problem
    for i, test in enumerate(rec.tests, start=1):
        if not isinstance(test.input, str) or not isinstance(test.output, str):
            return f"test {i}: input and output must be strings"
        if not isinstance(test.public, bool):
            return f"test {i}: public must be true or false"
    if rec.checker.get("kind") == "assert" and any(t.input for t in rec.tests):
        return "assert-style tests keep their code in 'output' and an empty 'input'"
    for i, sol in enumerate(rec.solutions, start=1):
        if not isinstance(sol.code, str) or not sol.code.strip():
            return f"solution {i}: empty code"
        if not isinstance(sol.language, str) or not sol.language:
            return f"solution {i}: missing language"
    if not isinstance(rec.extra, dict):
        return "extra must be an object"
    return None


def _valid_iso_date(value: Any) -> bool:
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _check_checker(checker: Any) -> str | None:
    if not isinstance(checker, dict):
        return "checker must be an object"
    kind = checker.get("kind")
    if kind not in CHECKER_KINDS:
        return f"checker kind must be one of {sorted(CHECKER_KINDS)}, got {kind!r}"
    if kind == "program":  # a checker program (custom output validator / interactor), DESIGN.md section 4
        from evaluator.checkers import parse_program_checker

        try:
            parse_program_checker(checker)
        except ValueError as exc:
            return f"checker program: {exc}"
    if kind == "icpc":
        for key, value in checker.items():
            if key == "kind":
                continue
            expected = ICPC_FLAG_TYPES.get(key)
            if expected is None:
                return f"unknown ICPC validator flag {key!r}"
            if expected is bool and not isinstance(value, bool):
                return f"ICPC flag {key} must be true or false"
            if expected is float and (isinstance(value, bool) or not isinstance(value, int | float)):
                return f"ICPC flag {key} needs a number"
    return None


# ------------------------------------------------------------------------------------------- helpers


def require_str(obj: dict[str, Any], key: str, *, allow_empty: bool = False) -> str:
    """``obj[key]`` as a string, or reject the row with a reason naming the field."""
    if key not in obj or obj[key] is None:
        raise RowRejected(f"missing {key!r} field")
    value = obj[key]
    if not isinstance(value, str):
        raise RowRejected(f"field {key!r} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise RowRejected(f"field {key!r} is empty")
    return value


def load_json_field(obj: dict[str, Any], key: str) -> Any:
    """A field that holds JSON either natively or as a JSON-encoded string (common in HF dumps)."""
    if key not in obj or obj[key] is None:
        raise RowRejected(f"missing {key!r} field")
    value = obj[key]
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else None
        except json.JSONDecodeError as exc:
            raise RowRejected(f"field {key!r} is not valid JSON: {exc.msg} at position {exc.pos}") from exc
    return value


def iso_date(value: Any) -> str | None:
    """``"2023-08-21T00:00:00"`` / ``"2023-08-21"`` -> ``"2023-08-21"``; anything unparseable -> None."""
    if not isinstance(value, str):
        return None
    head = value.strip()[:10]
    return head if _valid_iso_date(head) else None


def slug_title(slug: str) -> str:
    """``"two-sum-ii"`` -> ``"Two Sum II"`` (roman numerals stay upper case)."""
    words = [w for w in re.split(r"[-_\s]+", slug) if w]
    return " ".join(w.upper() if re.fullmatch(r"[ivx]+", w) else w.capitalize() for w in words)


def to_python_fn_name(entry_point: str) -> str:
    """``"Solution().twoSum"`` -> ``"twoSum"``; ``"has_close_elements"`` -> itself."""
    return entry_point.strip().rsplit(".", 1)[-1].strip()


def json_arg(value: Any) -> str:
    """One call-mode argument line: compact-ish JSON, unicode kept."""
    return json.dumps(value, ensure_ascii=False)


def mark_statement_samples(statement: str, inputs: list[str]) -> list[bool]:
    """Guess which tests are the statement's own examples, for layouts that do not say.

    A test counts when its whitespace-free input occurs in the whitespace-free statement *and* it
    belongs to the leading or trailing run of such tests: the SandboxFusion layouts put the examples
    first (LiveCodeBench) or last (CodeContests), and the run rule keeps a generated test whose input
    happens to be "3" from being called public.
    """
    squashed = "".join(statement.split())
    found = [bool(s) and s in squashed for s in ("".join(x.split()) for x in inputs)]
    public = [False] * len(found)
    i = 0
    while i < len(found) and found[i]:
        public[i] = True
        i += 1
    j = len(found) - 1
    while j >= i and found[j]:
        public[j] = True
        j -= 1
    return public
