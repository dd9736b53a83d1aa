"""LiveCodeBench releases (``livecodebench/code_generation_lite`` JSONL) and the SandboxFusion sample.

Release layout: ``question_title, question_content, platform, question_id, contest_id, contest_date,
starter_code, difficulty, public_test_cases, private_test_cases, metadata``. ``public_test_cases`` is a
JSON string of ``[{input, output, testtype: "stdin"|"functional"}]``; ``private_test_cases`` is either
the same JSON or ``base64(zlib(pickle(json_string)))``; ``metadata`` is a JSON string holding
``func_name`` for functional (LeetCode) problems, which become call-mode records whose input already has
one JSON argument per line.

SandboxFusion sample layout: ``content`` (LiveCodeBench's prompt around the question), ``labels`` (JSON
string: ``task_id`` like ``codeforces/1873_A``, ``difficulty``), ``test`` (``base64(zlib(...))`` of a
pickled ``{"input_output": json_string}`` with ``inputs, outputs, fn_name``), ``canonical_solution``.
The prompt wrapper is removed and the starter code recovered from its "### Format" block. The sample's
``canonical_solution`` is a no-op placeholder (``import sys; sys.exit(0)``), so it is not imported as a
reference solution (it would fail every test); it stays in ``extra``.

Pickles are never loaded with ``pickle.loads``: ``decode_private_tests`` uses an unpickler whose
``find_class`` refuses every global, so only built-in containers, strings, bytes and numbers can be
built — no code runs, whatever the payload holds.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curation.importers.base import (
    ParsedRow,
    RowRejected,
    iso_date,
    load_json_field,
    mark_statement_samples,
    parse_rows,
    require_str,
    slug_title,
)
from curation.importers.text import clean_code, clean_statement, clean_test_text
from curation.records import ProblemRecord, SolutionRecord, TestRecord

#: Left empty: LiveCodeBench's release does not state one license for its rows (the problems stay the
#: platforms'); the source is recorded in ``extra``.
LICENSE = ""
#: Canonical "solutions" that are placeholders, not programs (SandboxFusion's sample ships these).
PLACEHOLDER_SOLUTIONS = frozenset({"import sys; sys.exit(0)", "pass", ""})
#: Decompressed private tests larger than this are refused (a zlib bomb must not eat the importer).
MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024

_ALLOWED_TYPES = (str, bytes, bytearray, int, float, bool, type(None), list, tuple, dict)


class _NoGlobalsUnpickler(pickle.Unpickler):
    """An unpickler that can only rebuild built-in data (str, bytes, numbers, list, tuple, dict).

    Those types are created by dedicated opcodes; anything else (a class, a function, ``os.system``)
    has to go through ``find_class``, which refuses. So loading cannot execute code."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"pickle wants global {module}.{name}; only plain data is allowed")


def safe_unpickle(data: bytes) -> Any:
    """Load a pickle that may only hold plain built-in data; raise ``pickle.UnpicklingError`` otherwise.

    Linear in ``len(data)``: unpickling is (every opcode builds at most one object), and so is the
    check, which visits each container once and refuses a container referenced twice (a pickle's memo
    lets a few hundred bytes stand for ``2**60`` nested references; plain test data never shares)."""
    obj = _NoGlobalsUnpickler(io.BytesIO(data)).load()
    PlainChecker(max_visits=len(data)).check(obj)
    return obj


