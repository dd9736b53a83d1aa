"""ICPC / Kattis problem package folders (the problem package format, legacy and 2023-07 layouts).

``PATH`` is one package (a folder holding ``problem.yaml``) or a folder of packages; each package is
one row, numbered by its position among the package folders in name order.

A package ->
- ``problem.yaml``: ``name`` (a string or a per-language map), ``limits.memory`` (MiB; the format's
  default is 2048), ``limits.time_limit`` (2023-07) or a DOMjudge ``.timelimit`` file (otherwise 2 s;
  the legacy format derives the limit from the submissions, which we do not run here),
  ``validation``/``type``, ``validator_flags``, ``source``, ``source_url``, ``license``.
- statement: ``problem_statement/`` or ``statement/``, ``problem.en.{md,tex,html}`` preferred, then
  ``problem.{md,tex,html}``, then any language; LaTeX and HTML are converted to markdown-ish text.
- tests: ``data/sample/*.in`` + ``.ans`` -> public, ``data/secret/**/*.in`` + ``.ans`` -> private, in
  path order.
- ``submissions/accepted/*.{py,c,cpp,cc,cxx}`` -> reference solutions (language from the extension).
- a custom output validator (``output_validators/<name>/``, ``output_validators/*``, 2023-07
  ``output_validator/``) -> ``checker = {"kind": "program", "protocol": "icpc", "language", "sources",
  "args"}`` (``evaluator.package.validator_checker``; the flags become its arguments) plus
  ``"interactive": true`` for interactive problems (``validation: custom interactive``, ``type:
  interactive`` or ``.interaction`` files; ``.ans`` files optional) and ``"passes": N`` for multi-pass
  ones (``limits.validation_passes``, default 2). Symbolic links in ``data/`` are followed.
- the default output validator's flags -> ``checker = {"kind": "icpc", ...}`` with ``case_sensitive``
  / ``space_change_sensitive`` (true when given) and ``float_tolerance`` /
  ``float_absolute_tolerance`` / ``float_relative_tolerance`` (numbers). Flags come from
  ``validator_flags`` in ``problem.yaml`` or ``output_validator_flags``/``output_validator_args`` in
  ``data/testdata.yaml``.

Rejected with a reason: a custom validator or interactive problem without validator sources, unknown
default-validator flags, a ``.in`` without its ``.ans`` (except interactive problems), a missing
statement or an unreadable ``problem.yaml``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from curation.importers.base import ICPC_FLAG_TYPES, ParsedRow, RowRejected, convert_one
from curation.importers.text import clean_code, clean_statement, clean_test_text, latex_to_text
from curation.records import ProblemRecord, SolutionRecord, TestRecord
from evaluator.languages import language_of_file
from evaluator.package import MAX_YAML_BYTES, load_metadata_yaml, problem_kind, validator_checker
from evaluator.package import walk_inputs as package_walk

DEFAULT_MEMORY_MB = 2048  # the problem package format's default
DEFAULT_TIME_LIMIT_S = 2.0
_STATEMENT_DIRS = ("problem_statement", "statement")
_STATEMENT_EXTS = (".md", ".tex", ".html")


class IcpcImporter:
    name: str = "icpc"
    description: str = "ICPC / Kattis problem package folders (problem.yaml, data/sample|secret, submissions)"
    platforms: tuple[str, ...] = ("icpc",)

    def sniff(self, path: Path, sample: dict[str, Any] | None) -> bool:
        return bool(package_dirs(path)) if path.is_dir() else False

    def parse(self, path: Path) -> Iterator[ParsedRow]:
        for index, package in enumerate(package_dirs(path), start=1):
            yield convert_one(index, package, convert_package)


def _is_package(path: Path) -> bool:
    return (path / "problem.yaml").is_file()


def _looks_like_package(path: Path) -> bool:
    return _is_package(path) or (path / "data").is_dir() or any((path / d).is_dir() for d in _STATEMENT_DIRS)


def package_dirs(path: Path) -> list[Path]:
    """``[path]`` for one package; else its sub-folders that look like packages, in name order
    (a folder with ``data/`` or a statement but no ``problem.yaml`` is included so it gets a row error)."""
    if not path.is_dir():
        return []
    if _is_package(path):
        return [path]
    return sorted(
        p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".") and _looks_like_package(p)
    )


def parse_validator_flags(flags: Any) -> dict[str, Any]:
    """``"float_tolerance 1e-6 case_sensitive"`` (or a list of tokens) -> the checker's flag entries."""
    if flags is None:
        return {}
    if isinstance(flags, str):
        tokens = flags.split()
    elif isinstance(flags, list):
        tokens = [str(t) for t in flags]
    else:
        raise RowRejected(f"validator flags must be a string or a list, got {type(flags).__name__}")
    out: dict[str, Any] = {}
    i = 0
    while i < len(tokens):
        flag = tokens[i]
        kind = ICPC_FLAG_TYPES.get(flag)
        if kind is None:
            raise RowRejected(f"unknown output validator flag {flag!r}")
        if kind is bool:
            out[flag] = True
            i += 1
            continue
        if i + 1 >= len(tokens):
            raise RowRejected(f"validator flag {flag} needs a number")
        try:
            out[flag] = float(tokens[i + 1])
        except ValueError as exc:
            raise RowRejected(f"validator flag {flag} needs a number, got {tokens[i + 1]!r}") from exc
        i += 2
    return out


