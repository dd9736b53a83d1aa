"""``python -m training.evaluate``: pass@k of a model on a release, no database needed.

    python -m training.evaluate --model PATH_OR_NAME --engine transformers|vllm|openai [--base-url URL]
        --problems RELEASE.jsonl --k 4 --temperature 0.6 [--top-p 0.95] [--max-tokens 4096] [--seed 0]
        [--after YYYY-MM-DD] [--train-release TRAIN.jsonl [--exclude-contaminated]]
        [--pass-rates-out RATES.jsonl] > RESULTS.jsonl

Standard output: one JSON line per evaluated problem, in input order, ``{"id", "attempts", "passed",
"pass@1", "pass@k", "verdicts"}`` (``id`` = ``platform:external_id``). Standard error: the summary table
(pass@1 / pass@k with 95 % bootstrap intervals, breakdowns, infrastructure errors, what the cut-off
and the contamination check excluded or flagged), and a progress bar when it is a terminal.
``--pass-rates-out`` writes ``{"platform", "external_id", "passed", "attempts"}`` rows (the difficulty
calibration's import format). With ``--engine openai`` the key comes from ``OPENAI_API_KEY`` and
``--model`` is the served model's name. Exit status: 0 done, 1 error, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from training.evaluate.contamination import contamination_report
from training.evaluate.passk import format_summary
from training.evaluate.problems import load_rows, select_problems
from training.evaluate.results import ProblemResult, SampleResult
from training.evaluate.runner import evaluate
from training.evaluate.settings import CHECKERS, EvalSettings, parse_date
from training.evaluate.sources import ENGINES, make_source


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m training.evaluate",
        description="pass@k of a model or checkpoint on a release (results on stdout, summary on stderr)",
    )
    p.add_argument("--model", required=True, help="local model dir / HF id, or the served name (openai)")
    p.add_argument("--engine", required=True, choices=ENGINES)
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    p.add_argument("--problems", required=True, help="release JSONL (as exported by /api/releases/<id>/export)")
    p.add_argument("--k", type=int, default=4, help="samples per problem (default 4)")
    p.add_argument("--temperature", type=float, default=0.6)
    p.add_argument("--top-p", type=float, default=0.95)
    p.add_argument("--max-tokens", type=int, default=4096, help="new tokens per sample")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--after", help="training cut-off YYYY-MM-DD: keep problems with a later contest_date")
    p.add_argument("--checker", choices=CHECKERS, default="lenient")
    p.add_argument("--judge-workers", type=int, default=0, help="judge processes (0 = one per core)")
    p.add_argument("--train-release", help="training release JSONL: flag statement 13-gram overlaps")
    p.add_argument("--exclude-contaminated", action="store_true", help="drop the problems --train-release flags")
    p.add_argument("--pass-rates-out", help="write {platform, external_id, passed, attempts} rows here")
    p.add_argument("--device", default="auto", help="transformers: auto, cpu, cuda or cuda:N")
    p.add_argument("--batch-size", type=int, help="samples per generation batch (engine default)")
    p.add_argument("--concurrency", type=int, default=16, help="openai: requests in flight")
    p.add_argument(
        "--run-config", help="a training run's config.yaml: evaluate with its prompt settings (chat template ...)"
    )
    return p


def _source_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    prompt = None
    if args.run_config:
        from training.config import load_config

        prompt = load_config(args.run_config).prompt
    if args.engine == "openai":
        options["concurrency"] = args.concurrency
        if prompt is not None:
            options["system_prompt"] = prompt.system_prompt
    elif prompt is not None:
        options["prompt"] = prompt
    if args.batch_size:
        options["batch_size"] = args.batch_size
    return options


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.exclude_contaminated and not args.train_release:
        parser.error("--exclude-contaminated needs --train-release")
    if args.engine == "openai" and args.device != "auto":
        parser.error("--device applies to local engines only")
    try:
        settings = EvalSettings(
            k=args.k,
            temperature=args.temperature,
            top_p=args.top_p,
            max_tokens=args.max_tokens,
            seed=args.seed,
            after=parse_date(args.after, field="--after") if args.after else None,
            checker=args.checker,
            judge_workers=args.judge_workers,
        )
    except ValueError as exc:
        parser.error(str(exc))
    try:
        return _run(args, settings)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace, settings: EvalSettings) -> int:
    rows = load_rows(args.problems)
    report = contamination_report(rows, load_rows(args.train_release)) if args.train_release else None
    source = make_source(
        args.engine,
        args.model,
        base_url=args.base_url,
        device=None if args.engine == "openai" else args.device,
        **_source_options(args),
    )
    bar: Any = None
    if sys.stderr.isatty():
        from tqdm import tqdm

        kept = select_problems(
            rows, after=settings.after, contamination=report, exclude_contaminated=args.exclude_contaminated
        )[0]
        bar = tqdm(total=len(kept) * settings.k, unit="sample", file=sys.stderr, desc="evaluate")

    def on_sample(_key: str, _sample: SampleResult) -> None:
        if bar is not None:
            bar.update(1)

    def on_problem(result: ProblemResult) -> None:
        sys.stdout.write(json.dumps(result.cli_row()) + "\n")
        sys.stdout.flush()

    try:
        summary = evaluate(
            rows,
            source,
            settings,
            on_sample=on_sample,
            on_problem=on_problem,
            contamination=report,
            exclude_contaminated=args.exclude_contaminated,
        )
    finally:
        if bar is not None:
            bar.close()
        source.close()
    if args.pass_rates_out:
        with open(args.pass_rates_out, "w", encoding="utf-8") as fh:
            for result in summary.problems:
                fh.write(json.dumps(result.pass_rate_row()) + "\n")
    print(format_summary(summary.summary, excluded=summary.excluded), file=sys.stderr)
    if settings.after is not None:
        print(
            f"cut-off: contest_date after {settings.after.isoformat()} "
            f"({summary.excluded.get('no_contest_date', 0)} problems without a date excluded)",
            file=sys.stderr,
        )
    if report is not None:
        action = "excluded" if args.exclude_contaminated else "flagged, still evaluated"
        print(f"contamination (13-gram overlap with {args.train_release}): {len(report)} problems {action}",
              file=sys.stderr)
    t = summary.timing
    print(
        f"timing: generate {t['generate_s']:.1f}s, judge {t['judge_s']:.1f}s, wall {t['wall_s']:.1f}s, "
        f"{int(t['samples_generated'])} samples generated",
        file=sys.stderr,
    )
    return 0


__all__ = ["build_parser", "main"]
