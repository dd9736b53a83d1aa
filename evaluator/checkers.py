"""Checker programs: a case's ``{"kind": "program", ...}`` checker (DESIGN.md section 4).

Shape::

    {"kind": "program",
     "protocol": "icpc" | "testlib",          # default "icpc"
     "language": "python" | "c" | "cpp",      # default: from the main file's extension, else "cpp"
     "source": "...",                         # the program (one file), or
     "sources": {"validator.cpp": "...", "validate.h": "..."},   # several files (headers included)
     "args": ["float_tolerance", "1e-6"],     # icpc only: extra arguments (validator flags)
     "time_limit_s": 10, "memory_mb": 1024,   # the checker's own limits (defaults below)
     "interactive": false, "passes": 1}       # also accepted as case fields (see evaluator.interactive)

- ``icpc`` (ICPC / Kattis output validators): ``program INPUT ANSWER FEEDBACK_DIR/ [args] < OUTPUT``;
  exit 42 accepts, 43 rejects, anything else (or a crash, or its own limit) is a judge error (IE). The
  message is ``FEEDBACK_DIR/judgemessage.txt`` (else ``teammessage.txt``, else its stderr).
- ``testlib`` (Codeforces/Polygon checkers): ``program INPUT OUTPUT ANSWER``; exit 0 accepts, 1 (WA)
  and 2 (PE) reject, 3 (FAIL) and anything else is IE; the message is its stderr.

C/C++ checkers are compiled once per source hash (:mod:`evaluator.languages`); Python checkers run
with the sandbox's interpreter. Checkers run in the solution's sandbox (see :mod:`evaluator._programs`).
A test's record carries the checker's message (``message``) and ``method: "program"`` when accepted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .languages import COMPILERS, compile_sources, normalize_language
from .sandbox import SandboxConfig

PROTOCOLS = ("icpc", "testlib")
DEFAULT_CPU_S = 10.0
DEFAULT_MEMORY_MB = 1024
_MAX_SOURCE = 4 << 20


@dataclass(frozen=True)
class ProgramChecker:
    """A validated ``{"kind": "program"}`` checker."""

    protocol: str = field(default="icpc", metadata={"help": "'icpc' (exit 42/43) or 'testlib' (exit 0/1/2)."})
    language: str = field(default="cpp", metadata={"help": "'python', 'c' or 'cpp'."})
    sources: tuple[tuple[str, str], ...] = field(default=(), metadata={"help": "(file name, text) pairs."})
    args: tuple[str, ...] = field(default=(), metadata={"help": "Extra arguments (icpc validator flags)."})
    time_limit_s: float = field(default=DEFAULT_CPU_S, metadata={"help": "CPU seconds per check."})
    memory_mb: int = field(default=DEFAULT_MEMORY_MB, metadata={"help": "Address space of the checker."})

    @property
    def main(self) -> tuple[str, str]:
        return self.sources[0]

    def wire(self, passes: int = 1) -> dict[str, Any]:
        """The worker-side spec (see :mod:`evaluator._programs`)."""
        return {"protocol": self.protocol, "args": list(self.args), "interpreted": self.language == "python",
                "passes": passes,
                "limits": {"cpu_s": self.time_limit_s, "wall_s": self.time_limit_s * 2 + 1.0,
                           "memory_mb": self.memory_mb}}


def _number(value: Any, what: str, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or math.isinf(value):
        raise ValueError(f"{what} must be a positive number, got {value!r}")
    return float(value)


def parse_program_checker(spec: Mapping[str, Any]) -> ProgramChecker:
    """A ``ProgramChecker`` from a case's checker object. Raises ValueError naming the bad field."""
    known = {"kind", "protocol", "language", "source", "sources", "args", "time_limit_s", "memory_mb",
             "interactive", "passes"}  # the last two are read by configure_case
    unknown = set(spec) - known
    if unknown:
        raise ValueError(f"unknown program checker field(s) {sorted(unknown)}; known: {sorted(known)}")
    protocol = str(spec.get("protocol") or "icpc")
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol {protocol!r}: use 'icpc' or 'testlib'")
    if "source" in spec and "sources" in spec:
        raise ValueError("give 'source' or 'sources', not both")
    raw_sources = spec.get("sources")
    if raw_sources is None:
        source = spec.get("source")
        if not isinstance(source, str) or not source.strip():
            raise ValueError("'source' (the checker program's text) is missing")
        language = normalize_language(spec.get("language") or "cpp")
        name = {"python": "checker.py", "c": "checker.c", "cpp": "checker.cpp"}[language]
        sources = [(name, source)]
    else:
        if not isinstance(raw_sources, Mapping) or not raw_sources:
            raise ValueError("'sources' must be a non-empty object of file name -> text")
        for name, text in raw_sources.items():
            if not isinstance(name, str) or "/" in name or name.startswith(".") or not isinstance(text, str):
                raise ValueError(f"sources: {name!r} must be a plain file name with text")
        language = normalize_language(spec.get("language") or _guess(raw_sources))
        sources = sorted(raw_sources.items(), key=lambda kv: (not _is_main(kv[0], language), kv[0]))
    if sum(len(t) for _, t in sources) > _MAX_SOURCE:
        raise ValueError(f"checker sources exceed {_MAX_SOURCE >> 20} MiB")
    args = spec.get("args") or []
    if isinstance(args, str):
        args = args.split()
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise ValueError("'args' must be a list of strings")
    return ProgramChecker(protocol=protocol, language=language, sources=tuple(sources),
                          args=tuple(str(a) for a in args),
                          time_limit_s=_number(spec.get("time_limit_s"), "checker time_limit_s", DEFAULT_CPU_S),
                          memory_mb=int(_number(spec.get("memory_mb"), "checker memory_mb", DEFAULT_MEMORY_MB)))


