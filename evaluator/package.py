"""ICPC / Kattis problem packages on disk -> an evaluator case (``python -m evaluator package``).

What is read (legacy and 2023-07 layouts of the problem package format):

- ``problem.yaml``: ``limits.time_limit`` (2023-07; else a DOMjudge ``.timelimit`` file, else 2 s),
  ``limits.memory`` (MiB, default 2048), ``limits.validation_passes`` (multi-pass, default 2),
  ``validation`` (legacy: ``default`` / ``custom`` / ``custom interactive`` / ``custom multi-pass``),
  ``type`` (2023-07: ``pass-fail`` / ``interactive`` / ``multi-pass``, combinable),
  ``validator_flags`` (legacy); ``data/testdata.yaml``'s ``output_validator_flags`` /
  ``output_validator_args`` when ``problem.yaml`` has none.
- tests: ``data/sample/*.in`` then ``data/secret/**/*.in`` (sub-groups in path order), each with its
  ``.ans`` (optional for interactive problems); symbolic links to files and folders are followed.
- the output validator: ``output_validators/<name>/`` or ``output_validators/*`` (legacy),
  ``output_validator/`` (2023-07): its C, C++ or Python sources (headers included) become a
  ``{"kind": "program", "protocol": "icpc"}`` checker with the validator flags as arguments. Without
  one the default validator is used (``{"kind": "icpc", ...flags}``). Interactive problems use the
  output validator as the interactor.

:func:`package_case` builds the case; :func:`judge_package` judges a submission file with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from .compare import parse_validator_flags
from .languages import language_of_file, normalize_language

DEFAULT_TIME_LIMIT_S = 2.0
DEFAULT_MEMORY_MB = 2048
DEFAULT_PASSES = 2
#: a problem.yaml / testdata.yaml is a few hundred bytes; anything this big is not metadata
MAX_YAML_BYTES = 256 * 1024
_SOURCE_SUFFIXES = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".py": "python"}
_HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".inc")
_MAX_VALIDATOR_BYTES = 4 << 20


class PackageError(ValueError):
    """The folder is not a problem package the judge can use (the message says why)."""


class _NoAliasLoader(yaml.SafeLoader):
    """``SafeLoader`` that refuses aliases: a metadata file never needs them, and nested aliases
    (the "billion laughs") make a tiny file stand for an exponentially large document."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.YAMLError(f"aliases are not allowed (*{event.anchor} at line {event.start_mark.line + 1})")
        return super().compose_node(parent, index)