class PlainChecker:
    """Checks that an unpickled value is a tree of plain data. ``visits`` counts the values looked at:
    never more than ``max_visits`` (the pickle's size), since each one took at least one opcode."""

    def __init__(self, *, max_visits: int, max_depth: int = 50) -> None:
        self.max_visits = max_visits
        self.max_depth = max_depth
        self.visits = 0

    def check(self, obj: Any) -> None:
        seen: set[int] = set()
        stack: list[tuple[Any, int]] = [(obj, 0)]
        while stack:
            value, depth = stack.pop()
            self.visits += 1
            if self.visits > self.max_visits:
                raise pickle.UnpicklingError("pickle holds more values than its size allows")
            if depth > self.max_depth:
                raise pickle.UnpicklingError(f"pickle nests deeper than {self.max_depth} levels")
            if not isinstance(value, _ALLOWED_TYPES):
                raise pickle.UnpicklingError(f"unexpected {type(value).__name__} in pickle")
            if not isinstance(value, list | tuple | dict) or not value:
                continue
            if id(value) in seen:
                raise pickle.UnpicklingError("pickle shares a container between several places; refused")
            seen.add(id(value))
            children = [x for kv in value.items() for x in kv] if isinstance(value, dict) else list(value)
            stack.extend((child, depth + 1) for child in children)


def _inflate(data: bytes) -> bytes:
    d = zlib.decompressobj()
    out = d.decompress(data, MAX_DECOMPRESSED_BYTES)
    if d.unconsumed_tail:
        raise ValueError(f"decompressed data exceeds {MAX_DECOMPRESSED_BYTES} bytes")
    return out + d.flush()


def decode_private_tests(value: str) -> Any:
    """LiveCodeBench's private tests -> the decoded JSON value.

    Accepts plain JSON, ``base64(zlib(json))`` and ``base64(zlib(pickle(x)))`` where ``x`` is a JSON
    string, JSON bytes, or a dict holding one under ``input_output`` (the SandboxFusion variant).
    Raises ``RowRejected`` with the failing step in the reason.
    """
    stripped = value.strip()
    if not stripped:
        return []
    if stripped[0] in "[{":  # base64 never starts with a bracket, so this can only be JSON
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise RowRejected(f"private tests are not valid JSON: {exc.msg} at position {exc.pos}") from exc
    try:
        compressed = base64.b64decode(stripped, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise RowRejected(f"base64 decode of private tests failed: {exc}") from exc
    try:
        raw = _inflate(compressed)
    except (zlib.error, ValueError) as exc:
        raise RowRejected(f"zlib decode of private tests failed: {exc}") from exc
    if raw[:1] == b"\x80":  # pickle protocol 2+ header
        try:
            payload = safe_unpickle(raw)
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError, KeyError) as exc:
            raise RowRejected(f"unpickling private tests refused or failed: {exc}") from exc
    else:
        payload = raw
    if isinstance(payload, dict) and "input_output" in payload:
        payload = payload["input_output"]
    if isinstance(payload, bytes | bytearray):
        payload = bytes(payload).decode("utf-8", errors="replace")
    if isinstance(payload, str):
        try:
            return json.loads(payload)
        except json.JSONDecodeError as exc:
            raise RowRejected(f"private tests are not valid JSON after decoding: {exc.msg}") from exc
    return payload


class LiveCodeBenchImporter:
    name: str = "livecodebench"
    description: str = (
        "LiveCodeBench release JSONL (zlib+base64 private tests) and its SandboxFusion sample layout"
    )
    platforms: tuple[str, ...] = ("leetcode", "codeforces", "atcoder")

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        if not sample:
            return False
        if {"question_content", "public_test_cases"} <= set(sample):
            return True
        if {"content", "labels", "test"} <= set(sample):
            labels = sample.get("labels")
            if isinstance(labels, str):
                try:
                    labels = json.loads(labels)
                except json.JSONDecodeError:
                    return False
            return (
                isinstance(labels, dict) and "/" in str(labels.get("task_id", "")) and "source" not in labels
            )
        return False

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        return parse_rows(path, convert_row)


def convert_row(obj: dict[str, Any]) -> ProblemRecord:
    if "question_content" in obj:
        return _convert_release(obj)
    return _convert_sandbox(obj)