def _guess(sources: Mapping[str, str]) -> str:
    suffixes = {Path(n).suffix.lower() for n in sources}
    if suffixes & {".cpp", ".cc", ".cxx", ".c++"}:
        return "cpp"
    if ".c" in suffixes:
        return "c"
    if ".py" in suffixes:
        return "python"
    raise ValueError("cannot tell the checker's language from its file names; set 'language'")


def _is_main(name: str, language: str) -> bool:
    suffix = Path(name).suffix.lower()
    if language == "python":
        return suffix == ".py"
    return suffix in (".c",) if language == "c" else suffix in (".cpp", ".cc", ".cxx", ".c++")


def build(checker: ProgramChecker, sandbox: SandboxConfig | None = None) -> tuple[bytes, str]:
    """``(program bytes, error)``: the executable (or, for Python, the main file's text), compiled once
    per source hash; ``error`` is the compiler's message when it does not compile."""
    if checker.language == "python":
        name, text = next(((n, t) for n, t in checker.sources if n.endswith(".py")), checker.main)
        return text.encode("utf-8", "surrogateescape"), ""
    assert checker.language in COMPILERS
    built = compile_sources(checker.language, dict(checker.sources), sandbox=sandbox)
    return (built.binary, "") if built.ok else (b"", built.message)


# --------------------------------------------------------------------------------- case fields
MAX_PASSES = 10


def configure_case(case: Any, raw: Mapping[str, Any]) -> None:
    """Read a case's ``language``, ``checker: {"kind": "program"}``, ``interactive`` and ``passes``
    into ``case`` (a :class:`evaluator.cases.Case`). Raises ValueError naming the field."""
    case.language = normalize_language(raw.get("language"))
    spec = raw.get("checker")
    own: Mapping[str, Any] = {}
    if isinstance(spec, Mapping) and spec.get("kind") == "program":
        case.program = parse_program_checker(spec)
        own = spec  # a stored problem keeps "interactive" / "passes" with its validator
    interactive = raw.get("interactive", own.get("interactive", False))
    if not isinstance(interactive, bool):
        raise ValueError(f"interactive must be true or false, got {interactive!r}")
    passes = raw.get("passes", own.get("passes", 1))
    if isinstance(passes, bool) or not isinstance(passes, int) or not 1 <= passes <= MAX_PASSES:
        raise ValueError(f"passes must be an integer from 1 to {MAX_PASSES}, got {passes!r}")
    if (interactive or passes > 1) and case.program is None:
        raise ValueError("interactive and multi-pass cases need a checker program (the validator)")
    if case.program is not None and case.program.protocol == "testlib" and (interactive or passes > 1):
        raise ValueError("interactive and multi-pass validators use the icpc protocol")
    if case.language != "python" and raw.get("mode", "stdin") != "stdin":
        raise ValueError(f"{case.language} solutions run in stdin mode only")
    case.interactive, case.passes = interactive, passes


def prepare_cases(cases: list[Any], sandbox: SandboxConfig, threads: int) -> None:
    """Compile what the runnable ``cases`` need, each distinct source once (in parallel): a C/C++
    solution becomes an executable (its ``mode`` becomes ``"exec"``; a compile error decides ``CE``
    with the compiler's message), a checker program becomes ``case.program_bytes`` (a checker that does
    not compile, or a compiler that cannot run, decides ``IE``)."""
    from concurrent.futures import ThreadPoolExecutor

    def solution(case: Any) -> None:
        try:
            built = compile_sources(case.language, {f"main.{'c' if case.language == 'c' else 'cpp'}": case.code},
                                    sandbox=sandbox)
        except (RuntimeError, OSError, ValueError) as exc:
            case.decide("IE", f"compiler failure: {exc}")
            return
        if not built.ok:
            case.decide("CE", built.message)
            return
        # the executable travels as the "code" of an exec-mode solution (bytes kept via surrogateescape)
        case.code, case.mode = built.binary.decode("utf-8", "surrogateescape"), "exec"

    def checker(case: Any) -> None:
        try:
            program, error = build(case.program, sandbox)
        except (RuntimeError, OSError, ValueError) as exc:
            program, error = b"", f"compiler failure: {exc}"
        if error:
            case.decide("IE", f"the checker program does not compile: {error}")
        case.program_bytes = program

    work = [(solution, c) for c in cases if c.final is None and c.language != "python"]
    work += [(checker, c) for c in cases if c.final is None and c.program is not None]
    if not work:
        return
    if len(work) == 1:
        work[0][0](work[0][1])
        return
    with ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        list(pool.map(lambda item: item[0](item[1]), work))