def load_metadata_yaml(text: str) -> Any:
    """Parse package metadata safely: no tags beyond plain data, no aliases (``yaml.YAMLError``)."""
    return yaml.load(text, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass


def read_yaml(path: Path) -> dict[str, Any]:
    """A metadata YAML file as a mapping (missing file -> {}); safe loader, size-capped, no aliases."""
    if not path.is_file():
        return {}
    if path.stat().st_size > MAX_YAML_BYTES:
        raise PackageError(f"{path.name} is larger than {MAX_YAML_BYTES:,} bytes")
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = load_metadata_yaml(text)
    except yaml.YAMLError as exc:
        raise PackageError(f"{path.name} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise PackageError(f"{path.name} must be a mapping")
    return data


def problem_kind(meta: dict[str, Any]) -> tuple[bool, bool, bool]:
    """``(custom validator, interactive, multi-pass)`` from ``validation`` (legacy) and ``type`` (2023-07)."""
    validation = str(meta.get("validation") or "default").strip().lower()
    types = str(meta.get("type") or "pass-fail").strip().lower().replace(",", " ").split()
    interactive = "interactive" in validation.split() or "interactive" in types
    multi_pass = "multi-pass" in validation.split() or "multi-pass" in types
    custom = validation.startswith("custom") or interactive or multi_pass
    return custom, interactive, multi_pass


def validator_flags(meta: dict[str, Any], package: Path) -> list[str]:
    """The output validator's flags/arguments as words."""
    raw = meta.get("validator_flags")
    if raw is None:
        testdata = read_yaml(package / "data" / "testdata.yaml")
        raw = testdata.get("output_validator_flags", testdata.get("output_validator_args"))
    if raw is None:
        return []
    if isinstance(raw, str):
        return raw.split()
    if isinstance(raw, list):
        return [str(w) for w in raw]
    raise PackageError(f"validator flags must be a string or a list, got {type(raw).__name__}")


def validator_folder(package: Path) -> Path | None:
    """The folder (or single-file parent) holding the custom output validator's sources, if any."""
    for name in ("output_validator", "output_validators"):
        folder = package / name
        if not folder.is_dir():
            continue
        subdirs = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
        if any(_sources_in(folder)):
            return folder
        for sub in subdirs:
            if any(_sources_in(sub)):
                return sub
    return None


def _sources_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in _SOURCE_SUFFIXES)


def validator_checker(package: Path, args: list[str]) -> dict[str, Any] | None:
    """The custom output validator as a ``{"kind": "program"}`` checker spec, or None when there is none."""
    folder = validator_folder(package)
    if folder is None:
        return None
    files = [p for p in sorted(folder.iterdir()) if p.is_file() and not p.name.startswith(".")
             and (p.suffix.lower() in _SOURCE_SUFFIXES or p.suffix.lower() in _HEADER_SUFFIXES)]
    languages = {_SOURCE_SUFFIXES[p.suffix.lower()] for p in files if p.suffix.lower() in _SOURCE_SUFFIXES}
    language = "cpp" if "cpp" in languages else "c" if "c" in languages else "python"
    if language == "python":
        mains = [p for p in files if p.suffix == ".py"]
        main = next((p for p in mains if p.stem in ("validator", "output_validator", "interactor")), mains[0])
        files = [main]
    else:
        files = [p for p in files if p.suffix.lower() != ".py"]
    if sum(p.stat().st_size for p in files) > _MAX_VALIDATOR_BYTES:
        raise PackageError(f"the output validator's sources exceed {_MAX_VALIDATOR_BYTES >> 20} MiB")
    sources = {p.name: p.read_text(encoding="utf-8", errors="surrogateescape") for p in files}
    return {"kind": "program", "protocol": "icpc", "language": language, "sources": sources, "args": args}


def walk_inputs(folder: Path, recursive: bool) -> list[Path]:
    """``*.in`` files under ``folder`` in path order, following symbolic links (each real folder once)."""
    if not folder.is_dir():
        return []
    if not recursive:
        return sorted(p for p in folder.iterdir() if p.suffix == ".in" and p.is_file())
    found: list[Path] = []
    seen: set[str] = set()
    for root, dirs, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:  # a link cycle
            dirs[:] = []
            continue
        seen.add(real)
        dirs.sort()
        found += [Path(root) / f for f in files if f.endswith(".in") and (Path(root) / f).is_file()]
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def read_tests(package: Path, *, answers_optional: bool = False) -> list[dict[str, str]]:
    """Sample then secret tests as ``{"input", "output", "name"}``."""
    data = package / "data"
    tests = []
    for folder, recursive in ((data / "sample", False), (data / "secret", True)):
        for inp in walk_inputs(folder, recursive):
            ans = inp.with_suffix(".ans")
            if ans.is_file():
                answer = ans.read_bytes().decode("utf-8", "surrogateescape")
            elif answers_optional:
                answer = ""
            else:
                raise PackageError(f"{inp.relative_to(package)} has no matching .ans")
            tests.append({"input": inp.read_bytes().decode("utf-8", "surrogateescape"), "output": answer,
                          "name": str(inp.relative_to(data).with_suffix(""))})
    if not tests:
        raise PackageError("no tests (data/sample/*.in, data/secret/**/*.in)")
    return tests


def time_limit(meta: dict[str, Any], package: Path) -> float:
    limits: dict[str, Any] = meta["limits"] if isinstance(meta.get("limits"), dict) else {}
    value = limits.get("time_limit")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    marker = package / ".timelimit"
    if marker.is_file():
        try:
            return float(marker.read_text().strip())
        except ValueError as exc:
            raise PackageError(".timelimit is not a number") from exc
    return DEFAULT_TIME_LIMIT_S


def package_case(package: str | Path, code: str, language: str = "python") -> dict[str, Any]:
    """The evaluator case judging ``code`` against the package folder. Raises PackageError."""
    package = Path(package)
    if not (package / "problem.yaml").is_file():
        raise PackageError(f"{package} has no problem.yaml")
    meta = read_yaml(package / "problem.yaml")
    custom, interactive, multi_pass = problem_kind(meta)
    limits: dict[str, Any] = meta["limits"] if isinstance(meta.get("limits"), dict) else {}
    memory = limits.get("memory", DEFAULT_MEMORY_MB)
    if isinstance(memory, bool) or not isinstance(memory, (int, float)) or memory <= 0:
        raise PackageError(f"limits.memory must be a number of MiB, got {memory!r}")
    flags = validator_flags(meta, package)
    checker = validator_checker(package, flags)
    if checker is None:
        if custom:
            raise PackageError("the package asks for a custom validator but has no output_validator(s)/ sources")
        try:
            checker = parse_validator_flags(flags)
        except ValueError as exc:
            raise PackageError(str(exc)) from exc
    passes = 1
    if multi_pass:
        passes = int(limits.get("validation_passes") or DEFAULT_PASSES)
    tests = read_tests(package, answers_optional=interactive)
    return {"id": package.name, "mode": "stdin", "language": language, "code": code,
            "tests": [{"input": t["input"], "output": t["output"]} for t in tests],
            "time_limit_s": time_limit(meta, package), "memory_mb": int(memory), "checker": checker,
            "interactive": interactive, "passes": passes}


def judge_package(package: str | Path, submission: str | Path, language: str = "auto", *,
                  stop_on_first_failure: bool = True, config: Any = None) -> dict[str, Any]:
    """Judge the submission file against the package; one verdict (``id`` = the package's folder name)."""
    from .runner import judge_case

    lang = language_of_file(submission) if language == "auto" else normalize_language(language)
    code = Path(submission).read_bytes().decode("utf-8", "surrogateescape")
    case = package_case(package, code, lang)
    return judge_case(case, stop_on_first_failure=stop_on_first_failure, config=config)
