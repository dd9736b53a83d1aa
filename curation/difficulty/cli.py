"""``python -m curation.difficulty``: score a JSONL file without a database, or compare two scorings.

    python -m curation.difficulty score --backend heuristic|openai [--samples 3] [--weights k=v,...]
        [--concurrency N] [--model M] [--base-url URL] [--timeout S] [--max-retries N] IN.jsonl|- > OUT.jsonl
    python -m curation.difficulty compare A.jsonl B.jsonl

``score`` writes one line per input row, in input order (blank lines are not rows)::

    {"id", "score", "dimensions": {name: mean}, "samples": [...], "backend", "prompt_version"}

or ``{"id", "error"}`` for a row that cannot be scored (not JSON, no statement, a failed sample); the
other rows go on. ``id`` is the row's ``id``, else ``platform:external_id``, else ``line:N``. Exit
status: 0 all rows scored, 1 some rows are errors, 2 bad arguments. A progress bar goes to stderr
only when stderr is a terminal; the openai backend prints its request/token counts to stderr at the end.

``compare`` matches two OUT files by id and prints one JSON object: how many ids both scored, the
Spearman correlation of the scores and of each dimension, and the mean absolute difference per
dimension (e.g. two prompt versions, or two models).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from typing import IO, Any

from .core import DIMENSIONS, ProblemInput, ScoreError, ScoringResult, parse_weights


def _rows(stream: IO[str]) -> Iterator[ProblemInput | ScoringResult]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        fallback = f"line:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            yield ScoringResult(fallback, None, {}, [], error=f"line {number} is not JSON: {exc.msg}")
            continue
        try:
            yield ProblemInput.from_row(row, default_id=fallback)
        except ScoreError as exc:
            yield ScoringResult(_row_id(row, fallback), None, {}, [], error=str(exc))


def _count_rows(path: str) -> int:
    """Non-blank lines of ``path`` (one row each), read once more before scoring for the progress bar."""
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def _row_id(row: Any, fallback: str) -> str:
    if not isinstance(row, dict):
        return fallback
    if row.get("id"):
        return str(row["id"])
    if row.get("platform") and row.get("external_id"):
        return f"{row['platform']}:{row['external_id']}"
    return fallback


def _score(args: argparse.Namespace) -> int:
    from . import get_scorer, score_problems

    try:
        weights = parse_weights(args.weights) if args.weights else None
        options: dict[str, Any] = {}
        if args.backend == "openai":
            options = {
                "model": args.model,
                "base_url": args.base_url,
                "concurrency": args.concurrency,
                "timeout_s": args.timeout,
                "max_retries": args.max_retries,
            }
        scorer = get_scorer(args.backend, **options)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stream: IO[str] = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")  # noqa: SIM115
    progress = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        total = None if args.input == "-" else _count_rows(args.input)  # a file: the bar knows its end
        progress = tqdm(total=total, unit="problem", file=sys.stderr, desc="score")
    errors = 0
    try:
        results = score_problems(
            _rows(stream), scorer, samples=args.samples, weights=weights, concurrency=args.concurrency
        )
        for result in results:
            errors += bool(result.error)
            sys.stdout.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
            sys.stdout.flush()
            if progress is not None:
                progress.update(1)
    finally:
        if stream is not sys.stdin:
            stream.close()
        if progress is not None:
            progress.close()
    usage = getattr(scorer, "usage", None)
    if usage is not None:
        print(f"usage: {json.dumps(usage.to_dict())}", file=sys.stderr)
    return 1 if errors else 0


def _read_scores(path: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                if row.get("score") is not None:
                    out[str(row["id"])] = row
    return out


def compare_scorings(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Agreement of two scorings keyed by problem id (rows with a score)."""
    from scipy.stats import spearmanr

    common = sorted(set(a) & set(b))
    report: dict[str, Any] = {
        "common": len(common),
        "only_a": len(set(a) - set(b)),
        "only_b": len(set(b) - set(a)),
    }
    if len(common) < 3:
        report["error"] = "fewer than 3 problems scored in both files; no correlation computed"
        return report

    def rho(x: list[float], y: list[float]) -> float | None:
        value = float(spearmanr(x, y)[0])
        return None if value != value else round(value, 4)  # NaN when one side is constant

    report["spearman_score"] = rho([a[k]["score"] for k in common], [b[k]["score"] for k in common])
    report["dimensions"] = {}
    for d in DIMENSIONS:
        xa = [float(a[k]["dimensions"][d]) for k in common]
        xb = [float(b[k]["dimensions"][d]) for k in common]
        mad = sum(abs(p - q) for p, q in zip(xa, xb)) / len(common)
        report["dimensions"][d] = {"spearman": rho(xa, xb), "mean_abs_diff": round(mad, 4)}
    report["prompt_versions"] = sorted(
        {str(a[common[0]].get("prompt_version")), str(b[common[0]].get("prompt_version"))}
    )
    return report


def _compare(args: argparse.Namespace) -> int:
    try:
        report = compare_scorings(_read_scores(args.a), _read_scores(args.b))
    except (OSError, json.JSONDecodeError, KeyError) as exc:
        print(f"error: cannot read the scorings: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m curation.difficulty", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score problems (JSONL rows of docs/export-schema.md)")
    score.add_argument("input", help="JSONL file, or - for stdin")
    score.add_argument("--backend", choices=("heuristic", "openai"), required=True)
    score.add_argument("--samples", type=int, default=3, help="independent samples per problem (default 3)")
    score.add_argument("--weights", default="", help="name=value,... over the five dimensions (unnamed = 0)")
    score.add_argument(
        "--concurrency", type=int, default=None, help="samples in flight (default 1, openai 8)"
    )
    score.add_argument("--model", default=None, help="openai: model name (default $DIFFICULTY_MODEL)")
    score.add_argument("--base-url", default=None, help="openai: endpoint (default $OPENAI_BASE_URL)")
    score.add_argument("--timeout", type=float, default=None, help="openai: seconds per request (default 60)")
    score.add_argument("--max-retries", type=int, default=None, help="openai: retries on 429/5xx (default 4)")
    score.set_defaults(func=_score)
    comp = sub.add_parser("compare", help="agreement between two score outputs")
    comp.add_argument("a")
    comp.add_argument("b")
    comp.set_defaults(func=_compare)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "score":
        if args.concurrency is None:
            args.concurrency = 8 if args.backend == "openai" else 1
        if args.samples < 1 or args.concurrency < 1:
            print("error: --samples and --concurrency must be >= 1", file=sys.stderr)
            return 2
    return int(args.func(args))
