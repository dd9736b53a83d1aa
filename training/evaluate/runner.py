"""``evaluate``: k samples per problem from a model source, judged by the evaluator, overlapped.

Flow: the samples still missing (``done`` holds stored ones, keyed by (problem key, sample index)) are
cut into batches of ``source.batch_size`` requests in input order. While the source generates batch
i + 1 in the calling thread, a judge thread extracts the programs of batch i (``training.rewards``:
``extract_code``, ``build_case``) and judges them in one ``judge_batch`` call; so the wall time tends
to max(generate, judge) instead of their sum (``overlap=False`` runs the sequential baseline).

Callbacks run in the calling thread: ``on_sample(key, sample)`` for every NEW sample once judged (the
Django layer stores it there; a resumed job passes the stored ones as ``done`` and only the missing
indices are generated, each from its own seed, so it gets the same samples), then
``on_problem(result)`` for each problem once all its k samples are known, in input order.

Verdicts: a completion without a program is ``NA`` (a failure); an IE from the judge, or a generation
that failed at the endpoint, is an infrastructure error: recorded, left out of the attempts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from curation.records import ProblemRecord
from training.data import prompt_text
from training.evaluate.contamination import problem_key
from training.evaluate.passk import pass_at_k, summarize
from training.evaluate.problems import difficulty_bucket, select_problems, to_record
from training.evaluate.results import EvalSummary, ProblemResult, SampleResult
from training.evaluate.settings import EvalSettings
from training.evaluate.sources import Generation, ModelSource, SampleRequest, sample_seed
from training.rewards import NO_ANSWER, Judge, build_case, extract_code


def _default_judge() -> Judge:
    from evaluator import judge_batch

    return judge_batch


class _Judging:
    """Turns generated batches into SampleResults; accumulates the time spent judging."""

    def __init__(self, records: Mapping[str, ProblemRecord], settings: EvalSettings, judge: Judge) -> None:
        self.records = records
        self.settings = settings
        self.judge = judge
        self.busy_s = 0.0
        self._lock = threading.Lock()

    def __call__(self, batch: Sequence[SampleRequest], gens: Sequence[Generation]) -> list[SampleResult]:
        t0 = time.perf_counter()
        out: list[SampleResult | None] = [None] * len(batch)
        cases: list[dict[str, Any]] = []
        where: list[int] = []
        for i, (req, gen) in enumerate(zip(batch, gens)):
            if gen.error is not None:
                out[i] = SampleResult(req.index, gen.text, "IE", False, True, f"generation failed: {gen.error}", 0.0)
                continue
            code = extract_code(gen.text, truncated=gen.truncated)
            if code is None:
                out[i] = SampleResult(req.index, gen.text, NO_ANSWER, False, False, None, 0.0)
                continue
            cases.append(
                build_case(self.records[req.key], code, case_id=f"{req.key}#{req.index}", checker=self.settings.checker)
            )
            where.append(i)
        if cases:
            verdicts = self.judge(cases, workers=self.settings.judge_workers or None, stop_on_first_failure=True)
            if len(verdicts) != len(cases):
                raise RuntimeError(f"judge returned {len(verdicts)} verdicts for {len(cases)} cases")
            for i, v in zip(where, verdicts):
                verdict = str(v.get("verdict", "IE"))
                ie = verdict == "IE"
                method = v.get("message") if ie else v.get("method")
                out[i] = SampleResult(
                    batch[i].index, gens[i].text, verdict, verdict == "AC", ie,
                    None if method is None else str(method), float(v.get("elapsed_s") or 0.0),
                )
        with self._lock:
            self.busy_s += time.perf_counter() - t0
        return [r for r in out if r is not None]


def problem_result(row: Mapping[str, Any], samples: Mapping[int, SampleResult], k: int) -> ProblemResult:
    """Aggregate a problem's k samples (indices 0..k-1) into its ``ProblemResult``."""
    ordered = [samples[i] for i in range(k)]
    attempts = sum(1 for s in ordered if not s.infra_error)
    passed = sum(1 for s in ordered if s.passed and not s.infra_error)
    return ProblemResult(
        id=problem_key(row),
        platform=str(row.get("platform", "")),
        external_id=str(row.get("external_id", "")),
        io_mode=str(row.get("io_mode") or "stdin"),
        difficulty=difficulty_bucket(row),
        contest_date=row.get("contest_date") or None,
        attempts=attempts,
        passed=passed,
        infra_errors=k - attempts,
        verdicts=[s.verdict for s in ordered],
        pass_at_1=pass_at_k(attempts, passed, 1) if attempts else None,
        pass_at_k=pass_at_k(attempts, passed, k) if attempts else None,
    )


