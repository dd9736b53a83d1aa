"""The importer-neutral problem record.

Every importer turns a platform's own format into ``ProblemRecord`` objects; the import service
writes them to the database; the release exporter writes them back out in the same shape
(``to_export_dict``), so ``export -> import`` reproduces identical content hashes.

This module imports nothing from Django so that importers can be tested and used on their own.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

IOMode = Literal["stdin", "call"]

#: Version of the export row schema (``ProblemRecord.to_export_dict``). Bump on any change.
EXPORT_SCHEMA_VERSION = 1


@dataclass
class TestRecord:
    """One test: ``input`` is stdin text (stdin mode) or one argument per line (call mode)."""

    input: str
    output: str
    public: bool = False

    __test__ = False  # not a pytest test class


@dataclass
class SolutionRecord:
    """A reference solution as shipped by the source (``verified`` only once our judge ran it)."""

    code: str
    language: str = "python"
    verified: bool = False


@dataclass
class ProblemRecord:
    """A problem in the unified format.

    ``external_id`` is unique within ``platform`` (e.g. ``leetcode``/``two-sum``,
    ``codeforces``/``1873A``). ``checker`` follows the evaluator's case format
    (``{"kind": "lenient"}``, ``{"kind": "icpc", "float_tolerance": 1e-6, ...}``).
    """

    platform: str
    external_id: str
    title: str
    statement: str
    io_mode: IOMode = "stdin"
    fn_name: str = ""
    starter_code: str = ""
    time_limit_s: float = 2.0
    memory_mb: int = 256
    tags: list[str] = field(default_factory=list)
    difficulty: str = ""  # the platform's own label ("Easy", "hard", "A", ...)
    rating: int | None = None  # numeric platform rating when it has one (Codeforces 800-3500)
    contest_date: str | None = None  # ISO date "YYYY-MM-DD"
    url: str = ""
    license: str = ""
    checker: dict[str, Any] = field(default_factory=lambda: {"kind": "lenient"})
    tests: list[TestRecord] = field(default_factory=list)
    solutions: list[SolutionRecord] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # source fields we keep but do not model

    def content_dict(self) -> dict[str, Any]:
        """The fields that define the problem's content (what the content hash covers)."""
        d = asdict(self)
        d.pop("extra")
        for s in d["solutions"]:
            s.pop("verified", None)  # verification is our finding, not the source's content
        return d

    def content_hash(self) -> str:
        """sha256 over a canonical JSON encoding of ``content_dict()``."""
        blob = json.dumps(self.content_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def to_export_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["schema_version"] = EXPORT_SCHEMA_VERSION
        return d

    @classmethod
    def from_export_dict(cls, d: dict[str, Any]) -> ProblemRecord:
        d = dict(d)
        d.pop("schema_version", None)
        known = {f for f in cls.__dataclass_fields__}
        extra_keys = [k for k in d if k not in known]
        extra = dict(d.get("extra") or {})
        for k in extra_keys:
            extra[k] = d.pop(k)
        d["extra"] = extra
        d["tests"] = [TestRecord(**t) for t in d.get("tests") or []]
        d["solutions"] = [SolutionRecord(**s) for s in d.get("solutions") or []]
        return cls(**d)


def evaluator_tests(
    tests: list[dict[str, Any]], checker: dict[str, Any] | None
) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """Map stored tests + checker to the evaluator's case fields ``(tests, checker)``.

    Importers store HumanEval/MBPP assert tests as ``TestRecord(input="", output=<test code>)``
    with ``checker={"kind": "assert"}``; the evaluator expects ``{"input": "", "output": "",
    "assert": <test code>}`` under its default checker. Every other checker passes through.
    """
    checker = dict(checker or {"kind": "lenient"})
    if checker.get("kind") == "assert":
        return [{"input": "", "output": "", "assert": t["output"]} for t in tests], {"kind": "lenient"}
    return [{"input": t["input"], "output": t["output"]} for t in tests], checker
