"""CodeContests (DeepMind, CC BY 4.0) in two layouts, stdin/stdout problems.

1. The DeepMind layout (the HF ``deepmind/code_contests`` rows, JSONL or Parquet): ``name, description,
   public_tests {input: [...], output: [...]}, private_tests, generated_tests,
   solutions {language: [...], solution: [...]}, difficulty, source, cf_contest_id, cf_index, cf_rating,
   cf_tags, time_limit {seconds, nanos}, memory_limit_bytes, input_file, output_file``. ``source``,
   ``difficulty`` and solution languages may be the proto enum numbers or their names.
   Public tests are public; private and generated tests are private (all are kept: capping is the
   constraints stage's job). Python 3 and C++ solutions are kept as reference solutions (languages the
   judge runs), at most ``MAX_SOLUTIONS`` of them; the count of the others is kept in ``extra``.
   Problems that read or write named files (``input_file``/``output_file``) are rejected: the judge
   speaks stdin/stdout only.
2. The SandboxFusion sample layout: ``content`` (statement), ``labels`` (JSON string with
   ``difficulty, name, source``), ``test`` (JSON string: ``[{input: {stdin}, output: {stdout}}]``).
   It does not say which tests are public; the statement's examples are guessed with
   ``mark_statement_samples``.

External ids follow Codeforces' own ``1000A`` form (``contest + index``) so that the same problem
imported from LiveCodeBench gets the same id; CodeChef codes are upper-cased as on codechef.com.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.importers.base import (
    ParsedRow,
    RowRejected,
    load_json_field,
    mark_statement_samples,
    parse_rows,
    require_str,
)
from curation.importers.text import clean_code, clean_statement, clean_test_text
from curation.records import ProblemRecord, SolutionRecord, TestRecord

#: Reference solutions kept per problem; CodeContests ships up to thousands and the constraints stage
#: needs one that passes. Deterministic (first N in source order), so content hashes stay stable.
MAX_SOLUTIONS = 20

# contest_problem.proto enums.
_SOURCES = {
    0: "unknown",
    1: "codechef",
    2: "codeforces",
    3: "hackerearth",
    4: "codejam",
    6: "atcoder",
    7: "aizu",
}
_DIFFICULTIES = {0: "", 1: "EASY", 2: "MEDIUM", 3: "HARD", 4: "HARDER", 5: "HARDEST", 6: "EXTERNAL"}
_DIFFICULTIES.update({7 + i: chr(ord("A") + i) for i in range(11)})  # A=7 .. K=17
_DIFFICULTIES.update({19 + i: chr(ord("L") + i) for i in range(11)})  # L=19 .. V=29 (18 is unused)
_LANGUAGES = {0: "unknown", 1: "python2", 2: "cpp", 3: "python", 4: "java"}
_JUDGED = ("python", "cpp")  # languages the evaluator runs (evaluator.languages)
_LANGUAGE_NAMES = {
    "UNKNOWN_LANGUAGE": "unknown",
    "PYTHON": "python2",
    "CPP": "cpp",
    "PYTHON3": "python",
    "JAVA": "java",
}

_CF_NAME = re.compile(r"^(\d+)_([A-Z][0-9]?)\.\s*(.*)$")
_AIZU_NAME = re.compile(r"^(p\d{5})\s+(.*)$")
_DEFAULT_TIME_LIMIT_S = 2.0
_DEFAULT_MEMORY_MB = 256


class CodeContestsImporter:
    name: str = "codecontests"
    description: str = (
        "DeepMind CodeContests (JSONL/Parquet) and its SandboxFusion sample layout (stdin/stdout)"
    )
    platforms: tuple[str, ...] = (
        "codeforces",
        "codechef",
        "atcoder",
        "aizu",
        "hackerearth",
        "codejam",
        "unknown",
    )

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        if not sample:
            return False
        if {"name", "description", "public_tests"} <= set(sample):
            return True
        if {"content", "labels", "test"} <= set(sample):
            labels = _labels(sample)
            return isinstance(labels, dict) and "source" in labels
        return False

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        return parse_rows(path, convert_row)


def convert_row(obj: dict[str, Any]) -> ProblemRecord:
    if "content" in obj and "labels" in obj:
        return _convert_sandbox(obj)
    return _convert_deepmind(obj)


def platform_of(source: Any) -> str:
    """Proto enum number or name (``2`` / ``"CODEFORCES"``) -> our platform slug."""
    if isinstance(source, int) and not isinstance(source, bool):
        return _SOURCES.get(source, "unknown")
    if isinstance(source, str) and source.strip():
        s = source.strip().lower()
        return "unknown" if s == "unknown_source" else s
    return "unknown"


def _difficulty_of(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return _DIFFICULTIES.get(value, "")
    if isinstance(value, str):
        return "" if value == "UNKNOWN_DIFFICULTY" else value
    return ""


def identify(
    platform: str, name: str, cf_contest_id: Any = None, cf_index: Any = None
) -> tuple[str, str, str]:
    """``(external_id, title, url)`` for a CodeContests problem name on ``platform``."""
    name = name.strip()
    if platform == "codeforces":
        m = _CF_NAME.match(name)
        contest = str(cf_contest_id) if isinstance(cf_contest_id, int) and cf_contest_id > 0 else ""
        index = str(cf_index) if isinstance(cf_index, str) and cf_index else ""
        title = name
        if m:
            contest, index, title = contest or m.group(1), index or m.group(2), m.group(3).strip() or name
        if contest and index:
            return (
                f"{contest}{index}",
                title,
                f"https://codeforces.com/problemset/problem/{contest}/{index}",
            )
        return name, title, ""
    if platform == "codechef":
        code = name.upper()
        return code, code, f"https://www.codechef.com/problems/{code}"
    if platform in ("aizu", "atcoder"):
        m = _AIZU_NAME.match(name)
        if m:
            return m.group(1), m.group(2).strip(), ""
    return name, name, ""


def _tests_from_columns(value: Any, field: str, public: bool) -> list[TestRecord]:
    if value is None:
        return []
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else {}
    if not isinstance(value, dict):
        raise RowRejected(f"field {field!r} must be {{input: [...], output: [...]}}")
    inputs, outputs = value.get("input") or [], value.get("output") or []
    if len(inputs) != len(outputs):
        raise RowRejected(f"{field}: {len(inputs)} inputs but {len(outputs)} outputs")
    tests = []
    for i, (inp, out) in enumerate(zip(inputs, outputs), start=1):
        if not isinstance(inp, str) or not isinstance(out, str):
            raise RowRejected(f"{field}[{i}]: input and output must be strings")
        tests.append(TestRecord(clean_test_text(inp), clean_test_text(out), public=public))
    return tests


def _solutions(value: Any) -> tuple[list[SolutionRecord], int]:
    """Python 3 and C++ reference solutions (first ``MAX_SOLUTIONS``) and how many were left out."""
    if not value:
        return [], 0
    if not isinstance(value, dict):
        raise RowRejected("field 'solutions' must be {language: [...], solution: [...]}")
    languages, codes = value.get("language") or [], value.get("solution") or []
    if len(languages) != len(codes):
        raise RowRejected(f"solutions: {len(languages)} languages but {len(codes)} solutions")
    kept: list[SolutionRecord] = []
    for lang, code in zip(languages, codes):
        language = (
            _LANGUAGES.get(lang, "unknown")
            if isinstance(lang, int)
            else _LANGUAGE_NAMES.get(str(lang), str(lang).lower())
        )
        if language in _JUDGED and isinstance(code, str) and code.strip() and len(kept) < MAX_SOLUTIONS:
            kept.append(SolutionRecord(code=clean_code(code), language=language))
    return kept, len(codes) - len(kept)


def _convert_deepmind(obj: dict[str, Any]) -> ProblemRecord:
    name = require_str(obj, "name")
    statement = require_str(obj, "description")
    platform = platform_of(obj.get("source"))
    external_id, title, url = identify(platform, name, obj.get("cf_contest_id"), obj.get("cf_index"))
    for field in ("input_file", "output_file"):
        if obj.get(field):
            raise RowRejected(
                f"file I/O ({field}={obj[field]!r}) is unsupported: the judge uses stdin/stdout", external_id
            )
    try:
        public = _tests_from_columns(obj.get("public_tests"), "public_tests", True)
        private = _tests_from_columns(obj.get("private_tests"), "private_tests", False)
        generated = _tests_from_columns(obj.get("generated_tests"), "generated_tests", False)
        solutions, others = _solutions(obj.get("solutions"))
    except RowRejected as exc:
        raise RowRejected(exc.reason, external_id) from exc

    time_limit_s = _DEFAULT_TIME_LIMIT_S
    tl = obj.get("time_limit")
    if isinstance(tl, dict) and (tl.get("seconds") or tl.get("nanos")):
        time_limit_s = float(tl.get("seconds") or 0) + float(tl.get("nanos") or 0) / 1e9
    memory_bytes = obj.get("memory_limit_bytes")
    memory_mb = (
        int(memory_bytes) // (1 << 20)
        if isinstance(memory_bytes, int) and memory_bytes > 0
        else _DEFAULT_MEMORY_MB
    )
    rating = obj.get("cf_rating")
    tests = public + private + generated
    extra: dict[str, Any] = {
        "source": "CodeContests",
        "name": name,
        "test_counts": {"public": len(public), "private": len(private), "generated": len(generated)},
    }
    if others:
        extra["solutions_not_imported"] = others
    return ProblemRecord(
        platform=platform,
        external_id=external_id,
        title=title,
        statement=clean_statement(statement),
        io_mode="stdin",
        time_limit_s=time_limit_s,
        memory_mb=memory_mb,
        tags=[t for t in (obj.get("cf_tags") or []) if isinstance(t, str) and t],
        difficulty=_difficulty_of(obj.get("difficulty")),
        rating=rating if isinstance(rating, int) and not isinstance(rating, bool) and rating > 0 else None,
        url=url,
        license="CC-BY-4.0 (CodeContests)",
        tests=tests,
        solutions=solutions,
        extra=extra,
    )


def _labels(obj: dict[str, Any]) -> Any:
    labels = obj.get("labels")
    if isinstance(labels, str):
        try:
            return json.loads(labels)
        except json.JSONDecodeError:
            return None
    return labels


def _convert_sandbox(obj: dict[str, Any]) -> ProblemRecord:
    statement = require_str(obj, "content")
    labels = load_json_field(obj, "labels")
    if not isinstance(labels, dict):
        raise RowRejected("field 'labels' must be a JSON object")
    name = labels.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RowRejected("labels has no 'name'")
    platform = platform_of(labels.get("source"))
    external_id, title, url = identify(platform, name)
    raw_tests = load_json_field(obj, "test")
    if not isinstance(raw_tests, list):
        raise RowRejected(
            "field 'test' must be a JSON list of {input: {stdin}, output: {stdout}}", external_id
        )
    pairs: list[tuple[str, str]] = []
    for i, t in enumerate(raw_tests, start=1):
        try:
            inp, out = t["input"]["stdin"], t["output"]["stdout"]
        except (KeyError, TypeError) as exc:
            raise RowRejected(f"test {i} has no input.stdin / output.stdout", external_id) from exc
        if not isinstance(inp, str) or not isinstance(out, str):
            raise RowRejected(f"test {i}: stdin and stdout must be strings", external_id)
        pairs.append((clean_test_text(inp), clean_test_text(out)))
    statement = clean_statement(statement)
    public = mark_statement_samples(statement, [p[0] for p in pairs])
    tests = [TestRecord(inp, out, public=pub) for (inp, out), pub in zip(pairs, public)]
    extra: dict[str, Any] = {"source": "CodeContests (SandboxFusion sample)", "name": name}
    if "id" in obj:
        extra["sample_id"] = obj["id"]
    return ProblemRecord(
        platform=platform,
        external_id=external_id,
        title=title,
        statement=statement,
        io_mode="stdin",
        difficulty=_difficulty_of(labels.get("difficulty")),
        url=url,
        license="Apache-2.0 (SandboxFusion sample of CodeContests)",
        tests=tests,
        extra=extra,
    )


IMPORTER = CodeContestsImporter()