def leetcode_slug(title: str) -> str:
    """LeetCode's slug: ``"Two Sum II - Input Array Is Sorted"`` -> ``"two-sum-ii-input-array-is-sorted"``."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def external_id_for(platform: str, question_id: str, title: str = "") -> str:
    """The platform's own id, so that one problem gets one id whichever dataset it came from:
    Codeforces ``1873_A`` -> ``1873A`` (as CodeContests names it), LeetCode -> the title slug (as
    LeetCodeDataset names it) when the title is known; others as given."""
    if platform == "codeforces":
        m = re.fullmatch(r"(\d+)_?([A-Za-z][0-9]?)", question_id)
        if m:
            return f"{m.group(1)}{m.group(2).upper()}"
    if platform == "leetcode" and title.strip():
        return leetcode_slug(title)
    return question_id


def url_for(platform: str, external_id: str, title: str = "") -> str:
    if platform == "codeforces":
        m = re.fullmatch(r"(\d+)([A-Z][0-9]?)", external_id)
        if m:
            return f"https://codeforces.com/problemset/problem/{m.group(1)}/{m.group(2)}"
    if platform == "atcoder":
        m = re.fullmatch(r"([a-z]+\d+)_([a-z0-9]+)", external_id)
        if m:
            return f"https://atcoder.jp/contests/{m.group(1)}/tasks/{external_id}"
    if platform == "leetcode" and title:
        return f"https://leetcode.com/problems/{leetcode_slug(title)}/"
    return ""


def _tests(items: Any, *, public: bool, where: str) -> tuple[list[TestRecord], set[str]]:
    if not isinstance(items, list):
        raise RowRejected(f"{where} must be a JSON list of {{input, output, testtype}}")
    tests, kinds = [], set()
    for i, t in enumerate(items, start=1):
        if (
            not isinstance(t, dict)
            or not isinstance(t.get("input"), str)
            or not isinstance(t.get("output"), str)
        ):
            raise RowRejected(f"{where}[{i}]: input and output must be strings")
        kinds.add(str(t.get("testtype", "stdin")))
        tests.append(TestRecord(clean_test_text(t["input"]), clean_test_text(t["output"]), public=public))
    return tests, kinds


def _convert_release(obj: dict[str, Any]) -> ProblemRecord:
    platform = require_str(obj, "platform").strip().lower()
    question_id = str(obj.get("question_id") or "").strip()
    if not question_id:
        raise RowRejected("missing 'question_id' field")
    raw_title = str(obj.get("question_title") or "").strip()
    external_id = external_id_for(platform, question_id, raw_title)
    title = raw_title or slug_title(external_id)
    try:
        public, kinds_pub = _tests(
            load_json_field(obj, "public_test_cases"), public=True, where="public_test_cases"
        )
        raw_private = obj.get("private_test_cases")
        if raw_private is None:
            private_items: Any = []
        elif isinstance(raw_private, str):
            private_items = decode_private_tests(raw_private)
        else:
            private_items = raw_private
        private, kinds_priv = _tests(private_items, public=False, where="private_test_cases")
        metadata = load_json_field(obj, "metadata") if obj.get("metadata") else {}
    except RowRejected as exc:
        raise RowRejected(exc.reason, external_id) from exc
    kinds = kinds_pub | kinds_priv
    if len(kinds) > 1:
        raise RowRejected(f"tests mix test types {sorted(kinds)}", external_id)
    functional = kinds == {"functional"}
    fn_name = ""
    if functional:
        fn_name = str((metadata or {}).get("func_name") or "") if isinstance(metadata, dict) else ""
        if not fn_name:
            raise RowRejected("functional tests but metadata has no func_name", external_id)
    extra: dict[str, Any] = {"source": "LiveCodeBench", "question_id": question_id}
    if obj.get("contest_id"):
        extra["contest_id"] = obj["contest_id"]
    return ProblemRecord(
        platform=platform,
        external_id=external_id,
        title=title,
        statement=clean_statement(require_str(obj, "question_content")),
        io_mode="call" if functional else "stdin",
        fn_name=fn_name,
        starter_code=clean_code(str(obj.get("starter_code") or "")),
        difficulty=str(obj.get("difficulty") or ""),
        contest_date=iso_date(obj.get("contest_date")),
        url=url_for(platform, external_id, title),
        license=LICENSE,
        tests=public + private,
        extra=extra,
    )


_QUESTION = re.compile(r"### Question:\s*\n(.*?)(?:\n### Format:(.*?))?(?:\n### Answer:.*)?$", re.DOTALL)
_CODE_BLOCK = re.compile(r"```(?:python)?\n(.*?)```", re.DOTALL)


def unwrap_prompt(content: str) -> tuple[str, str]:
    """LiveCodeBench's generation prompt -> ``(question text, starter code or "")``."""
    m = _QUESTION.search(content)
    if not m:
        return content, ""
    question, fmt = m.group(1), m.group(2) or ""
    starter = ""
    block = _CODE_BLOCK.search(fmt)
    if block and block.group(1).strip() != "# YOUR CODE HERE":
        starter = block.group(1).rstrip() + "\n"
    return question, starter


