"""APPS (MIT) and TACO (Apache-2.0) rows, as JSON Lines or a JSON array (HF dumps of both).

Fields: ``question, solutions`` (JSON string of a list of programs), ``input_output`` (JSON string of
``{inputs, outputs, fn_name?}``), ``difficulty, url, starter_code``; APPS adds ``problem_id``; TACO adds
``name, source, tags, skill_types, time_limit, memory_limit, date``.

- Without ``fn_name``: stdin mode; an input or output given as a list of lines is joined with newlines
  (as APPS' own tester does).
- With ``fn_name``: call mode. Each input is the list of arguments and becomes one JSON argument per
  line. Outputs are usually wrapped in a one-element list (``[result]``, the Codewars convention APPS
  inherited); a one-element list is unwrapped, anything else is kept as the result itself.

Platform and external id come from TACO's ``source`` or the problem URL (``codeforces.com/.../1/A`` ->
``codeforces``/``1A``, Codewars kata id, Kattis/LeetCode/CodeChef names); without either, platform
``apps`` and id ``apps-<problem_id>``. Python solutions are kept (first ``MAX_SOLUTIONS``).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from curation.importers.base import (
    ParsedRow,
    RowRejected,
    iso_date,
    json_arg,
    load_json_field,
    parse_rows,
    require_str,
    slug_title,
)
from curation.importers.text import clean_code, clean_statement, clean_test_text
from curation.records import ProblemRecord, SolutionRecord, TestRecord

MAX_SOLUTIONS = 20
#: A "memory limit" below this is not a usable one (e.g. "50000 bytes" on CodeChef rows, which matches
#: CodeChef's source-size limit); such values fall back to the default and are kept in ``extra``.
MIN_PLAUSIBLE_MEMORY_MB = 16

_HOSTS = {
    "codeforces.com": "codeforces",
    "codechef.com": "codechef",
    "atcoder.jp": "atcoder",
    "codewars.com": "codewars",
    "kattis.com": "kattis",
    "leetcode.com": "leetcode",
    "hackerrank.com": "hackerrank",
    "geeksforgeeks.org": "geeksforgeeks",
    "hackerearth.com": "hackerearth",
    "u-aizu.ac.jp": "aizu",
}


class AppsImporter:
    name: str = "apps"
    description: str = "APPS / TACO rows (JSON or JSONL; input_output with optional fn_name)"
    platforms: tuple[str, ...] = (
        "codeforces",
        "codechef",
        "atcoder",
        "codewars",
        "kattis",
        "leetcode",
        "hackerrank",
        "geeksforgeeks",
        "hackerearth",
        "aizu",
        "apps",
    )

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        return bool(sample) and {"question", "input_output"} <= set(sample or {})

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        return parse_rows(path, convert_row)


def platform_from_url(url: str) -> str:
    host = (urlparse(url).hostname or "").lower()
    for domain, platform in _HOSTS.items():
        if host == domain or host.endswith("." + domain):
            return platform
    return ""


def id_from_url(platform: str, url: str) -> str:
    """The platform's own problem id from a problem URL, or "" when the URL has none we know."""
    path = urlparse(url).path
    patterns = {
        "codeforces": r"/(?:problemset/problem|contest|gym)/(\d+)/(?:problem/)?([A-Za-z][0-9]?)",
        "codechef": r"/problems/([A-Za-z0-9_]+)",
        "atcoder": r"/tasks/([A-Za-z0-9_]+)",
        "codewars": r"/kata/([A-Za-z0-9_-]+)",
        "kattis": r"/problems/([A-Za-z0-9_.-]+)",
        "leetcode": r"/problems/([A-Za-z0-9-]+)",
        "hackerrank": r"/challenges/([A-Za-z0-9-]+)",
        "geeksforgeeks": r"/problems/([A-Za-z0-9-]+)",
        "aizu": r"id=([A-Za-z0-9_]+)",
    }
    pattern = patterns.get(platform)
    if not pattern:
        return ""
    m = re.search(pattern, path if platform != "aizu" else url)
    if not m:
        return ""
    if platform == "codeforces":
        return f"{m.group(1)}{m.group(2).upper()}"
    return m.group(1).upper() if platform == "codechef" else m.group(1)


def _literal_list(value: Any) -> list[str]:
    """TACO stores tag lists natively or as a Python-literal string (``"['Math', 'Greedy']"``)."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        try:
            value = ast.literal_eval(text) if text.startswith("[") else [text]
        except (ValueError, SyntaxError):
            return [text]
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, str | int) and str(v).strip()]
    return []


def _number(text: Any) -> float | None:
    if isinstance(text, int | float) and not isinstance(text, bool):
        return float(text)
    m = re.search(r"\d+(?:\.\d+)?", str(text or ""))
    return float(m.group(0)) if m else None


def _memory_mb(text: Any) -> int | None:
    """TACO's ``"256 megabytes"`` / ``"50000 bytes"`` / ``"64 kilobytes"`` -> MiB (a bare number is MiB)."""
    amount = _number(text)
    if amount is None or amount <= 0:
        return None
    unit = str(text).lower()
    if "kilobyte" in unit or re.search(r"\d\s*kb\b", unit):
        amount /= 1024
    elif "megabyte" not in unit and "byte" in unit:
        amount /= 1 << 20
    return max(1, round(amount))


