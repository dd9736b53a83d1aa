"""Generate a step's rollouts and judge them, judging finished samples while later ones still generate.

``rollout_and_judge`` hands the engine callbacks that queue finished work for a background judging
thread: ``on_sample(row, completion)`` where the engine offers it (the transformers engine reports
each response the moment it ends), else ``on_group(prompt_index, completions)`` (the
``RolloutEngine`` contract: a prompt's n responses once all are finished). Whenever the thread is
idle it takes everything queued so far and judges it in one ``score_completions`` call, so the judge's
worker pool gets as many cases at once as are ready. The judge runs solutions in sandboxed
subprocesses, so the thread mostly waits and judging genuinely overlaps with generation. Samples the
engine never reported are judged after generation. Per-sample reporting matters: a group finishes
only when its longest response does, and in a large batch nearly every group holds a long one.

Timing split (``timing/*`` in ``training.metrics_names``):

- ``generate_s``: wall time of ``engine.generate``;
- ``reward_s``: time the judging thread spent judging (decode + judge), whether hidden or not;
- ``reward_wait_s``: the part of the step's judging that was *not* hidden behind generation: from the
  end of generation until the last verdict arrived.

With ``overlap=False`` everything is judged after generation in one call (the previous behaviour:
``reward_wait_s`` is about ``reward_s``).

This module imports nothing from Django.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curation.records import ProblemRecord
from training.config import RewardConfig
from training.rewards import Judge, RewardResult, score_completions
from training.rollout.base import Completion, RolloutEngine

Problem = ProblemRecord | Mapping[str, Any]


@dataclass(frozen=True)
class RolloutJudged:
    """A judged rollout batch (prompt-major, like the engine's output) and its timing split."""

    completions: list[Completion]
    texts: list[str]
    results: list[RewardResult]
    generate_s: float
    reward_s: float
    reward_wait_s: float
    samples_judged_early: int  # samples whose verdicts were in before generation returned

    @property
    def hidden_reward_s(self) -> float:
        return max(0.0, self.reward_s - self.reward_wait_s)


class _BackgroundJudge:
    """Background thread judging queued samples in batches; ``finish()`` waits and returns everything."""

    def __init__(
        self,
        n: int,
        problems: Sequence[Problem],
        decode: Callable[[list[list[int]]], list[str]],
        config: RewardConfig,
        judge: Judge | None,
        reward_from_verdict: Callable[..., float | None] | None,
        verdict_cache: dict[str, Mapping[str, Any]],
    ) -> None:
        self.n = n
        self.verdict_cache = verdict_cache
        self.problems = problems
        self.decode = decode
        self.config = config
        self.judge = judge
        self.reward_from_verdict = reward_from_verdict
        self.pending: list[tuple[int, Completion]] = []
        self.seen: set[int] = set()
        self.done: dict[int, tuple[str, RewardResult]] = {}
        self.busy_s = 0.0
        self.error: BaseException | None = None
        self.closed = False
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, name="rollout-judge", daemon=True)
        self.thread.start()

    def submit_sample(self, row: int, completion: Completion) -> None:
        with self.cond:
            if row in self.seen:
                raise RuntimeError(f"the rollout engine reported sample row {row} twice")
            self.seen.add(row)
            self.pending.append((row, completion))
            self.cond.notify()

    def submit_group(self, prompt_index: int, comps: Sequence[Completion]) -> None:
        if len(comps) != self.n:
            raise RuntimeError(
                f"group {prompt_index} was reported with {len(comps)} samples, expected {self.n}"
            )
        for j, comp in enumerate(comps):
            self.submit_sample(prompt_index * self.n + j, comp)

    def judged_count(self) -> int:
        with self.cond:
            return len(self.done)

    def _run(self) -> None:
        while True:
            with self.cond:
                while not self.pending and not self.closed:
                    self.cond.wait()
                if not self.pending:
                    return
                batch, self.pending = self.pending, []
            t0 = time.perf_counter()
            try:
                judged = judge_samples(
                    batch,
                    self.problems,
                    self.decode,
                    self.config,
                    self.judge,
                    self.reward_from_verdict,
                    self.verdict_cache,
                )
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread by finish()
                with self.cond:
                    self.error = exc
                    self.closed = True
                    self.pending = []
                return
            with self.cond:
                self.busy_s += time.perf_counter() - t0
                self.done.update(judged)

    def finish(self) -> dict[int, tuple[str, RewardResult]]:
        with self.cond:
            self.closed = True
            self.cond.notify()
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.done