def evaluate(
    problems: Sequence[Mapping[str, Any]],
    source: ModelSource,
    settings: EvalSettings,
    *,
    done: Mapping[tuple[str, int], SampleResult] | None = None,
    on_sample: Callable[[str, SampleResult], None] | None = None,
    on_problem: Callable[[ProblemResult], None] | None = None,
    contamination: Mapping[str, Any] | None = None,
    exclude_contaminated: bool = False,
    judge: Judge | None = None,
    overlap: bool = True,
    bootstrap: int = 1000,
) -> EvalSummary:
    """Evaluate ``source`` on ``problems`` (export rows) with ``settings``; see the module docstring.

    ``contamination`` (``contamination_report``) is stated in the summary and, with
    ``exclude_contaminated``, drops the flagged problems; ``judge`` replaces ``evaluator.judge_batch``."""
    t_wall = time.perf_counter()
    kept, excluded, excluded_ids = select_problems(
        problems, after=settings.after, contamination=contamination, exclude_contaminated=exclude_contaminated
    )
    keys = [problem_key(row) for row in kept]
    records = {key: to_record(row) for key, row in zip(keys, kept)}
    k = settings.k
    samples: dict[str, dict[int, SampleResult]] = {key: {} for key in keys}
    for (key, index), sample in (done or {}).items():
        if key in samples and 0 <= index < k:
            samples[key][index] = sample
    requests = [
        SampleRequest(key, i, sample_seed(settings.seed, key, i), prompt_text(records[key]))
        for key in keys
        for i in range(k)
        if i not in samples[key]
    ]
    size = max(1, int(source.batch_size))
    batches = [requests[s : s + size] for s in range(0, len(requests), size)]
    judging = _Judging(records, settings, judge or _default_judge())
    results: list[ProblemResult] = []
    generate_s = 0.0

    def absorb(batch: Sequence[SampleRequest], judged: Sequence[SampleResult]) -> None:
        for req, sample in zip(batch, judged):
            samples[req.key][sample.index] = sample
            if on_sample is not None:
                on_sample(req.key, sample)
        while len(results) < len(kept) and len(samples[keys[len(results)]]) == k:
            result = problem_result(kept[len(results)], samples[keys[len(results)]], k)
            results.append(result)
            if on_problem is not None:
                on_problem(result)

    absorb([], [])  # problems complete from ``done`` alone
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evaluate-judge")
    try:
        pending: list[tuple[Sequence[SampleRequest], Future[list[SampleResult]]]] = []
        for batch in batches:
            t0 = time.perf_counter()
            gens = source.generate(batch, settings)
            generate_s += time.perf_counter() - t0
            if len(gens) != len(batch):
                raise RuntimeError(f"source returned {len(gens)} generations for {len(batch)} requests")
            if overlap:
                pending.append((batch, pool.submit(judging, batch, gens)))
                while pending and pending[0][1].done():
                    b, fut = pending.pop(0)
                    absorb(b, fut.result())
            else:
                absorb(batch, judging(batch, gens))
        for b, fut in pending:
            absorb(b, fut.result())
    finally:
        # A callback that raises (a cancelled job) stops the evaluation: queued judging is dropped.
        pool.shutdown(wait=True, cancel_futures=True)

    summary = summarize(results, k, bootstrap=bootstrap, seed=settings.seed)
    # The contamination guard is part of every result: the cut-off, what it excluded, what was flagged.
    summary["after"] = settings.after.isoformat() if settings.after else None
    summary["excluded"] = dict(excluded)
    summary["contaminated_evaluated"] = sum(1 for key in keys if contamination and key in contamination)
    return EvalSummary(
        settings=settings.to_dict(),
        problems=results,
        summary=summary,
        excluded=excluded,
        excluded_ids=excluded_ids,
        timing={
            "generate_s": generate_s,
            "judge_s": judging.busy_s,
            "wall_s": time.perf_counter() - t_wall,
            "samples_generated": float(len(requests)),
        },
    )


__all__ = ["evaluate", "problem_result"]