def _stdin_text(value: Any, what: str, i: int) -> str:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    if isinstance(value, str):
        return value
    raise RowRejected(f"{what}[{i}] must be a string (stdin mode), got {type(value).__name__}")


def convert_tests(io_spec: Any) -> tuple[list[TestRecord], str]:
    """``input_output`` -> ``(tests, fn_name)``; see the module docstring for the two modes."""
    if not isinstance(io_spec, dict):
        raise RowRejected("input_output must be a JSON object with 'inputs' and 'outputs'")
    inputs, outputs = io_spec.get("inputs"), io_spec.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise RowRejected("input_output needs 'inputs' and 'outputs' lists")
    if len(inputs) != len(outputs):
        raise RowRejected(f"input_output has {len(inputs)} inputs but {len(outputs)} outputs")
    fn_name = io_spec.get("fn_name") or ""
    if fn_name and not isinstance(fn_name, str):
        raise RowRejected("input_output.fn_name must be a string")
    tests = []
    for i, (inp, out) in enumerate(zip(inputs, outputs), start=1):
        if fn_name:
            args = inp if isinstance(inp, list) else [inp]
            result = out[0] if isinstance(out, list) and len(out) == 1 else out
            tests.append(TestRecord("\n".join(json_arg(a) for a in args), json_arg(result)))
        else:
            tests.append(
                TestRecord(
                    clean_test_text(_stdin_text(inp, "inputs", i)),
                    clean_test_text(_stdin_text(out, "outputs", i)),
                )
            )
    return tests, fn_name


def convert_row(obj: dict[str, Any]) -> ProblemRecord:
    question = require_str(obj, "question")
    url = str(obj.get("url") or "").strip()
    platform = str(obj.get("source") or "").strip().lower() or platform_from_url(url)
    external_id = id_from_url(platform, url) if url else ""
    if not external_id:
        pid = obj.get("problem_id")
        if pid is not None and str(pid).strip():
            external_id = f"apps-{pid}"
        else:
            # No id anywhere: derive a stable one from the statement so re-imports match.
            external_id = "taco-" + hashlib.sha256(question.encode("utf-8")).hexdigest()[:12]
    platform = platform or "apps"
    try:
        tests, fn_name = convert_tests(load_json_field(obj, "input_output"))
    except RowRejected as exc:
        raise RowRejected(exc.reason, external_id) from exc

    solutions: list[SolutionRecord] = []
    raw_solutions = obj.get("solutions")
    if raw_solutions:
        try:
            codes = load_json_field(obj, "solutions")
        except RowRejected as exc:
            raise RowRejected(exc.reason, external_id) from exc
        if not isinstance(codes, list):
            raise RowRejected("solutions must be a JSON list of programs", external_id)
        for code in codes[:MAX_SOLUTIONS]:
            if isinstance(code, str) and code.strip():
                solutions.append(SolutionRecord(code=clean_code(code), language="python"))

    name = str(obj.get("name") or "").strip()
    title = name or (slug_title(external_id) if platform in ("leetcode", "kattis") else external_id)
    time_limit = _number(obj.get("time_limit"))
    memory = _memory_mb(obj.get("memory_limit"))
    extra: dict[str, Any] = {"source": "TACO" if "skill_types" in obj or "raw_tags" in obj else "APPS"}
    if obj.get("problem_id") is not None:
        extra["problem_id"] = obj["problem_id"]
    if memory is not None and memory < MIN_PLAUSIBLE_MEMORY_MB:
        extra["memory_limit_ignored"] = obj.get("memory_limit")
        memory = None
    skills = _literal_list(obj.get("skill_types"))
    if skills:
        extra["skill_types"] = skills
    return ProblemRecord(
        platform=platform,
        external_id=external_id,
        title=title,
        statement=clean_statement(question),
        io_mode="call" if fn_name else "stdin",
        fn_name=fn_name,
        starter_code=clean_code(str(obj.get("starter_code") or "")),
        time_limit_s=time_limit if time_limit and time_limit > 0 else 2.0,
        memory_mb=memory or 256,
        tags=_literal_list(obj.get("tags")),
        difficulty=str(obj.get("difficulty") or ""),
        contest_date=iso_date(obj.get("date")),
        url=url,
        license="Apache-2.0 (TACO)" if extra["source"] == "TACO" else "MIT (APPS)",
        tests=tests,
        solutions=solutions,
        extra=extra,
    )


IMPORTER = AppsImporter()