def _read_yaml(path: Path) -> dict[str, Any]:
    size = path.stat().st_size
    if size > MAX_YAML_BYTES:
        raise RowRejected(f"{path.name} is {size:,} bytes; metadata larger than {MAX_YAML_BYTES:,} bytes is refused")
    try:
        data = load_metadata_yaml(path.read_text(encoding="utf-8", errors="replace"))
    except yaml.YAMLError as exc:
        raise RowRejected(f"{path.name} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise RowRejected(f"{path.name} must be a mapping")
    return data


def _statement(package: Path) -> tuple[str, str]:
    """``(text, relative path)`` of the preferred statement file."""
    for dirname in _STATEMENT_DIRS:
        folder = package / dirname
        if not folder.is_dir():
            continue
        candidates = [folder / f"problem.en{ext}" for ext in _STATEMENT_EXTS]
        candidates += [folder / f"problem{ext}" for ext in _STATEMENT_EXTS]
        candidates += sorted(p for ext in _STATEMENT_EXTS for p in folder.glob(f"problem.*{ext}"))
        for candidate in candidates:
            if candidate.is_file():
                raw = candidate.read_text(encoding="utf-8", errors="replace")
                if candidate.suffix == ".tex":
                    raw = latex_to_text(raw)
                return clean_statement(raw), str(candidate.relative_to(package))
    raise RowRejected("no statement (problem_statement/problem.en.tex|.md|.html)")


def _test_pairs(folder: Path, *, public: bool, recursive: bool, optional_answers: bool = False) -> list[TestRecord]:
    if not folder.is_dir():
        return []
    inputs = sorted(package_walk(folder, recursive))  # symbolic links followed
    tests = []
    for inp in inputs:
        ans = inp.with_suffix(".ans")
        if optional_answers and not ans.is_file():
            tests.append(TestRecord(clean_test_text(inp.read_text(encoding="utf-8", errors="replace")), "",
                                    public=public))
            continue
        if not ans.is_file():
            raise RowRejected(f"{inp.relative_to(folder.parent.parent)} has no matching .ans")
        tests.append(
            TestRecord(
                clean_test_text(inp.read_text(encoding="utf-8", errors="replace")),
                clean_test_text(ans.read_text(encoding="utf-8", errors="replace")),
                public=public,
            )
        )
    return tests


def _title(meta: dict[str, Any], package: Path) -> str:
    name = meta.get("name")
    if isinstance(name, dict):
        name = name.get("en") or next(iter(name.values()), "")
    if isinstance(name, str) and name.strip():
        return name.strip()
    return package.name


def _time_limit(meta: dict[str, Any], package: Path) -> tuple[float, str]:
    limits: dict[str, Any] = meta["limits"] if isinstance(meta.get("limits"), dict) else {}
    if isinstance(limits.get("time_limit"), int | float) and not isinstance(limits.get("time_limit"), bool):
        return float(limits["time_limit"]), "problem.yaml"
    marker = package / ".timelimit"
    if marker.is_file():
        try:
            return float(marker.read_text().strip()), ".timelimit"
        except ValueError as exc:
            raise RowRejected(f".timelimit is not a number: {marker.read_text()[:40]!r}") from exc
    return DEFAULT_TIME_LIMIT_S, "default"


def convert_package(package: Path) -> ProblemRecord:
    """One package folder -> a stdin-mode record with an ``icpc`` checker (or ``RowRejected``)."""
    pid = package.name
    try:
        return _convert(package)
    except RowRejected as exc:
        raise RowRejected(exc.reason, exc.external_id or pid) from exc
    except OSError as exc:
        raise RowRejected(f"cannot read package: {exc}", pid) from exc


def _convert(package: Path) -> ProblemRecord:
    if not _is_package(package):
        raise RowRejected("no problem.yaml")
    meta = _read_yaml(package / "problem.yaml")
    custom, interactive, multi_pass = problem_kind(meta)
    data = package / "data"
    interactive = interactive or (data.is_dir() and any(data.rglob("*.interaction")))

    testdata = _read_yaml(data / "testdata.yaml") if (data / "testdata.yaml").is_file() else {}
    raw_flags = meta.get("validator_flags")
    if raw_flags is None:
        raw_flags = testdata.get("output_validator_flags", testdata.get("output_validator_args"))
    # a custom validator (or interactor) is stored as a checker program the judge compiles and runs
    words = raw_flags.split() if isinstance(raw_flags, str) else [str(w) for w in raw_flags or []]
    try:
        checker: dict[str, Any] | None = validator_checker(package, words)
    except ValueError as exc:  # evaluator.package.PackageError
        raise RowRejected(str(exc)) from exc
    if checker is None:
        if custom or interactive:
            raise RowRejected("the package needs a custom output validator but has no output_validator(s)/ sources")
        checker = {"kind": "icpc", **parse_validator_flags(raw_flags)}
    elif interactive or multi_pass:
        limits_: dict[str, Any] = meta["limits"] if isinstance(meta.get("limits"), dict) else {}
        passes = int(limits_.get("validation_passes") or 2) if multi_pass else 1
        checker.update(interactive=interactive, passes=passes)

    statement, statement_file = _statement(package)
    tests = _test_pairs(data / "sample", public=True, recursive=False, optional_answers=interactive)
    tests += _test_pairs(data / "secret", public=False, recursive=True, optional_answers=interactive)
    accepted = package / "submissions" / "accepted"
    solutions = (
        [
            SolutionRecord(
                code=clean_code(p.read_text(encoding="utf-8", errors="replace")), language=language_of_file(p)
            )
            for p in sorted(accepted.iterdir())
            if p.is_file() and p.suffix.lower() in (".py", ".c", ".cpp", ".cc", ".cxx")
        ]
        if accepted.is_dir()
        else []
    )

    limits: dict[str, Any] = meta["limits"] if isinstance(meta.get("limits"), dict) else {}
    memory = limits.get("memory", DEFAULT_MEMORY_MB)
    if isinstance(memory, bool) or not isinstance(memory, int | float):
        raise RowRejected(f"limits.memory must be a number of MiB, got {memory!r}")
    time_limit_s, time_source = _time_limit(meta, package)
    extra: dict[str, Any] = {
        "source": "problem package",
        "statement_file": statement_file,
        "time_limit_source": time_source,
    }
    for key in ("source", "author", "rights_owner", "uuid", "keywords"):
        if meta.get(key):
            extra["package_source" if key == "source" else key] = meta[key]
    license_ = meta.get("license")
    return ProblemRecord(
        platform="icpc",
        external_id=package.name,
        title=_title(meta, package),
        statement=statement,
        io_mode="stdin",
        time_limit_s=time_limit_s,
        memory_mb=int(memory),
        url=str(meta.get("source_url") or ""),
        license=str(license_) if license_ else "",
        checker=checker,
        tests=tests,
        solutions=solutions,
        extra=extra,
    )


IMPORTER = IcpcImporter()