def judge_samples(
    samples: Sequence[tuple[int, Completion]],
    problems: Sequence[Problem],
    decode: Callable[[list[list[int]]], list[str]],
    config: RewardConfig,
    judge: Judge | None = None,
    reward_from_verdict: Callable[..., float | None] | None = None,
    verdict_cache: dict[str, Mapping[str, Any]] | None = None,
) -> dict[int, tuple[str, RewardResult]]:
    """Decode and judge (row, completion) pairs in one judge call: row -> (text, result). Identical
    programs for the same problem are judged once (``verdict_cache`` shares verdicts across calls)."""
    if not samples:
        return {}
    comps = [c for _, c in samples]
    texts = decode([c.token_ids for c in comps])
    results = score_completions(
        [problems[c.prompt_index] for c in comps],
        texts,
        [c.truncated for c in comps],
        config,
        judge=judge,
        reward_from_verdict=reward_from_verdict,
        verdict_cache=verdict_cache,
    )
    return {row: (text, result) for (row, _), text, result in zip(samples, texts, results)}


def _accepts_on_sample(engine: RolloutEngine) -> bool:
    try:
        return "on_sample" in inspect.signature(engine.generate).parameters
    except (TypeError, ValueError):
        return False


def rollout_and_judge(
    engine: RolloutEngine,
    prompts: list[list[int]],
    problems: Sequence[Problem],
    *,
    n: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    decode: Callable[[list[list[int]]], list[str]],
    reward_config: RewardConfig,
    sample_seeds: Sequence[int] | None = None,
    judge: Judge | None = None,
    reward_from_verdict: Callable[..., float | None] | None = None,
    overlap: bool = True,
) -> RolloutJudged:
    """Sample ``n`` responses for each prompt (``problems[i]`` is prompt i's problem) and judge them.

    ``decode`` turns token ids into texts (``tokenizer.batch_decode(..., skip_special_tokens=True)``).
    Results are prompt-major (row ``i * n + j``), as the engine returns them."""
    if len(problems) != len(prompts):
        raise ValueError(f"{len(prompts)} prompts but {len(problems)} problems")
    cache: dict[str, Mapping[str, Any]] = {}  # one step's verdicts, shared by its judge calls
    worker = (
        _BackgroundJudge(n, problems, decode, reward_config, judge, reward_from_verdict, cache)
        if overlap
        else None
    )
    kwargs: dict[str, Any] = {}
    if worker is not None:
        if _accepts_on_sample(engine):
            kwargs["on_sample"] = worker.submit_sample
        else:
            kwargs["on_group"] = worker.submit_group
    t0 = time.perf_counter()
    try:
        comps = engine.generate(
            prompts,
            n=n,
            temperature=temperature,
            max_new_tokens=max_new_tokens,
            seed=seed,
            sample_seeds=sample_seeds,
            **kwargs,
        )
    except BaseException:
        if worker is not None:
            with contextlib.suppress(Exception):  # the generation error is the one to report
                worker.finish()
        raise
    t_gen_end = time.perf_counter()
    generate_s = t_gen_end - t0
    if len(comps) != len(prompts) * n:
        raise RuntimeError(f"the rollout engine returned {len(comps)} samples for {len(prompts)} x {n}")

    early = worker.judged_count() if worker is not None else 0
    judged: dict[int, tuple[str, RewardResult]] = {}
    reward_s = 0.0
    if worker is not None:
        judged = worker.finish()
        reward_s = worker.busy_s
    missing = [(row, comps[row]) for row in range(len(comps)) if row not in judged]
    if missing:
        t1 = time.perf_counter()
        judged.update(
            judge_samples(missing, problems, decode, reward_config, judge, reward_from_verdict, cache)
        )
        reward_s += time.perf_counter() - t1
    reward_wait_s = time.perf_counter() - t_gen_end

    return RolloutJudged(
        completions=comps,
        texts=[judged[row][0] for row in range(len(comps))],
        results=[judged[row][1] for row in range(len(comps))],
        generate_s=generate_s,
        reward_s=reward_s,
        reward_wait_s=reward_wait_s,
        samples_judged_early=early,
    )


__all__ = ["RolloutJudged", "judge_samples", "rollout_and_judge"]
