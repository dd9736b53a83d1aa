"""Command line of the judge (DESIGN.md section 4)::

    python -m evaluator judge PROBLEM.json SOLUTION_FILE [--all]
        one JSON verdict on stdout; PROBLEM.json is a case without "code"
    python -m evaluator batch CASES.jsonl [--workers N] [--all]
        one JSON verdict per input line, same order ("-" reads stdin); a progress bar on stderr
        only when stderr is a terminal
    python -m evaluator compare EXPECTED_FILE ACTUAL_FILE [--checker lenient|strict|icpc] [FLAG ...]
        exit 0 when equal, 1 when different; prints the method that decided. FLAGs are written as in
        a problem package's validator_flags (case_sensitive space_change_sensitive float_tolerance 1e-6)
        and imply --checker icpc
    python -m evaluator compare --jsonl FILE
        each line {"id", "expected", "actual", "checker"?} -> {"id", "equal", "method"}
    python -m evaluator package PACKAGE_DIR SUBMISSION_FILE [--language auto|python|c|cpp] [--all]
        one JSON verdict for the submission judged against an ICPC/Kattis problem package folder
        (evaluator.package: limits, validator flags, custom output validators, interactive problems)

``--all`` runs every test instead of stopping at the first failure. Exit status 2 means a usage error
(unreadable file, bad flags); a verdict, even IE, is a successful run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from .compare import compare_output, parse_checker, parse_validator_flags
from .runner import judge_batch, judge_case


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.buffer.read().decode("utf-8", "surrogateescape")
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", "surrogateescape")


def _dump(obj: Any, out: TextIO) -> None:
    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
    out.flush()


def _cmd_judge(args: argparse.Namespace) -> int:
    problem = json.loads(_read_text(args.problem))
    if not isinstance(problem, dict):
        raise ValueError("PROBLEM.json must hold one JSON object (a case without 'code')")
    case = dict(problem, code=_read_text(args.solution))
    _dump(judge_case(case, stop_on_first_failure=not args.all), sys.stdout)
    return 0


def _lines(path: str) -> Iterator[str]:
    handle = sys.stdin if path == "-" else open(path, encoding="utf-8", errors="surrogateescape")  # noqa: SIM115
    try:
        for line in handle:
            if line.strip():
                yield line
    finally:
        if handle is not sys.stdin:
            handle.close()


def _cmd_batch(args: argparse.Namespace) -> int:
    cases: list[Any] = []
    for line in _lines(args.cases):
        try:
            cases.append(json.loads(line))
        except ValueError as exc:
            cases.append({"__unparsable__": str(exc)})
    bar: Any = None
    if sys.stderr.isatty():  # a progress bar on a terminal only: piped stderr stays quiet
        from tqdm import tqdm

        bar = tqdm(total=len(cases), unit="case", file=sys.stderr, desc="judge")
    try:
        verdicts = judge_batch(cases, workers=args.workers, stop_on_first_failure=not args.all,
                               on_case_done=None if bar is None else lambda _i: bar.update(1))
    finally:
        if bar is not None:
            bar.close()
    for case, verdict in zip(cases, verdicts):
        if isinstance(case, dict) and "__unparsable__" in case:
            verdict["message"] = f"invalid case: the line is not JSON ({case['__unparsable__']})"
        _dump(verdict, sys.stdout)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    if args.jsonl:
        if args.paths:
            raise ValueError("--jsonl takes no other file arguments")
        for line in _lines(args.jsonl):
            _dump(_compare_line(line), sys.stdout)
        return 0
    if len(args.paths) < 2:
        raise ValueError("compare needs EXPECTED_FILE and ACTUAL_FILE (or --jsonl FILE)")
    expected, actual = _read_text(args.paths[0]), _read_text(args.paths[1])
    flags = args.paths[2:]
    if flags:
        if args.checker not in (None, "icpc"):
            raise ValueError("validator flags imply --checker icpc")
        spec: dict[str, Any] = parse_validator_flags(flags)
    else:
        spec = {"kind": args.checker or "lenient"}
    equal, method = compare_output(expected, actual, parse_checker(spec))
    print(method)
    return 0 if equal else 1


def _compare_line(line: str) -> dict[str, Any]:
    try:
        item = json.loads(line)
        if not isinstance(item, dict):
            raise ValueError("each line must be a JSON object")
        checker = item.get("checker")
        if isinstance(checker, str):
            checker = {"kind": checker}
        expected, actual = item.get("expected"), item.get("actual")
        if not isinstance(expected, str) or not isinstance(actual, str):
            raise ValueError("'expected' and 'actual' must be strings")
        equal, method = compare_output(expected, actual, parse_checker(checker))
        return {"id": item.get("id"), "equal": equal, "method": method}
    except (ValueError, TypeError) as exc:
        ident = None
        try:
            ident = json.loads(line).get("id")
        except (ValueError, AttributeError):
            pass
        return {"id": ident, "equal": False, "method": None, "error": str(exc)}


def _cmd_package(args: argparse.Namespace) -> int:
    from .package import judge_package

    _dump(judge_package(args.package, args.submission, args.language, stop_on_first_failure=not args.all),
          sys.stdout)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evaluator", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    judge = sub.add_parser("judge", help="judge one solution file against a problem")
    judge.add_argument("problem", help="PROBLEM.json: a case without 'code'")
    judge.add_argument("solution", help="the solution's source file")
    judge.add_argument("--all", action="store_true", help="run every test (fraction reward)")
    judge.set_defaults(func=_cmd_judge)
    batch = sub.add_parser("batch", help="judge a JSONL file of cases")
    batch.add_argument("cases", help="CASES.jsonl ('-' for stdin)")
    batch.add_argument("--workers", type=int, default=None, help="parallel workers (default: cores)")
    batch.add_argument("--all", action="store_true", help="run every test (fraction reward)")
    batch.set_defaults(func=_cmd_batch)
    compare = sub.add_parser("compare", help="compare an output with the expected output")
    compare.add_argument("paths", nargs="*", help="EXPECTED_FILE ACTUAL_FILE [validator flags ...]")
    compare.add_argument("--checker", choices=("lenient", "strict", "icpc"), default=None)
    compare.add_argument("--jsonl", default=None, help="compare many pairs from a JSONL file")
    compare.set_defaults(func=_cmd_compare)
    package = sub.add_parser("package", help="judge a submission against an ICPC/Kattis problem package")
    package.add_argument("package", help="the problem package folder (problem.yaml, data/, ...)")
    package.add_argument("submission", help="the submission's source file")
    package.add_argument("--language", default="auto", help="auto (by file extension), python, c or cpp")
    package.add_argument("--all", action="store_true", help="run every test instead of stopping at a failure")
    package.set_defaults(func=_cmd_package)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
