"""Score many problems: bounded concurrency, results in input order, resumable per sample.

``score_problems`` is the one loop the CLI, the benches and the Django jobs share. All callbacks
(``skip``, ``on_sample``) run in the caller's thread, so a Django caller may touch the database in
them; only the scoring itself runs elsewhere:

- a scorer with an ``async def ascore_sample(problem, *, index)`` (the openai backend) runs on one
  asyncio event loop in a helper thread, at most ``concurrency`` samples in flight;
- any other scorer runs inline when ``concurrency == 1``, else on a thread pool of that size.

At most ``4 * concurrency`` problems are open at once (read ahead of the one being yielded), so memory
stays flat on an endless input and a slow problem does not stall the others.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from .core import ProblemInput, Sample, ScoreError, Scorer, ScoringResult, aggregate, normalize_weights

SkipFn = Callable[[str, int], Sample | None]
OnSampleFn = Callable[[str, Sample], None]


@dataclass
class _Job:
    problem: ProblemInput
    samples: dict[int, Sample] = field(default_factory=dict)
    errors: dict[int, str] = field(default_factory=dict)
    pending: int = 0


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ScoreError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def score_problems(
    problems: Iterable[ProblemInput | ScoringResult],
    scorer: Scorer,
    *,
    samples: int = 3,
    weights: Mapping[str, float] | None = None,
    concurrency: int = 8,
    skip: SkipFn | None = None,
    on_sample: OnSampleFn | None = None,
) -> Iterator[ScoringResult]:
    """Yield one ``ScoringResult`` per problem, in input order.

    - ``skip(problem_id, index)`` returns an already-stored sample (used as is, never re-scored) or
      ``None``; ``on_sample(problem_id, sample)`` is called once per NEW sample as it finishes, before
      the problem's result is yielded.
    - A sample that fails (``ScoreError`` or any other exception) makes its problem's result an error
      naming the sample; the other samples of that problem still run (and reach ``on_sample``), and the
      other problems go on.
    - An item that already is a ``ScoringResult`` (a row that failed to parse, say) passes through in
      its place, so a caller keeps one output line per input line.
    Raises ``ValueError`` up front for bad ``samples``, ``concurrency`` or ``weights``.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    w = normalize_weights(weights)
    if concurrency == 1 and not hasattr(scorer, "ascore_sample"):
        yield from _score_inline(problems, scorer, samples, w, skip, on_sample)
    else:
        yield from _score_concurrently(problems, scorer, samples, w, concurrency, skip, on_sample)


def _start(problem: ProblemInput, samples: int, skip: SkipFn | None) -> tuple[_Job, list[int]]:
    job = _Job(problem)
    missing = []
    for index in range(samples):
        stored = skip(problem.id, index) if skip is not None else None
        if stored is not None:
            job.samples[index] = stored
        else:
            missing.append(index)
    job.pending = len(missing)
    return job, missing


def _finish(job: _Job, scorer: Scorer, weights: Mapping[str, float]) -> ScoringResult:
    samples = [job.samples[i] for i in sorted(job.samples)]
    common = {"backend": scorer.backend, "prompt_version": scorer.prompt_version}
    if job.errors:
        error = "; ".join(f"sample {i}: {msg}" for i, msg in sorted(job.errors.items()))
        return ScoringResult(job.problem.id, None, {}, samples, error=error, **common)
    try:
        score, dims = aggregate(samples, weights)
    except ScoreError as exc:
        return ScoringResult(job.problem.id, None, {}, samples, error=str(exc), **common)
    # 4 decimals: far below a rater's resolution, and the JSONL stays readable
    dims = {d: round(v, 4) for d, v in dims.items()}
    return ScoringResult(job.problem.id, round(score, 4), dims, samples, **common)