def _convert_sandbox(obj: dict[str, Any]) -> ProblemRecord:
    labels = load_json_field(obj, "labels")
    if not isinstance(labels, dict) or "/" not in str(labels.get("task_id", "")):
        raise RowRejected("labels needs a task_id like 'codeforces/1873_A'")
    platform, question_id = str(labels["task_id"]).split("/", 1)
    platform = platform.strip().lower()
    external_id = external_id_for(platform, question_id.strip())
    question, starter = unwrap_prompt(require_str(obj, "content"))
    statement = clean_statement(question)
    try:
        decoded = decode_private_tests(require_str(obj, "test"))
    except RowRejected as exc:
        raise RowRejected(exc.reason, external_id) from exc
    if (
        not isinstance(decoded, dict)
        or not isinstance(decoded.get("inputs"), list)
        or not isinstance(decoded.get("outputs"), list)
    ):
        raise RowRejected("decoded tests need 'inputs' and 'outputs' lists", external_id)
    inputs, outputs = decoded["inputs"], decoded["outputs"]
    if len(inputs) != len(outputs):
        raise RowRejected(f"{len(inputs)} test inputs but {len(outputs)} outputs", external_id)
    for i, (inp, out) in enumerate(zip(inputs, outputs), start=1):
        if not isinstance(inp, str) or not isinstance(out, str):
            raise RowRejected(f"test {i}: input and output must be strings", external_id)
    fn_name = decoded.get("fn_name") or ""
    inputs = [clean_test_text(x) for x in inputs]
    public = mark_statement_samples(statement, inputs)
    tests = [
        TestRecord(inp, clean_test_text(out), public=pub) for inp, out, pub in zip(inputs, outputs, public)
    ]
    solutions = []
    extra: dict[str, Any] = {"source": "LiveCodeBench (SandboxFusion sample)", "task_id": labels["task_id"]}
    canonical = obj.get("canonical_solution")
    if isinstance(canonical, str):
        if canonical.strip() in PLACEHOLDER_SOLUTIONS:
            extra["canonical_solution_placeholder"] = canonical
        else:
            solutions.append(SolutionRecord(code=clean_code(canonical), language="python"))
    return ProblemRecord(
        platform=platform,
        external_id=external_id,
        title=external_id,  # the sample layout carries no title
        statement=statement,
        io_mode="call" if fn_name else "stdin",
        fn_name=str(fn_name),
        starter_code=clean_code(starter),
        difficulty=str(labels.get("difficulty") or ""),
        url=url_for(platform, external_id),
        license="Apache-2.0 (SandboxFusion sample of LiveCodeBench)",
        tests=tests,
        solutions=solutions,
        extra=extra,
    )


IMPORTER = LiveCodeBenchImporter()