def _score_inline(
    problems: Iterable[ProblemInput | ScoringResult],
    scorer: Scorer,
    samples: int,
    weights: Mapping[str, float],
    skip: SkipFn | None,
    on_sample: OnSampleFn | None,
) -> Iterator[ScoringResult]:
    for item in problems:
        if isinstance(item, ScoringResult):
            yield item
            continue
        job, missing = _start(item, samples, skip)
        for index in missing:
            try:
                sample = scorer.score_sample(item, index=index)
            except Exception as exc:  # noqa: BLE001 - one bad problem must not stop the others
                job.errors[index] = _describe(exc)
                continue
            job.samples[index] = sample
            if on_sample is not None:
                on_sample(item.id, sample)
        yield _finish(job, scorer, weights)


async def _cancel_pending() -> None:
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


# Events the worker side puts on the queue: (job, index, sample or None, error message)
_Event = tuple[_Job, int, Sample | None, str]


def _score_concurrently(
    problems: Iterable[ProblemInput | ScoringResult],
    scorer: Scorer,
    samples: int,
    weights: Mapping[str, float],
    concurrency: int,
    skip: SkipFn | None,
    on_sample: OnSampleFn | None,
) -> Iterator[ScoringResult]:
    events: queue.Queue[_Event] = queue.Queue()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="difficulty-scoring", daemon=True)
    thread.start()
    semaphore = asyncio.Semaphore(concurrency)
    ascore = getattr(scorer, "ascore_sample", None)
    pool = None if ascore is not None else ThreadPoolExecutor(concurrency, thread_name_prefix="difficulty")

    async def run_one(job: _Job, index: int) -> None:
        async with semaphore:
            try:
                if ascore is not None:
                    sample = await ascore(job.problem, index=index)
                else:
                    sample = await loop.run_in_executor(
                        pool, lambda: scorer.score_sample(job.problem, index=index)
                    )
            except Exception as exc:  # noqa: BLE001 - reported as the problem's error
                events.put((job, index, None, _describe(exc)))
                return
        events.put((job, index, sample, ""))

    window: deque[ScoringResult | _Job] = deque()
    futures: set[Future[Any]] = set()

    def handle(event: _Event) -> None:
        job, index, sample, error = event
        job.pending -= 1
        if sample is None:
            job.errors[index] = error
            return
        job.samples[index] = sample
        if on_sample is not None:
            on_sample(job.problem.id, sample)

    def pop_ready() -> Iterator[ScoringResult]:
        # Drain finished work without blocking, then yield every finished problem at the head.
        while True:
            try:
                handle(events.get_nowait())
            except queue.Empty:
                break
        while window:
            head = window[0]
            if isinstance(head, _Job):
                if head.pending > 0:
                    return
                window.popleft()
                yield _finish(head, scorer, weights)
            else:
                window.popleft()
                yield head

    try:
        for item in problems:
            if isinstance(item, ScoringResult):
                window.append(item)
            else:
                job, missing = _start(item, samples, skip)
                window.append(job)
                for index in missing:
                    fut = asyncio.run_coroutine_threadsafe(run_one(job, index), loop)
                    futures.add(fut)
                    fut.add_done_callback(futures.discard)
            yield from pop_ready()
            while len(window) >= 4 * concurrency:
                handle(events.get())
                yield from pop_ready()
        while window:
            yield from pop_ready()
            if window:
                handle(events.get())
    finally:
        # Reached on normal end, on an error, and when the consumer stops iterating early.
        if futures:
            # Cancel what is still queued or in flight and let those tasks finish unwinding on the
            # loop, so none is destroyed while pending when the loop closes.
            try:
                asyncio.run_coroutine_threadsafe(_cancel_pending(), loop).result(timeout=30)
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        aclose = getattr(scorer, "aclose", None)
        if aclose is not None:
            try:
                asyncio.run_coroutine_threadsafe(aclose(), loop).result(timeout=30)
            except Exception:  # noqa: BLE001 - closing connections must not mask the real outcome
                pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        if not loop.is_running():
            loop.close()
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
